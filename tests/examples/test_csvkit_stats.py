"""The csvkit-stats example end to end: a real third-party program (csvstat, csvkit 2.2.0 from PyPI) under an exam
written from its documentation. Round 1 finds csvkit's documented-format bug (trailing zeros stripped from whole
numbers at %.0f) and nothing else; the builder's patch around it is accepted (a simulation: every role scripted, so
passed, not certified); the mutation gate's mutants are of csvstat itself."""

from __future__ import annotations

import importlib.util
import json
import subprocess
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from conftest import GIT

from tri_agent.acceptance._config import load_config
from tri_agent.acceptance._rounds import accept
from tri_agent.acceptance._state import locate

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "csvkit-stats"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("csvkit_stats_run", EXAMPLE / "run_acceptance.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def accepted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("csvkit") / "csvkit-stats"
    _script().prepare(project)
    config = project / "acceptance.yaml"  # one fresh seed per hunt: the gate's own tests test the proof's depth
    config.write_text(config.read_text().replace("mutation: {hunt_seeds: 3}", "mutation: {hunt_seeds: 1}"))
    subprocess.run([*GIT, "commit", "-qam", "one hunt seed"], cwd=project, check=True, capture_output=True)
    verdict = accept(project)
    assert verdict.decision == "accepted" and not verdict.certified, verdict
    return project


def _record(project: Path, name: str) -> Path:
    return locate(project, load_config(project)).root / "records" / name


def _score(project: Path, round_name: str) -> dict[str, Any]:
    return json.loads((_record(project, round_name) / "score.json").read_text())


def test_the_vendored_program_is_the_one_from_the_registry(accepted: Path) -> None:
    from importlib.metadata import version

    assert version("csvkit") == "2.2.0"
    assert (accepted / "target" / "csvkit" / "utilities" / "csvstat.py").is_file()


def test_round_one_finds_only_the_stripped_zeros_of_whole_numbers(accepted: Path) -> None:
    failures = _score(accepted, "round-0001")["answers"]["failures"]
    assert failures, "csvstat 2.2.0 at %.0f prints 1200 as 12: the exam must see it"
    for f in failures:  # every failing cell is a whole number that lost its trailing zeros (or a 0 printed blank)
        expected, actual = f["expected"], f["actual"] or ""
        assert f["key"]["column_name"] in ("amount", "qty") and expected.endswith("0"), f
        assert expected.rstrip("0") == actual, f
    tickets = " ".join(p.read_text() for p in (_record(accepted, "round-0001") / "tickets").glob("builder-*.md"))
    assert "format" in tickets or "qty" in tickets or "amount" in tickets


def test_the_patch_is_green_to_the_final_round_with_mutants_of_csvstat(accepted: Path) -> None:
    rounds = sorted(p.name for p in _record(accepted, "round-0001").parent.glob("round-*"))
    gates = [json.loads((_record(accepted, r) / "gate.json").read_text()) for r in rounds]
    assert gates[0]["green"] is False and all(g["green"] for g in gates[1:]) and len(rounds) >= 3
    final = _score(accepted, rounds[-1])
    assert final["verdict"] == "pass" and final["answers"]["passed"] == final["answers"]["total"]
    mutants = [m for r in rounds
               for m in json.loads((_record(accepted, r) / "mutation-summary.json").read_text())["mutants"]]
    killed = [m["id"] for m in mutants if m["status"] == "Killed"]
    assert any(":csvkit/utilities/csvstat.py:" in k for k in killed), killed  # csvstat's own code, mutated
    assert not any(":csvkit/cli.py:" in m["id"] for m in mutants)  # the menu's include kept it out
