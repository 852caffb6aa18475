"""tri-agent-gate.yaml: what it pins, and every way it refuses to pin less."""

from __future__ import annotations

from pathlib import Path

import pytest

from tri_agent import MalformedInput, UsageError
from tri_agent.patchgate import GATE_FILE, load_gate

GATE = """schema_version: 1
classes:
  scoring_properties: ["tests/scoring/properties/**/*.py"]
  scoring_fixtures: ["tests/scoring/fixtures/**"]
  diagnostic: ["tests/diagnostic/**/*.py"]
  ledger: tests/scoring/flake_ledger.json
held_out: ["tests/held_out/**"]
agents: ["*@agents.example.com"]
invocation: {pytest: ["-q", "-p", "no:xdist", "tests/scoring"], seed: 7}
"""


def _gate(tmp: Path, text: str) -> Path:
    (tmp / GATE_FILE).write_text(text)
    return tmp


def test_a_gate_file_pins_the_classes_and_the_invocation(tmp_path: Path) -> None:
    gate = load_gate(_gate(tmp_path, GATE))
    assert gate.classes.ledger == "tests/scoring/flake_ledger.json" and gate.held_out == ["tests/held_out/**"]
    assert gate.invocation.pytest_args == ["-q", "-p", "no:xdist", "tests/scoring"] and gate.invocation.seed == 7
    assert load_gate(_gate(tmp_path, "classes: {ledger: l.json}\n")).invocation.pytest_args == ["-q"]


@pytest.mark.parametrize(("change", "message"), [
    (("seed: 7", "seed: 7, timout: 3"), "unknown key 'timout'"),
    (('held_out: ["tests/held_out/**"]', 'held_out: ["../other/**"]'), "must be a path inside the repository"),
    (("ledger: tests/scoring/flake_ledger.json", "ledger: /etc/ledger.json"), "must be a path inside the repository"),
    (('"-p", "no:xdist", ', '"-n", "4", '), "runs the scoring suite in parallel"),
    (('"-p", "no:xdist", ', '"-p", "xdist", '), "runs the scoring suite in parallel"),
    (('"-p", "no:xdist", ', '"--numprocesses=auto", '), "runs the scoring suite in parallel"),
    (('"-p", "no:xdist", ', '"-nauto", '), "runs the scoring suite in parallel"),
    (('"-p", "no:xdist", ', '"-o", "addopts=-n2", '), "runs the scoring suite in parallel"),
    (('"tests/scoring"]', '"tests/scoring", "||", "true"]'), "is shell syntax"),
    (("schema_version: 1", "schema_version: 2"), "schema_version"),
])
def test_a_gate_file_that_pins_less_is_refused_naming_the_line(tmp_path: Path, change: tuple[str, str],
                                                               message: str) -> None:
    assert change[0] in GATE
    with pytest.raises(MalformedInput, match=message) as err:
        load_gate(_gate(tmp_path, GATE.replace(*change)))
    assert err.value.exit_code == 3 and GATE_FILE in str(err.value)


def test_a_repository_without_a_gate_file_is_told_how_to_get_one(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=f"has no {GATE_FILE}") as err:
        load_gate(tmp_path)
    assert err.value.exit_code == 2 and "docs/gate.md" in err.value.hint
