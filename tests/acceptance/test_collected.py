"""The builder's own tests are counted by collecting them, as ``tri-agent evidence`` counts a pull request's: an id
collected at preflight and gone later is a blocker smell unless disclosed with a reason. Each removal here is one
the syntax-tree smell alone does not see."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import toy_project
from tri_agent.acceptance._collected import Collected, collected_of, removed
from tri_agent.acceptance._judging import CodeSnapshot, builder_smells, code_changes, code_of
from tri_agent.acceptance._smells import SMELLS

TESTS = """import pytest


@pytest.mark.parametrize("cents", [1, 2, 3])
def test_rounds(cents):
    assert cents > 0


def test_half_up():
    assert 1 + 1 == 2
"""
IDS = ["tests/test_grades.py::test_rounds[1]", "tests/test_grades.py::test_rounds[2]",
       "tests/test_grades.py::test_rounds[3]", "tests/test_grades.py::test_half_up"]


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, CodeSnapshot]:
    project = toy_project(tmp_path_factory.mktemp("collected") / "toy")
    (project / "target" / "tests").mkdir()
    (project / "target" / "tests" / "test_grades.py").write_text(TESTS)
    return project, code_of(project, "builder", first=True)


def _after(project: Path, baseline: CodeSnapshot, files: dict[str, str]) -> list[tuple[str, str, str]]:
    """(name, path, detail) of the builder's smells once ``files`` (target-relative) are written; written back after."""
    saved = {rel: (project / "target" / rel).read_text() if (project / "target" / rel).exists() else None
             for rel in files}
    try:
        for rel, text in files.items():
            (project / "target" / rel).parent.mkdir(parents=True, exist_ok=True)
            (project / "target" / rel).write_text(text)
        now = code_of(project, "builder", baseline)
        return [(s.name, s.path, s.detail) for s in builder_smells(now, code_changes(baseline, now), frozenset(),
                                                                  baseline=baseline)]
    finally:
        for rel, text in saved.items():
            if text is None:
                (project / "target" / rel).unlink()
            else:
                (project / "target" / rel).write_text(text)


def _gone(found: list[tuple[str, str, str]]) -> list[str]:
    """What the collection says was removed (the syntax-tree smell says it in its own words)."""
    meaning = SMELLS["tests-removed"].meaning + ": "
    return [detail.removeprefix(meaning).removeprefix("test ") for name, _, detail in found
            if name == "tests-removed" and ("no longer collected" in detail or "collected none" in detail)]


def test_preflight_seals_what_pytest_collects_from_the_builders_files(baseline: tuple[Path, CodeSnapshot]) -> None:
    _, code = baseline
    assert code.collected == Collected(root="target", ids=IDS, errors=[])


def test_no_python_test_file_collects_nothing(tmp_path: Path) -> None:
    assert collected_of([("target/grades.py", b"def grade(): ...\n")]) is None
    project = toy_project(tmp_path / "toy")
    assert code_of(project, "builder", first=True).collected is None
    # a round collects only when preflight did: no Python tests then, none counted now
    (project / "target" / "tests").mkdir()
    (project / "target" / "tests" / "test_new.py").write_text("def test_new():\n    assert True\n")
    assert code_of(project, "builder", CodeSnapshot(files={})).collected is None


def test_an_unchanged_suite_loses_nothing(baseline: tuple[Path, CodeSnapshot]) -> None:
    project, code = baseline
    assert _after(project, code, {"grades_note.txt": "a note\n"}) == []


@pytest.mark.parametrize(("files", "gone"), [
    pytest.param({"tests/test_grades.py": TESTS.replace("[1, 2, 3]", "[1]")},
                 ["tests/test_grades.py::test_rounds[2] is no longer collected",
                  "tests/test_grades.py::test_rounds[3] is no longer collected"], id="a parametrized case dropped"),
    pytest.param({"tests/conftest.py": "def pytest_collection_modifyitems(items):\n"
                                       "    items[:] = [i for i in items if 'half' not in i.name]\n"},
                 ["tests/test_grades.py::test_half_up is no longer collected"], id="deselected by a conftest"),
    pytest.param({"tests/conftest.py": "collect_ignore = ['test_grades.py']\n"},
                 [f"{i} is no longer collected" for i in IDS], id="collect_ignore"),
    pytest.param({"tests/test_grades.py": "import grades_helper_that_is_gone\n" + TESTS},
                 [f"{i} is no longer collected" for i in IDS], id="the module no longer imports"),
    pytest.param({"tests/test_grades.py": TESTS + "\n\ntest_half_up.__test__ = False\n"},
                 ["tests/test_grades.py::test_half_up is no longer collected"], id="__test__ = False"),
    pytest.param({"tests/conftest.py": "raise SystemExit(0)\n"},
                 ["pytest collected none of the 4 tests it collected at preflight (pytest could not collect the "
                  "tests of ./target (exit 0): no output)"], id="pytest does not collect at all"),
    pytest.param({"tests/test_grades.py": TESTS.replace("def test_half_up", "def test_half_up_renamed")},
                 ["tests/test_grades.py::test_half_up is no longer collected"], id="a rename is a removal"),
])
def test_a_test_no_longer_collected_is_a_blocker(baseline: tuple[Path, CodeSnapshot], files: dict[str, str],
                                                 gone: list[str]) -> None:
    project, code = baseline
    found = _after(project, code, files)
    assert _gone(found) == gone
    assert {path for name, path, _ in found if name == "tests-removed"} <= {"target/tests/test_grades.py", "target"}


