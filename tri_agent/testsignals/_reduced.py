"""The *reduced* signal: the test ids collected at the base and gone at the head, unless disclosed with a reason.

Both sides are collected, never grepped: each tree is written out clean (the base from git's objects; the head from
its commit, or the working tree's files as git lists them) and ``pytest --collect-only`` runs on it in the OS
sandbox with the collection's own plugin (``_collector``). A rename shows as a removal and an addition. A removal
is cleared only by a line of the removals file (``.tri-agent/test-removals`` at the head) naming the id *and* a
reason: ``<id><TAB or spaces><reason>``; a bare id clears nothing, and is listed as such.
"""

from __future__ import annotations

import json
import secrets
import shutil
import sys
import tempfile
import unicodedata
from pathlib import Path
from typing import Literal

from pydantic import Field

from .._errors import InfrastructureFailure, MalformedInput
from .._model import Record
from ..repository import tree_of, write_files
from ..sandbox._jail import Jail
from ..sandbox._process import base_env
from ._tree import listed

REMOVALS = ".tri-agent/test-removals"
MIN_REASON_LETTERS = 3  # a reason is words: fewer letters than this is no reason
_HERE = Path(__file__).resolve().parent
_FILE_CAP = 64 << 20


class Disclosed(Record):
    """A removal on record: the id and the reason given for it."""

    id: str = Field(description="The node id removed.")
    reason: str = Field(description="Why, as the removals file says it.")
    line: int = Field(description="Its line in the removals file.")


class Reduced(Record):
    """The ids collected at the base and not at the head, and which of them were disclosed."""

    state: Literal["reduced", "disclosed", "none", "inconclusive"] = Field(
        description="reduced: some removal is not on record; disclosed: every removal is, with a reason; none; "
                    "inconclusive: a file of the base did not collect, so its tests cannot be counted.")
    removed: list[str] = Field(description="Ids gone since the base with no reasoned entry: each fires the signal.")
    disclosed: list[Disclosed] = Field(description="Ids gone since the base, cleared by an entry with a reason.")
    bare: list[str] = Field(description="Removals-file entries without a reason ('file:line id'): they clear nothing.")
    added: list[str] = Field(description="Ids collected at the head and not at the base (a rename's other half).")
    base_collected: int = Field(description="Ids collected at the base.")
    head_collected: int = Field(description="Ids collected at the head.")
    collect_errors: dict[str, list[str]] = Field(description="Files that failed to collect, per side: their tests "
                                                             "count as gone.")


def reduced(base: tuple[list[str], list[str]], head: tuple[list[str], list[str]], removals: str) -> Reduced:
    """The signal from both sides' (ids, collection errors) and the head's removals file text."""
    entries, bare = parse_removals(removals)
    gone = [i for i in base[0] if i not in set(head[0])]
    cleared = [entries[i] for i in gone if i in entries]
    removed = [i for i in gone if i not in entries]
    state: Literal["reduced", "disclosed", "none", "inconclusive"] = \
        "reduced" if removed else "inconclusive" if base[1] else "disclosed" if gone else "none"
    return Reduced(state=state, removed=removed, disclosed=cleared, bare=bare,
                   added=[i for i in head[0] if i not in set(base[0])], base_collected=len(base[0]),
                   head_collected=len(head[0]), collect_errors={"base": base[1], "head": head[1]})


def parse_removals(text: str) -> tuple[dict[str, Disclosed], list[str]]:
    """Reasoned entries by id, and the bare ones (``REMOVALS:line id``). Comments start with ``#``."""
    entries: dict[str, Disclosed] = {}
    bare: list[str] = []
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.lstrip("\ufeff").strip()  # a BOM before the first id is not part of it
        if not line or line.startswith("#"):
            continue
        test, _, reason = line.partition("\t") if "\t" in line else _split(line)
        if sum(c.isalpha() for c in _visible(reason)) < MIN_REASON_LETTERS:  # "", ".", "-": no reason at all
            bare.append(f"{REMOVALS}:{n} {test.strip()}")
        else:
            entries[test.strip()] = Disclosed(id=test.strip(), reason=reason.strip(), line=n)
    return entries, bare


def _visible(text: str) -> str:
    """``text`` without invisible format characters (a BOM, zero-width spaces and joiners), which can make an empty
    reason look like one."""
    return "".join(c for c in text if unicodedata.category(c) != "Cf")


def _split(line: str) -> tuple[str, str, str]:
    parts = line.split(None, 1)
    return parts[0], " ", parts[1] if len(parts) > 1 else ""


def collect(tree: Path, timeout: float = 600.0) -> tuple[list[str], list[str]]:
    """``pytest --collect-only`` on ``tree`` in the jail: (node ids in order, files that failed to collect)."""
    with tempfile.TemporaryDirectory(prefix="collect-") as tmp:
        work = Path(tmp)
        for name in ("plugin", "home", "out"):
            (work / name).mkdir()
        shutil.copyfile(_HERE / "_collector.py", work / "plugin" / "tri_agent_collector.py")
        out = work / "out" / f"{secrets.token_hex(8)}.json"
        env = {**base_env(work / "home"), "PATH": f"{Path(sys.executable).parent}:{base_env(work)['PATH']}",
               "PYTEST_ADDOPTS": "", "PYTHONPATH": str(work / "plugin"), "TRI_AGENT_COLLECTED": str(out),
               "TMPDIR": str(work / "home")}
        argv = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "tri_agent_collector", "-p",
                "no:cacheprovider", "-p", "no:xdist", "-p", "no:tri_agent"]
        done, _ = Jail(readable=(tree, work / "plugin"), writable=(work / "home", work / "out")).run(
            argv, cwd=tree, env=env, timeout=timeout, file_cap=_FILE_CAP)
        if done.timed_out:
            raise InfrastructureFailure(f"collecting the tests of {tree} ran past {timeout:.0f} s",
                                        hint="raise --timeout")
        try:
            found = json.loads(out.read_text(encoding="utf-8"))
            return [str(i) for i in found["collected"]], [str(e) for e in found["errors"]]
        except (OSError, ValueError, KeyError, TypeError):
            tail = (done.stderr or done.stdout).decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
            raise InfrastructureFailure(f"pytest could not collect the tests of {tree} (exit {done.exit_code}): "
                                        f"{tail[0][:160]}", hint="run pytest --collect-only there") from None


def write_commit(repo: Path, rev: str, dest: Path) -> Path:
    """``rev``'s whole tree into ``dest``, from git's objects."""
    write_files(repo, dest, tree_of(repo, rev))
    return dest


def write_working(repo: Path, dest: Path) -> Path:
    """The working tree's files, as git lists them (tracked and untracked, not ignored), into ``dest``; links are
    not followed and not written."""
    for rel in listed(repo):
        src = repo / rel
        if src.is_symlink() or not src.is_file():
            continue
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest / rel)
    return dest


def removals_text(repo: Path, head: str | None, show: bytes | None) -> str:
    """The head's removals file (``show``: its bytes at the head commit, when ``head`` is one); a link is not
    followed (its target's text would land in the report)."""
    path = repo / REMOVALS
    raw = show if head is not None else (path.read_bytes() if path.is_file() and not path.is_symlink() else None)
    try:
        return raw.decode("utf-8") if raw is not None else ""
    except UnicodeDecodeError as exc:
        raise MalformedInput(f"not UTF-8 text (byte {exc.start})", where=REMOVALS,
                             hint="write the removals file in UTF-8") from None
