"""Every smell of the table fires on a diff that has it, and stays quiet on an honest change."""

from __future__ import annotations

import ast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tri_agent.acceptance._smells import SMELLS, Change, smells
from tri_agent.testcode import BIG_NODES as _BIG_NODES

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
SKIPPED = TEST.replace("def test_empty", "@pytest.mark.skip(reason='later')\ndef test_empty")

# the same two tests, unittest style: line 8 is `def test_empty(self):`, line 9 its only assertion
UNIT = """import unittest


class TotalTest(unittest.TestCase):
    def test_total(self):
        self.assertEqual(total([1, 2]), 3)

    def test_empty(self):
        self.assertEqual(total([]), 0)
"""

# the same two tests in JavaScript: read as lines (line 7 opens the second test, line 8 is its assertion)
JS = """const { total } = require("./total");

test("adds", () => {
  expect(total([1, 2])).toBe(3);
});

test("empty", () => {
  expect(total([])).toBe(0);
});
"""

PATH = "target/tests/test_total.py"
Found = list[tuple[str, int | None, str]]
ONE_FEWER = ("assertions-reduced", None, "2 assertion(s) before, 1 after")


def found(new: str | None, old: str | None = TEST, path: str = PATH) -> Found:
    """(name, line, what) of every smell of one change; what is the detail after the smell's meaning."""
    out: Found = []
    for s in smells([Change(path=path, old=old, new=new)]):
        meaning = f"{SMELLS[s.name].meaning}: "
        assert s.detail.startswith(meaning) and s.severity == SMELLS[s.name].severity and s.path == path
        out.append((s.name, s.line, s.detail.removeprefix(meaning)))
    return out


BAD: dict[str, Change] = {
    "case-id-in-code": Change(path="target/grades.py", old="x = 1\n",
                              new="x = 1\nif 'c-0123456789ab' in path:\n    x = 2\n"),
    "skip-added": Change(path="target/tests/test_total.py", old=TEST, new=SKIPPED),
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
    "assertion-loosened": Change(path="target/tests/test_total.py", old=TEST,
                                 new=TEST.replace("assert total([]) == 0", "assert total([]) is not None")),
    "pytest-config-changed": Change(path="target/pytest.ini", old="[pytest]\naddopts = -q\n",
                                    new="[pytest]\naddopts = -q --deselect tests/test_total.py::test_empty\n"),
    "exception-swallowed": Change(path="target/grades.py", old="def f():\n    g()\n",
                                  new="def f():\n    try:\n        g()\n    except Exception:\n        pass\n"),
    "harness-probe": Change(path="target/grades.py", old="import os\nFIXED = True\n",
                            new="import os\nFIXED = os.getppid() == 1\n"),
    "generated-code": Change(path="target/grades.py", old="import zlib\n",
                             new="import zlib\nexec(zlib.decompress(PACKED))\n"),
    "outcome-forged": Change(path="target/grades.py", old="import os\n",
                             new="import os\nimport _pytest.runner as r\n\nr.call_and_report = print\n"),
}

# what each bad diff reports under its own name: (line in the new text, what was found)
BAD_FOUND: dict[str, list[tuple[int | None, str]]] = {
    "case-id-in-code": [(2, "names case c-0123456789ab")],
    "skip-added": [(8, "test_empty:skip")],
    "tests-removed": [(None, "test test_empty removed")],
    "trivial-assert": [(9, "assert True")],
    "conditional-skip-added": [(8, "test_empty:skipif")],
    "test-gutted": [(None, "test test_empty no longer checks anything")],
    "test-shadowed": [(None, "test test_empty is defined twice: only the last one runs")],
    "assertions-reduced": [(None, "2 assertion(s) before, 1 after")],
    "raises-widened": [(13, "test_bad_input: pytest.raises(Exception)")],
    "flaky-added": [(8, "test_empty: flaky"), (8, "reruns")],
    "timeout-changed": [(4, "test_total: timeout(60)")],
    "assertion-caught": [(11, "test_empty: except AssertionError")],
    "pytest-hook-added": [(4, "pytest_collection_modifyitems")],
    "assertion-loosened": [(9, "test_empty: assert total([]) is not None")],
    "pytest-config-changed": [(2, "addopts: --deselect tests/test_total.py::test_empty")],
    "exception-swallowed": [(4, "except Exception:")],
    "harness-probe": [(2, "reads the parent process (os.getppid)")],
    "generated-code": [(2, "exec: exec(zlib.decompress(PACKED))")],
    "outcome-forged": [(4, "reaches into pytest's, pluggy's or tri-agent's own modules: r.call_and_report = print")],
}


def test_the_table_is_covered() -> None:
    assert set(BAD) == set(SMELLS) == set(BAD_FOUND)


@pytest.mark.parametrize("name", sorted(SMELLS))
def test_each_smell_fires_on_its_bad_diff(name: str) -> None:
    found = smells([BAD[name]], frozenset({"c-0123456789ab"}))
    hits = [s for s in found if s.name == name]
    assert [(s.line, s.detail) for s in hits] == [(line, f"{SMELLS[name].meaning}: {what}")
                                                  for line, what in BAD_FOUND[name]]
    assert {(s.severity, s.path) for s in hits} == {(SMELLS[name].severity, BAD[name].path)}


def test_details_say_what_the_smell_means_then_what_was_found() -> None:
    assert [s.detail for s in smells([BAD["skip-added"]])] == [
        "a test is skipped, focused away or expected to fail: test_empty:skip"]
    assert [s.detail for s in smells([BAD["exception-swallowed"]])] == [
        "an error is caught and dropped: except Exception:"]
    assert [s.severity for s in smells([BAD["exception-swallowed"]])] == ["note"]


def test_removing_a_test_also_reports_its_lost_assertions() -> None:
    assert found(BAD["tests-removed"].new) == [
        ("tests-removed", None, "test test_empty removed"),
        ("assertions-reduced", None, "2 assertion(s) before, 1 after")]


def test_with_no_spec_given_no_harness_reading_is_allowed() -> None:
    # the default spec names nothing, not even a variable whose name looks like a placeholder
    probe = Change(path="target/grades.py", old="import os\n", new="import os\nFIXED = os.environ['XXXX']\n")
    assert [s.name for s in smells([probe])] == ["harness-probe"]


def test_an_existing_forging_move_is_no_new_one() -> None:
    conftest = "import pytest\n\n\ndef pytest_pyfunc_call(pyfuncitem):\n    return True\n"
    change = Change(path="target/tests/conftest.py", old=conftest, new=conftest + "\nLIMIT = 3\n")
    assert [s for s in smells([change]) if s.name == "outcome-forged"] == []
    assert "outcome-forged" in [s.name for s in smells([Change(path=change.path, old="", new=conftest)])]


def test_an_honest_change_has_no_smell() -> None:
    fix = Change(path="target/grades.py", old="ROUND = 'HALF_EVEN'\n", new="ROUND = 'HALF_UP'\n")
    more = Change(path="target/tests/test_total.py", old=TEST,
                  new=TEST + "\n\ndef test_one():\n    assert total([1]) == 1\n")
    assert smells([fix, more], frozenset({"c-0123456789ab"})) == []


# --- skips: which calls are skips, which are conditional, and where they are ---------------------------------

