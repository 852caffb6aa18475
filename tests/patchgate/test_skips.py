"""Rule 12 and the ledger's claim on skips: whatever takes a test off the run is found in the syntax tree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_policy import ENTRY, EVIDENCE, WINDOW, _patched

from tri_agent._errors import ExitCode
from tri_agent.patchgate import GATE_FILE, Ledger, parse_gate, parse_ledger
from tri_agent.patchgate._policy import Finding, unfreezes
from tri_agent.patchgate._reach import reach_ins
from tri_agent.patchgate._skips import marks_added, unledgered
from tri_agent.testcode import parse

PROPERTY = "tests/scoring/properties/test_totals.py"
BODY = "def test_t():\n    assert True\n"


def _codes(found: list[Finding]) -> set[int]:
    return {int(f.code) for f in found}


@pytest.mark.parametrize(("text", "what"), [
    ("import pytest as pt\n\n\n@pt.mark.skip\n" + BODY, "test_t:skip"),
    ("import pytest\n\n\n@getattr(pytest.mark, 'xfail')\n" + BODY, "test_t:xfail"),
    ("from pytest import skip as later\n\n\ndef test_t():\n    later('not today')\n", "test_t:skip"),
    ("import pytest\n\n\n@pytest.mark.skipif(True, reason='x')\n" + BODY, "test_t:skipif"),
    ("import pytest\n\n\n@pytest.mark.flaky(reruns=5)\n" + BODY, "test_t: flaky"),
    ("import pytest\n\n\n@pytest.mark.timeout(600)\n" + BODY, "test_t: timeout(600)"),
    ("import pytest\npytestmark = pytest.mark.skip\n" + BODY, "<module>:skip"),
])
def test_a_mark_added_to_a_scoring_property_is_refused_naming_its_line(tmp_path: Path, text: str, what: str) -> None:
    found = _patched(tmp_path, {PROPERTY: text})
    marks = [f.line for f in found if f.code == ExitCode.GATE_MARKS]
    assert marks and all(m.startswith(f"{PROPERTY}:") for m in marks) and any(what in m for m in marks)
    assert ExitCode.GATE_SURFACE in {f.code for f in found}  # and the file's change is a change of the surface


def test_a_conftest_hook_on_the_way_to_the_surface_that_deselects_is_refused(tmp_path: Path) -> None:
    hook = "def pytest_collection_modifyitems(config, items):\n    items[:] = []\n"
    found = _patched(tmp_path, {"tests/conftest.py": hook})
    assert any(f.code == ExitCode.GATE_MARKS and f.line.startswith("tests/conftest.py:1: pytest_collection_modify")
               for f in found)


@pytest.mark.parametrize("code", [
    "import pytest\npytest.skip('not under test', allow_module_level=True)\nRATE = 4\n",
    "import unittest\n\nif True:\n    raise unittest.SkipTest('later')\n",
    "import os\nRATE = 3 if os.environ.get('PYTEST_CURRENT_TEST') else 4\n",
    "import sys\nRATE = 3 if 'pytest' in sys.modules else 4\n",
    "import _pytest.outcomes\nRATE = 4\n",
    "def pytest_runtest_makereport(item, call):\n    pass\n",
    "import sys\nRATE = 3 if 'hypothesis' in sys.modules else 4\n",
    "import sys\nRATE = 3 if len(sys.argv) > 1 else 4\n",
    "import sys\n\n\ndef rate():\n    return 3 if sys._getframe(1).f_globals else 4\n",
    "import os\n\n\ndef rate():\n    os._exit(0)\n",
    "RATE = eval('3')\n",
    "runner = __import__('py' + 'test')\n",
    "import inspect\nRATE = 4\n",
    "PATH = '/proc/self/environ'\n",
])
def test_code_under_test_that_reaches_into_the_runner_is_refused(tmp_path: Path, code: str) -> None:
    found = _patched(tmp_path, {"src/pricing.py": code})
    assert _codes(found) == {12} and all("src/pricing.py:" in f.line and "reaches into the test runner" in f.line
                                         for f in found)


def test_a_reach_in_the_base_already_had_is_no_new_one() -> None:
    old = "import pytest\nRATE = 3\n"
    assert marks_added("src/pricing.py", old, old + "LIMIT = 9\n", on_surface=False) == []
    assert marks_added("src/pricing.py", old, old + "import pluggy\n", on_surface=False)


def test_code_that_does_not_parse_is_read_as_lines_on_both_sides() -> None:
    found = marks_added("src/pricing.py", "RATE = 3\n", "RATE = (\nimport pytest\n", on_surface=False)
    assert [code for code, _ in found] == [ExitCode.GATE_MARKS] and ":2: import pytest" in found[0][1]


@given(alias=st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True).filter(lambda a: a not in {"pytest", "def", "if",
                                                                                              "in", "is", "or", "as"}))
@settings(max_examples=60, deadline=None)
def test_a_skip_is_found_under_any_alias_of_pytest(alias: str) -> None:
    text = f"import pytest as {alias}\n\n\n@{alias}.mark.skip\n{BODY}"
    found = marks_added(PROPERTY, BODY, text, on_surface=True)
    assert [what.split(": ")[1] for _, what in found] == ["test_t:skip"]


def test_every_skip_of_the_visible_suite_needs_a_ledger_row(tmp_path: Path) -> None:
    skipped = "import pytest\n\n\n@pytest.mark.skip\ndef test_ui():\n    assert True\n"
    assert _patched(tmp_path / "a", {"tests/diagnostic/test_ui.py": skipped}) == []  # ENTRY's row covers it
    found = _patched(tmp_path / "b", {"tests/diagnostic/test_new.py": skipped.replace("test_ui", "test_n")})
    assert _codes(found) == {13} and "tests/diagnostic/test_new.py::test_n has no row" in found[0].line


def test_a_skip_the_base_had_without_a_row_is_refused_and_the_message_says_where_it_came_from() -> None:
    text = "import unittest\n\n\nclass TestA(unittest.TestCase):\n    @unittest.skip('x')\n    def test_a(self):\n" \
           "        pass\n"
    found = unledgered("tests/test_a.py", text, text, [])
    assert len(found) == 1 and "skip of tests/test_a.py::test_a" in found[0][1] and "already at the base" in \
        found[0][1]
    assert unledgered("tests/test_a.py", text, None, ["tests/test_a.py::TestA::test_a[1]"]) == []
    assert unledgered("tests/test_a.py", text, None, ["tests/test_a.py"]) == []  # a row for the whole file
    assert unledgered("tests/test_a.py", text, None, ["tests/test_b.py::test_a"])  # another file's row is not it
    expected = text.replace("@unittest.skip('x')", "@unittest.expectedFailure")  # unittest's xfail
    assert "expectedFailure of tests/test_a.py::test_a" in unledgered("tests/test_a.py", expected, None, [])[0][1]


def test_collect_ignore_in_a_visible_conftest_needs_a_row_for_the_conftest() -> None:
    text = "collect_ignore = ['test_slow.py']\n"
    assert "tests/diagnostic/conftest.py has no row" in unledgered("tests/diagnostic/conftest.py", text, None, [])[0][1]


def test_the_surface_reading_sees_hooks_and_marks_that_code_reading_does_not_need() -> None:
    tree = parse("import pytest\n\n\n@pytest.mark.timeout(5)\ndef test_t():\n    pass\n")
    assert tree is not None and reach_ins(tree) == [(1, "import pytest")]


GATE = (Path(__file__).parent / "test_gatefile.py").read_text().split('GATE = """')[1].split('"""')[0]


@pytest.mark.parametrize(("window", "message"), [
    ({**WINDOW, "runs": 5}, "a stability window of 5 runs; the gate asks for 20"),
    ({**WINDOW, "command": ["-q", "-k", "not slow"]}, "not the pinned invocation"),
])
def test_a_test_leaves_the_ledger_only_after_a_full_window_with_the_pinned_command(window: dict[str, object],
                                                                                  message: str) -> None:
    removal = {"test_id": ENTRY["test_id"], "evidence": EVIDENCE, "reason": "stable", "stability": window}
    ledger = Ledger.model_validate({"removed": [removal]})
    gate = parse_gate(GATE, GATE_FILE)
    assert message in unfreezes(ledger, gate, "l.json")[0].line
    assert unfreezes(Ledger.model_validate({"removed": [{**removal, "stability": WINDOW}]}), gate, "l.json") == []


def test_a_removal_without_a_stability_window_does_not_parse() -> None:
    removal = {"test_id": ENTRY["test_id"], "evidence": EVIDENCE, "reason": "it looks fine now"}
    found = parse_ledger(json.dumps({"schema_version": 1, "removed": [removal]}), "l.json")
    assert isinstance(found, Finding) and found.code == ExitCode.GATE_LEDGER and "stability" in found.line
