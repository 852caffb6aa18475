"""Rule 12 of ``gate check``, and the ledger's claim on every skip: what takes a test off the run.

Read in the syntax tree (``testcode``: aliases, ``getattr(pytest.mark, ...)`` and names imported from pytest
resolved), never grepped:

- **on the scoring surface** (the scoring tree, the held-out suite, the run's configuration): a skip, skipif,
  xfail, importorskip or ``pytest.skip`` call, a retry (flaky, reruns), a timeout, or a pytest hook that drops or
  rewrites outcomes, added by the patch, is refused (12). Rule 11 refuses the change of the file as well; this
  rule says which line did it;
- **in the code under test**: code that reaches into the test runner or the process, or makes a comparison
  unable to fail (``_reach``), is refused (12);
- **in the visible suite**: every skip or xfail mark must name a test that has a row on the flake ledger (13).
  A skip the base already had without one is refused too (the message says so): a person adds the row on the
  base.

Python that does not parse on either side is read as lines, both sides, as the judge's smells are.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

from .._errors import ExitCode
from ..testcode import added, flaky_marks, hooks, is_test_file, parse, skip_marks, timeouts
from ._map import printable
from ._reach import LINES, reach_ins

Found = list[tuple[int | None, str]]
_LINE_MARKS = re.compile(r"\b(skip|skipif|skipIf|skipUnless|skipTest|SkipTest|xfail|importorskip|flaky|reruns|"
                         r"timeout)\b|\bdef\s+pytest_\w+")
def surface_marks(tree: ast.Module) -> Found:
    """Everything in a file of the scoring surface that takes a test off the run or changes its outcome."""
    return [*((line, what) for line, what, _soft in skip_marks(tree)), *flaky_marks(tree), *timeouts(tree),
            *hooks(tree)]


def _both(old: str, new: str, read: Callable[[ast.Module], Found], lines: re.Pattern[str]) -> tuple[Found, Found]:
    """Both sides as syntax trees, or (when either does not parse) both as lines."""
    trees = parse(old), parse(new)
    if trees[0] is not None and trees[1] is not None:
        return read(trees[0]), read(trees[1])
    def matched(text: str) -> Found:
        return [(n, x.strip()) for n, x in enumerate(text.splitlines(), 1) if lines.search(x)]

    return matched(old), matched(new)


def marks_added(path: str, old: str, new: str, on_surface: bool) -> list[tuple[ExitCode, str]]:
    """Rule 12 for one changed Python file: marks added on the surface, or reach-ins added to the code."""
    if on_surface:
        before, after = _both(old, new, surface_marks, _LINE_MARKS)
        why = "a test taken off the run or its outcome rewritten, on the scoring surface"
    elif not is_test_file(path):
        before, after = _both(old, new, lambda tree: reach_ins(tree, path), LINES)
        why = "code under test reaches into the test runner (it can skip or tell apart whoever runs it)"
    else:
        return []
    return [(ExitCode.GATE_MARKS, f"{printable(path)}:{line or '?'}: {what}: {why}") for line, what in
            added(before, after)]


def _where(path: str, what: str) -> str:
    """The node id a skip mark takes off: the file for a module-level mark, else file::name."""
    name = what.split(":")[0]
    return path if name == "<module>" or ":" not in what else f"{path}::{name}"  # collect_ignore: the file


def _covers(test_id: str, node: str) -> bool:
    """A ledger row covers a skip when it names the same file, or the same file and test (a class or a
    parametrised id of it included)."""
    path, _, name = node.partition("::")
    row_path, _, rest = test_id.partition("::")
    if row_path != path:
        return False
    parts = [p.split("[")[0] for p in rest.split("::")] if rest else []
    return not name or not parts or name in parts


def unledgered(path: str, text: str, base_text: str | None, ledgered: list[str]) -> list[tuple[ExitCode, str]]:
    """Every skip or xfail in a visible test file whose test has no row on the flake ledger."""
    tree = parse(text)
    if tree is None or not is_test_file(path):
        return []
    before = parse(base_text) if base_text is not None else None
    old = {what for _, what, _ in skip_marks(before)} if before is not None else set()
    out = []
    for line, what, _soft in skip_marks(tree):
        node = _where(path, what)
        if any(_covers(row, node) for row in ledgered):
            continue
        since = " (already at the base: a person adds the row there)" if what in old else ""
        out.append((ExitCode.GATE_LEDGER, f"{printable(path)}:{line}: {what.split(':')[-1]} of {node} has no row on "
                                          f"the flake ledger{since}"))
    return out
