"""The test-evidence example end to end: every scenario of examples/test-evidence gives the signals and the exit code
its README documents."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "test-evidence"


def _example() -> Any:
    spec = importlib.util.spec_from_file_location("test_evidence_example", EXAMPLE / "make_repo.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_the_readme_documents_every_scenario_as_it_is_checked() -> None:
    rows = {line.split(" | ")[0].strip("| ").replace("\\|", "|"): line for line in
            (EXAMPLE / "README.md").read_text().splitlines() if line.startswith("| ") and " | " in line}
    for s in _example().SCENARIOS:
        cells = [c.strip() for c in rows[s.name].strip("|").split(" | ")]
        assert cells[2:] == [str(s.exit_code), s.passed, s.reduced, s.weakened], s.name


@pytest.mark.parametrize("name", [s.name for s in _example().SCENARIOS])
def test_each_scenario_gives_its_signals(name: str, tmp_path: Path) -> None:
    example = _example()
    [scenario] = [s for s in example.SCENARIOS if s.name == name]
    out = example.play(scenario, tmp_path)
    assert out.got == out.expected, out.report