@pytest.mark.parametrize("new,expected", [
    pytest.param(TEST.replace("import pytest", "from pytest import skip").replace(
        "    assert total([]) == 0", "    skip('later')\n    assert total([]) == 0"),
        [("skip-added", 9, "test_empty:skip")], id="pytest's skip imported by name"),
    pytest.param(TEST.replace("import pytest", "import unittest as ut").replace(
        "def test_empty", "@ut.skip('later')\ndef test_empty"),
        [("skip-added", 8, "test_empty:skip")], id="a decorator through a module alias"),
    pytest.param(TEST.replace("import pytest", "import os\nfrom unittest.case import skip\n\n"
                                               "slow = skip('slow') if os.environ.get('FAST') else (lambda f: f)"),
        [("conditional-skip-added", 4, "<module>:skip")], id="unittest's skip imported from a submodule"),
    pytest.param(TEST.replace("def test_empty", "@pytest.mark.skipif(True, reason='later')\ndef test_empty"),
                 [("skip-added", 8, "test_empty:skipif")], id="skipif(True) always skips"),
    pytest.param(TEST.replace("def test_empty", "@pytest.mark.skipif(False, reason='never')\ndef test_empty"),
                 [("conditional-skip-added", 8, "test_empty:skipif")], id="skipif(False) is still a condition"),
    pytest.param(TEST.replace("assert total([]) == 0", "raise unittest.SkipTest('later')"),
                 [("skip-added", 9, "test_empty:SkipTest"), ONE_FEWER],
                 id="raise SkipTest instead of the assertion"),
    pytest.param(TEST.replace("assert total([]) == 0", "pytest.skip('flaky')"),
                 [("skip-added", 9, "test_empty:skip"), ONE_FEWER], id="pytest.skip instead of the assertion"),
    pytest.param(TEST + "\npytestmark = pytest.mark.xfail(reason='later')\n",
                 [("skip-added", 11, "<module>:xfail")], id="a module-wide xfail"),
    pytest.param(TEST + "\n\n@pytest.mark.parametrize('x', [pytest.param(\n"
                        "    1, marks=pytest.mark.xfail(reason='later'))])\ndef test_param(x):\n    assert x\n",
                 [("skip-added", 13, "test_param:xfail")], id="an xfail parameter"),
    pytest.param(TEST.replace("import pytest", "import pytest\nlater = pytest.mark.skip(reason='later')"),
                 [("skip-added", 2, "<module>:skip")], id="a skip mark kept in a variable"),
    pytest.param(TEST.replace("import pytest", "from pytest import mark").replace(
        "def test_empty", "@mark.skip\ndef test_empty"), [("skip-added", 8, "test_empty:skip")], id="mark.skip"),
    pytest.param(TEST.replace("assert total([]) == 0", "pytest.importorskip('numpy')\n    assert total([]) == 0"),
                 [("conditional-skip-added", 9, "test_empty:importorskip")], id="importorskip"),
])
def test_skips_are_found_where_they_are(new: str, expected: Found) -> None:
    assert found(new) == expected


@pytest.mark.parametrize("line9,expected", [
    ("self.skipTest('later')", [("skip-added", 9, "test_empty:skipTest")]),
    ("raise unittest.SkipTest('later')", [("skip-added", 9, "test_empty:SkipTest")]),
    ("if not HAS_DB:\n            self.skipTest('no db')", [("conditional-skip-added", 10, "test_empty:skipTest")]),
    ("if not HAS_DB:\n            raise unittest.SkipTest('no db')",
     [("conditional-skip-added", 10, "test_empty:SkipTest")]),
    ("try:\n            import yaml\n        except ImportError:\n            raise unittest.SkipTest('no yaml')",
     [("conditional-skip-added", 12, "test_empty:SkipTest")]),
])
def test_unittest_skips_in_a_test_body(line9: str, expected: Found) -> None:
    assertion = "        self.assertEqual(total([]), 0)"
    assert found(UNIT.replace(assertion, f"        {line9}\n{assertion}"), old=UNIT) == expected


@pytest.mark.parametrize("decorator,expected", [
    ("@unittest.skip('later')", [("skip-added", 8, "test_empty:skip")]),
    ("@unittest.skipIf(True, 'later')", [("skip-added", 8, "test_empty:skipIf")]),
    ("@unittest.skipUnless(False, 'later')", [("skip-added", 8, "test_empty:skipUnless")]),
    ("@unittest.skipIf(sys.platform == 'win32', 'posix')", [("conditional-skip-added", 8, "test_empty:skipIf")]),
    ("@unittest.skipUnless(HAS_DB, 'no db')", [("conditional-skip-added", 8, "test_empty:skipUnless")]),
    ("@unittest.skipUnless(True, 'always runs')", [("conditional-skip-added", 8, "test_empty:skipUnless")]),
    ("@unittest.expectedFailure", [("skip-added", 8, "test_empty:expectedFailure")]),  # unittest's xfail
])
def test_unittest_skip_decorators(decorator: str, expected: Found) -> None:
    new = UNIT.replace("    def test_empty", f"    {decorator}\n    def test_empty")
    assert found(new, old=UNIT) == expected


@pytest.mark.parametrize("conftest,expected", [
    ("collect_ignore = ['test_slow.py']\n", [("skip-added", 3, "collect_ignore")]),
    ("collect_ignore_glob = ['*_slow.py']\n", [("skip-added", 3, "collect_ignore_glob")]),
    ("collect_ignore = []\ncollect_ignore += ['test_slow.py']\n", [("skip-added", 4, "collect_ignore")]),
    ("print(collect_ignore)\n", []),  # read, not set
    ("collect_ignore = ['test_slow.py']\n\n\n@pytest.fixture\ndef db():\n    pytest.skip('no db')\n",
     [("skip-added", 3, "collect_ignore"), ("skip-added", 8, "db:skip")]),
])
def test_files_pytest_is_told_not_to_collect_are_skips(conftest: str, expected: Found) -> None:
    assert found("import pytest\n\n" + conftest, old="import pytest\n", path="target/tests/conftest.py") == expected


def test_every_skip_of_a_file_is_found_past_look_alikes() -> None:
    """Names that are not skips (a variable, a method, the function a test checks) do not stop the search."""
    new = '''import pytest


def test_rows():
    skip = 2
    assert skip_rows([1, 2, 3], skip) == [3]


def test_reader():
    r = Reader()
    r.skip(2)
    assert r.pos == 2


def test_total():
    pytest.skip('later')
    assert total([1, 2]) == 3


def test_empty():
    if not HAS_TOTAL:
        pytest.skip('no total')
    assert total([]) == 0
'''
    assert found(new) == [("skip-added", 16, "test_total:skip"), ("conditional-skip-added", 22, "test_empty:skip")]


def test_an_unconditional_skip_is_not_hidden_by_a_conditional_one_in_the_same_test() -> None:
    old = TEST.replace("    assert total([]) == 0", "    if not HAS_DB:\n        pytest.skip('no db')\n"
                                                     "    assert total([]) == 0")
    new = old.replace("    if not HAS_DB", "    pytest.skip('later')\n    if not HAS_DB")
    assert found(new, old=old) == [("skip-added", 9, "test_empty:skip")]
    assert found(old, old=new) == []  # taking the skip out again is no new skip


@pytest.mark.parametrize("new", [
    pytest.param(TEST.replace("import pytest", "import pytest\nfrom rows import skip") +
                 "\n\ndef test_rows():\n    assert skip([1, 2, 3], 2) == [3]\n", id="a skip function of the project"),
    pytest.param(TEST + "\n\ndef test_rows():\n    skip = 2\n    assert skip_rows([1, 2, 3], skip) == [3]\n",
                 id="a variable called skip"),
    pytest.param(TEST + "\n\ndef test_reader():\n    r = Reader()\n    r.skip(2)\n    assert r.pos == 2\n",
                 id="a method called skip"),
    pytest.param(TEST.replace("import pytest", "import pytest\nfrom . import skip") +
                 "\n\ndef test_rows():\n    assert skip([1, 2, 3], 2) == [3]\n", id="a relative import"),
])
def test_a_skip_that_is_no_test_skip_is_no_smell(new: str) -> None:
    assert found(new) == []


