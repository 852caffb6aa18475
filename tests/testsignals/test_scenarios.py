"""A change's evidence end to end through the command line (its exit codes), and what the API binds a run to: a
committed head, a report naming the commit, a forged entry. The example (examples/test-evidence) plays the whole
set of scenarios."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from signals_repo import Repo, repo  # noqa: F401  (repo: the fixture)

from tri_agent.testsignals import evidence


def tri_agent(repo: Repo, *args: str) -> tuple[int, dict[str, object]]:
    done = subprocess.run([sys.executable, "-m", "tri_agent", "evidence", *args, "--repo", str(repo.path),
                           "--json", "-"], capture_output=True, text=True)
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


def honest_refactor(repo: Repo) -> None:
    repo.write("calc.py", "def add(a, b):\n    total = a\n    total += b\n    return total\n")
    repo.pytest()


def deleted_test(repo: Repo) -> None:
    repo.write("tests/test_calc.py", "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n")
    repo.pytest()


def bare_removal_entry(repo: Repo) -> None:
    deleted_test(repo)
    repo.write(".tri-agent/test-removals", "tests/test_calc.py::test_zero\n")
    repo.pytest()


def or_true(repo: Repo) -> None:
    repo.write("calc.py", "def add(a, b):\n    return a * b\n")
    subprocess.run(f"{sys.executable} -m pytest -q -p no:cacheprovider || true", shell=True, cwd=repo.path,
                   capture_output=True, check=True)


def edit_after_the_run(repo: Repo) -> None:
    repo.pytest()
    repo.write("calc.py", "def add(a, b):\n    return 3\n")


def no_run_at_all(repo: Repo) -> None:
    repo.write("calc.py", "def add(a, b):\n    return b + a\n")


SCENARIOS: dict[str, tuple[Callable[[Repo], None], int, str, str]] = {  # change, exit, passed, reduced
    "deleted test": (deleted_test, 17, "passed", "reduced"),
    "bare removal entry": (bare_removal_entry, 17, "passed", "reduced"),
    "|| true": (or_true, 1, "failed", "none"),
    "edit after the run": (edit_after_the_run, 16, "stale", "none"),
    "no run at all": (no_run_at_all, 16, "not_checked", "none"),
}


@pytest.mark.parametrize("name", SCENARIOS)
def test_each_scenario_gives_its_signals_and_exit_code(repo: Repo, name: str) -> None:
    change, code, passed, reduced = SCENARIOS[name]
    base = repo.git("rev-parse", "HEAD")
    change(repo)
    exit_code, report = tri_agent(repo, base)
    assert (exit_code, report["passed"]["state"], report["reduced"]["state"]) == (code, passed, reduced), report
    assert report["weakened"]["samples"] is None  # no judge ran: never a made-up figure
    if name == "bare removal entry":
        assert report["reduced"]["bare"] == [".tri-agent/test-removals:1 tests/test_calc.py::test_zero"]


def test_a_committed_head_is_judged_by_its_own_tree(repo: Repo) -> None:
    base = repo.git("rev-parse", "HEAD")
    deleted_test(repo)
    head = repo.commit()
    repo.write("tests/test_calc.py", (repo.path / "tests/test_calc.py").read_text() + "\n\ndef test_x():\n    pass\n")
    report = evidence(repo.path, base, head)  # the working tree's extra test is not the head's
    assert report.reduced.removed == ["tests/test_calc.py::test_zero"] and report.reduced.added == []
    assert report.passed.state == "passed" and report.passed.assurance == "tree-bound"  # the run saw head's tree


def test_a_report_naming_the_head_commit_is_commit_bound(repo: Repo, tmp_path: Path) -> None:
    base = repo.git("rev-parse", "HEAD")
    honest_refactor(repo)
    head = repo.commit()
    for path in repo.spool():
        path.unlink()
    (tmp_path / "ci.xml").write_text(f'<testsuite><properties><property name="commit" value="{head}"/></properties>'
                                     '<testcase classname="tests.test_calc" name="test_add"/></testsuite>')
    report = evidence(repo.path, base, head, reports=[tmp_path / "ci.xml"])
    assert (report.passed.state, report.passed.assurance) == ("passed", "commit-bound")
    (tmp_path / "ci.xml").write_text('<testsuite><testcase classname="tests.test_calc" name="test_add"/></testsuite>')
    assert evidence(repo.path, base, head, reports=[tmp_path / "ci.xml"]).passed.assurance is None  # not bound


def test_a_forged_entry_that_says_exit_0_beside_a_failure_is_no_evidence(repo: Repo) -> None:
    base = repo.git("rev-parse", "HEAD")
    or_true(repo)
    [path] = repo.spool()
    entry = json.loads(path.read_text())
    path.write_text(json.dumps({**entry, "exit_status": 0}))
    report = evidence(repo.path, base)
    assert report.passed.state == "no_evidence" and "exit status is 0 beside failed tests" in report.passed.notes[-1]


def test_a_junit_report_names_the_tree_it_ran_on(repo: Repo, tmp_path: Path) -> None:
    base = repo.git("rev-parse", "HEAD")
    honest_refactor(repo)
    head = repo.commit()
    report_file = tmp_path / f"junit-{head}.xml"  # named for the head commit, as CI names it
    calc = (repo.path / "calc.py").read_text()
    repo.write("calc.py", "def add(a, b):\n    return 3\n")  # a dirty checkout of the commit: the run fails
    repo.pytest(f"--junitxml={report_file}")
    repo.write("calc.py", calc)  # cleaned up after the run: the tree is the commit's again
    for path in repo.spool():
        path.unlink()
    found = evidence(repo.path, base, head, reports=[report_file])
    assert found.passed.assurance is None and any("ran on tree" in n for n in found.passed.notes)
    repo.pytest(f"--junitxml={report_file}")  # a run of the clean tree
    for path in repo.spool():
        path.unlink()
    found = evidence(repo.path, base, reports=[report_file])
    assert (found.passed.state, found.passed.assurance) == ("passed", "tree-bound")
