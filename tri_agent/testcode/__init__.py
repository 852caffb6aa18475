"""Test code as pytest runs it: syntax trees with aliases resolved, and the marks that take a test off a run.

A leaf of the package (stdlib only), shared by the judge's smells and the patch gate, so both agree on what a
skip, a retry, a timeout or an outcome-rewriting hook is.

- ``_reading``: parsing, alias resolution, the tables of marks and hooks (``SKIPS``, ``FLAKY``, ``HOOKS``), and
  which files are test files.
"""

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
    is_test_file,
    name_of,
    owner_of,
    parents_of,
    parse,
    skip_marks,
    timeouts,
)

__all__ = ["BIG_NODES", "CONDITIONAL", "FLAKY", "HOOKS", "SKIPS", "added", "calls_named", "enclosing",
           "flaky_marks", "hooks", "is_decorator", "is_test_file", "name_of", "owner_of", "parents_of", "parse",
           "skip_marks", "timeouts"]
