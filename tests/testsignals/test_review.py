"""What an adversarial review got past the signals, each now caught: a subset run, an all-skipped run, a head
that refuses the sandbox's collection, a base file that does not collect, an honest deleted file, a FIFO in the
spool, a bad glob, a JUnit id reported twice, a pytester session inside the suite."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from signals_repo import Repo, repo  # noqa: F401  (repo: the fixture)

from tri_agent.testsignals import evidence
from tri_agent.testsignals._junit import read_junit


def test_a_subset_run_is_no_evidence_of_the_tree(repo: Repo) -> None:
    base = repo.git("rev-parse", "HEAD")
    repo.write("tests/test_more.py", "def test_fine():\n    pass\n")
    repo.write("calc.py", "def add(a, b):\n    return 4\n")
    repo.pytest("tests/test_more.py")  # the failing file left out
    report = evidence(repo.path, base)
    assert (report.passed.state, report.exit_code) == ("no_evidence", 16)
    assert "left out 2 of the tree's 3 tests" in report.passed.notes[-1]


def test_a_run_whose_every_test_was_skipped_is_no_evidence(repo: Repo) -> None:
    base = repo.git("rev-parse", "HEAD")
    repo.pytest("-m", "nothing_has_this_mark")  # deselected: collected nothing it ran
    repo.write("conftest.py", "import pytest\n\n\n@pytest.fixture(autouse=True)\ndef _off():\n    pytest.skip('x')\n")
    repo.pytest()
    report = evidence(repo.path, base)
    assert report.passed.state == "no_evidence" and "no test passed" in report.passed.notes[-1]


def test_a_head_that_refuses_the_sandboxs_collection_has_removed_its_tests(repo: Repo) -> None:
    base = repo.git("rev-parse", "HEAD")
    repo.write("pyproject.toml", '[tool.pytest.ini_options]\npythonpath = ["."]\nrequired_plugins = ["tri-agent"]\n')
    repo.pytest()
    report = evidence(repo.path, base)
    assert (report.reduced.state, report.exit_code) == ("reduced", 17)
    assert "collection failed" in report.reduced.collect_errors["head"][0]


def test_a_base_file_that_does_not_collect_makes_reduced_inconclusive(repo: Repo) -> None:
    repo.write("tests/test_dep.py", "import a_module_nobody_has\n\n\ndef test_a():\n    pass\n")
    base = repo.commit()
    repo.write("tests/test_dep.py", "import a_module_nobody_has\n")
    report = evidence(repo.path, base)
    assert (report.reduced.state, report.exit_code) == ("inconclusive", 16)


def test_an_honestly_deleted_and_disclosed_test_file_passes(repo: Repo) -> None:
    repo.write("tests/test_old.py", "def test_old():\n    pass\n")
    base = repo.commit()
    os.remove(repo.path / "tests" / "test_old.py")
    repo.write(".tri-agent/test-removals", "tests/test_old.py::test_old\tthe feature it tested is gone\n")
    repo.pytest()
    report = evidence(repo.path, base)
    assert (report.passed.state, report.reduced.state, report.exit_code) == ("passed", "disclosed", 0)


def test_a_fifo_in_the_spool_does_not_hang_the_harvest(repo: Repo) -> None:
    base = repo.git("rev-parse", "HEAD")
    repo.pytest()
    os.mkfifo(repo.spool()[0].parent / "999999999999999-1-x.json")
    done = subprocess.run([sys.executable, "-m", "tri_agent", "evidence", base, "--repo", str(repo.path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "tree-bound" in done.stdout


def test_a_bad_glob_is_one_usage_line(repo: Repo) -> None:
    done = subprocess.run([sys.executable, "-m", "tri_agent", "evidence", "HEAD", "--repo", str(repo.path),
                           "--reports", "/tmp/*.xml"], capture_output=True, text=True)
    assert done.returncode == 2 and "is not a glob under the repository" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_junit_id_reported_twice_keeps_the_worse_outcome(tmp_path: Path) -> None:
    (tmp_path / "r.xml").write_text('<testsuite><testcase classname="t" name="a"><failure/></testcase>'
                                    '<testcase classname="t" name="a"/></testsuite>')
    assert read_junit(tmp_path / "r.xml").outcomes == {"t::a": "failed"}  # type: ignore[union-attr]


def test_a_pytester_session_inside_the_suite_leaves_the_outer_entry_whole(repo: Repo) -> None:
    repo.write("tests/test_inner.py", "def test_inner(pytester):\n"
                                      "    pytester.makepyfile(test_x='def test_x():\\n    pass\\n')\n"
                                      "    pytester.runpytest().assert_outcomes(passed=1)\n")
    repo.pytest("-p", "pytester")
    [path] = repo.spool()
    entry = json.loads(path.read_text())
    assert "tests/test_inner.py::test_inner" in entry["collected"] and len(entry["collected"]) == 3
    assert entry["outcomes"]["tests/test_inner.py::test_inner"] == "passed" and len(entry["outcomes"]) == 3


def test_a_file_name_that_is_not_utf_8_is_shown_escaped_never_an_internal_error(repo: Repo) -> None:
    base = repo.git("rev-parse", "HEAD")
    name = os.fsdecode(b"tests/test_\xff.py")
    (repo.path / name).write_text("def test_b():\n    assert 1\n")
    repo.pytest()
    report = evidence(repo.path, base)
    assert "tests/test_\\xff.py" in report.changed_tests
    assert json.loads(report.model_dump_json())["changed_tests"] == report.changed_tests
