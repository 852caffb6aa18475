"""Role workspaces: assembled by physical omission, audited by hashing, harvested or quarantined.

Layer 1 (always): a role's workspace is a fresh folder holding copies of exactly the project files its
contract lets it read; agent configuration and version-control history are stripped, symlinks are
never copied, and the role gets its own HOME outside the workspace.
Layer 2 (always): the workspace is hashed before and after the role runs. Any change the contract does
not allow (a write outside the writable globs, a changed read-only input, a planted symlink or special
file) is a breach: exit 5, and the workspace is quarantined, never harvested.
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import Field

from .._errors import PolicyViolation, UsageError
from .._model import Record
from ..evidence._manifest import Entry, scan
from ..evidence._seal import diff
from ._contract import Contract, is_agent_config


class WorkspaceRecord(Record):
    """What a role's workspace received, and what was kept out."""

    schema_version: Literal[1] = Field(default=1, description="Version of the workspace record format.")
    role: str = Field(description="Role whose contract the workspace was assembled for.")
    files: int = Field(description="Project files copied in.")
    omitted: int = Field(description="Project files the contract keeps out (not readable, or hidden).")
    stripped: list[str] = Field(description="Agent configuration and history removed (paths).")
    symlinks_skipped: list[str] = Field(description="Symlinks in the project, never copied.")
    refused: list[str] = Field(default_factory=list, description="Hard links (a second name for a file that may "
                               "live anywhere) and special files (pipes, devices, sockets), never copied.")


class Breach(Record):
    path: str
    kind: Literal["write-outside-writable", "changed-read-only-input", "planted-link-or-special-file",
                  "past-write-cap"]
    detail: str


@dataclass
class Snapshot:
    entries: dict[str, Entry]
    problems: list[tuple[str, str]] = field(default_factory=list)


View = dict[str, Path]
"""What a role's layout is made of: a folder of the layout (``exam``, ``builds``, ``evidence``...) -> the
real folder it comes from; ``""`` is the project. A mapped folder hides whatever the project holds under
the same name, so the orchestrator maps every folder whose project copy must never reach a role."""


def assemble(contract: Contract, view: View | Path, out: Path) -> WorkspaceRecord:
    """Copy into ``out`` (which must be new) the files of ``view`` that ``contract`` lets its role read."""
    view = _view(view)
    if out.exists() and any(out.iterdir()):
        raise UsageError(f"{out} is not empty", hint="a workspace is always assembled fresh")
    out.mkdir(parents=True, exist_ok=True)
    files, omitted, stripped, links, refused = 0, 0, [], [], []
    for rel, path in _layout(view):
        if is_agent_config(rel):
            stripped.append(rel)
        elif path.is_symlink():
            links.append(rel)
        elif contract.can_read(rel) and _odd(path):
            refused.append(rel)
        elif contract.can_read(rel):
            dest = out / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest, follow_symlinks=False)
            files += 1
        else:
            omitted += 1
    return WorkspaceRecord(role=contract.role, files=files, omitted=omitted, stripped=sorted(stripped),
                           symlinks_skipped=sorted(links), refused=sorted(refused))


def _odd(path: Path) -> bool:
    """Not a plain file of its own: a hard link, a pipe, a device or a socket."""
    info = path.lstat()
    return not stat.S_ISREG(info.st_mode) or info.st_nlink > 1


def _view(view: View | Path) -> View:
    mapping = {"": view} if isinstance(view, Path) else dict(view)
    project = mapping.get("")
    if project is None or not project.resolve().is_dir():
        raise UsageError(f"{project} is not a project folder")
    return {prefix: root.resolve() for prefix, root in mapping.items()}


def _layout(view: View) -> list[tuple[str, Path]]:
    """Every (layout path, real path) of the view: mapped folders under their prefix, the project elsewhere."""
    out = []
    for prefix, root in sorted(view.items()):
        if not root.is_dir():
            continue
        for rel, path in _walk(root):
            full = f"{prefix}/{rel}" if prefix else rel
            if _owner(view, full) == prefix:
                out.append((full, path))
    return sorted(out)


