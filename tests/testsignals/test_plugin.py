"""The pytest plugin: one spool entry per session, bound to its tree, with pytest's own exit status."""

from __future__ import annotations

import json

import pytest
from signals_repo import Repo, repo  # noqa: F401  (repo: the fixture)

from tri_agent.testsignals._plugin import outcome
from tri_agent.testsignals._spool import SpoolEntry, read_entries
from tri_agent.testsignals._tree import working_tree


def test_a_session_writes_one_entry_bound_to_its_tree(repo: Repo) -> None:
    assert repo.pytest().returncode == 0
    [path] = repo.spool()
    entry = SpoolEntry.model_validate_json(path.read_text())
    assert entry.tree_sha256 == entry.tree_sha256_end == working_tree(repo.path).sha256
    assert entry.collected == ["tests/test_calc.py::test_add", "tests/test_calc.py::test_zero"]
    assert set(entry.outcomes.values()) == {"passed"} and entry.exit_status == 0 and entry.rootdir == "."


def test_or_true_does_not_change_the_recorded_exit_status(repo: Repo) -> None:
    repo.write("calc.py", "def add(a, b):\n    return a * b\n")
    import subprocess
    import sys

    shell = subprocess.run(f"{sys.executable} -m pytest -q -p no:cacheprovider || true", shell=True, cwd=repo.path,
                           capture_output=True)
    assert shell.returncode == 0
    entry = SpoolEntry.model_validate_json(repo.spool()[0].read_text())
    assert entry.exit_status == 1 and entry.outcomes["tests/test_calc.py::test_add"] == "failed"


def test_turned_off_it_writes_nothing(repo: Repo) -> None:
    assert repo.pytest(spool=False).returncode == 0
    assert repo.spool() == []


def test_a_half_written_entry_is_never_read_as_one(repo: Repo) -> None:
    repo.pytest()
    folder = repo.spool()[0].parent
    (folder / ".0001-1-ab.json.part").write_text('{"schema_version": 1, "tree_sha')  # a run killed mid-write
    (folder / "0002-1-ab.json").write_text('{"schema_version": 1}')  # not an entry
    found, bad = read_entries(folder)
    assert len(found) == 1 and len(bad) == 1 and "0002-1-ab.json" in bad[0]


def test_under_xdist_the_controller_writes_the_one_entry(repo: Repo) -> None:
    pytest.importorskip("xdist")
    assert repo.pytest("-n", "2").returncode == 0
    [path] = repo.spool()
    entry = json.loads(path.read_text())
    assert sorted(entry["collected"]) == ["tests/test_calc.py::test_add", "tests/test_calc.py::test_zero"]
    assert set(entry["outcomes"].values()) == {"passed"}


@pytest.mark.parametrize(("phases", "expected"), [
    ({"setup": ("passed", False), "call": ("passed", False), "teardown": ("passed", False)}, "passed"),
    ({"setup": ("passed", False), "call": ("failed", False), "teardown": ("passed", False)}, "failed"),
    ({"setup": ("failed", False), "teardown": ("passed", False)}, "error"),
    ({"setup": ("passed", False), "call": ("passed", False), "teardown": ("failed", False)}, "error"),
    ({"setup": ("skipped", False), "teardown": ("passed", False)}, "skipped"),
    ({"setup": ("passed", False), "call": ("skipped", True), "teardown": ("passed", False)}, "xfailed"),
    ({"setup": ("passed", False), "call": ("passed", True), "teardown": ("passed", False)}, "xpassed"),
    ({"setup": ("passed", False)}, "error"),  # the call never ran: a run cut short
])
def test_phases_combine_into_one_outcome(phases: dict[str, tuple[str, bool]], expected: str) -> None:
    assert outcome(phases) == expected