def test_a_new_reason_on_an_old_skip_is_no_new_skip() -> None:
    old = TEST.replace("def test_empty", "@pytest.mark.skip(reason='slow')\ndef test_empty")
    new = old.replace("reason='slow'", "reason='slow on CI'")
    assert smells([Change(path="target/tests/test_total.py", old=old, new=new)]) == []


def test_a_new_reason_on_an_old_conditional_skip_is_no_new_skip() -> None:
    old = TEST.replace("def test_empty", "@pytest.mark.skipif(sys.platform == 'win32', reason='posix')\n"
                                         "def test_empty")
    assert found(old.replace("reason='posix'", "reason='no fork on windows'"), old=old) == []


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


# --- assertions that cannot fail, and fewer assertions --------------------------------------------------------

@pytest.mark.parametrize("assertion,trivial", [
    ("assert True", "assert True"),
    ("assert True, 'ok'", "assert True, 'ok'"),
    ("assert 1 == 1", "assert 1 == 1"),
    ("assert None is None", "assert None is None"),
    ("assert not None", "assert not None"),
    ("assert 'always'", "assert 'always'"),
    ("assert (total([]) == 0, 'empty')", "assert (total([]) == 0, 'empty')"),
    ("assert [total([]) == 0]", "assert [total([]) == 0]"),
    ("assert {'empty': total([]) == 0}", "assert {'empty': total([]) == 0}"),
    ("assert total([]) == 0 or True", "assert total([]) == 0 or True"),
    ("if False:\n        assert total([]) == 0", "assert total([]) == 0"),
    ("while 0:\n        assert total([]) == 0", "assert total([]) == 0"),
    # always failing or real checks: not trivial
    ("assert []", None),
    ("assert {}", None),
    ("assert not 1", None),
    ("assert 1 == 2", None),
    ("assert 0 or None", None),
    ("assert is_empty(total([]))", None),
    ("assert total([]) is 0", None),
    ("assert 0 < total([]) + 1", None),
    ("if total([]) == 0:\n        assert describe(0) == 'zero'", None),
    ("while pending():\n        assert step() is not None", None),
])
def test_assertions_that_cannot_fail(assertion: str, trivial: str | None) -> None:
    new = TEST.replace("assert total([]) == 0", assertion)
    line = 10 if assertion.startswith(("if ", "while ")) else 9
    assert [f for f in found(new) if f[0] == "trivial-assert"] == ([("trivial-assert", line, trivial)] if trivial
                                                                    else [])


@pytest.mark.parametrize("call,trivial", [
    ("self.assertTrue(True)", True),
    ("self.assertTrue(total([]) == 0 or True)", True),
    ("self.assertEqual(1, 1)", True),
    ("self.assertEqual('a', 'a', 'same')", True),
    ("self.assertIs(None, None)", True),
    ("assertEqual(0, 0)", True),
    ("self.assertTrue(is_empty(total([])))", False),
    ("self.assertTrue(expr=total([]) == 0)", False),
    ("self.assertEqual(0, total([]))", False),
    ("self.assertEqual(total([]), 0)", False),
    ("self.assertEqual(1, 2)", False),
    ("self.assertIs(total([]), 0)", False),
    ("self.assertIn(0, totals([[]]))", False),
    ("self.assertNotEqual('a', 'a')", False),  # always fails: no free pass
    ("self.assertFalse(False)", False),  # not in the table
])
def test_unittest_assertions_that_cannot_fail(call: str, trivial: bool) -> None:
    new = UNIT.replace("self.assertEqual(total([]), 0)", call)
    assert found(new, old=UNIT) == ([("trivial-assert", 9, call)] if trivial else [])


def test_a_long_trivial_assertion_is_cut_to_120_characters() -> None:
    message = ("the total of an empty list is checked by the end-to-end suite in tests/integration/test_totals.py,"
               " see the plan")
    new = TEST.replace("assert total([]) == 0", f"assert True, {message!r}")
    unparsed = f"assert True, {message!r}"
    assert len(unparsed) > 121
    assert found(new) == [("trivial-assert", 9, unparsed[:120])]


def test_an_old_trivial_assertion_is_no_new_one_but_one_more_is() -> None:
    old = TEST.replace("assert total([]) == 0", "assert True\n    assert True")
    assert found(old.replace("assert total([1, 2]) == 3", "assert total([1, 2]) == 3 or 1"), old=old) == [
        ("trivial-assert", 5, "assert total([1, 2]) == 3 or 1")]
    three = old.replace("assert total([1, 2]) == 3", "assert True")
    assert found(three, old=old) == [("trivial-assert", 10, "assert True")]


@pytest.mark.parametrize("old,new,expected", [
    pytest.param(TEST, TEST.replace("    assert total([]) == 0", "    total([])"),
                 "2 assertion(s) before, 1 after", id="a plain assert"),
    pytest.param(UNIT, UNIT.replace("        self.assertEqual(total([]), 0)", "        total([])"),
                 "2 assertion(s) before, 1 after", id="a unittest assertion"),
    pytest.param(TEST.replace("assert total([]) == 0", "assert_total([], 0)"), TEST.replace(
        "assert total([]) == 0", "total([])").replace("assert total([1, 2]) == 3", "check_total([1, 2], 3)"),
                 "2 assertion(s) before, 0 after", id="helpers called assert_*"),
    pytest.param(JS, JS.replace("  expect(total([])).toBe(0);\n", "  total([]);\n"),
                 "2 assertion(s) before, 1 after", id="expect() read as lines"),
])
def test_fewer_assertions_are_counted(old: str, new: str, expected: str) -> None:
    path = "target/src/total.test.js" if old == JS else PATH
    assert found(new, old=old, path=path) == [("assertions-reduced", None, expected)]


def test_more_or_as_many_assertions_are_no_smell() -> None:
    assert found(TEST.replace("assert total([]) == 0", "assert total([]) == 0\n    assert total([0]) == 0")) == []
    assert found(UNIT.replace("self.assertEqual(total([]), 0)", "self.assertIsNone(total([]))"), old=UNIT) == []


# --- removed, gutted and shadowed tests ---------------------------------------------------------------------

def test_a_test_moved_to_another_file_is_not_removed() -> None:
    head, tail = TEST.split("\n\ndef test_empty")
    moved = [Change(path="target/tests/test_total.py", old=TEST, new=head + "\n"),
             Change(path="target/tests/test_empty.py", old=None, new="def test_empty" + tail)]
    assert [s.name for s in smells(moved)] == ["assertions-reduced"]
    assert "tests-removed" in {s.name for s in smells(moved[:1])}


def test_a_test_moved_where_pytest_does_not_collect_it_is_removed() -> None:
    head, tail = TEST.split("\n\ndef test_empty")
    moved = [Change(path="target/tests/test_total.py", old=TEST, new=head + "\n"),
             Change(path="target/helpers.py", old=None, new="def test_empty" + tail)]
    assert [(s.name, s.path, s.detail) for s in smells(moved) if s.name == "tests-removed"] == [
        ("tests-removed", "target/tests/test_total.py",
         "a test disappeared: no file defines it, or pytest no longer collects it: test test_empty removed")]


def test_a_renamed_test_with_the_same_body_is_not_removed_but_a_changed_one_is() -> None:
    assert found(TEST.replace("def test_empty", "def test_total_of_nothing")) == []
    assert found(TEST.replace("def test_empty():\n    assert total([]) == 0",
                              "def test_total_of_nothing():\n    assert total([0]) == 0")) == [
        ("tests-removed", None, "test test_empty removed")]


def test_a_deleted_test_file_removes_its_tests() -> None:
    assert found(None) == [("tests-removed", None, "test test_empty removed"),
                           ("tests-removed", None, "test test_total removed"),
                           ("assertions-reduced", None, "2 assertion(s) before, 0 after")]


