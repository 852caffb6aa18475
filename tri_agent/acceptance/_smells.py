"""Test-quality smells in what the builder changed: the judge's mechanical list.

An agent that cannot make a check pass is tempted to make the check go away. Each smell below is a pattern
of that in a diff (old text -> new text of one file), one closed table. A *blocker* smell becomes a ticket
for the builder and turns the round red; a *note* is recorded in the round's evidence for the judge and the
reader. Smells flag; they never certify: a file without smells proves nothing. The orchestrator diffs
against the code as it was at preflight, so a smell stays until the builder undoes it.

Python files are read as syntax trees (both sides, or neither: the verdict must not depend on which
Python runs the judge), so ``assert 1 == 1, "ok"`` is as trivial as ``assert True``, a skip is a skip
however ``pytest`` was imported, and a test renamed with the same body is not a removed one. Other
languages, and Python that does not parse, fall back to line patterns. Test names are compared over every
file, so a test moved to another file is not removed either.

The strongest smell is mechanical and needs no judgment: the builder's code naming a case id of the exam
(with or without its ``c-`` prefix). Case ids are opaque and change with every seed, so code that mentions
one is code that recognises a test.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

Severity = Literal["blocker", "note"]
Found = list[tuple[int | None, str]]  # (line in the new text, what)
_TEST_FILE = re.compile(r"(^|/)(tests?/|__tests__/|test_[^/]*$|[^/]*_test\.[a-z]+$|[^/]*\.(spec|test)\.[jt]sx?$|"
                        r"conftest\.py$)")
_SKIP = re.compile(r"pytest\.skip\(|pytest\.mark\.(skip|xfail)\b|unittest\.skip\b|\.skipTest\(|SkipTest\b|"
                   r"\b(it|test|describe)\.(skip|only)\b|\bx(it|describe|test)\(|\bf(it|describe)\(|collect_ignore")
_SKIPIF = re.compile(r"pytest\.mark\.skipif\b|unittest\.skipIf\b|unittest\.skipUnless\b|importorskip\(")
_ASSERT = re.compile(r"^\s*assert\b|\.assert[A-Z]\w*\(|\bexpect\(")
_TEST_DEF = re.compile(r"^\s*(?:async\s+)?def\s+(test_\w+)|\b(?:it|test)\(\s*['\"`]([^'\"`]+)", re.MULTILINE)
_TRIVIAL = re.compile(r"^\s*assert\s+(True|1|not\s+(False|0|None))\s*(#.*)?$|assertTrue\(\s*True\s*\)|"
                      r"expect\(\s*true\s*\)\.toBe\(\s*true\s*\)")
_SWALLOW = re.compile(r"^\s*except(\s+(Exception|BaseException))?\s*(as\s+\w+)?\s*:\s*(pass|\.\.\.)?\s*$")
_HEX = re.compile(r"[0-9a-f]{8,64}")
_SKIPS = {"skip", "xfail", "skipTest", "SkipTest"}
_CONDITIONAL = {"skipif", "skipIf", "skipUnless", "importorskip"}
_SKIP_OWNERS = {"pytest", "mark", "unittest", "self", "cls"}  # receivers whose .skip(...) is a test skip
_BIG_NODES = 20_000  # a syntax tree this large is not a test anyone reads; the line patterns judge it


class Change(BaseModel):
    """One file the builder changed: its text before (None: new file) and after (None: deleted)."""

    path: str
    old: str | None
    new: str | None


class Smell(BaseModel):
    """One finding of ``smells.json``: which smell, where, and what it is."""

    schema_version: Literal[1] = Field(default=1, description="Version of the smell format.")
    name: str = Field(description="A key of the SMELLS table.")
    severity: Severity = Field(description="blocker: a builder ticket and a red round; note: recorded only.")
    path: str = Field(description="Project-relative path of the file.")
    line: int | None = Field(description="1-based line in the new text, when the smell has one.")
    detail: str = Field(description="What the smell means, then what was found.")


@dataclass(frozen=True)
class _Side:
    """One side of a change: its text and, when both sides parse as Python, its syntax tree."""

    text: str
    tree: ast.Module | None


@dataclass(frozen=True)
class _Context:
    case_ids: frozenset[str]
    tests_now: frozenset[str]  # test names in every file after the change
    bodies_now: frozenset[str]  # test bodies in every file after the change (a rename keeps its body)


@dataclass(frozen=True)
class _Kind:
    severity: Severity
    tests_only: bool
    meaning: str
    find: Callable[[_Side, _Side, _Context], Found]


# --- reading a change: both sides as syntax trees, or both as lines ------------------------------------------

def _sides(change: Change) -> tuple[_Side, _Side]:
    old, new = change.old or "", change.new or ""
    if change.path.endswith(".py"):
        trees = [_parse(old), _parse(new)]
        if trees[0] is not None and trees[1] is not None:
            return _Side(old, trees[0]), _Side(new, trees[1])
    return _Side(old, None), _Side(new, None)


def _parse(text: str) -> ast.Module | None:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return tree if sum(1 for _ in ast.walk(tree)) < _BIG_NODES else None


def _lines(text: str, pattern: re.Pattern[str]) -> list[tuple[int, str]]:
    return [(n, x.strip()) for n, x in enumerate(text.splitlines(), 1) if pattern.search(x)]


def _name(node: ast.AST) -> str:
    target = node.func if isinstance(node, ast.Call) else node
    return target.attr if isinstance(target, ast.Attribute) else target.id if isinstance(target, ast.Name) else ""


def _owner(node: ast.AST) -> str:
    target = node.func if isinstance(node, ast.Call) else node
    return _name(target.value) if isinstance(target, ast.Attribute) else ""


def _parents(tree: ast.Module) -> dict[int, ast.AST]:
    return {id(child): parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}


def _enclosing(node: ast.AST, parents: dict[int, ast.AST]) -> tuple[str, bool]:
    """The function a node is in, and whether it runs only under a condition (an if or an except)."""
    conditional = False
    while id(node) in parents:
        node = parents[id(node)]
        conditional = conditional or isinstance(node, ast.If | ast.ExceptHandler | ast.IfExp)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return node.name, conditional
    return "<module>", conditional


def _markers(tree: ast.Module) -> list[tuple[int, str, bool]]:
    """Every skip marker: (line, 'function:marker', conditional), keyed so that a new reason is no new skip."""
    imported = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                and str(n.module).split(".")[0] in ("pytest", "unittest") for a in n.names}
    parents: dict[int, ast.AST] = _parents(tree)
    found: dict[str, tuple[int, str, bool]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in ("collect_ignore", "collect_ignore_glob") and \
                isinstance(parents.get(id(node)), ast.Assign | ast.AugAssign):
            found[node.id] = (node.lineno, node.id, False)  # files pytest is told not to collect
            continue
        name = _name(node)
        if name not in _SKIPS | _CONDITIONAL or not isinstance(node, ast.Call | ast.Attribute | ast.Name):
            continue
        if isinstance(getattr(node, "ctx", None), ast.Store | ast.Del):
            continue  # a variable called skip is not a skip
        parent = parents.get(id(node))
        if isinstance(parent, ast.Call) and parent.func is node:
            continue  # the call itself is the marker
        owned = _owner(node) in _SKIP_OWNERS or (isinstance(node, ast.Name | ast.Call) and name in imported)
        if not (_decorator(node, parents) or owned or isinstance(parent, ast.keyword | ast.Assign | ast.Raise)):
            continue
        where, conditional = _enclosing(node, parents)
        always = _constant_skip(node, name)
        soft = (name in _CONDITIONAL and not always) or (conditional and name in ("skip", "skipTest", "SkipTest"))
        found[f"{where}:{name}:{soft}"] = (node.lineno, f"{where}:{name}", soft)  # a skip is not hidden by a softer one
    return sorted(found.values())


def _decorator(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    return any(d is node for d in getattr(parents.get(id(node)), "decorator_list", []))


def _constant_skip(node: ast.AST, name: str) -> bool:
    """``skipif(True)`` or ``skipUnless(False)``: a condition that is no condition."""
    if not isinstance(node, ast.Call) or not node.args or not isinstance(node.args[0], ast.Constant):
        return False
    value = bool(node.args[0].value)
    return (name in ("skipif", "skipIf") and value) or (name == "skipUnless" and not value)


def _always_true(test: ast.expr) -> bool:
    if isinstance(test, ast.Constant):
        return bool(test.value)
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        return any(_always_true(v) for v in test.values)  # assert check() or True
    if isinstance(test, ast.Tuple | ast.List | ast.Set | ast.Dict):
        return bool(getattr(test, "elts", None) or getattr(test, "keys", None))  # assert (x, "msg")
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and isinstance(test.operand, ast.Constant):
        return not test.operand.value
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq | ast.Is):
        left, right = test.left, test.comparators[0]
        return isinstance(left, ast.Constant) and isinstance(right, ast.Constant) and left.value == right.value
    return False


def _trivial_calls(node: ast.Call) -> bool:
    """``self.assertTrue(True)``, ``assertEqual(1, 1)``: unittest assertions that cannot fail."""
    if _name(node) == "assertTrue" and node.args:
        return _always_true(node.args[0])
    if _name(node) in ("assertEqual", "assertIs") and len(node.args) >= 2:
        a, b = node.args[0], node.args[1]
        return isinstance(a, ast.Constant) and isinstance(b, ast.Constant) and a.value == b.value
    return False


def _never(test: ast.expr) -> bool:
    return isinstance(test, ast.Constant) and not test.value


def _dead(tree: ast.Module) -> set[int]:
    """Assertions that can never run: under ``if False:`` or ``while 0:``."""
    return {id(n) for block in ast.walk(tree) if isinstance(block, ast.If | ast.While) and _never(block.test)
            for stmt in block.body for n in ast.walk(stmt) if isinstance(n, ast.Assert)}


def _trivial(side: _Side) -> list[tuple[int, str]]:
    if side.tree is None:
        return _lines(side.text, _TRIVIAL)
    dead = _dead(side.tree)
    return [(n.lineno, ast.unparse(n)[:120]) for n in ast.walk(side.tree)
            if (isinstance(n, ast.Assert) and (_always_true(n.test) or id(n) in dead))
            or (isinstance(n, ast.Call) and _trivial_calls(n))]


def _tests(side: _Side) -> dict[str, str]:
    """Test name -> its body (a dump of the statements), or the name itself when read as lines."""
    if side.tree is None:
        return {a or b: a or b for a, b in _TEST_DEF.findall(side.text)}
    return {n.name: repr([ast.dump(s) for s in n.body]) for n in ast.walk(side.tree)
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name.startswith("test")}


def _gutted(side: _Side) -> set[str]:
    """Tests whose first statement returns, or whose body is only pass, ... or a docstring."""
    out = set()
    for n in ast.walk(side.tree) if side.tree else []:
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name.startswith("test"):
            body = [s for s in n.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
            if not body or isinstance(body[0], ast.Return) or all(isinstance(s, ast.Pass) for s in body):
                out.add(n.name)
    return out


def _assert_count(side: _Side) -> int:
    if side.tree is None:
        return len(_lines(side.text, _ASSERT))
    return sum(1 for n in ast.walk(side.tree) if isinstance(n, ast.Assert) or
               (isinstance(n, ast.Call) and _name(n).startswith("assert")))


def _added(old: list[tuple[int, str]], new: list[tuple[int, str]]) -> Found:
    """Occurrences in the new text beyond those the old text already had (compared by their text)."""
    left = Counter(what for _, what in old)
    out: Found = []
    for line, what in new:
        if left[what] > 0:
            left[what] -= 1
        else:
            out.append((line, what))
    return out


# --- the table ------------------------------------------------------------------------------------------------

def _case_ids(_old: _Side, new: _Side, ctx: _Context) -> Found:
    bare = {c.removeprefix("c-") for c in ctx.case_ids}
    out: Found = []
    for n, line in enumerate(new.text.splitlines(), start=1):
        named = [m for m in _HEX.findall(line) if m in bare]
        if named:
            out.append((n, f"names case c-{named[0]}"))
    return out


def _skip_markers(side: _Side, soft: bool) -> list[tuple[int, str]]:
    if side.tree is None:
        return _lines(side.text, _SKIPIF if soft else _SKIP)
    return [(line, key) for line, key, conditional in _markers(side.tree) if conditional == soft]


def _skip_added(old: _Side, new: _Side, _ctx: _Context) -> Found:
    return _added(_skip_markers(old, False), _skip_markers(new, False))


def _soft_skip_added(old: _Side, new: _Side, _ctx: _Context) -> Found:
    return _added(_skip_markers(old, True), _skip_markers(new, True))


def _trivial_added(old: _Side, new: _Side, _ctx: _Context) -> Found:
    return _added(_trivial(old), _trivial(new))


def _removed_tests(old: _Side, _new: _Side, ctx: _Context) -> Found:
    gone = sorted(name for name, body in _tests(old).items() if name not in ctx.tests_now and body not in
                  ctx.bodies_now)
    return [(None, f"test {name} removed") for name in gone]


def _gutted_tests(old: _Side, new: _Side, _ctx: _Context) -> Found:
    return [(None, f"test {name} no longer checks anything") for name in sorted(_gutted(new) - _gutted(old))]


def _shadowed(old: _Side, new: _Side, _ctx: _Context) -> Found:
    def twice(side: _Side) -> set[str]:
        if side.tree is None:
            return set()
        scopes = [side.tree.body] + [n.body for n in ast.walk(side.tree) if isinstance(n, ast.ClassDef)]
        names = Counter((i, s.name) for i, body in enumerate(scopes) for s in body
                        if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef) and s.name.startswith("test"))
        return {name for (_, name), count in names.items() if count > 1}

    return [(None, f"test {name} is defined twice: only the last one runs") for name in sorted(twice(new) - twice(old))]


def _fewer_asserts(old: _Side, new: _Side, _ctx: _Context) -> Found:
    before, after = _assert_count(old), _assert_count(new)
    return [(None, f"{before} assertion(s) before, {after} after")] if after < before else []


_BROAD = {"Exception", "BaseException"}
_RAISES = {"raises", "assertRaises", "assertRaisesRegex"}
_FLAKY = {"flaky", "retry", "repeat", "rerun"}
_LINE_RAISES = re.compile(r"(pytest\.raises|assertRaises(Regex)?)\(\s*\(?\s*(Base)?Exception\b")
_LINE_FLAKY = re.compile(r"@(pytest\.mark\.)?(flaky|retry)\b|reruns\s*=")
_LINE_TIMEOUT = re.compile(r"pytest\.mark\.timeout\(|timeout\s*=\s*[0-9.]+")


def _calls(tree: ast.Module, names: set[str]) -> list[ast.Call]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and _name(n) in names]


def _widened(side: _Side) -> list[tuple[int, str]]:
    """``pytest.raises(Exception)``: an expected error widened to a base class catches every bug."""
    if side.tree is None:
        return _lines(side.text, _LINE_RAISES)
    parents = _parents(side.tree)
    out = []
    for call in (c for c in _calls(side.tree, _RAISES) if c.args):
        first = call.args[0]
        names = {_name(e) for e in first.elts} if isinstance(first, ast.Tuple) else {_name(first)}
        if names & _BROAD:
            where = _enclosing(call, parents)[0]
            out.append((call.lineno, f"{where}: {ast.unparse(call.func)}({ast.unparse(first)})"))
    return out


def _raises_widened(old: _Side, new: _Side, _ctx: _Context) -> Found:
    return _added(_widened(old), _widened(new))


def _flaky(side: _Side) -> list[tuple[int, str]]:
    if side.tree is None:
        return _lines(side.text, _LINE_FLAKY)
    parents = _parents(side.tree)
    # a decorator or a pytest mark (``@flaky``, ``@retry(...)``, ``marks=pytest.mark.flaky``), not a function
    # under test that happens to be called repeat or retry; a call's own name is not a second mark
    marks = [n for n in ast.walk(side.tree) if isinstance(n, ast.Attribute | ast.Name | ast.Call) and
             _name(n) in _FLAKY and (_decorator(n, parents) or _owner(n) == "mark")
             and getattr(parents.get(id(n)), "func", None) is not n]
    reruns = [k.value for n in marks if isinstance(n, ast.Call) for k in n.keywords if k.arg == "reruns"]
    reruns += [n for n in ast.walk(side.tree) if isinstance(n, ast.Attribute) and n.attr == "reruns"
               and isinstance(n.ctx, ast.Store)]  # config.option.reruns = 5: every test retried
    return [(n.lineno, f"{_enclosing(n, parents)[0]}: {_name(n)}") for n in marks] + [(n.lineno, "reruns")
                                                                                         for n in reruns]


def _flaky_added(old: _Side, new: _Side, _ctx: _Context) -> Found:
    return _added(_flaky(old), _flaky(new))


def _timeouts(side: _Side) -> list[tuple[int, str]]:
    """Every timeout a test sets, with its value: a changed value is a loosened check."""
    if side.tree is None:
        return _lines(side.text, _LINE_TIMEOUT)
    parents = _parents(side.tree)
    out = [(c.lineno, f"{_enclosing(c, parents)[0]}: timeout({ast.unparse(c.args[0]) if c.args else ''})")
           for c in _calls(side.tree, {"timeout"})]
    out += [(k.value.lineno, f"{_enclosing(k.value, parents)[0]}: timeout={ast.unparse(k.value)}")
            for n in ast.walk(side.tree) if isinstance(n, ast.Call) for k in n.keywords if k.arg == "timeout"]
    return out


def _timeout_changed(old: _Side, new: _Side, _ctx: _Context) -> Found:
    return _added(_timeouts(old), _timeouts(new))


def _assertion_catches(side: _Side) -> list[tuple[int, str]]:
    """``except AssertionError:`` in a test: a failed check caught before pytest sees it."""
    if side.tree is None:
        return _lines(side.text, re.compile(r"except\s*\(?[^:]*AssertionError"))
    parents = _parents(side.tree)
    return [(h.lineno, f"{_enclosing(h, parents)[0]}: except {ast.unparse(h.type)}") for h in ast.walk(side.tree)
            if isinstance(h, ast.ExceptHandler) and h.type is not None
            and "AssertionError" in {_name(e) for e in ast.walk(h.type)}]


def _assertion_caught(old: _Side, new: _Side, _ctx: _Context) -> Found:
    return _added(_assertion_catches(old), _assertion_catches(new))


_HOOKS = {"pytest_collection_modifyitems", "pytest_ignore_collect", "pytest_deselected", "pytest_runtest_setup",
          "pytest_runtest_call", "pytest_runtest_makereport", "pytest_report_teststatus", "pytest_collect_file"}


def _collection_hooks(side: _Side) -> list[tuple[int, str]]:
    """pytest hooks that can drop, skip or rewrite the outcome of tests without touching a test."""
    if side.tree is None:
        return _lines(side.text, re.compile(r"def\s+(" + "|".join(sorted(_HOOKS)) + r")\b"))
    return [(n.lineno, n.name) for n in ast.walk(side.tree)
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name in _HOOKS]


def _hook_added(old: _Side, new: _Side, _ctx: _Context) -> Found:
    return _added(_collection_hooks(old), _collection_hooks(new))


def _swallowed(old: _Side, new: _Side, _ctx: _Context) -> Found:
    return _added(_lines(old.text, _SWALLOW), _lines(new.text, _SWALLOW))


SMELLS: dict[str, _Kind] = {
    "case-id-in-code": _Kind("blocker", False, "the code names a case of the exam: it recognises a test", _case_ids),
    "skip-added": _Kind("blocker", True, "a test is skipped, focused away or expected to fail", _skip_added),
    "tests-removed": _Kind("blocker", True, "a test function disappeared from every file", _removed_tests),
    "test-gutted": _Kind("blocker", True, "a test returns before checking anything", _gutted_tests),
    "test-shadowed": _Kind("blocker", True, "a later test of the same name hides an earlier one", _shadowed),
    "trivial-assert": _Kind("blocker", True, "an assertion that cannot fail", _trivial_added),
    "conditional-skip-added": _Kind("blocker", True, "a test is skipped under a condition", _soft_skip_added),
    "assertions-reduced": _Kind("blocker", True, "a test file holds fewer assertions than before", _fewer_asserts),
    "raises-widened": _Kind("blocker", True, "an expected error widened to a base class", _raises_widened),
    "flaky-added": _Kind("blocker", True, "a test is retried until it passes", _flaky_added),
    "timeout-changed": _Kind("blocker", True, "a test's time limit changed", _timeout_changed),
    "assertion-caught": _Kind("blocker", True, "a failing assertion is caught inside the test", _assertion_caught),
    "pytest-hook-added": _Kind("blocker", True, "a pytest hook that can drop or rewrite test outcomes",
                               _hook_added),
    "exception-swallowed": _Kind("note", False, "an error is caught and dropped", _swallowed),
}


def is_test_file(path: str) -> bool:
    return bool(_TEST_FILE.search(path))


def smells(changes: list[Change], case_ids: frozenset[str] = frozenset()) -> list[Smell]:
    """Every smell of ``changes`` (pass unchanged files too, old == new, so moved tests are found);
    ``case_ids`` are the exam's cases the code must not name."""
    sides = {c.path: _sides(c) for c in changes}
    now = [_tests(sides[c.path][1]) for c in changes if is_test_file(c.path) and c.new is not None]
    ctx = _Context(case_ids, frozenset(n for t in now for n in t), frozenset(b for t in now for b in t.values()))
    out = []
    for change in sorted(changes, key=lambda c: c.path):
        old, new = sides[change.path]
        for name, kind in SMELLS.items():
            if kind.tests_only and not is_test_file(change.path):
                continue
            out += [Smell(name=name, severity=kind.severity, path=change.path, line=line,
                          detail=f"{kind.meaning}: {what}") for line, what in kind.find(old, new, ctx)]
    return out
