"""Test signals: what a repository's own test runs say about a change, read as evidence and never re-run
(docs/evidence.md). Named apart from ``evidence``, which is sealing.

- ``_tree``: the hash of the tree a run saw (a working tree, or a commit's tree, hashed alike);
- ``_plugin``: the pytest plugin (entry point ``pytest11``), one spool entry per session; ``_spool``: the entries
  read back;
- ``_junit``: JUnit XML reports read in;
- ``_passed``: *passed*, harvested from the spool, a report bound to the commit, or one found on disk;
- ``_reduced``: the trees *reduced* collects (the signal itself and the collection are ``collection``'s);
- ``_weakened``: *weakened*, a K-sampled judge that can only flag; ``_infrastructure``: the files around the tests
  the judge also reads, and the moves that forge outcomes (each flags without a judge);
- ``_report``: the report, its exit code and its terminal, Markdown and JUnit views; ``_change``: the three,
  composed (``tri-agent evidence``).

It sits beside ``acceptance`` (the same row of the layers), reuses ``repository``, ``sandbox``, ``collection``,
``drivers`` and ``testcode``, and never imports ``acceptance``; import-linter checks both. Names are imported on
first use: pytest loads ``_plugin`` in every session, which must not pay for the rest.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {"evidence": "_change", "EvidenceReport": "_report", "junit": "_report", "markdown": "_report",
            "lines": "_report", "Passed": "_passed", "Reduced": "_reduced", "Weakened": "_weakened",
            "Judge": "_weakened", "api_judge": "_weakened", "agent_judge": "_weakened", "SpoolEntry": "_spool",
            "Tree": "_tree", "working_tree": "_tree", "commit_tree": "_tree"}
__all__ = ["EvidenceReport", "Judge", "Passed", "Reduced", "SpoolEntry", "Tree", "Weakened", "agent_judge",
           "api_judge", "commit_tree", "evidence", "junit", "lines", "markdown", "working_tree"]

if TYPE_CHECKING:
    from ._change import evidence
    from ._passed import Passed
    from ._reduced import Reduced
    from ._report import EvidenceReport, junit, lines, markdown
    from ._spool import SpoolEntry
    from ._tree import Tree, commit_tree, working_tree
    from ._weakened import Judge, Weakened, agent_judge, api_judge


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