def test_a_new_file_and_a_file_that_never_was_remove_nothing() -> None:
    assert found(TEST, old=None) == []
    assert found(None, old=None) == []


def test_tests_read_as_lines_are_compared_by_name() -> None:
    removed = JS.split('\ntest("empty"')[0]
    assert found(removed, old=JS, path="target/src/total.test.js") == [
        ("tests-removed", None, "test empty removed"), ("assertions-reduced", None, "2 assertion(s) before, 1 after")]
    renamed = JS.replace('test("empty"', 'test("an empty list"')
    assert found(renamed, old=JS, path="target/src/total.test.js") == [
        ("tests-removed", None, "test empty removed")]


@pytest.mark.parametrize("body,gutted", [
    ("    return\n    assert total([]) == 0\n", True),
    ('    """Checked elsewhere."""\n', True),
    ("    pass\n", True),
    ("    ...\n", True),
    ('    """Checked elsewhere."""\n    pass\n    pass\n', True),
    ("    if total([]):\n        return\n    assert total([]) == 0\n", False),
    ("    pass\n    assert total([]) == 0\n", False),
])
def test_gutted_tests(body: str, gutted: bool) -> None:
    new = TEST.replace("    assert total([]) == 0\n", body)
    assert [f for f in found(new) if f[0] == "test-gutted"] == (
        [("test-gutted", None, "test test_empty no longer checks anything")] if gutted else [])


def test_an_already_gutted_test_is_no_new_smell() -> None:
    old = TEST.replace("    assert total([]) == 0\n", "    pass\n")
    assert found(old.replace("    pass\n", "    ...\n"), old=old) == []


# --- retries, timeouts, widened errors, caught assertions, hooks --------------------------------------------

@pytest.mark.parametrize("new,expected", [
    pytest.param(TEST.replace("import pytest", "from flaky import flaky").replace(
        "def test_empty", "@flaky\ndef test_empty"), [(8, "test_empty: flaky")], id="@flaky"),
    pytest.param(TEST.replace("import pytest", "from flaky import flaky").replace(
        "def test_empty", "@flaky(max_runs=3)\ndef test_empty"), [(8, "test_empty: flaky")], id="@flaky(max_runs)"),
    pytest.param(TEST.replace("def test_empty", "@pytest.mark.flaky\ndef test_empty"),
                 [(8, "test_empty: flaky")], id="@pytest.mark.flaky"),
    pytest.param(TEST.replace("def test_empty", "@pytest.mark.flaky(\n    reruns=5,\n    reruns_delay=1,\n)\n"
                                                "def test_empty"),
                 [(8, "test_empty: flaky"), (9, "reruns")], id="reruns on a line of its own"),
    pytest.param(TEST.replace("import pytest", "from tenacity import retry, stop_after_attempt").replace(
        "def test_empty", "@retry(stop=stop_after_attempt(3))\ndef test_empty"),
        [(8, "test_empty: retry")], id="tenacity's @retry"),
    pytest.param(TEST + "\npytestmark = pytest.mark.flaky(reruns=2)\n",
                 [(11, "<module>: flaky"), (11, "reruns")], id="a module-wide flaky mark"),
    pytest.param(TEST + "\n\n@pytest.mark.parametrize('x', [pytest.param(1, marks=pytest.mark.flaky)])\n"
                        "def test_param(x):\n    assert x\n", [(12, "test_param: flaky")], id="a flaky parameter"),
])
def test_retries_are_found_where_they_are(new: str, expected: list[tuple[int, str]]) -> None:
    assert found(new) == [("flaky-added", line, what) for line, what in expected]


def test_every_test_retried_from_conftest_is_flaky() -> None:
    conftest = "import pytest\n\n\ndef pytest_configure(config):\n    config.option.reruns = 3\n"
    assert found(conftest, old="import pytest\n", path="target/tests/conftest.py") == [("flaky-added", 5, "reruns")]
    marker = ("import pytest\n\n\ndef pytest_collection_modifyitems(items):\n    for item in items:\n"
              "        item.add_marker(pytest.mark.flaky(reruns=2))\n")
    assert found(marker, old="import pytest\n", path="target/tests/conftest.py") == [
        ("flaky-added", 6, "pytest_collection_modifyitems: flaky"), ("flaky-added", 6, "reruns"),
        ("pytest-hook-added", 4, "pytest_collection_modifyitems")]


@pytest.mark.parametrize("new", [
    pytest.param(TEST + "\n\ndef test_repeat():\n    assert repeat('ab', 2) == 'abab'\n",
                 id="a function called repeat"),
    pytest.param(TEST + "\n\ndef test_client():\n    client = Client(retry=3)\n    client.retry(2)\n"
                        "    assert client.calls == 3\n", id="a method and a keyword called retry"),
    pytest.param(TEST + "\n\ndef test_backoff():\n    retry = Retry(total=3)\n    assert retry.total == 3\n",
                 id="a variable called retry"),
    pytest.param(TEST + "\n\ndef test_plan():\n    assert plan(reruns=2).runs == 3\n", id="an argument called reruns"),
])
def test_code_under_test_called_retry_is_not_a_retry(new: str) -> None:
    assert found(new) == []


@pytest.mark.parametrize("old,new,expected", [
    pytest.param(TEST, TIMED, [(4, "test_total: timeout(2)")], id="a new timeout"),
    pytest.param(TIMED, TIMED.replace("(2)", "(60)"), [(4, "test_total: timeout(60)")], id="a longer one"),
    pytest.param(TEST, TEST + "\npytestmark = pytest.mark.timeout(600)\n", [(11, "<module>: timeout(600)")],
                 id="a module-wide timeout"),
    pytest.param(TEST, TEST.replace("def test_empty", "@pytest.mark.timeout(timeout=60)\ndef test_empty"),
                 [(8, "test_empty: timeout()"), (8, "test_empty: timeout=60")], id="a timeout by keyword"),
    pytest.param(TEST + "\n\ndef test_cli():\n    run(['total'], timeout=5)\n",
                 TEST + "\n\ndef test_cli():\n    run(['total'], timeout=60)\n",
                 [(13, "test_cli: timeout=60")], id="a call's timeout"),
    pytest.param(TEST + "\n\ndef test_cli():\n    run(['total'], timeout=5)\n",
                 TEST + "\n\ndef test_cli():\n    run(['total'], timeout=LIMIT)\n",
                 [(13, "test_cli: timeout=LIMIT")], id="a timeout moved into a name"),
    pytest.param(TIMED, TIMED.replace("assert total([]) == 0", "assert total([0]) == 0"), [], id="unchanged"),
])
def test_changed_timeouts(old: str, new: str, expected: list[tuple[int, str]]) -> None:
    assert found(new, old=old) == [("timeout-changed", line, what) for line, what in expected]


@pytest.mark.parametrize("new,expected", [
    pytest.param(TEST + RAISES.replace("ValueError", "Exception"),
                 [(13, "test_bad_input: pytest.raises(Exception)")], id="Exception"),
    pytest.param(TEST + RAISES.replace("ValueError", "(ValueError, BaseException)"),
                 [(13, "test_bad_input: pytest.raises((ValueError, BaseException))")], id="a tuple"),
    pytest.param(TEST + RAISES.replace("with pytest.raises(ValueError):", "with self.assertRaises(Exception):"),
                 [(13, "test_bad_input: self.assertRaises(Exception)")], id="unittest"),
    pytest.param(TEST + RAISES.replace("ValueError", "ValueError, match='x'"), [], id="narrower"),
    pytest.param(TEST + RAISES + RAISES.replace("bad_input", "missing").replace("ValueError", "KeyError"), [],
                 id="a new test expecting a precise error"),
])
def test_widened_expected_errors(new: str, expected: list[tuple[int, str]]) -> None:
    assert found(new, old=TEST + RAISES) == [("raises-widened", line, what) for line, what in expected]


