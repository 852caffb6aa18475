"""Every smell of the table fires on a diff that has it, and stays quiet on an honest change."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tri_agent.acceptance._smells import SMELLS, Change, smells

TEST = """import pytest


def test_total():
    assert total([1, 2]) == 3


def test_empty():
    assert total([]) == 0
"""

RAISES = """

def test_bad_input():
    with pytest.raises(ValueError):
        total(["x"])
"""
TIMED = TEST.replace("def test_total", "@pytest.mark.timeout(2)\ndef test_total")

BAD: dict[str, Change] = {
    "case-id-in-code": Change(path="target/grades.py", old="x = 1\n",
                              new="x = 1\nif 'c-0123456789ab' in path:\n    x = 2\n"),
    "skip-added": Change(path="target/tests/test_total.py", old=TEST,
                         new=TEST.replace("def test_empty", "@pytest.mark.skip(reason='later')\ndef test_empty")),
    "tests-removed": Change(path="target/tests/test_total.py", old=TEST, new=TEST.split("\n\ndef test_empty")[0]),
    "trivial-assert": Change(path="target/test_total.py", old=TEST,
                             new=TEST.replace("assert total([]) == 0", "assert True")),
    "conditional-skip-added": Change(path="target/tests/test_total.py", old=TEST, new=TEST.replace(
        "def test_empty", "@pytest.mark.skipif(sys.platform == 'win32', reason='posix')\ndef test_empty")),
    "test-gutted": Change(path="target/tests/test_total.py", old=TEST,
                          new=TEST.replace("def test_empty():\n", "def test_empty():\n    return\n")),
    "test-shadowed": Change(path="target/tests/test_total.py", old=TEST,
                            new=TEST + "\n\ndef test_empty():\n    assert True is not False\n"),
    "assertions-reduced": Change(path="target/tests/test_total.py", old=TEST,
                                 new=TEST.replace("    assert total([]) == 0", "    total([])")),
    "raises-widened": Change(path="target/tests/test_total.py", old=TEST + RAISES,
                             new=TEST + RAISES.replace("ValueError", "Exception")),
    "flaky-added": Change(path="target/tests/test_total.py", old=TEST,
                          new=TEST.replace("def test_empty", "@pytest.mark.flaky(reruns=5)\ndef test_empty")),
    "timeout-changed": Change(path="target/tests/test_total.py", old=TIMED, new=TIMED.replace("(2)", "(60)")),
    "assertion-caught": Change(path="target/tests/test_total.py", old=TEST, new=TEST.replace(
        "    assert total([]) == 0",
        "    try:\n        assert total([]) == 0\n    except AssertionError:\n        pass")),
    "pytest-hook-added": Change(path="target/tests/conftest.py", old="import pytest\n", new=(
        "import pytest\n\n\ndef pytest_collection_modifyitems(items):\n    items[:] = items[:1]\n")),
    "exception-swallowed": Change(path="target/grades.py", old="def f():\n    g()\n",
                                  new="def f():\n    try:\n        g()\n    except Exception:\n        pass\n"),
}


def test_the_table_is_covered() -> None:
    assert set(BAD) == set(SMELLS)


@pytest.mark.parametrize("name", sorted(SMELLS))
def test_each_smell_fires_on_its_bad_diff(name: str) -> None:
    found = smells([BAD[name]], frozenset({"c-0123456789ab"}))
    assert name in {s.name for s in found}
    hit = next(s for s in found if s.name == name)
    assert hit.severity == SMELLS[name].severity and hit.path == BAD[name].path


def test_an_honest_change_has_no_smell() -> None:
    fix = Change(path="target/grades.py", old="ROUND = 'HALF_EVEN'\n", new="ROUND = 'HALF_UP'\n")
    more = Change(path="target/tests/test_total.py", old=TEST,
                  new=TEST + "\n\ndef test_one():\n    assert total([1]) == 1\n")
    assert smells([fix, more], frozenset({"c-0123456789ab"})) == []


@pytest.mark.parametrize("name,new", [
    ("trivial-assert", TEST.replace("assert total([]) == 0", "assert True, 'ok'")),
    ("trivial-assert", TEST.replace("assert total([]) == 0", "assert 1 == 1")),
    ("trivial-assert", TEST.replace("assert total([]) == 0", "assert not None")),
    ("trivial-assert", TEST.replace("assert total([]) == 0", "assert (total([]) == 0, 'empty')")),
    ("trivial-assert", TEST.replace("assert total([]) == 0", "self.assertTrue(True)")),
    ("skip-added", TEST.replace("def test_empty", "@pytest.mark.skipif(True, reason='later')\ndef test_empty")),
    ("skip-added", TEST.replace("assert total([]) == 0", "raise unittest.SkipTest('later')")),
    ("skip-added", TEST + "\n\n@pytest.mark.parametrize('x', [pytest.param(\n"
                          "    1, marks=pytest.mark.xfail(reason='later'))])\ndef test_param(x):\n    assert x\n"),
    ("skip-added", TEST.replace("import pytest", "import pytest\nlater = pytest.mark.skip(reason='later')")),
    ("trivial-assert", TEST.replace("assert total([]) == 0", "assert 'always'")),
    ("skip-added", TEST.replace("import pytest", "from pytest import mark").replace(
        "def test_empty", "@mark.skip\ndef test_empty")),
    ("skip-added", TEST.replace("import pytest", "from unittest import skip").replace(
        "def test_empty", "@skip('later')\ndef test_empty")),
    ("skip-added", TEST.replace("assert total([]) == 0", "pytest.skip('flaky')")),
    ("skip-added", TEST + "\npytestmark = pytest.mark.xfail(reason='later')\n"),
    ("raises-widened", TEST + RAISES.replace("ValueError", "(ValueError, BaseException)")),
    ("raises-widened", TEST + RAISES.replace("with pytest.raises(ValueError):", "with self.assertRaises(Exception):")),
    ("flaky-added", TEST.replace("import pytest", "from flaky import flaky").replace(
        "def test_empty", "@flaky(max_runs=3)\ndef test_empty")),
    ("conditional-skip-added", TEST.replace("assert total([]) == 0", "pytest.importorskip('numpy')")),
    ("trivial-assert", TEST.replace("assert total([]) == 0", "assert total([]) == 0 or True")),
    ("trivial-assert", TEST.replace("    assert total([]) == 0", "    if False:\n        assert total([]) == 0")),
])
def test_evasions_are_still_smells(name: str, new: str) -> None:
    found = smells([Change(path="target/tests/test_total.py", old=TEST, new=new)])
    assert name in {s.name for s in found}


def test_a_test_moved_to_another_file_is_not_removed() -> None:
    head, tail = TEST.split("\n\ndef test_empty")
    moved = [Change(path="target/tests/test_total.py", old=TEST, new=head + "\n"),
             Change(path="target/tests/test_empty.py", old=None, new="def test_empty" + tail)]
    assert "tests-removed" not in {s.name for s in smells(moved)}
    assert "tests-removed" in {s.name for s in smells(moved[:1])}


def test_a_case_id_without_its_prefix_is_still_named() -> None:
    code = Change(path="target/grades.py", old="", new="KNOWN = 'c-' + '0123456789ab'\n")
    assert {s.name for s in smells([code], frozenset({"c-0123456789ab"}))} == {"case-id-in-code"}


def test_a_skip_variable_or_a_skip_rows_helper_is_not_a_skip() -> None:
    honest = TEST + "\n\ndef test_rows():\n    skip = 2\n    assert skip_rows([1, 2, 3], skip) == [3]\n"
    assert smells([Change(path="target/tests/test_total.py", old=TEST, new=honest)]) == []


def test_honest_idioms_are_not_blockers() -> None:
    cases = {
        "a method called skip": TEST + "\n\ndef test_reader():\n    r = Reader()\n    r.skip(2)\n"
                                       "    assert r.pos == 2\n",
        "reflexive equality": TEST + "\n\ndef test_eq():\n    v = Money(1)\n    assert v == v\n",
        "a renamed test": TEST.replace("def test_empty", "def test_total_of_nothing"),
        "a narrower expected error": TEST + RAISES.replace("ValueError", "ValueError, match='x'"),
        "an unchanged timeout": TIMED.replace("assert total([]) == 0", "assert total([0]) == 0"),
    }
    for what, new in cases.items():
        old = TIMED if what == "an unchanged timeout" else TEST
        found = smells([Change(path="target/tests/test_total.py", old=old, new=new)])
        assert [s for s in found if s.severity == "blocker"] == [], what


def test_conditional_skips_in_a_new_place_block_until_justified() -> None:
    """An optional dependency may be honest, and may be a way out: only the judge's model, citing the spec,
    may clear it (see the judging tests); the table itself never lets it pass."""
    cases = {
        "an optional dependency": TEST + "\n\ndef test_yaml():\n    try:\n        import yaml\n"
                                         "    except ImportError:\n        pytest.skip('no yaml')\n"
                                         "    assert yaml.safe_load('a: 1') == {'a': 1}\n",
        "importorskip": TEST + "\n\ndef test_np():\n    np = pytest.importorskip('numpy')\n"
                               "    assert np.ones(1)[0] == 1\n",
    }
    for what, new in cases.items():
        found = smells([Change(path="target/tests/test_total.py", old=TEST, new=new)])
        assert [s.name for s in found if s.severity == "blocker"] == ["conditional-skip-added"], what


def test_a_new_reason_on_an_old_skip_is_no_new_skip() -> None:
    old = TEST.replace("def test_empty", "@pytest.mark.skip(reason='slow')\ndef test_empty")
    new = old.replace("reason='slow'", "reason='slow on CI'")
    assert smells([Change(path="target/tests/test_total.py", old=old, new=new)]) == []


def test_crafted_deep_code_falls_back_to_lines_instead_of_crashing() -> None:
    deep = "def test_x():\n    assert " + "+".join(["x"] * 3000) + " == 0\n"
    assert smells([Change(path="target/tests/test_deep.py", old=TEST, new=TEST + deep)]) is not None


def test_both_sides_are_read_the_same_way() -> None:
    skipped = TEST.replace("def test_empty", "@pytest.mark.skip(reason='later')\ndef test_empty")
    broken = skipped + "\ntype Alias = int  (\n"  # does not parse: both sides are read as lines
    assert "skip-added" not in {s.name for s in smells([Change(path="target/tests/t_test.py", old=skipped,
                                                                new=broken)])}


def test_test_only_smells_ignore_source_files() -> None:
    source = Change(path="target/grades.py", old=TEST, new=TEST.split("\n\ndef test_empty")[0])
    assert smells([source]) == []


def test_a_case_id_of_no_exam_is_not_a_smell() -> None:
    assert smells([BAD["case-id-in-code"]], frozenset({"c-ffffffffffff"})) == []


def test_a_deleted_test_file_removes_its_tests() -> None:
    gone = Change(path="target/tests/test_total.py", old=TEST, new=None)
    assert {s.detail.split(": ")[1] for s in smells([gone]) if s.name == "tests-removed"} == {
        "test test_total removed", "test test_empty removed"}


@given(st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=300))
def test_unchanged_text_has_no_diff_smell(text: str) -> None:
    # only naming a case is a smell of the text itself rather than of the change
    found = smells([Change(path="target/tests/test_x.py", old=text, new=text)], frozenset({"c-0123456789ab"}))
    assert [s for s in found if s.name != "case-id-in-code"] == []
