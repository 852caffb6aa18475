"""The suite's schedule over xdist workers (tests/conftest.py): which tests share a worker, and which start first."""

from __future__ import annotations

from pathlib import Path

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