@pytest.mark.parametrize("handler,expected", [
    ("except AssertionError:", "test_empty: except AssertionError"),
    ("except (AssertionError, ValueError):", "test_empty: except (AssertionError, ValueError)"),
    ("except builtins.AssertionError as e:", "test_empty: except builtins.AssertionError"),
    ("except ValueError:", None),
])
def test_caught_assertions(handler: str, expected: str | None) -> None:
    new = TEST.replace("    assert total([]) == 0", f"    try:\n        assert total([]) == 0\n    {handler}\n"
                                                     "        pass")
    assert found(new) == ([("assertion-caught", 11, expected)] if expected else [])


@pytest.mark.parametrize("hook", ["pytest_collection_modifyitems", "pytest_runtest_setup", "pytest_collect_file",
                                  "pytest_report_teststatus"])
def test_pytest_hooks_that_can_drop_tests(hook: str) -> None:
    conftest = f"import pytest\n\n\ndef {hook}(*args):\n    return None\n"
    assert found(conftest, old="import pytest\n", path="target/tests/conftest.py") == [
        ("pytest-hook-added", 4, hook)]
    harmless = "import pytest\n\n\ndef pytest_addoption(parser):\n    parser.addoption('--slow')\n"
    assert found(harmless, old="import pytest\n", path="target/tests/conftest.py") == []


def test_one_more_swallowed_error_is_one_note() -> None:
    two = "def f():\n    try:\n        g()\n    except Exception:\n        pass\n" * 2
    assert found(two + "def h():\n    try:\n        g()\n    except:\n        ...\n", old=two,
                 path="target/grades.py") == [("exception-swallowed", 14, "except:")]
    assert found(two + two[:52], old=two, path="target/grades.py") == [("exception-swallowed", 14, "except Exception:")]


# --- text read as lines: other languages, Python that does not parse, trees too big to read ------------------

JS_PATH = "target/src/total.test.js"


@pytest.mark.parametrize("new,expected", [
    pytest.param(JS.replace('test("empty"', 'test.skip("empty"'),
                 [("skip-added", 7, 'test.skip("empty", () => {'), ("tests-removed", None, "test empty removed")],
                 id="test.skip"),
    pytest.param(JS.replace('test("empty"', 'it("empty"').replace("expect(total([])).toBe(0)",
                                                                  "expect(true).toBe(true)"),
                 [("trivial-assert", 8, "expect(true).toBe(true);")], id="it() and expect(true)"),
])
def test_other_languages_are_read_as_lines(new: str, expected: Found) -> None:
    assert found(new, old=JS, path=JS_PATH) == expected


PY2 = TEST + '\n\ndef test_legacy():\n    print "legacy"\n'  # does not parse: read as lines


@pytest.mark.parametrize("new,path,expected", [
    pytest.param(PY2.replace("def test_empty", "@pytest.mark.skip(reason='later')\ndef test_empty"), PATH,
                 [("skip-added", 8, "@pytest.mark.skip(reason='later')")], id="skip"),
    pytest.param(PY2.replace("def test_empty", "@pytest.mark.skipif(sys.platform == 'win32', reason='posix')\n"
                                               "def test_empty"), PATH,
                 [("conditional-skip-added", 8, "@pytest.mark.skipif(sys.platform == 'win32', reason='posix')")],
                 id="skipif"),
    pytest.param(PY2.replace("    assert total([]) == 0", "    try:\n        assert total([]) == 0\n"
                                                           "    except AssertionError:\n        pass"), PATH,
                 [("assertion-caught", 11, "except AssertionError:")], id="except AssertionError"),
    pytest.param(PY2.replace("def test_empty", "@pytest.mark.flaky(reruns=2)\ndef test_empty"), PATH,
                 [("flaky-added", 8, "@pytest.mark.flaky(reruns=2)")], id="flaky"),
    pytest.param(PY2.replace("def test_empty", "@pytest.mark.timeout(60)\ndef test_empty"), PATH,
                 [("timeout-changed", 8, "@pytest.mark.timeout(60)")], id="timeout"),
    pytest.param(PY2 + RAISES.replace("ValueError", "Exception"), PATH,
                 [("raises-widened", 17, "with pytest.raises(Exception):")], id="raises"),
    pytest.param(PY2.replace("assert total([]) == 0", "assert True"), PATH,
                 [("trivial-assert", 9, "assert True")], id="assert True"),
    pytest.param(PY2.replace("def test_empty", "def pytest_collection_modifyitems(items):\n    pass\n\n\n"
                                               "def test_empty"), "target/tests/conftest.py",
                 [("pytest-hook-added", 8, "def pytest_collection_modifyitems(items):")], id="hook"),
])
def test_python_that_does_not_parse_is_read_as_lines(new: str, path: str, expected: Found) -> None:
    assert found(new, old=PY2, path=path) == expected


def test_both_sides_are_read_the_same_way() -> None:
    broken = SKIPPED + "\ntype Alias = int  (\n"  # does not parse: both sides are read as lines
    assert found(broken, old=SKIPPED, path="target/tests/t_test.py") == []
    assert found(SKIPPED, old=broken, path="target/tests/t_test.py") == []


def test_crafted_deep_code_falls_back_to_lines_instead_of_crashing() -> None:
    deep = "def test_x():\n    assert " + "+".join(["x"] * 3000) + " == 0\n"
    assert found(SKIPPED + deep) == [("skip-added", 8, "@pytest.mark.skip(reason='later')")]


def _with_nodes(text: str, nodes: int) -> str:
    """``text`` with a list of zeros that brings its syntax tree to exactly ``nodes`` nodes."""
    base = sum(1 for _ in ast.walk(ast.parse(text + "DATA = []\n")))
    return text + "DATA = [" + "0, " * (nodes - base) + "]\n"


@pytest.mark.parametrize("nodes,expected", [
    (_BIG_NODES // 2 + 1, "test_empty:skip"),
    (_BIG_NODES - 1, "test_empty:skip"),
    (_BIG_NODES, "@pytest.mark.skip(reason='later')"),
])
def test_a_syntax_tree_too_big_to_read_falls_back_to_lines(nodes: int, expected: str) -> None:
    new = _with_nodes(SKIPPED, nodes)
    assert sum(1 for _ in ast.walk(ast.parse(new))) == nodes
    assert found(new) == [("skip-added", 8, expected)]


# --- which files, which cases ------------------------------------------------------------------------------

def test_test_only_smells_ignore_source_files() -> None:
    source = Change(path="target/grades.py", old=TEST, new=TEST.split("\n\ndef test_empty")[0])
    assert smells([source]) == []


def test_a_case_id_without_its_prefix_is_still_named() -> None:
    code = Change(path="target/grades.py", old="", new="KNOWN = 'c-' + '0123456789ab'\n")
    assert [(s.name, s.line, s.detail) for s in smells([code], frozenset({"c-0123456789ab"}))] == [
        ("case-id-in-code", 1, "the code names a case of the exam: it recognises a test: names case c-0123456789ab")]


def test_a_case_id_of_no_exam_is_not_a_smell() -> None:
    assert smells([BAD["case-id-in-code"]], frozenset({"c-ffffffffffff"})) == []


@given(st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=300))
def test_unchanged_text_has_no_diff_smell(text: str) -> None:
    # only naming a case is a smell of the text itself rather than of the change
    found = smells([Change(path="target/tests/test_x.py", old=text, new=text)], frozenset({"c-0123456789ab"}))
    assert [s for s in found if s.name != "case-id-in-code"] == []


