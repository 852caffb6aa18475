"""The tool set the engine implements for API-driven roles: their only access to anything.

Every path a role names is taken relative to its workspace; absolute paths, ``..`` that leaves the
workspace, and any symlink on the way are refused, and the refusal is recorded as an attempted breach.
A name no file system of a user could hold (control characters, unpaired surrogates, a component over 255
bytes, a device name) is refused at the call. Writes are further limited to the contract's writable globs,
reads and writes to size caps. The tester's ``run_case`` goes through the gateway: it returns the case's
outputs, never the target's files. Whatever goes wrong in a call is a ``ToolError`` returned to the role,
never an exception that ends the run; only a breach of the run itself (tamper, a policy) goes further.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from .._errors import MalformedInput, UsageError
from ._contract import Contract

READ_CAP = 256 << 10
WRITE_CAP = 1 << 20
LIST_CAP = 2000
SEARCH_CAP = 200
NAME_BYTES = 255  # one component, as ext4 and most file systems allow
PATH_BYTES = 4096
RESERVED = frozenset({"con", "prn", "aux", "nul", *(f"{d}{n}" for d in ("com", "lpt") for n in range(1, 10))})

# name -> (what it does, JSON Schema of its input); drivers turn these into each API's tool format
TOOL_SPECS: dict[str, tuple[str, dict[str, Any]]] = {
    "list": ("List files under a folder of your workspace.",
             {"type": "object", "properties": {"path": {"type": "string"}}, "additionalProperties": False}),
    "read": ("Read a text file of your workspace (large files are cut at 256 KiB).",
             {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"],
              "additionalProperties": False}),
    "search": ("Search the text files of your workspace for a regular expression; returns file:line: text.",
               {"type": "object", "properties": {"pattern": {"type": "string"}, "path": {"type": "string"}},
                "required": ["pattern"], "additionalProperties": False}),
    "write": ("Write a text file, only where your contract allows.",
              {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
               "required": ["path", "content"], "additionalProperties": False}),
    "run_case": ("Run one exam case against the target; returns its output rows and behaviour.",
                 {"type": "object", "properties": {"case": {"type": "string"}}, "required": ["case"],
                  "additionalProperties": False}),
    "exam_build": ("Build your exam for a seed: generator and oracle run twice, the answer key is sealed.",
                   {"type": "object", "properties": {"seed": {"type": "string"}}, "required": ["seed"],
                    "additionalProperties": False}),
    "score": ("Score the tester's results mechanically (all three channels); returns the report summary.",
              {"type": "object", "properties": {}, "additionalProperties": False}),
    "rerun": ("Re-run a sample of cases and compare their fingerprints with the recorded run.",
              {"type": "object", "properties": {"sample": {"type": "integer", "minimum": 1}},
               "additionalProperties": False}),
    "file_ticket": ("File a ticket for the builder, the exam or the orchestrator.",
                    {"type": "object", "properties": {
                        "route": {"type": "string", "enum": ["builder", "exam", "orchestrator"]},
                        "title": {"type": "string"}, "body": {"type": "string"},
                        "cases": {"type": "array", "items": {"type": "string"}}},
                     "required": ["route", "title", "body"], "additionalProperties": False}),
    "submit": ("End your episode with your result.",
               {"type": "object", "properties": {"summary": {"type": "string"}, "blocked": {"type": "boolean"},
                                                 "reason": {"type": "string"}},
                "required": ["summary"], "additionalProperties": False}),
}


class ToolError(Exception):
    """A refused or failed tool call; its message goes back to the role."""


@dataclass
class ToolBox:
    contract: Contract
    workspace: Path
    run_case: Callable[[str], dict[str, Any]] | None = None
    # tools only the engine can carry out (exam_build, score, rerun): name -> handler of the call's arguments
    engine: dict[str, Callable[[dict[str, Any]], str]] = field(default_factory=dict)
    attempts: list[str] = field(default_factory=list)  # refused escapes: evidence of a breach attempt
    submitted: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        self.root = self.workspace.resolve()

    def specs(self) -> dict[str, tuple[str, dict[str, Any]]]:
        return {n: TOOL_SPECS[n] for n in self.contract.tools if n in TOOL_SPECS}

    def call(self, name: str, args: dict[str, Any]) -> str:
        """Run one tool call; any failure raises ToolError with a message for the role."""
        if name not in self.contract.tools or name not in _HANDLERS:
            raise ToolError(f"tool {name!r} is not available to the {self.contract.role}")
        if not isinstance(args, dict):
            raise ToolError(f"{name}: arguments must be an object, not {type(args).__name__}")
        try:
            return _HANDLERS[name](self, args)
        except KeyError as exc:
            raise ToolError(f"{name}: argument {exc.args[0]!r} is missing") from None
        except (MalformedInput, UsageError) as exc:  # the role's input to an engine tool: its to fix
            raise ToolError(f"{name}: {exc.line()}") from None
        except (OSError, ValueError, TypeError) as exc:  # UnicodeError is a ValueError
            raise ToolError(f"{name} failed: {type(exc).__name__}: {_said(exc)}") from None

    def resolve(self, path: str) -> tuple[str, Path]:
        """(relative POSIX path, absolute path) inside the workspace, or ToolError."""
        rel = PurePosixPath(path or ".")
        if rel.is_absolute() or "\\" in path or "\0" in path:
            return self._refuse(f"path {path!r} is not relative to your workspace")
        _check_name(path)
        parts = list(rel.parts)  # PurePosixPath drops "." components itself
        if ".." in parts:
            return self._refuse(f"path {path!r} leaves your workspace")
        current = self.root
        for part in parts:
            current = current / part
            if current.is_symlink():
                return self._refuse(f"path {path!r} goes through a symlink")
        return "/".join(parts) or ".", current

    def _refuse(self, why: str) -> tuple[str, Path]:
        self.attempts.append(why)
        raise ToolError(why)


def _check_name(path: str) -> None:
    """Refuse a name no user's file system could hold, with the reason (not a breach: a mistake)."""
    bad = next((c for c in path if ord(c) < 32 or ord(c) == 127), None)
    if bad is not None:
        raise ToolError(f"path {path!r} holds a control character ({ord(bad):#04x}); use printable names")
    try:
        raw = path.encode("utf-8")
    except UnicodeEncodeError:
        raise ToolError(f"path {path!r} holds an unpaired surrogate: it is not text") from None
    if len(raw) > PATH_BYTES:
        raise ToolError(f"path of {len(raw)} bytes is over the {PATH_BYTES}-byte limit")
    for part in PurePosixPath(path).parts:
        if len(part.encode("utf-8")) > NAME_BYTES:
            raise ToolError(f"name {part[:40]!r}... is over {NAME_BYTES} bytes")
        if part.split(".")[0].lower() in RESERVED:
            raise ToolError(f"name {part!r} is a reserved device name on some systems; choose another")


