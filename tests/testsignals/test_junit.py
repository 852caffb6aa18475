"""JUnit XML in: outcomes by id, the commit a report names, and hostile files refused with a reason."""

from __future__ import annotations

from pathlib import Path

from tri_agent.testsignals._junit import JUnitReport, read_junit

SHA = "a" * 40
REPORT = f"""<?xml version="1.0"?><testsuites><testsuite name="pytest" tests="4">
<properties><property name="commit" value="{SHA}"/></properties>
<testcase classname="tests.test_calc" name="test_add"/>
<testcase classname="tests.test_calc" name="test_zero"><failure message="boom"/></testcase>
<testcase classname="tests.test_calc" name="test_err"><error message="x"/></testcase>
<testcase classname="tests.test_calc" name="test_skip"><skipped type="pytest.skip"/></testcase>
<testcase classname="tests.test_calc" name="test_xf"><skipped type="pytest.xfail"/></testcase>
</testsuite></testsuites>"""


def test_a_report_reads_into_outcomes_and_names_its_commit(tmp_path: Path) -> None:
    (tmp_path / "r.xml").write_text(REPORT)
    found = read_junit(tmp_path / "r.xml")
    assert isinstance(found, JUnitReport) and found.commit() == SHA
    assert found.outcomes == {"tests.test_calc::test_add": "passed", "tests.test_calc::test_zero": "failed",
                              "tests.test_calc::test_err": "error", "tests.test_calc::test_skip": "skipped",
                              "tests.test_calc::test_xf": "xfailed"}
    (tmp_path / f"junit-{SHA}.xml").write_text("<testsuite/>")
    assert read_junit(tmp_path / f"junit-{SHA}.xml").commit() == SHA  # type: ignore[union-attr]


def test_what_is_not_a_report_says_why(tmp_path: Path) -> None:
    bomb = '<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]><testsuite>&b;</testsuite>'
    for name, text, why in (("bomb.xml", bomb, "document type"), ("log.xml", "===== 3 passed =====", "parse"),
                            ("html.xml", "<html/>", "root is <html>")):
        (tmp_path / name).write_text(text)
        assert why in str(read_junit(tmp_path / name))
    (tmp_path / "link.xml").symlink_to(tmp_path / "html.xml")
    assert read_junit(tmp_path / "link.xml") == "not a plain file"


def test_a_document_type_in_utf_16_is_refused_too(tmp_path: Path) -> None:
    bomb = '<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE l [<!ENTITY a "aaaa">]><testsuite>&a;</testsuite>'
    (tmp_path / "bomb16.xml").write_bytes(bomb.encode("utf-16"))
    assert "document type" in str(read_junit(tmp_path / "bomb16.xml"))
    plain = '<?xml version="1.0" encoding="UTF-16"?><testsuite><testcase classname="t" name="a"/></testsuite>'
    (tmp_path / "plain16.xml").write_bytes(plain.encode("utf-16"))
    assert read_junit(tmp_path / "plain16.xml").outcomes == {"t::a": "passed"}  # type: ignore[union-attr]
