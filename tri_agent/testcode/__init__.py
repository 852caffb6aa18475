"""Test code as pytest runs it: syntax trees with aliases resolved, and the marks that take a test off a run.

A leaf of the package (stdlib only; pytest's own names are read from pytest where it is installed), shared by the
judge's smells, the patch gate and the test evidence, so all agree on what a skip, a retry, a timeout, an
outcome-rewriting hook or a forged outcome is.

- ``_reading``: parsing, alias resolution, the tables of marks and hooks (``SKIPS``, ``FLAKY``, ``HOOKS``), and
  which files are test files;
- ``_forging``: the moves that forge outcomes (``RULES``), read from the syntax tree, shared by the test evidence
  of a change and an acceptance's smells.
"""

from ._forging import RULES as FORGING_RULES
from ._forging import added_moves as added_forging_moves
from ._forging import moves as forging_moves
from ._reading import (
    BIG_NODES,
    CONDITIONAL,
    FLAKY,
    HOOKS,
    SKIPS,
    added,
    calls_named,
    enclosing,
    flaky_marks,
    hooks,
    is_decorator,
    is_pytest_config,
    is_test_file,
    name_of,
    owner_of,
    parents_of,
    parse,
    skip_marks,
    timeouts,
)

__all__ = ["BIG_NODES", "CONDITIONAL", "FLAKY", "FORGING_RULES", "HOOKS", "SKIPS", "added", "added_forging_moves",
           "calls_named",
           "enclosing", "flaky_marks", "forging_moves", "hooks", "is_decorator", "is_pytest_config",
           "is_test_file", "name_of",
           "owner_of", "parents_of", "parse", "skip_marks", "timeouts"]
