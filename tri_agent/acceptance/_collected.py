"""The builder's own tests as pytest collects them, and which of them a round lost: the *reduced* signal of
``tri-agent evidence`` (``collection``), applied to the builder's code.

At preflight the files the builder may write are collected once (in the jail, on a clean copy), and sealed in the
preflight record's ``code.json``; each round collects the builder's code again. An id collected at preflight and
no longer collected is a ``tests-removed`` smell (a blocker), unless the removals file in the builder's folder
(``collection.REMOVALS``) names it with a reason. That catches what reading names cannot: a parametrized case
dropped, a test deselected by a conftest or ``collect_ignore``, a module that no longer imports, a class renamed out
of pytest's pattern. A Python test file that did not collect cleanly at preflight keeps the syntax-tree smell.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from pydantic import Field

from .._errors import InfrastructureFailure
from .._model import Record
from ..collection import REMOVALS, collect, reduced
from ._smells import SMELLS, Smell, is_test_file

COLLECT_TIMEOUT = 120.0  # s: collecting imports every test module, which is the builder's code


class Collected(Record):
    """The node ids pytest collected from a copy of the builder's files, with the files that failed to collect."""

    root: str = Field(description="The folder collected in, project-relative ('' for the project itself): node ids "
                                  "are relative to it.")
    ids: list[str] = Field(description="Every node id collected, in pytest's order.")
    errors: list[str] = Field(description="Files (node ids) that failed to collect; '<session>' when pytest did not "
                                          "collect at all.")


def collected_of(files: list[tuple[str, bytes]]) -> Collected | None:
    """``files`` (project-relative path, bytes) written out clean and collected in the jail; None when none of them
    is a Python test file (nothing for pytest to collect)."""
    if not any(rel.endswith(".py") and is_test_file(rel) for rel, _ in files):
        return None
    root = _root_of([rel for rel, _ in files])
    with tempfile.TemporaryDirectory(prefix="tri-agent-collect-") as tmp:
        for rel, data in files:
            (Path(tmp) / rel).parent.mkdir(parents=True, exist_ok=True)
            (Path(tmp) / rel).write_bytes(data)
        try:
            ids, errors = collect(Path(tmp) / root, COLLECT_TIMEOUT)
        except InfrastructureFailure:  # pytest did not run its collection at all: every test is gone
            ids, errors = [], ["<session>"]
    return Collected(root=root, ids=ids, errors=errors)


def _root_of(paths: list[str]) -> str:
    """The one top-level folder every path is under (the builder's ``target/``), else the project itself."""
    tops = {p.split("/", 1)[0] for p in paths}
    return tops.pop() if len(tops) == 1 and all("/" in p for p in paths) else ""


def judged_files(baseline: Collected | None) -> frozenset[str]:
    """The project-relative test files whose removals the collection judges: those that collected at preflight with
    no error (the syntax-tree smell keeps the rest)."""
    if baseline is None or "<session>" in baseline.errors:
        return frozenset()
    failed = {_path(baseline.root, e) for e in baseline.errors}
    return frozenset(p for p in (_path(baseline.root, i) for i in baseline.ids) if p not in failed)


def removed(baseline: Collected | None, now: Collected | None, removals: str) -> list[Smell]:
    """A ``tests-removed`` smell for each id collected at preflight and not now, unless ``removals`` (the removals
    file's text) names it with a reason."""
    if baseline is None or now is None or "<session>" in baseline.errors:
        return []
    gone = reduced((baseline.ids, baseline.errors), (now.ids, now.errors), removals)
    kind = SMELLS["tests-removed"]
    return [Smell(name="tests-removed", severity=kind.severity, path=_path(baseline.root, i), line=None,
                  detail=f"{kind.meaning}: test {i} is no longer collected") for i in gone.removed]


def removals_path(root: str) -> str:
    """Where the builder discloses a removal: the removals file in the folder collected in."""
    return f"{root}/{REMOVALS}" if root else REMOVALS


def _path(root: str, node_id: str) -> str:
    file = node_id.split("::", 1)[0]
    return f"{root}/{file}" if root else file