# --- evasions: aliases, dynamic access, keyword forms, named constants, config files ------------------------

@pytest.mark.parametrize("head,line9,expected", [
    pytest.param("import pytest as pt", "pt.importorskip('numpy')",
                 [("conditional-skip-added", 9, "test_empty:importorskip")], id="pt.importorskip"),
    pytest.param("import pytest as pt", "pt.skip('later')", [("skip-added", 9, "test_empty:skip")], id="pt.skip"),
    pytest.param("from pytest import importorskip as ios", "ios('numpy')",
                 [("conditional-skip-added", 9, "test_empty:importorskip")], id="importorskip as ios"),
    pytest.param("from pytest import skip as later", "later('not now')", [("skip-added", 9, "test_empty:skip")],
                 id="skip as later"),
    pytest.param("from pytest import xfail as known", "known('bug')", [("skip-added", 9, "test_empty:xfail")],
                 id="xfail as known"),
    pytest.param("from _pytest.outcomes import skip", "skip('later')", [("skip-added", 9, "test_empty:skip")],
                 id="skip from pytest's private module"),
    pytest.param("import pytest", "getattr(pytest, 'skip')('later')", [("skip-added", 9, "test_empty:skip")],
                 id="getattr(pytest, 'skip')"),
    pytest.param("import pytest", "getattr(pytest, 'importorskip')('numpy')",
                 [("conditional-skip-added", 9, "test_empty:importorskip")], id="getattr(pytest, 'importorskip')"),
])
def test_aliased_and_dynamic_skips_in_a_test_body(head: str, line9: str, expected: Found) -> None:
    old = TEST.replace("import pytest", head)
    new = old.replace("    assert total([]) == 0", f"    {line9}\n    assert total([]) == 0")
    assert found(new, old=old) == expected


@pytest.mark.parametrize("head,decorator", [
    pytest.param("import pytest as pt", "@pt.mark.xfail", id="pt.mark.xfail"),
    pytest.param("import pytest as pt", "@pt.mark.xfail(reason='bug')", id="pt.mark.xfail(reason)"),
    pytest.param("import pytest", "@getattr(pytest.mark, 'xfail')", id="getattr(pytest.mark, 'xfail')"),
    pytest.param("import pytest as pt", "@getattr(pt.mark, 'xfail')(reason='bug')", id="getattr on an alias"),
    pytest.param("from pytest import mark as m", "@getattr(m, 'xfail')", id="getattr on an imported mark"),
])
def test_aliased_and_dynamic_xfail_marks(head: str, decorator: str) -> None:
    old = TEST.replace("import pytest", head)
    assert found(old.replace("def test_empty", f"{decorator}\ndef test_empty"), old=old) == [
        ("skip-added", 8, "test_empty:xfail")]


def test_getattr_with_a_default_or_a_computed_name_is_not_resolved() -> None:
    for call in ("getattr(pytest, name)('later')", "getattr(runner, 'skip', None)(2)"):
        assert found(TEST.replace("    assert total([]) == 0", f"    {call}\n    assert total([]) == 0")) == [], call


NARROW = TEST + RAISES.replace("ValueError", "{old}")


@pytest.mark.parametrize("old,new,expected", [
    pytest.param(TEST + RAISES, TEST.replace("import pytest", "import pytest as pt") +
                 RAISES.replace("pytest.raises(ValueError)", "pt.raises(Exception)"),
                 [(13, "test_bad_input: pytest.raises(Exception)")], id="pt.raises"),
    pytest.param(TEST + RAISES, TEST.replace("import pytest", "from pytest import raises as expect") +
                 RAISES.replace("pytest.raises(ValueError)", "expect(Exception)"),
                 [(13, "test_bad_input: pytest.raises(Exception)")], id="raises imported as expect"),
    pytest.param(TEST + RAISES, TEST + RAISES.replace("ValueError", "expected_exception=Exception"),
                 [(13, "test_bad_input: pytest.raises(expected_exception=Exception)")], id="by keyword"),
    pytest.param(TEST + RAISES, TEST + RAISES.replace("pytest.raises(ValueError)",
                                                      "getattr(pytest, 'raises')(BaseException)"),
                 [(13, "test_bad_input: pytest.raises(BaseException)")], id="getattr(pytest, 'raises')"),
    pytest.param(NARROW.format(old="ZeroDivisionError"), NARROW.format(old="ArithmeticError"),
                 [(13, "test_bad_input: pytest.raises(ArithmeticError)")], id="a builtin base class"),
    pytest.param(NARROW.format(old="KeyError"), NARROW.format(old="LookupError"),
                 [(13, "test_bad_input: pytest.raises(LookupError)")], id="KeyError to LookupError"),
    pytest.param(NARROW.format(old="UnicodeDecodeError"), NARROW.format(old="expected_exception=ValueError"),
                 [(13, "test_bad_input: pytest.raises(expected_exception=ValueError)")], id="two levels up"),
    pytest.param(NARROW.format(old="KeyError"), NARROW.format(old="(KeyError, OSError)"),
                 [(13, "test_bad_input: pytest.raises((KeyError, OSError))")], id="one more class in a tuple"),
    pytest.param(NARROW.format(old="KeyError"), NARROW.format(old="IndexError"), [], id="a sibling"),
    pytest.param(NARROW.format(old="LookupError"), NARROW.format(old="KeyError"), [], id="narrower"),
    pytest.param(NARROW.format(old="BadInput"), NARROW.format(old="ValueError"), [], id="a class of the project"),
    pytest.param(NARROW.format(old="(KeyError, OSError)"), NARROW.format(old="(OSError, KeyError)"), [],
                 id="the same tuple reordered"),
])
def test_expected_errors_widened_however_written(old: str, new: str, expected: list[tuple[int, str]]) -> None:
    assert found(new, old=old) == [("raises-widened", line, what) for line, what in expected]


def test_an_old_base_class_next_to_its_subclass_is_no_new_widening_but_one_more_is() -> None:
    both = NARROW.format(old="KeyError") + "    with pytest.raises(LookupError):\n        total(['y'])\n"
    assert found(both.replace("['y']", "['z']"), old=both) == []
    assert found(both + "    with pytest.raises(LookupError):\n        total(['z'])\n", old=both) == [
        ("raises-widened", 17, "test_bad_input: pytest.raises(LookupError)")]


CLI = "\n\ndef test_cli():\n    run(['total'], timeout={})\n"


@pytest.mark.parametrize("old,new,expected", [
    pytest.param("LIMIT = 5\n" + TEST + CLI.format("LIMIT"), "LIMIT = 500\n" + TEST + CLI.format("LIMIT"),
                 [(14, "test_cli: timeout=500")], id="a module constant raised"),
    pytest.param("LIMIT: float = 5\n" + TEST + CLI.format("LIMIT * 2"),
                 "LIMIT: float = 50\n" + TEST + CLI.format("LIMIT * 2"),
                 [(14, "test_cli: timeout=50 * 2")], id="an annotated constant in an expression"),
    pytest.param("LIMIT = 5\n" + TIMED.replace("timeout(2)", "timeout(LIMIT)"),
                 "LIMIT = 60\n" + TIMED.replace("timeout(2)", "timeout(LIMIT)"),
                 [(5, "test_total: timeout(60)")], id="a mark's constant"),
    pytest.param(TEST + CLI.format(5), "LIMIT = 5\n" + TEST + CLI.format("LIMIT"), [],
                 id="a value moved into a constant is the same limit"),
    pytest.param("LIMIT = 5\nLIMIT = 6\n" + TEST + CLI.format("LIMIT"),
                 "LIMIT = 5\nLIMIT = 600\n" + TEST + CLI.format("LIMIT"), [(15, "test_cli: timeout=600")],
                 id="a name bound twice has its last value"),
])
def test_timeouts_kept_in_module_constants(old: str, new: str, expected: list[tuple[int, str]]) -> None:
    assert found(new, old=old) == [("timeout-changed", line, what) for line, what in expected]


