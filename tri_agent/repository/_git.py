"""A repository as git holds it: its revisions' files read from git's objects, never from a checkout's state.

Every command runs with a clean environment (no ``GIT_*`` variable of the caller, no replace refs), so what is read
is the repository's own history; a revision's files are written from blobs, never through ``git archive`` (whose
export attributes could drop or rewrite files). A leaf (stdlib only, besides the error tree), shared by the patch
gate and the test signals.
"""

from __future__ import annotations

import os
import re
import subprocess
from functools import lru_cache
from pathlib import Path

from .._errors import UsageError

REGULAR, EXECUTABLE = "100644", "100755"
_COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


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


def _plain(path: str) -> bool:
    """A path that stays inside the checkout and out of its git folder (a crafted tree may hold neither)."""
    parts = path.split("/")
    return not path.startswith("/") and ".." not in parts and ".git" not in [x.lower() for x in parts]


def tree_of(repo: Path, sha: str) -> list[tuple[str, str, str]]:
    """(mode, object id, path) of every entry of the commit's tree, recursively."""
    out = []
    for line in git_out(repo, "ls-tree", "-r", "-z", "--full-tree", sha).decode("utf-8", "surrogateescape").split("\0"):
        if line:
            meta, _, path = line.partition("\t")
            mode, _, blob = meta.split(" ")
            out.append((mode, blob, path))
    return out


def write_files(repo: Path, dest: Path, entries: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """The regular files of ``entries`` that stay inside ``dest``, from git's objects into ``dest``; the entries
    written (links, submodules and unsafe paths are not)."""
    files = [(m, b, p) for m, b, p in entries if m in (REGULAR, EXECUTABLE) and _plain(p)]
    dest.mkdir(parents=True, exist_ok=True)
    _write(repo, dest, files)
    return files


def _write(repo: Path, dest: Path, files: list[tuple[str, str, str]]) -> int:
    """Each blob from git's object store into ``dest`` (one ``cat-file --batch`` for all of them)."""
    for (mode, _, path), body in zip(files, cat_blobs(repo, [b for _, b, _ in files]), strict=True):
        if body is None:
            continue
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(body)
        if mode == EXECUTABLE:
            os.chmod(target, 0o755)
    return len(files)
