"""The in-session builder's fence: Claude Code settings that sandbox the session and deny it the run's state.

The session that plays the builder runs as the same user as the orchestrator, so the state folder's distance
alone protects nothing. What does is the agent client's own enforcement: its sandbox around every command
the session runs, and permission rules that deny its file tools the state folder. ``init`` (for an
in-session builder) writes them into the project's ``.claude/settings.json``; ``install-skill`` adds
the deny rules to the user's ``~/.claude/settings.json``. ``accept`` certifies an in-session run only when
the merged settings (user, project, local: later ones win, lists add up) hold every requirement below and
open no loophole (paths re-allowed or extra directories reaching the fence once resolved, commands, plugins or
MCP servers that run outside the sandbox, Unix sockets, a weaker nested sandbox), and names each one that is
missing otherwise. The user's and the project's settings files are part of the sealed
configuration, so a session that loosens them mid-run stops the run (exit 5); the local file, which Claude
Code itself writes, is checked every round instead.

Only Claude Code is covered: Codex's sandbox cannot deny reads inside its writable roots.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
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
# keys listing paths the session may reach besides the project: any that reaches the fence reopens it
_REOPENERS = ("sandbox.filesystem.allowRead", "sandbox.filesystem.allowWrite", "permissions.additionalDirectories")


def _enabled(value: Any) -> bool:
    """A plugin map names a plugin enabled unless its value is false (any other value may switch it on)."""
    if isinstance(value, dict):
        return any(v is not False and v is not None for v in value.values())
    return bool(value)


# how a setting loosens the fence: the requirement's wording (with the key) and when the value breaks it
_SET: tuple[str, Callable[[Any], bool]] = ("no {}", bool)
_TRUE: tuple[str, Callable[[Any], bool]] = ("{} is not true", lambda v: v is True)
_ON: tuple[str, Callable[[Any], bool]] = ("no {} enabled", _enabled)
# settings that loosen the sandbox wherever they are set (user, project or local): key, how, why
_LOOSENERS: tuple[tuple[str, tuple[str, Callable[[Any], bool]], str], ...] = (
    ("sandbox.excludedCommands", _SET, "they run outside the sandbox"),
    ("sandbox.network.allowUnixSockets", _SET, "a socket reaches services outside the sandbox"),
    ("sandbox.network.allowAllUnixSockets", _TRUE, "every socket reaches services outside the sandbox"),
    ("sandbox.enableWeakerNestedSandbox", _TRUE, "it weakens the sandbox's isolation"),
    ("enableAllProjectMcpServers", _TRUE, "MCP servers run outside the sandbox"),
    ("enabledPlugins", _ON, "a plugin brings hooks and MCP servers, which run outside the sandbox"),
    *((key, _SET, "its commands run outside the sandbox") for key in _OUTSIDE),
)
_PROC_ROOT = re.compile(r"^/proc/(?:self|thread-self|\d+)/root(?=/|$)")  # the same root, seen through /proc
_PROC_CWD = re.compile(r"^/proc/(?:self|thread-self|\d+)/cwd(?=/|$)")  # the session's folder: the project
_GLOB = re.compile(r"[*?[{]")


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
    found += [what for what, ok in _loopholes(settings, project, home, fenced) if not ok]
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


def _loopholes(s: dict[str, Any], project: Path, home: Path, fenced: list[Path]) -> list[tuple[str, bool]]:
    """What would reopen the fence: paths reaching it, commands run outside the sandbox, MCP servers, plugins."""
    checks = []
    for key in _REOPENERS:
        reopened = [p for p in _entries(_get(s, key)) if _reaches(p, fenced, project, home)]
        checks.append((f"no {key} reaching the fence ({', '.join(reopened)})", not reopened))
    checks += [(f"{wording.format(key)} ({why})", not loosens(_get(s, key)))
               for key, (wording, loosens), why in _LOOSENERS]
    checks.append(("no .mcp.json in the project (its servers run outside the sandbox)",
                   not (project / ".mcp.json").exists()))
    return checks


def _get(s: dict[str, Any], dotted: str) -> Any:
    """The value at a dotted key of the settings, or None where any level is missing or not a map."""
    value: Any = s
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _entries(value: Any) -> list[str]:
    """A path list as Claude Code may read it: a lone string counts as one entry."""
    items = value if isinstance(value, list) else [value] if value else []
    return [str(item) for item in items if item]


def _reaches(entry: str, fenced: list[Path], project: Path, home: Path) -> bool:
    """Whether ``entry`` is, lies inside or holds a fenced folder under any reading the client may give it."""
    targets = {t for f in fenced for t in (Path(os.path.normpath(f)), Path(os.path.realpath(f)))}
    return any(p == t or p.is_relative_to(t) or t.is_relative_to(p)
               for p in _readings(entry, project, home) for t in targets)


def _readings(entry: str, project: Path, home: Path) -> set[Path]:
    """Every absolute path ``entry`` may name. ``//`` is the root; ``~`` the home, or the root when HOME is
    empty; a leading ``/`` the root or a settings file's folder; anything else is relative to the session's
    folder (the project) or a settings file's folder. Reading too many ways only refuses more."""
    entry, project, home = _unglobbed(entry), project.absolute(), home.absolute()
    folders = [project, project / ".claude", home / ".claude"]
    if entry.startswith("//"):
        written = ["/" + entry.lstrip("/")]
    elif entry == "~" or entry.startswith("~/"):
        written = [f"{home}/{entry[1:]}", "/" + entry[1:], os.path.expanduser(entry)]
    elif entry.startswith("/"):
        written = [entry, *(f"{folder}{entry}" for folder in folders)]
    else:
        written = [os.path.join(folder, entry) for folder in folders]
    return {path for w in written for path in _resolved(w, project)}


def _unglobbed(entry: str) -> str:
    """A glob may match anything below its first wild part: keep the folder above it."""
    parts = entry.split("/")
    wild = next((i for i, part in enumerate(parts) if _GLOB.search(part)), len(parts))
    return "/".join(parts[:wild]) or ("/" if entry.startswith("/") else "")


def _resolved(path: str, project: Path) -> set[Path]:
    """``path`` with ``..`` collapsed as written and as the kernel follows it (symlinks of what exists),
    each without the ``/proc/*/root`` and ``/proc/*/cwd`` detours that name the same files."""
    lexical = _unproc(path, project)
    followed = _unproc(_real("/" + path.lstrip("/")), project)  # the kernel's reading: link/.. is the link's parent
    return {Path(lexical), Path(_real(lexical)), Path(followed)}


def _real(path: str) -> str:
    try:
        return os.path.realpath(path)
    except OSError:  # a link this user may not read (another process's /proc/<pid>/root): read as written
        return path


def _unproc(path: str, project: Path) -> str:
    """``path`` normalised, less every leading ``/proc/<pid>/root`` (the root) and ``/proc/<pid>/cwd`` (the
    session's folder, the project), which a sandbox matching paths as text would not recognise."""
    path = os.path.normpath("/" + path.lstrip("/"))  # // names the root too
    while True:
        if _PROC_ROOT.match(path):
            path = os.path.normpath("/" + _PROC_ROOT.sub("", path).lstrip("/"))
        elif _PROC_CWD.match(path):
            path = os.path.normpath(f"{project}/{_PROC_CWD.sub('', path)}")
        else:
            return path


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
