"""JUnit XML in: outcomes by id, the commit a report names, and hostile files refused with a reason."""

from __future__ import annotations

from pathlib import Path

import pytest

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


def test_properties_ids_files_and_the_worse_outcome(tmp_path: Path) -> None:
    text = ("<testsuite><properties><property name='tri_agent.commit' value='" + SHA + "'/>"
            "<property value='nameless'/><property name='novalue'/></properties>"
            "<testcase name='bare'/>"
            "<testcase classname='pkg.test_a' name='t1' file='pkg/test_a.py'/>"
            "<testcase classname='pkg.test_a' name='t2'/>"
            "<testcase classname='pkg.test_a' name='twice'/><testcase classname='pkg.test_a' name='twice'>"
            "<failure/></testcase><testcase classname='pkg.test_a' name='twice'/>"
            "<testcase classname='c' name='x'><skipped/></testcase><testcase classname='c'/></testsuite>")
    (tmp_path / "r.xml").write_text(text)
    found = read_junit(tmp_path / "r.xml")
    assert isinstance(found, JUnitReport)
    assert found.commit() == SHA and found.properties[""] == "nameless" and found.properties["novalue"] == ""
    assert found.outcomes == {"::bare": "passed", "pkg.test_a::t1": "passed", "pkg.test_a::t2": "passed",
                              "pkg.test_a::twice": "failed", "c::x": "skipped", "c::": "passed"}
    assert found.files["pkg.test_a::t1"] == "pkg/test_a.py" and found.files["pkg.test_a::t2"] == "pkg/test_a"
    assert found.files["::bare"] == ""
    assert found.mtime == (tmp_path / "r.xml").stat().st_mtime
    (tmp_path / "plain.xml").write_text("<testsuite/>")
    assert read_junit(tmp_path / "plain.xml").commit() is None  # type: ignore[union-attr]


def test_the_size_cap_and_the_exact_reasons(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tri_agent.testsignals import _junit

    monkeypatch.setattr(_junit, "_MAX", len("<testsuite/>"))
    (tmp_path / "at.xml").write_text("<testsuite/>")
    assert isinstance(read_junit(tmp_path / "at.xml"), JUnitReport)  # the cap itself is read
    (tmp_path / "over.xml").write_text("<testsuite />")
    assert read_junit(tmp_path / "over.xml") == "larger than 256 MiB"
    monkeypatch.undo()
    (tmp_path / "type.xml").write_text("<!DOCTYPE testsuite><testsuite/>")
    assert read_junit(tmp_path / "type.xml") == "holds a document type (entities are refused)"
    (tmp_path / "bad.xml").write_text("<testsuite>")
    assert str(read_junit(tmp_path / "bad.xml")).startswith("does not parse as XML (no element found")