@pytest.mark.parametrize("weaker", [
    "assert total([]) is not None",
    "assert total([]) != None",
    "assert None is not total([])",
    "assert total([])",
    "assert bool(total([]))",
    "assert isinstance(total([]), int)",
])
def test_an_exact_check_loosened_to_an_existence_check(weaker: str) -> None:
    assert found(TEST.replace("assert total([]) == 0", weaker)) == [
        ("assertion-loosened", 9, f"test_empty: {weaker}")]


@pytest.mark.parametrize("exact,weaker", [
    ("self.assertEqual(total([]), 0)", "self.assertIsNotNone(total([]))"),
    ("self.assertEqual(total([]), 0)", "self.assertTrue(total([]))"),
    ("self.assertEqual(total([]), 0)", "self.assertIsInstance(total([]), int)"),
    ("self.assertTrue(total([]) == 0)", "self.assertTrue(total([]) is not None)"),
])
def test_a_unittest_check_loosened(exact: str, weaker: str) -> None:
    old = UNIT.replace("self.assertEqual(total([]), 0)", exact)
    assert found(old.replace(exact, weaker), old=old) == [("assertion-loosened", 9, f"test_empty: {weaker}")]
    assert found(old.replace(exact, "self.assertTrue(total([]) == 0 + 0)"), old=old) == []  # still exact


@pytest.mark.parametrize("new", [
    pytest.param(TEST.replace("assert total([]) == 0", "assert total([]) is not None\n    assert total([]) == 0"),
                 id="the exact check is kept"),
    pytest.param(TEST.replace("assert total([]) == 0", "assert total([0]) is not None"), id="another subject"),
    pytest.param(TEST + "\n\ndef test_more():\n    assert total([])\n", id="another test"),
    pytest.param(TEST.replace("assert total([]) == 0", "assert total([]) <= 0"), id="another comparison"),
])
def test_a_weaker_check_beside_or_away_from_an_exact_one_is_not_loosened(new: str) -> None:
    assert [f for f in found(new) if f[0] == "assertion-loosened"] == []


@pytest.mark.parametrize("old,new", [
    # a comparison with None is an exact check of its own: the value is pinned to None
    pytest.param("assert total([]) == 0", "assert total([]) == None", id="== None"),
    # an inequality between two values is a comparison, not an existence check of either
    pytest.param("assert total([]) == limit", "assert total([]) != limit", id="!= a name"),
    # the message of assertEqual is no value it checks
    pytest.param("assert total([]) == 0, note", "assert total([]) == 0\n    assert note", id="a message"),
])
def test_a_comparison_is_no_existence_check(old: str, new: str) -> None:
    before = TEST.replace("assert total([]) == 0", old)
    assert [f for f in found(before.replace(old, new), old=before) if f[0] == "assertion-loosened"] == []


def test_the_message_of_assert_equal_is_not_a_checked_value() -> None:
    old = UNIT.replace("self.assertEqual(total([]), 0)", "self.assertEqual(total([]), 0, note)")
    new = old.replace("self.assertEqual(total([]), 0, note)", "self.assertEqual(total([]), 0)\n        "
                      "self.assertIsNotNone(note)")
    assert [f for f in found(new, old=old) if f[0] == "assertion-loosened"] == []


@pytest.mark.parametrize("exact,weaker", [
    # any expression asserted alone is checked only for being true
    ("assert total([]) + 1 == 1", "assert total([]) + 1"),
    ("assert (total([]) or spare) == 1", "assert total([]) or spare"),
    # assertIsNotNone checks its argument as written, a call of bool() included
    ("self.assertEqual(bool(total([])), False)", "self.assertIsNotNone(bool(total([])))"),
])
def test_any_expression_asserted_alone_is_an_existence_check(exact: str, weaker: str) -> None:
    base = UNIT.replace("self.assertEqual(total([]), 0)", exact) if exact.startswith("self.") else \
        TEST.replace("assert total([]) == 0", exact)
    assert found(base.replace(exact, weaker), old=base) == [("assertion-loosened", 9, f"test_empty: {weaker}")]


def test_a_loosened_check_is_shown_in_its_first_120_characters() -> None:
    subject = "total([" + ", ".join(str(n) for n in range(60)) + "])"
    old = TEST.replace("assert total([]) == 0", f"assert {subject} == 0")
    weaker = f"assert {subject} is not None"
    assert found(old.replace(f"assert {subject} == 0", weaker), old=old) == [
        ("assertion-loosened", 9, f"test_empty: {weaker[:120]}")]


def test_odd_calls_in_tests_are_read_without_error() -> None:
    # an existence check with nothing to check, a raises that names no error, a raises of a builtin that is no
    # exception: read, never an internal error
    new = TEST + "\n\ndef test_odd():\n    assert bool()\n    with pytest.raises(match='x'):\n        f()\n" \
        "    with pytest.raises(len):\n        f()\n"
    old = TEST + "\n\ndef test_odd():\n    with pytest.raises(ValueError):\n        f()\n"
    assert [f for f in found(new, old=old) if f[0] in ("assertion-loosened", "raises-widened")] == []


def test_an_old_loose_check_is_no_new_one() -> None:
    old = TEST.replace("assert total([]) == 0", "assert total([]) == 0\n    assert total([]) is not None")
    assert found(old.replace("assert total([]) == 0\n", ""), old=old) == [
        ("assertions-reduced", None, "3 assertion(s) before, 2 after")]


PYTEST_INI = "[pytest]\naddopts = -q\ntestpaths = tests\n"


@pytest.mark.parametrize("path,old,new,expected", [
    pytest.param("target/pytest.ini", PYTEST_INI, PYTEST_INI.replace("-q", "-q --deselect tests/test_a.py::test_b"),
                 [(2, "addopts: --deselect tests/test_a.py::test_b")], id="--deselect"),
    pytest.param("target/pytest.ini", PYTEST_INI, PYTEST_INI.replace("-q", "-q\n    -k 'not slow'"),
                 [(3, "addopts: -k not slow")], id="-k on a continuation line"),
    pytest.param("target/pytest.ini", PYTEST_INI, PYTEST_INI.replace("-q", "-q -knot_slow -x"),
                 [(2, "addopts: -k not_slow"), (2, "addopts: -x")], id="-k glued to its value and -x"),
    pytest.param("target/setup.cfg", "[metadata]\nname = total\n",
                 "[metadata]\nname = total\n\n[tool:pytest]\naddopts = -p no:randomly --ignore=tests/test_slow.py\n",
                 [(5, "addopts: -p no:randomly"), (5, "addopts: --ignore=tests/test_slow.py")], id="setup.cfg"),
    pytest.param("target/tox.ini", "[tox]\nenvlist = py311\n\n[pytest]\naddopts = -q\n",
                 "[tox]\nenvlist = py311\n\n[pytest]\naddopts = -q --timeout 600 -m 'not db'\n",
                 [(5, "addopts: --timeout 600"), (5, "addopts: -m not db")], id="tox.ini"),
    pytest.param("target/pyproject.toml", "[tool.pytest.ini_options]\naddopts = '-q'\n",
                 "[tool.pytest.ini_options]\naddopts = '-q --maxfail=1 --deselect=tests/test_a.py'\n",
                 [(2, "addopts: --maxfail=1"), (2, "addopts: --deselect=tests/test_a.py")], id="pyproject"),
    pytest.param("target/pyproject.toml", "[tool.pytest.ini_options]\naddopts = ['-q']\n",
                 "[tool.pytest.ini_options]\naddopts = [\n    '-q',\n    '-p', 'no:cacheprovider',\n]\n",
                 [(4, "addopts: -p no:cacheprovider")], id="pyproject's list form"),
    pytest.param("target/pytest.ini", PYTEST_INI + "timeout = 5\n", PYTEST_INI + "timeout = 500\n",
                 [(4, "timeout: 500")], id="a raised timeout option"),
    pytest.param("target/pyproject.toml", "[project]\nname = 'total'\n",
                 "[project]\nname = 'total'\n\n[tool.pytest.ini_options]\ntimeout = 300\n",
                 [(5, "timeout: 300")], id="a new timeout option"),
    pytest.param("target/pytest.ini", PYTEST_INI, PYTEST_INI.replace("-q", "-q -o timeout=600 -o cache_dir=.c "
                                                                      "--override-ini=testpaths=tests/unit -rxs"),
                 [(2, "addopts: -o timeout=600"), (2, "addopts: --override-ini=testpaths=tests/unit")],
                 id="ini options overridden in addopts, and -rxs which is no -x"),
    pytest.param("target/pytest.ini", PYTEST_INI, PYTEST_INI.replace("tests", "tests/unit"),
                 [(3, "testpaths: tests/unit")], id="fewer test paths"),
    pytest.param("target/tests/pytest.ini", None, "[pytest]\npython_functions = check_*\n",
                 [(2, "python_functions: check_*")], id="a new config file"),
])
def test_pytest_told_to_run_fewer_tests_or_wait_longer(path: str, old: str | None, new: str,
                                                       expected: Found) -> None:
    assert [f for f in found(new, old=old, path=path) if f[0] == "pytest-config-changed"] == [
        ("pytest-config-changed", line, what) for line, what in expected]


