"""The patch gate: an agent's pull request to a repository with its own test suite, scored on a frozen surface it
cannot edit and a held-out suite it never saw, policy before verdict (docs/gate.md).

- ``_gatefile``: ``tri-agent-gate.yaml``, the contract a repository commits on its base branch;
- ``_map``: the test map, every test file of a revision with its one ownership class;
- ``_checkout``: the agent's checkout of the base, without anything that scores it, and without history;
- ``_policy``: ``gate check``'s policy before any verdict: forbidden paths, the scoring surface, the flake ledger, the
  fixture lock.

It sits beside ``acceptance`` (the same row of the layers), reuses ``evidence`` (sealing), ``sandbox`` (the jail),
``isolation`` (the contract's globs) and ``scoring``, and never imports ``acceptance``; import-linter checks both.
"""

from ._checkout import AgentCheckout, checkout, omitted
from ._gatefile import FLAKE_CLASSES, GATE_FILE, Classes, Fixtures, GateFile, Invocation, load_gate, parse_gate
from ._map import MapEntry, TestMap, added_scoring, classify, files_at, gate_at, is_test_file, map_against, map_of
from ._policy import Finding, Ledger, LedgerEntry, PolicyReport, Removal, check_policy, parse_ledger

__all__ = [
           "FLAKE_CLASSES",
           "GATE_FILE",
           "AgentCheckout",
           "Classes",
           "Finding",
           "Fixtures",
           "GateFile",
           "Invocation",
           "Ledger",
           "LedgerEntry",
           "MapEntry",
           "PolicyReport",
           "Removal",
           "TestMap",
           "added_scoring",
           "check_policy",
           "checkout",
           "classify",
           "files_at",
           "gate_at",
           "is_test_file",
           "load_gate",
           "map_against",
           "map_of",
           "omitted",
           "parse_gate",
           "parse_ledger",
]
