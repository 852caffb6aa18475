"""``gate workspace``: the agent's checkout of a base revision, without anything that scores it.

Physically omitted: the held-out suite, the scoring properties and fixtures, the corpus, the flake ledger, the
fixture schema and its lock, and the gate file itself. The checkout is a fresh repository whose single commit is
the visible tree, so no history holds what was omitted. Files are read from git's objects, never through
``git archive`` (whose export attributes could drop or rewrite files), and written with their executable bit;
symbolic links and submodules are not written (a link could name an omitted file), and the record lists them.
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path
from typing import Literal

from pydantic import Field

from .._errors import UsageError
from .._model import Record
from ..isolation._contract import glob_regex
from ..repository import clean_env, git_out, top_level, tree_of, write_files
from ._gatefile import GATE_FILE, GateFile
from ._map import gate_at, printable

_IDENTITY = ["-c", "user.name=tri-agent", "-c", "user.email=workspace@tri-agent.invalid", "-c", "commit.gpgsign=false"]


class AgentCheckout(Record):
    """``gate workspace --json``: what the agent's checkout holds and what it was made without."""

    schema_version: Literal[1] = Field(default=1, description="Version of the agent checkout record.")
    base: str = Field(description="The base commit the checkout shows (its full id).")
    commit: str = Field(description="The checkout's single commit (the same base always gives the same id).")
    files: int = Field(description="Files written.")
    omitted: int = Field(description="Files of the base left out: the scoring tree, the held-out suite, the ledger, "
                         "the fixture schema and lock, the gate file.")
    omitted_sha256: str = Field(description="SHA-256 of the omitted paths, one per line, sorted: the record names "
                                "none of them (it may be shown to the agent).")
    not_written: list[str] = Field(default_factory=list, description="Visible symbolic links and submodules, not "
                                   "written.")


def omitted(path: str, gate: GateFile) -> bool:
    """Whether ``path`` of the base is kept out of the agent's checkout."""
    c = gate.classes
    exact = {GATE_FILE, c.ledger, *((gate.fixtures.schema_path, gate.fixtures.lock) if gate.fixtures else ())}
    corpus = [f"{gate.corpus}/**"] if gate.corpus else []
    globs = [*gate.held_out, *c.scoring_properties, *c.scoring_fixtures, *corpus]
    return path in exact or any(glob_regex(g).match(path) for g in globs)


def checkout(repo: Path, base: str, dest: Path) -> AgentCheckout:
    """Write the agent's checkout of ``base`` (of ``repo``) into ``dest``, which must not exist or be empty."""
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise UsageError(f"{dest} already holds files", hint="give the checkout a new or empty folder")
    sha = git_out(top_level(repo), "rev-parse", "--verify", f"{base}^{{commit}}").decode().strip()
    gate = gate_at(repo, sha)
    entries = tree_of(repo, sha)
    hidden = sorted(p for _, _, p in entries if omitted(p, gate))
    left_out = set(hidden)
    shown = [(mode, blob, p) for mode, blob, p in entries if p not in left_out]
    files = write_files(repo, dest, shown)
    written = len(files)
    commit = _commit(repo, sha, dest)
    listed = "".join(p + "\n" for p in hidden).encode("utf-8", "surrogateescape")  # git's names are bytes
    return AgentCheckout(base=sha, commit=commit, files=written, omitted=len(hidden),
                         omitted_sha256=hashlib.sha256(listed).hexdigest(),
                         not_written=sorted(printable(p) for m, b, p in shown if (m, b, p) not in set(files)))










def _commit(repo: Path, base: str, dest: Path) -> str:
    """One commit of everything in ``dest``, dated as the base, so the same base gives the same commit."""
    when = git_out(repo, "show", "-s", "--format=%cI", base).decode().strip()
    env = {**clean_env(), "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    # -f: the tree is the base's, whatever a .gitignore in it says; no hooks: a base tree's own never run here
    for args in (["init", "-q"], ["add", "-A", "-f"],
                 ["-c", "core.hooksPath=/dev/null", "commit", "-q", "--no-verify", "--allow-empty", "-m",
                  "the base, as the patch author sees it"]):  # the base's id is the operator's record only
        subprocess.run(["git", *_IDENTITY, *args], cwd=dest, env=env, check=True, capture_output=True)
    return git_out(dest, "rev-parse", "HEAD").decode().strip()
