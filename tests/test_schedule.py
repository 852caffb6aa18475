"""The suite's schedule over xdist workers (tests/conftest.py): which tests share a worker, and which start first."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import GROUPED, LONGEST, _rank

ROOT = Path(__file__).resolve().parents[1]


def test_a_file_with_a_module_fixture_is_one_unit_and_other_tests_are_units_of_their_own() -> None:
    assert "tests/examples/test_workshop_gui.py" in GROUPED  # its acceptance is made once, for all its tests
    assert "tests/acceptance/test_rounds.py" not in GROUPED  # its tests spread over the workers
    for file in GROUPED:
        assert 'scope="module"' in (ROOT / file).read_text(encoding="utf-8")


def test_every_ranked_unit_names_tests_that_exist_and_the_longest_start_first() -> None:
    for unit in LONGEST:  # a renamed test would silently lose its place at the front
        file, _, name = unit.partition("::")
        assert (ROOT / file).is_file(), unit
        assert not name or f"def {name}" in (ROOT / file).read_text(encoding="utf-8"), unit
    assert _rank("tests/examples/test_workshop_gui.py::test_x") == 0
    assert _rank("tests/test_cli.py::test_x") == len(LONGEST)


CRASHING = '''
import os, time
from pathlib import Path

def test_a(): pass
def test_b(): pass
def test_c(): pass
def test_d(): pass

def test_crash():
    time.sleep(2)  # the last test running: the other worker has been told to stop
    marker = Path(__file__).with_name("crashed")
    if {always} or not marker.exists():
        marker.touch()
        os._exit(3)
'''

LOADER = f'''
import importlib.util, sys
spec = importlib.util.spec_from_file_location("suite_conftest", {str(ROOT / "tests" / "conftest.py")!r})
suite = importlib.util.module_from_spec(spec)
sys.modules["suite_conftest"] = suite
spec.loader.exec_module(suite)
pytest_xdist_make_scheduler = suite.pytest_xdist_make_scheduler
'''


@pytest.mark.parametrize("always", [False, True])
def test_a_worker_that_dies_costs_its_test_and_the_run_ends(tmp_path: Path, always: bool) -> None:
    (tmp_path / "conftest.py").write_text(LOADER, encoding="utf-8")
    (tmp_path / "test_crashing.py").write_text(CRASHING.format(always=always), encoding="utf-8")
    with subprocess.Popen([sys.executable, "-m", "pytest", "-n", "2", "-p", "no:cacheprovider", "-q", "--rootdir",
                           str(tmp_path), str(tmp_path)], cwd=tmp_path, stdout=subprocess.PIPE, text=True,
                          start_new_session=True) as run:
        try:
            out, _ = run.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(run.pid, signal.SIGKILL)  # the workers too
            pytest.fail("the run hung after a worker died")
    assert run.returncode == 1, out[-2000:]
    assert "1 failed, 4 passed" in out
    assert "crashed while running 'test_crashing.py::test_crash'" in out
    assert out.count("node down") == 1, out[-2000:]  # the crashed test was not given to the replacement worker
