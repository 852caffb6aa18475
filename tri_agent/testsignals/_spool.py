"""The spool's entries read back: one per pytest session, written by the plugin (``_plugin``), bound to the tree the
run saw.

Entries live in the repository's git folder (``<git dir>/tri-agent/spool/``, or ``TRI_AGENT_SPOOL``), out of the
working tree so writing one never changes the tree it is bound to. Each is written to a temporary name and renamed
into place, so a killed run leaves no half entry; a file that does not read as an entry is skipped and named.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError

from .._model import Record

Outcome = Literal["passed", "failed", "error", "skipped", "xfailed", "xpassed"]
OUTCOMES: tuple[Outcome, ...] = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")
_MAX_ENTRY = 64 << 20  # an entry larger than this was not written by the plugin


class SpoolEntry(Record):
    """What one pytest session ran, on which tree, and how it ended."""

    schema_version: Literal[1] = Field(default=1, description="Version of the spool entry format.")
    tree_sha256: str = Field(description="The working tree's hash when the session started (testsignals._tree).")
    tree_sha256_end: str = Field(description="The hash when it ended; another value: the run edited its own tree, "
                                             "and the entry is bound to neither.")
    files: int = Field(description="Files in the tree the hash covers.")
    rootdir: str = Field(description="pytest's rootdir, relative to the top of the work tree ('.' for the top): "
                                     "node ids are relative to it.")
    invocation: list[str] = Field(description="The arguments pytest was given.")
    started: float = Field(description="When the session started (seconds since the epoch).")
    finished: float = Field(description="When it ended.")
    collected: list[str] = Field(description="Every node id collected, in order.")
    outcomes: dict[str, Outcome] = Field(description="Each test run's outcome, its phases combined: passed only "
                                                     "when setup, call and teardown all passed.")
    collect_errors: list[str] = Field(description="Files or nodes that failed to collect.")
    exit_status: int = Field(description="The session's own exit status (a shell's `|| true` cannot change it).")
    hooks: dict[str, list[str]] = Field(default_factory=dict, description=(
        "Files whose code implements a hook that can decide what runs or what a run reports (testsignals._plugin."
        "OUTCOME_HOOKS), pytest's own left out: relative to the top of the work tree when inside it, else "
        "absolute; each with the hooks it implements."))
    plugin: str = Field(description="The tri_agent version whose plugin wrote the entry.")


def read_entries(folder: Path) -> tuple[list[tuple[Path, SpoolEntry]], list[str]]:
    """Every entry of ``folder``, newest first, and a line for each file that is not one."""
    found, bad = [], []
    if not folder.is_dir():
        return [], []
    for path in sorted(folder.glob("*.json"), reverse=True):
        try:
            st = os.lstat(path)
            if not stat.S_ISREG(st.st_mode) or st.st_size > _MAX_ENTRY:  # a link, a FIFO (it would hang), a giant
                raise ValueError("not a plain file of an entry's size")
            found.append((path, SpoolEntry.model_validate_json(path.read_bytes())))
        except (OSError, ValueError, ValidationError) as exc:
            bad.append(f"{path.name}: not a spool entry ({str(exc).splitlines()[0][:100]})")
    return found, bad
