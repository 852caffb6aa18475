"""The test map: every test file of a revision with its one ownership class, and the scoring files a patch added.

A file the class globs name takes that class; a Python test file (``test_*.py``, ``*_test.py``, ``conftest.py``)
no glob names is diagnostic and never scores; a file two classes name is refused with both globs. The ledger is
its own class. Held-out is not a class but a visibility: a held-out file keeps its class and is never in the
agent's workspace.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from .._errors import MalformedInput, PolicyViolation, UsageError
from .._model import Record
from ..isolation._contract import glob_regex
from ..repository import files_at, git_out
from ..testcode import is_test_file
from ._gatefile import GATE_FILE, GateFile, parse_gate

Kind = Literal["scoring_properties", "scoring_fixtures", "diagnostic", "ledger"]
SCORING: frozenset[Kind] = frozenset({"scoring_properties", "scoring_fixtures"})
_GLOBBED: tuple[Kind, ...] = ("scoring_properties", "scoring_fixtures", "diagnostic")


class MapEntry(Record):
    """One test file and its class."""

    path: str = Field(description="Path from the repository's root.")
    cls: Kind = Field(description="scoring_properties, scoring_fixtures, diagnostic or ledger.")
    glob: str | None = Field(description="The gate file's glob that classed it; null: the ledger's path, or a test "
                             "file no glob names (diagnostic).")
    held_out: bool = Field(default=False, description="A held-out glob names it: never in the agent's workspace.")


class TestMap(Record):
    """``tri-agent gate map --json``: the test files of one revision and their classes."""

    __test__ = False  # a pydantic model, not a pytest test class

    schema_version: Literal[1] = Field(default=1, description="Version of the test map format.")
    revision: str = Field(description="The revision mapped ('working tree' for the checkout as it is).")
    entries: list[MapEntry] = Field(description="Every test file, by path.")

    def scoring(self) -> set[str]:
        """The paths on the scoring surface."""
        return {e.path for e in self.entries if e.cls in SCORING}


def printable(path: str) -> str:
    """A path as a record holds it: a byte that is not UTF-8 as its escape (git's names are bytes)."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def classify(files: list[str], gate: GateFile, revision: str) -> TestMap:
    """The map of ``files`` (repository paths) under ``gate``; a file two classes name is exit 3, both globs named."""
    entries = []
    for path in sorted(files):
        entry = _entry(path, gate)
        if entry is not None:
            entries.append(entry)
    return TestMap(revision=revision, entries=entries)


def _entry(path: str, gate: GateFile) -> MapEntry | None:
    held = any(glob_regex(g).match(path) for g in gate.held_out)
    shown = printable(path)
    if path == gate.classes.ledger:
        return MapEntry(path=shown, cls="ledger", glob=None, held_out=held)
    named = [(kind, glob) for kind in _GLOBBED for glob in getattr(gate.classes, kind) if glob_regex(glob).match(path)]
    kinds = sorted({kind for kind, _ in named})
    if len(kinds) > 1:
        first = next(g for k, g in named if k == kinds[0])
        second = next(g for k, g in named if k == kinds[1])
        raise MalformedInput(f"{path} is in two classes: {kinds[0]} ({first!r}) and {kinds[1]} ({second!r})",
                             where=f"{GATE_FILE}: classes", hint="one class per file: narrow one of the globs")
    if named:
        return MapEntry(path=shown, cls=named[0][0], glob=named[0][1], held_out=held)
    if is_test_file(path) or held:
        return MapEntry(path=shown, cls="diagnostic", glob=None, held_out=held)
    return None


def added_scoring(base: TestMap, head: TestMap, gate_changed: bool) -> list[str]:
    """The scoring files ``head`` has and ``base`` had not, when the gate file did not change between them: a
    scoring file enters the surface only with a change a reviewer sees in the map."""
    return [] if gate_changed else sorted(head.scoring() - base.scoring())


# --- revisions, as git holds them -------------------------------------------------------------------------------

















def gate_at(repo: Path, rev: str | None) -> GateFile:
    """The gate file as ``rev`` holds it (None: the working tree's)."""
    if rev is None:
        path = repo / GATE_FILE
        if not path.is_file():
            raise UsageError(f"{repo} has no {GATE_FILE}", hint="commit one on the base branch (docs/gate.md)")
        return parse_gate(path.read_text(encoding="utf-8"), str(path))
    if GATE_FILE not in files_at(repo, rev):
        raise UsageError(f"revision {rev} of {repo} has no {GATE_FILE}", hint="commit one on the base branch")
    raw = git_out(repo, "show", f"{rev}:{GATE_FILE}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MalformedInput(f"not UTF-8 text (byte {exc.start})", where=f"{rev}:{GATE_FILE}",
                             hint="write the gate file in UTF-8") from None
    gate = parse_gate(text, f"{rev}:{GATE_FILE}")
    unmatched(files_at(repo, rev), gate, f"{rev}:{GATE_FILE}")
    return gate


def unmatched(files: list[str], gate: GateFile, where: str) -> None:
    """Refuse (exit 3) a glob of the scoring tree or the held-out suite that names no file of the revision: a folder
    written without ``/**`` hides nothing and freezes nothing, silently."""
    for name, globs in (("held_out", gate.held_out), ("scoring_properties", gate.classes.scoring_properties),
                        ("scoring_fixtures", gate.classes.scoring_fixtures)):
        for glob in globs:
            if not any(glob_regex(glob).match(f) for f in files):
                raise MalformedInput(f"{name} glob {glob!r} names no file of the revision", where=where,
                                     hint="a folder is 'folder/**'; remove a glob that names nothing")


def map_of(repo: Path, rev: str | None = None, gate: GateFile | None = None) -> TestMap:
    """The test map of ``rev`` of ``repo`` (None: the working tree), under ``gate`` (default: its own gate file)."""
    return classify(files_at(repo, rev), gate or gate_at(repo, rev), rev or "working tree")


def map_against(repo: Path, base: str, rev: str | None = None) -> TestMap:
    """The map of ``rev``, refusing (exit 5) a scoring file added since ``base`` without a change of the gate file."""
    head, before = map_of(repo, rev), map_of(repo, base)
    changed = gate_at(repo, rev) != gate_at(repo, base)
    added = added_scoring(before, head, changed)
    if added:
        raise PolicyViolation(f"{added[0]} joined the scoring surface since {base} without a change of {GATE_FILE}"
                              + (f" (and {len(added) - 1} more)" if len(added) > 1 else ""),
                              hint="a scoring file is added with a map change a reviewer sees; or class it otherwise")
    return head