@pytest.mark.parametrize("path,old,new", [
    pytest.param("target/pytest.ini", PYTEST_INI, PYTEST_INI.replace("-q", "-q -ra --strict-markers"),
                 id="report options"),
    pytest.param("target/setup.cfg", "[flake8]\nmax-line-length = 100\n",
                 "[flake8]\nmax-line-length = 120\nselect = -k\ntimeout = 9\n", id="another tool's section"),
    pytest.param("target/pyproject.toml", "[tool.ruff]\nline-length = 100\n",
                 "[tool.ruff]\nline-length = 120\n\n[tool.other]\naddopts = '-x'\n", id="another tool's table"),
    pytest.param("target/pytest.ini", PYTEST_INI + "timeout = 5\n", "[pytest]\ntimeout = 5\naddopts = -q\n"
                                                                    "testpaths = tests\n", id="reordered"),
    pytest.param("target/notes.ini", "", "[pytest]\naddopts = -x\n", id="not a file pytest reads"),
])
def test_config_changes_that_select_and_wait_the_same_are_no_smell(path: str, old: str, new: str) -> None:
    assert found(new, old=old, path=path) == []


@pytest.mark.parametrize("path,new,expected", [
    pytest.param("target/pyproject.toml", "[tool.pytest.ini_options\naddopts = '-x'\n", (2, "addopts = '-x'"),
                 id="broken toml"),
    pytest.param("target/pytest.ini", "addopts = -x\n[pytest\n", (1, "addopts = -x"), id="broken ini"),
])
def test_a_config_file_that_does_not_parse_is_read_as_lines(path: str, new: str, expected: tuple[int, str]) -> None:
    assert found(new, old="", path=path) == [("pytest-config-changed", *expected)]


# --- pytest's configuration: where a loosening is, and which options are one ----------------------------------

@pytest.mark.parametrize(("path", "old", "new", "expected"), [
    # the line is found in pytest's own section, past another tool's option of the same name
    ("target/setup.cfg", "[tool:pytest]\naddopts = -q\n",
     "[flake8]\naddopts = --deselect nothing\n[tool:pytest]\naddopts = -q --deselect tests/a.py\n",
     [(4, "addopts: --deselect tests/a.py")]),
    ("target/pytest.ini", "[pytest]\naddopts = -q\n", "[pytest]\naddopts = -q -k\n", [(2, "addopts: -k")]),
    ("target/pytest.ini", "[pytest]\naddopts = -q\n", "[pytest]\naddopts = -x tests\n", [(2, "addopts: -x")]),
    ("target/pytest.ini", "[pytest]\naddopts = -q\n", "[pytest]\naddopts = --override-ini=cache_dir=x\n", []),
    ("target/pytest.ini", "[pytest]\ntestpaths = tests\n", "[pytest]\ntestpaths = tests other\n",
     [(2, "testpaths: tests other")]),
    ("target/pytest.ini", "[pytest]\ntestpaths = tests\n", "[pytest]\ntestpaths = tests 'my tests'\n",
     [(2, "testpaths: tests 'my tests'")]),
    # pyproject.toml: addopts in pytest's own words (shlex), other settings by whitespace, as in an ini file
    ("target/pyproject.toml", '[tool.pytest.ini_options]\naddopts = "-q"\n',
     '[tool.pytest.ini_options]\naddopts = "-q -k \'not slow\'"\n', [(2, "addopts: -k not slow")]),
    ("target/pyproject.toml", '[tool.pytest.ini_options]\ntestpaths = "tests"\n',
     '[tool.pytest.ini_options]\ntestpaths = "tests \'my tests\'"\n', [(2, "testpaths: tests 'my tests'")]),
    # a header TOML allows but the line search does not know: the setting is still found from the top
    ("target/pyproject.toml", '[tool . pytest . ini_options]\naddopts = "-q"\n',
     '[tool . pytest . ini_options]\naddopts = "-q -x"\n', [(2, "addopts: -x")]),
    # set in an inline table: no line sets it
    ("target/pyproject.toml", '[tool.pytest]\nini_options = {addopts = "-q"}\n',
     '[tool.pytest]\nini_options = {addopts = "-q -x"}\n', [(None, "addopts: -x")]),
    # a % is no interpolation for pytest
    ("target/pytest.ini", "[pytest]\naddopts = -q\n", '[pytest]\naddopts = -q -k "100%"\n',
     [(2, "addopts: -k 100%")]),
    # a key set twice: the last one counts, found on the line that holds it
    ("target/pytest.ini", "[pytest]\naddopts = -q\n", "[pytest]\naddopts = -q\naddopts = -q -x\n",
     [(3, "addopts: -x")]),
    # a flag that takes no value does not take the next word
    ("target/pytest.ini", "[pytest]\naddopts = -q\n", "[pytest]\naddopts = --exitfirst tests\n",
     [(2, "addopts: --exitfirst")]),
    # -x inside combined short options is on the setting's line
    ("target/pytest.ini", "[pytest]\ntestpaths = t\naddopts = -q\n", "[pytest]\ntestpaths = t\naddopts = -qx\n",
     [(3, "addopts: -x")]),
    # settings before and after addopts are found beside addopts' own
    ("target/pytest.ini", "[pytest]\naddopts = -q\ntestpaths = a\n", "[pytest]\naddopts = -q -x\ntestpaths = a b\n",
     [(2, "addopts: -x"), (3, "testpaths: a b")]),
    ("target/pytest.ini", "[pytest]\ntestpaths = a\naddopts = -q\n", "[pytest]\ntestpaths = a b\naddopts = -q -x\n",
     [(2, "testpaths: a b"), (3, "addopts: -x")]),
])
def test_a_config_loosening_is_found_on_its_line_with_its_words(path: str, old: str, new: str,
                                                                expected: list[tuple[int, str]]) -> None:
    assert [(line, what) for name, line, what in found(new, old, path) if name == "pytest-config-changed"] == \
        expected
