"""``tri-agent install-skill``: put SKILL.md where Claude Code finds skills, with a slash command, and deny
Claude Code's file tools and sandboxed commands every run's state folder (merged into the user's settings)."""

from __future__ import annotations

from pathlib import Path

from .._errors import UsageError
from .._resources import shipped
from ._session import PROJECT, deny_rules, write_settings
from ._state import state_home

COMMAND = """---
description: Run a hard acceptance of this project with tri-agent (separated roles, sealed answers, mutation gate)
---

Follow the hard-acceptance skill: run the survey with the user, then `tri-agent init`, then act as the builder
while `tri-agent accept` runs the other roles. $ARGUMENTS
"""


def skill_source() -> Path:
    return shipped("SKILL.md")


def install_skill(home: Path, *, force: bool = False) -> list[Path]:
    """Write ``home/.claude/skills/hard-acceptance/SKILL.md`` and ``home/.claude/commands/hard-acceptance.md``,
    and add the state folder's deny rules to ``home/.claude/settings.json`` (nothing there is removed)."""
    skill = home / ".claude" / "skills" / "hard-acceptance" / "SKILL.md"
    command = home / ".claude" / "commands" / "hard-acceptance.md"
    for path in (skill, command):
        if path.exists() and not force:
            raise UsageError(f"{path} exists", hint="pass --force to replace it")
    skill.parent.mkdir(parents=True, exist_ok=True)
    command.parent.mkdir(parents=True, exist_ok=True)
    skill.write_text(skill_source().read_text(encoding="utf-8"), encoding="utf-8")
    command.write_text(COMMAND, encoding="utf-8")
    return [skill, command, write_settings(home / PROJECT, deny_rules([state_home()]))]