def _said(exc: BaseException) -> str:
    text = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return " ".join(str(text).split())[:300]


def _list(box: ToolBox, args: dict[str, Any]) -> str:
    rel, folder = box.resolve(str(args.get("path", ".")))
    if not folder.is_dir():
        raise ToolError(f"{rel} is not a folder")
    out = []
    for base, dirs, names in os.walk(folder, followlinks=False):
        dirs.sort()
        for name in sorted(names):
            out.append(Path(base, name).relative_to(box.root).as_posix())
            if len(out) >= LIST_CAP:
                return "\n".join(out) + f"\n(listing cut at {LIST_CAP} files)"
    return "\n".join(out)


def _read(box: ToolBox, args: dict[str, Any]) -> str:
    rel, path = box.resolve(str(args["path"]))
    if path.is_dir():
        raise ToolError(f"{rel} is a folder: use list to see what it holds")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as exc:
        raise ToolError(f"cannot read {rel}: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        data = f.read(READ_CAP + 1)
    text = data[:READ_CAP].decode(errors="replace")
    return text + (f"\n(cut at {READ_CAP} bytes)" if len(data) > READ_CAP else "")


def _search(box: ToolBox, args: dict[str, Any]) -> str:
    try:
        pattern = re.compile(str(args["pattern"]))
    except re.error as exc:
        raise ToolError(f"bad regular expression: {exc}") from None
    listing = _list(box, {"path": args.get("path", ".")}).splitlines()
    hits = []
    for rel in (r for r in listing if not r.startswith("(")):
        text = _read(box, {"path": rel})
        hits += [f"{rel}:{i}: {line[:200]}" for i, line in enumerate(text.splitlines(), 1) if pattern.search(line)]
        if len(hits) > SEARCH_CAP:
            return "\n".join(hits[:SEARCH_CAP]) + f"\n(cut at {SEARCH_CAP} hits)"
    return "\n".join(hits) or "(no match)"


def _write(box: ToolBox, args: dict[str, Any]) -> str:
    rel, path = box.resolve(str(args["path"]))
    if not box.contract.can_write(rel):
        box.attempts.append(f"write to {rel} outside the writable globs")
        raise ToolError(f"the {box.contract.role} may not write {rel}")
    try:
        data = str(args["content"]).encode("utf-8")
    except UnicodeEncodeError:
        raise ToolError("content holds an unpaired surrogate: it is not text; write UTF-8 text") from None
    if len(data) > WRITE_CAP:
        raise ToolError(f"content of {len(data)} bytes is over the {WRITE_CAP}-byte cap")
    if path.is_dir():
        raise ToolError(f"{rel} is a folder; name a file")
    blocking = next((p for p in path.parents if p.is_relative_to(box.root) and p.exists() and not p.is_dir()), None)
    if blocking is not None:
        raise ToolError(f"{blocking.relative_to(box.root).as_posix()} is a file, so nothing can be written below it")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return f"wrote {len(data)} bytes to {rel}"


def _run_case(box: ToolBox, args: dict[str, Any]) -> str:
    if box.run_case is None:
        raise ToolError("no exam is running: run_case is unavailable")
    return json.dumps(box.run_case(str(args["case"])), ensure_ascii=False)


def _engine(name: str) -> Callable[[ToolBox, dict[str, Any]], str]:
    def handler(box: ToolBox, args: dict[str, Any]) -> str:
        if name not in box.engine:
            raise ToolError(f"{name} is unavailable: no round is running")
        return box.engine[name](args)

    return handler


def _file_ticket(box: ToolBox, args: dict[str, Any]) -> str:
    route = str(args.get("route"))
    if route not in ("builder", "exam", "orchestrator"):
        raise ToolError(f"route {route!r} is not builder, exam or orchestrator")
    cases = ", ".join(args.get("cases") or []) or "-"
    text = f"# {args['title']}\n\nroute: {route}\ncases: {cases}\n\n{args['body']}\n"
    ticket = "t-" + hashlib.sha256(text.encode()).hexdigest()[:10]
    _write(box, {"path": f"exam/tickets/{route}/{ticket}.md", "content": text})
    return f"filed {ticket} for the {route}"


def _submit(box: ToolBox, args: dict[str, Any]) -> str:
    box.submitted = dict(args)
    return "submitted"


_HANDLERS: dict[str, Callable[[ToolBox, dict[str, Any]], str]] = {
    "list": _list, "read": _read, "search": _search, "write": _write, "run_case": _run_case, "submit": _submit,
    "exam_build": _engine("exam_build"), "score": _engine("score"), "rerun": _engine("rerun"),
    "file_ticket": _file_ticket,
}
