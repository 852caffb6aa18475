"""The in-session builder's fence: Claude Code settings that sandbox the session and deny it the run's state.

The session that plays the builder runs as the same user as the orchestrator, so the state folder's distance
alone protects nothing. What does is the agent client's own enforcement: its sandbox around every command
the session runs, and permission rules that deny its file tools the state folder. ``init`` (for an
in-session builder) writes them into the project's ``.claude/settings.local.json``; ``install-skill`` adds
the deny rules to the user's ``~/.claude/settings.json``. ``accept`` certifies an in-session run only when
the merged settings (user, project, local: later ones win, lists add up) hold every requirement below, and
names each one that is missing otherwise. The settings files are part of the sealed configuration, so a
session that loosens them mid-run stops the run (exit 5).

Only Claude Code is covered: Codex's sandbox cannot deny reads inside its writable roots.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .._errors import MalformedInput

LOCAL = Path(".claude") / "settings.local.json"
PROJECT = Path(".claude") / "settings.json"


def session_settings(state_home: Path) -> dict[str, Any]:
    """The settings that fence a session off ``state_home``."""
    where = str(state_home)
    return {"permissions": {"deny": [f"Read(/{where}/**)", f"Edit(/{where}/**)"],
                            "disableBypassPermissionsMode": "disable"},
            "sandbox": {"enabled": True, "failIfUnavailable": True, "allowUnsandboxedCommands": False,
                        "filesystem": {"denyRead": [where], "denyWrite": [where]}}}


def deny_rules(state_home: Path) -> dict[str, Any]:
    """Only the deny rules (what ``install-skill`` adds to the user's settings, leaving the rest alone)."""
    full = session_settings(state_home)
    return {"permissions": {"deny": full["permissions"]["deny"]},
            "sandbox": {"filesystem": full["sandbox"]["filesystem"]}}


def write_settings(path: Path, wanted: dict[str, Any]) -> Path:
    """Merge ``wanted`` into the settings file at ``path`` (lists gain entries, nothing is removed)."""
    current = _load(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(_merge(current, wanted), indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path


def missing(project: Path, home: Path, state_home: Path) -> list[str]:
    """Each requirement the merged Claude Code settings do not meet (empty: the fence is in effect)."""
    merged: dict[str, Any] = {}
    for path in (home / PROJECT, project / PROJECT, project / LOCAL):
        merged = _merge(merged, _load(path))
    return [what for what, ok in _requirements(merged, str(state_home)) if not ok]


def _requirements(s: dict[str, Any], where: str) -> list[tuple[str, bool]]:
    sandbox, perms = s.get("sandbox", {}), s.get("permissions", {})
    fs = sandbox.get("filesystem", {})
    return [("sandbox.enabled: true", sandbox.get("enabled") is True),
            ("sandbox.failIfUnavailable: true", sandbox.get("failIfUnavailable") is True),
            ("sandbox.allowUnsandboxedCommands: false", sandbox.get("allowUnsandboxedCommands") is False),
            (f"sandbox.filesystem.denyRead holds {where}", _covers(fs.get("denyRead", []), where)),
            (f"sandbox.filesystem.denyWrite holds {where}", _covers(fs.get("denyWrite", []), where)),
            (f"permissions.deny holds Read(/{where}/**)", f"Read(/{where}/**)" in perms.get("deny", [])),
            (f"permissions.deny holds Edit(/{where}/**)", f"Edit(/{where}/**)" in perms.get("deny", [])),
            ('permissions.disableBypassPermissionsMode: "disable"',
             perms.get("disableBypassPermissionsMode") == "disable")]


def _covers(paths: list[str], where: str) -> bool:
    return any(where == p.rstrip("/") or where.startswith(p.rstrip("/") + "/") for p in paths if p)


def _load(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise MalformedInput(f"not JSON: {exc}", where=str(path), hint="fix or remove the settings file") from None
    if not isinstance(data, dict):
        raise MalformedInput("not a JSON object", where=str(path), hint="fix or remove the settings file")
    return data


def _merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        elif isinstance(value, list) and isinstance(out.get(key), list):
            out[key] = out[key] + [v for v in value if v not in out[key]]
        else:
            out[key] = value
    return out
