"""The test map: every test file of a revision with its one ownership class, and the scoring files a patch added.

A file the class globs name takes that class; a Python test file (``test_*.py``, ``*_test.py``, ``conftest.py``)
no glob names is diagnostic and never scores; a file two classes name is refused with both globs. The ledger is
its own class. Held-out is not a class but a visibility: a held-out file keeps its class and is never in the
agent's workspace.
"""

from __future__ import annotations

import os
import re
import subprocess
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Literal

from pydantic import Field

from .._errors import MalformedInput, PolicyViolation, UsageError
from .._model import Record
from ..isolation._contract import glob_regex
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


def is_test_file(path: str) -> bool:
    """A file pytest collects tests or fixtures from by its name."""
    name = PurePosixPath(path).name
    return name == "conftest.py" or (name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")))


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

def clean_env() -> dict[str, str]:
    """The environment git runs in here: no ``GIT_*`` variable of the caller (``GIT_DIR`` would point every command
    at another repository) and no replace refs (a ``git replace`` must not rewrite the history that is read)."""
    return {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")}, "GIT_NO_REPLACE_OBJECTS": "1"}


def git_out(repo: Path, *args: str) -> bytes:
    """What ``git ARGS`` printed in ``repo``; its failure is a usage error naming the command and git's reason."""
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=False, env=clean_env())
    if done.returncode != 0:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        shown = " ".join(args)
        raise UsageError(f"git {shown if len(shown) <= 80 else shown[:77] + '...'} in {repo} failed: {tail[0]}",
                         hint="pass a git repository and a revision it has")
    return done.stdout


def cat_blobs(repo: Path, names: list[str]) -> list[bytes | None]:
    """The bytes of each object named (a blob id, or ``rev:path``), in one ``git cat-file --batch``; None for a name
    git does not have (a path not in the revision) or cannot be asked for on one line (a newline in it)."""
    asked = [n for n in names if "\n" not in n and "\r" not in n]
    if not asked:
        return [None] * len(names)
    done = subprocess.run(["git", "-C", str(repo), "cat-file", "--batch"], capture_output=True, check=True,
                          input="".join(f"{n}\n" for n in asked).encode("utf-8", "surrogateescape"), env=clean_env())
    data, at, found = done.stdout, 0, {}
    for name in asked:
        header_end = data.index(b"\n", at)
        header = data[at:header_end].split()
        if header[-1] == b"missing" or len(header) != 3:
            at = header_end + 1
            continue
        size = int(header[2])
        found[name] = data[header_end + 1:header_end + 1 + size]
        at = header_end + 1 + size + 1
    return [found.get(n) for n in names]


def top_level(repo: Path) -> Path:
    """``repo``, which must be the top of its work tree: paths are read from the root the gate file's globs name."""
    top = Path(git_out(repo, "rev-parse", "--show-toplevel").decode("utf-8", "surrogateescape").strip())
    if top.resolve() != repo.resolve():
        raise UsageError(f"{repo} is inside the repository {top}, not its top", hint=f"pass {top}")
    return repo


_COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def files_at(repo: Path, rev: str | None) -> list[str]:
    """The files of ``rev`` (None: the working tree, tracked and untracked but not ignored, as git sees them). A
    commit named by its full id never changes: its listing is read once per process, however many rules ask."""
    if rev is not None and _COMMIT.fullmatch(rev):
        return list(_commit_files(repo.resolve(), rev))
    return _listed(repo, rev)


@lru_cache(maxsize=64)
def _commit_files(repo: Path, sha: str) -> tuple[str, ...]:
    return tuple(_listed(repo, sha))


def _listed(repo: Path, rev: str | None) -> list[str]:
    top_level(repo)
    out = git_out(repo, "ls-tree", "-r", "-z", "--full-tree", "--name-only", rev) if rev else \
        git_out(repo, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    return sorted({p for p in out.decode("utf-8", "surrogateescape").split("\0") if p})


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
