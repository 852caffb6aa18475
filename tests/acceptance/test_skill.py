"""SKILL.md is a valid agent skill, ships in the wheel's data, and install-skill puts it in place."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from tri_agent.acceptance._skill import skill_source


def test_skill_front_matter_and_triggers() -> None:
    text = skill_source().read_text()
    head = yaml.safe_load(text.split("---")[1])
    assert head["name"] == "hard-acceptance" and "hard acceptance" in head["description"]
    for phrase in ("run a hard acceptance test", "three consecutive all-green rounds", "you are the builder",
                   "never try to read the run's state folder", "exit 9: passed, but not certified"):
        assert phrase in text


def test_install_skill(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = cli("install-skill", "--home", tmp_path)
    assert code == 0 and "SKILL.md" in out
    assert (tmp_path / ".claude" / "skills" / "hard-acceptance" / "SKILL.md").exists()
    assert "$ARGUMENTS" in (tmp_path / ".claude" / "commands" / "hard-acceptance.md").read_text()
    assert cli("install-skill", "--home", tmp_path)[0] == 2
    settings = tmp_path / ".claude" / "settings.json"
    settings.write_text('{"model": "opus", "permissions": {"deny": ["Read(./.env)"]}}')
    assert cli("install-skill", "--home", tmp_path, "--force")[0] == 0
    merged = json.loads(settings.read_text())  # the user's own settings stay; the state folder is denied
    assert merged["model"] == "opus" and merged["permissions"]["deny"][0] == "Read(./.env)"
    assert any(rule.startswith("Read(//") and rule.endswith("/tri-agent/**)") for rule in merged["permissions"]["deny"])
    assert merged["sandbox"]["filesystem"]["denyRead"] == merged["sandbox"]["filesystem"]["denyWrite"]


def test_every_trap_names_a_guard_that_exists() -> None:
    text = skill_source().read_text()
    traps = text.split("## 4. The traps")[1]
    rows = [line for line in traps.splitlines() if line.startswith("| **")]
    assert len(rows) >= 10
    root = Path(__file__).resolve().parents[2]
    preset = yaml.safe_load((root / "presets" / "warehouse.yaml").read_text())
    classes = {c["id"] for c in preset["mutation_bug_classes"]}
    for row in rows:
        guards = row.split("|")[-2]
        cited = re.findall(r"`(tests/[\w/]+\.py)(?:::(\w+))?`", guards)
        named = re.findall(r"`([a-z]+(?:-[a-z]+)*)`", guards)
        assert cited or named, f"trap without a guard: {row[:60]}"
        for path, name in cited:
            source = (root / path).read_text(encoding="utf-8")
            assert not name or f"def {name}(" in source, f"{path}::{name} does not exist"
        assert set(named) <= classes, f"unknown bug class in {row[:60]}"
