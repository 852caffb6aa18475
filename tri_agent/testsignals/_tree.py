"""The tree a test run saw, as one SHA-256: the working tree (tracked and untracked files, as git sees them), or a
commit's tree, hashed alike so a run on a clean checkout of a commit is bound to that commit's tree too.

Standard library only (the pytest plugin imports it in every session). The index is never written: the file list
comes from ``git ls-files`` with optional locks off, and every file is read from disk, never from git's stat
cache, so an edit that keeps the size and the time still changes the hash. Bytecode (``__pycache__``, ``*.pyc``)
is left out on both sides: running the tests writes it, and it is made from the sources that are hashed.
"""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..repository import cat_blobs, clean_env, git_out, tree_of

_BLOBS = ("100644", "100755", "120000")
_KINDS = {"100644": "f", "100755": "x", "120000": "l", "160000": "m"}  # git's modes, as the hash names them


@dataclass(frozen=True)
class Tree:
    """A tree's hash, its file count, and (a working tree only) the time of its newest edit."""

    sha256: str
    files: int
    newest: float = 0.0


def _line(path: str, kind: str, body: bytes) -> bytes:
    return path.encode("utf-8", "surrogateescape") + b"\0" + kind.encode() + b"\0" + \
        hashlib.sha256(body).hexdigest().encode() + b"\n"


def _digest(lines: list[bytes]) -> str:
    h = hashlib.sha256(b"tri-agent tree v1\n")
    for line in sorted(lines):
        h.update(line)
    return h.hexdigest()


def listed(repo: Path) -> list[str]:
    """The working tree's files as git sees them: tracked (even when deleted on disk) and untracked, not ignored."""
    env = {**clean_env(), "GIT_OPTIONAL_LOCKS": "0"}
    done = subprocess.run(["git", "-C", str(repo), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                          capture_output=True, check=False, env=env)
    if done.returncode != 0:
        git_out(repo, "rev-parse", "--show-toplevel")  # says why, as a usage error
        return []
    return sorted({p for p in done.stdout.decode("utf-8", "surrogateescape").split("\0") if p and not _bytecode(p)})


def _bytecode(path: str) -> bool:
    return path.endswith((".pyc", ".pyo")) or "__pycache__" in path.split("/")


def working_tree(repo: Path) -> Tree:
    """The hash of the working tree under ``repo`` (the top of a git work tree) as it is on disk now."""
    lines, newest = [], 0.0
    for path in listed(repo):
        full = repo / path
        try:
            st = os.lstat(full)
        except OSError:
            lines.append(_line(path, "-", b""))  # tracked, deleted on disk: a run without it saw another tree
            continue
        newest = max(newest, st.st_mtime)
        if stat.S_ISLNK(st.st_mode):
            lines.append(_line(path, "l", os.readlink(full).encode("utf-8", "surrogateescape")))
        elif stat.S_ISREG(st.st_mode):
            lines.append(_line(path, "x" if st.st_mode & 0o100 else "f", full.read_bytes()))
        else:
            lines.append(_line(path, "m", b""))  # a submodule's folder: its own commit is its own tree
    return Tree(_digest(lines), len(lines), newest)


def commit_tree(repo: Path, rev: str) -> Tree:
    """The hash of ``rev``'s tree, from git's objects: equal to the working tree's hash when that is a clean
    checkout of ``rev`` with nothing untracked."""
    entries = [(m, b, p) for m, b, p in tree_of(repo, rev) if not _bytecode(p)]
    blobs = dict(zip((b for m, b, _ in entries if m in _BLOBS),
                     cat_blobs(repo, [b for m, b, _ in entries if m in _BLOBS]), strict=True))
    lines = [_line(p, _KINDS.get(m, "m"), blobs.get(b) or b"" if m in _BLOBS else b"") for m, b, p in entries]
    return Tree(_digest(lines), len(lines))
