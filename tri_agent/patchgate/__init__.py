"""The patch gate: an agent's pull request to a repository with its own test suite, scored on a frozen surface it
cannot edit and a held-out suite it never saw, policy before verdict (docs/gate.md).

- ``_gatefile``: ``tri-agent-gate.yaml``, the contract a repository commits on its base branch;
- ``_map``: the test map, every test file of a revision with its one ownership class;
- ``_checkout``: the agent's checkout of the base, without anything that scores it, and without history;
- ``_policy``: ``gate check``'s policy before any verdict: forbidden paths (10), the scoring surface (11), the flake
  ledger (13), the fixture lock (14); with ``_skips`` (12, and every visible skip on the ledger), ``_reach`` (the
  code that asks whether it is being scored, 12) and ``_oracle`` (15);
- ``_verdict``: the clean checkout with the patch applied, the pinned run and the corpus replay in the jail, at the
  base and the head (``_witness`` and ``_replay`` are the standalone files it runs there);
- ``_check``: policy, then verdict, composed (``gate check``); ``_report``: its Markdown and JUnit XML views.

It sits beside ``acceptance`` (the same row of the layers), reuses ``evidence`` (sealing), ``sandbox`` (the jail),
``isolation`` (the contract's globs) and ``scoring``, and never imports ``acceptance``; import-linter checks both.
"""

from ..repository import files_at
from ..testcode import is_test_file
from ._check import GateReport, check, commit_patch
from ._checkout import AgentCheckout, checkout, omitted
from ._gatefile import FLAKE_CLASSES, GATE_FILE, Classes, Fixtures, GateFile, Invocation, load_gate, parse_gate
from ._map import MapEntry, TestMap, added_scoring, classify, gate_at, map_against, map_of
from ._policy import Finding, Ledger, LedgerEntry, PolicyReport, Removal, Stability, check_policy, parse_ledger
from ._report import junit, markdown
from ._verdict import CaseOutcome, Side, TestOutcome, Verdict

__all__ = [
           "FLAKE_CLASSES",
           "GATE_FILE",
           "AgentCheckout",
           "CaseOutcome",
           "Classes",
           "Finding",
           "Fixtures",
           "GateFile",
           "GateReport",
           "Invocation",
           "Ledger",
           "LedgerEntry",
           "MapEntry",
           "PolicyReport",
           "Removal",
           "Side",
           "Stability",
           "TestMap",
           "TestOutcome",
           "Verdict",
           "added_scoring",
           "check",
           "check_policy",
           "checkout",
           "classify",
           "commit_patch",
           "files_at",
           "gate_at",
           "is_test_file",
           "junit",
           "load_gate",
           "map_against",
           "map_of",
           "markdown",
           "omitted",
           "parse_gate",
           "parse_ledger",
]