def test_the_syntax_tree_smell_alone_misses_these(baseline: tuple[Path, CodeSnapshot]) -> None:
    """What the collection adds: without a preflight collection the same diffs raise no tests-removed smell."""
    project, code = baseline
    blind = CodeSnapshot(files=code.files)
    for files in ({"tests/test_grades.py": TESTS.replace("[1, 2, 3]", "[1]")},
                  {"tests/conftest.py": "collect_ignore = ['test_grades.py']\n"}):
        assert _gone(_after(project, blind, files)) == []
        assert _gone(_after(project, code, files)) != []


def test_a_moved_test_is_no_removal(baseline: tuple[Path, CodeSnapshot]) -> None:
    project, code = baseline
    moved = TESTS.replace("def test_half_up():\n    assert 1 + 1 == 2\n",
                          "class TestHalf:\n    def test_half_up(self):\n        assert 1 + 1 == 2\n")
    assert [n for n, _, _ in _after(project, code, {"tests/test_grades.py": moved})] == []


def test_deleting_every_test_file_is_seen(baseline: tuple[Path, CodeSnapshot]) -> None:
    project, code = baseline
    (project / "target" / "tests" / "test_grades.py").rename(project / "aside.py")
    try:
        now = code_of(project, "builder", code)
        found = builder_smells(now, code_changes(code, now), frozenset(), baseline=code)
    finally:
        (project / "aside.py").rename(project / "target" / "tests" / "test_grades.py")
    assert now.collected == Collected(root="target", ids=[], errors=[])
    assert len(_gone([(s.name, s.path, s.detail) for s in found])) == len(IDS)


FORGE = """import json
import sys

_mod = next(m for n, m in list(sys.modules.items()) if n.startswith("collector_"))
with open(_mod._PATH[0], "w") as _f:
    json.dump({"collected": IDS, "errors": []}, _f)
_mod._PATH[0] = ""
""".replace("IDS", repr(IDS))


def test_a_collection_the_collected_code_wrote_is_seen_as_forged(baseline: tuple[Path, CodeSnapshot]) -> None:
    """Test code shares pytest's process and can write the list: the syntax tree still sees what it claims."""
    project, code = baseline
    renamed = FORGE + TESTS.replace("def test_half_up", "def _half_up")
    found = _after(project, code, {"tests/test_grades.py": renamed})
    assert ("outcome-forged", "target/tests/test_grades.py",
            "the code forges what a test run reports: the collection lists tests/test_grades.py::test_half_up, "
            "which target/tests/test_grades.py does not define") in found
    assert any(n == "tests-removed" and "test_half_up removed" in d for n, _, d in found)  # the syntax tree's


def test_a_removal_is_cleared_only_by_a_reasoned_entry(baseline: tuple[Path, CodeSnapshot]) -> None:
    project, code = baseline
    dropped = {"tests/test_grades.py": TESTS.replace("[1, 2, 3]", "[1, 2]")}
    reasoned = {**dropped, ".tri-agent/test-removals": "tests/test_grades.py::test_rounds[3]  3 cents is a "
                                                       "duplicate of 2\n"}
    bare = {**dropped, ".tri-agent/test-removals": "tests/test_grades.py::test_rounds[3]\n"}
    found = _after(project, code, reasoned)
    assert _gone(found) == []
    assert ("tests-removal-disclosed", "target/tests/test_grades.py", "a test the builder removed, with its reason "
            "on record: test tests/test_grades.py::test_rounds[3]: 3 cents is a duplicate of 2") in found
    assert _gone(_after(project, code, bare)) == ["tests/test_grades.py::test_rounds[3] is no longer collected"]


def test_a_preflight_that_did_not_collect_judges_nothing_by_collection() -> None:
    failed = Collected(root="", ids=["t.py::a"], errors=["<session>: crashed"])
    assert removed(failed, Collected(root="", ids=[], errors=[]), "", {}) == []
