"""The in-session builder's fence: Claude Code settings that sandbox the session and deny it the run's state.

The session that plays the builder runs as the same user as the orchestrator, so the state folder's distance
alone protects nothing. What does is the agent client's own enforcement: its sandbox around every command
the session runs, and permission rules that deny its file tools the state folder. ``init`` (for an
in-session builder) writes them into the project's ``.claude/settings.json``; ``install-skill`` adds
the deny rules to the user's ``~/.claude/settings.json``. ``accept`` certifies an in-session run only when
the merged settings (user, project, local: later ones win, lists add up) hold every requirement below and
open no loophole (paths re-allowed, commands or MCP servers that run outside the sandbox), and names each one
that is missing otherwise. The user's and the project's settings files are part of the sealed
configuration, so a session that loosens them mid-run stops the run (exit 5); the local file, which Claude
Code itself writes, is checked every round instead.

Only Claude Code is covered: Codex's sandbox cannot deny reads inside its writable roots.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .._errors import MalformedInput
from ._config import AcceptanceConfig
from ._state import locate, state_home

LOCAL = Path(".claude") / "settings.local.json"  # Claude Code writes here itself: checked, never sealed
PROJECT = Path(".claude") / "settings.json"  # where init puts the fence: sealed with the run's configuration
# keys whose commands Claude Code runs outside its sandbox, and MCP servers (also outside it)
_OUTSIDE = ("hooks", "statusLine", "apiKeyHelper", "awsAuthRefresh", "awsCredentialExport", "otelHeadersHelper",
            "enabledMcpjsonServers")


def fenced(project: Path, config: AcceptanceConfig) -> list[Path]:
    """What a session playing the builder must never reach: the state home (store and pins), a store named
    elsewhere, and an exam kept outside the project."""
    home = state_home()
    paths = [home]
    root = locate(project, config).root
    if not root.is_relative_to(home):
        paths.append(root)
    exam = (project / config.exam).resolve()
    if not exam.is_relative_to(project.resolve()):
        paths.append(exam)
    return paths


def session_settings(fenced: list[Path]) -> dict[str, Any]:
    """The settings that fence a session off every folder in ``fenced`` (the state home, the store, the exam)."""
    where = [str(p) for p in fenced]
    return {"permissions": {"deny": [rule for w in where for rule in (f"Read(/{w}/**)", f"Edit(/{w}/**)")],
                            "disableBypassPermissionsMode": "disable"},
            "sandbox": {"enabled": True, "failIfUnavailable": True, "allowUnsandboxedCommands": False,
                        "filesystem": {"denyRead": where, "denyWrite": where}}}


def deny_rules(fenced: list[Path]) -> dict[str, Any]:
    """Only the deny rules (what ``install-skill`` adds to the user's settings, leaving the rest alone)."""
    full = session_settings(fenced)
    return {"permissions": {"deny": full["permissions"]["deny"]},
            "sandbox": {"filesystem": full["sandbox"]["filesystem"]}}


def write_settings(path: Path, wanted: dict[str, Any]) -> Path:
    """Merge ``wanted`` into the settings file at ``path`` (lists gain entries, nothing is removed)."""
    current = _load(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(_merge(current, wanted), indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path


def merged(project: Path, home: Path) -> dict[str, Any]:
    """The settings in effect for a session in ``project``: user, then project, then local (later ones win)."""
    out: dict[str, Any] = {}
    for path in (home / PROJECT, project / PROJECT, project / LOCAL):
        out = _merge(out, _load(path))
    return out


def missing(project: Path, home: Path, fenced: list[Path]) -> list[str]:
    """Each requirement the merged Claude Code settings do not meet (empty: the fence is in effect)."""
    settings = merged(project, home)
    found = [what for w in fenced for what, ok in _requirements(settings, str(w)) if not ok]
    found += [what for what, ok in _loopholes(settings, project, fenced) if not ok]
    return list(dict.fromkeys(found))


def denied_reads(project: Path, home: Path) -> list[Path]:
    return [Path(p) for p in merged(project, home).get("sandbox", {}).get("filesystem", {}).get("denyRead", []) if p]


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
             perms.get("disableBypassPermissionsMode") == "disable"),
            ('permissions.defaultMode is not "bypassPermissions"', perms.get("defaultMode") != "bypassPermissions")]


def _loopholes(s: dict[str, Any], project: Path, fenced: list[Path]) -> list[tuple[str, bool]]:
    """What would reopen the fence: re-allowed paths, commands run outside the sandbox, MCP servers."""
    sandbox = s.get("sandbox", {})
    fs = sandbox.get("filesystem", {})
    reopened = [p for key in ("allowRead", "allowWrite") for p in fs.get(key, []) if _reaches(p, fenced)]
    checks = [(f"no sandbox.filesystem allowRead/allowWrite reaching the fence ({', '.join(reopened)})",
               not reopened),
              ("no sandbox.excludedCommands (they run outside the sandbox)", not sandbox.get("excludedCommands")),
              ("enableAllProjectMcpServers is not true (MCP servers run outside the sandbox)",
               s.get("enableAllProjectMcpServers") is not True),
              ("no .mcp.json in the project (its servers run outside the sandbox)",
               not (project / ".mcp.json").exists())]
    checks += [(f"no {key} (its commands run outside the sandbox)", not s.get(key)) for key in _OUTSIDE]
    return checks


def _reaches(path: str, fenced: list[Path]) -> bool:
    p = Path(path.removeprefix("/") if path.startswith("//") else path).expanduser()
    return any(p == f or p.is_relative_to(f) or f.is_relative_to(p) for f in fenced)


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