def _owner(view: View, rel: str) -> str:
    """The view key that owns layout path ``rel``: the longest prefix that matches it."""
    keys = [k for k in view if k and (rel == k or rel.startswith(k + "/"))]
    return max(keys, key=len) if keys else ""


def _walk(root: Path) -> list[tuple[str, Path]]:
    out = []
    for folder, dirs, names in os.walk(root, followlinks=False):
        base = Path(folder)
        rel_base = base.relative_to(root).as_posix()
        prefix = "" if rel_base == "." else rel_base + "/"
        for name in dirs:
            if (base / name).is_symlink():
                out.append((prefix + name, base / name))
        for name in names:
            out.append((prefix + name, base / name))
    return sorted(out)


def snapshot(workspace: Path) -> Snapshot:
    found = scan(workspace)
    # a hard link is a second name for a file that may live outside the workspace: never harvested
    linked = [(e.path, f"a hard link ({(workspace / e.path).lstat().st_nlink} names)") for e in found.entries
              if (workspace / e.path).lstat().st_nlink > 1]
    return Snapshot({e.path: e for e in found.entries}, [*found.problems, *linked])


def audit(contract: Contract, before: Snapshot, after: Snapshot, write_cap: int | None = None) -> list[Breach]:
    """Every change between the snapshots that ``contract`` does not allow, and writing past ``write_cap``."""
    breaches = [Breach(path=p, kind="planted-link-or-special-file", detail=why) for p, why in after.problems]
    added = sum(e.size for p, e in after.entries.items() if before.entries.get(p) != e)
    if write_cap is not None and added > write_cap:
        breaches.append(Breach(path=".", kind="past-write-cap", detail=f"{added} bytes written, cap {write_cap}"))
    for change in diff(sorted(before.entries.values()), sorted(after.entries.values())):
        paths = [change.path] + ([change.detail.removeprefix("now at ")] if change.kind == "renamed" else [])
        for path in paths:
            if contract.can_write(path):
                continue
            kind: Literal["write-outside-writable", "changed-read-only-input"] = (
                "changed-read-only-input" if path in before.entries else "write-outside-writable")
            breaches.append(Breach(path=path, kind=kind, detail=f"{change.kind}: {change.detail}"))
    return sorted(breaches, key=lambda b: (b.path, b.kind))


def harvest(contract: Contract, before: Snapshot, after: Snapshot, workspace: Path, view: View | Path,
            write_cap: int | None = None) -> list[str]:
    """Bring the role's allowed changes back to where the view says they belong; refuse on any breach."""
    view = _view(view)
    breaches = audit(contract, before, after, write_cap)
    if breaches:
        first = breaches[0]
        raise PolicyViolation(f"{contract.role} breached its contract: {first.kind} at {first.path} "
                              f"({len(breaches)} breach(es))", hint="its output is quarantined, not harvested")
    changed = []
    for path, entry in after.entries.items():
        if before.entries.get(path) != entry:
            dest = _destination(view, path)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(workspace / path, dest, follow_symlinks=False)
            changed.append(path)
    for path in before.entries.keys() - after.entries.keys():
        _destination(view, path).unlink(missing_ok=True)
        changed.append(path)
    return sorted(changed)


def _destination(view: View, rel: str) -> Path:
    prefix = _owner(view, rel)
    return _confined(view[prefix], rel[len(prefix) + 1:] if prefix else rel)


def _confined(root: Path, rel: str) -> Path:
    """``root/rel``, refusing a destination that a symlink would carry elsewhere."""
    root = root.resolve()
    dest = root / rel
    if dest.is_symlink() or not dest.parent.resolve().is_relative_to(root):
        raise PolicyViolation(f"{dest} leads outside {root} through a symlink", hint="remove the symlink")
    return dest


def quarantine(workspace: Path, store: Path, name: str) -> Path:
    """Move a breached workspace aside, intact, as evidence."""
    store.mkdir(parents=True, exist_ok=True)
    dest = store / name
    n = 1
    while dest.exists():
        n += 1
        dest = store / f"{name}-{n}"
    shutil.move(str(workspace), dest)
    return dest
