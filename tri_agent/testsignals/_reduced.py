"""The trees *reduced* is collected on (the base from git's objects; the head from its commit, or the working tree's
files as git lists them), and the head's removals file. What the signal is, and the collection, live in
``collection``, shared with an acceptance's view of its builder's tests.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from .._errors import MalformedInput
from ..collection import REMOVALS, Reduced
from ..repository import tree_of, write_files
from ._tree import listed

__all__ = ["Reduced", "removals_text", "write_commit", "write_working"]


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
