"""Test code read as pytest would run it: one syntax tree per file, aliases resolved, and the marks that take a
test off a run (skip, xfail, conditional skips, retries, timeouts, the hooks that drop or rewrite outcomes).

Shared by the judge's smells (``acceptance``) and the patch gate's policy (``patchgate``), so the two agree on
what a skip is. Before anything is looked for, the tree is rewritten as pytest would see it: a module alias
(``import pytest as pt``), a name imported from pytest or unittest (``from pytest import importorskip as ios``)
and a ``getattr`` with a constant name (``getattr(pytest.mark, "xfail")``) become the dotted name they stand
for, so a table of names needs no second table of spellings. Pure functions over ``ast`` trees; no IO.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Sequence

SKIPS = {"skip", "xfail", "skipTest", "SkipTest", "expectedFailure"}
CONDITIONAL = {"skipif", "skipIf", "skipUnless", "importorskip"}
FLAKY = {"flaky", "retry", "repeat", "rerun"}
_SKIP_OWNERS = {"pytest", "mark", "unittest", "self", "cls"}  # receivers whose .skip(...) is a test skip
BIG_NODES = 20_000  # a syntax tree this large is not a test anyone reads; callers fall back to line patterns
_TEST_MODULES = {"pytest": "pytest", "_pytest": "pytest", "unittest": "unittest"}  # root module -> its name


def parse(text: str) -> ast.Module | None:
    """The file's syntax tree with aliases resolved, or None: it does not parse, or it is too big to read."""
    try:
        tree = ast.parse(text)
        if sum(1 for _ in ast.walk(tree)) >= BIG_NODES:
            return None
        _Resolve(_aliases(tree)).visit(tree)  # in place: a module node is kept, its contents rewritten
        return ast.fix_missing_locations(tree)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> the dotted name it stands for, for names bound by importing pytest or unittest."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.asname: _TEST_MODULES[a.name.split(".")[0]] for a in node.names
                    if a.asname and a.name.split(".")[0] in _TEST_MODULES}
        elif isinstance(node, ast.ImportFrom) and not node.level and str(node.module).split(".")[0] in _TEST_MODULES:
            root = _TEST_MODULES[str(node.module).split(".")[0]]  # _pytest.outcomes.skip is pytest.skip
            out |= {a.asname or a.name: f"{root}.{a.name}" for a in node.names if a.name != "*"}
    return out


class _Resolve(ast.NodeTransformer):
    """Rewrites aliases and ``getattr(x, "name")`` into the dotted names they stand for."""

    def __init__(self, aliases: dict[str, str]) -> None:
        self.aliases = aliases

    def visit_Name(self, node: ast.Name) -> ast.expr:
        dotted = self.aliases.get(node.id) if isinstance(node.ctx, ast.Load) else None
        if dotted is None:
            return node
        root, *attrs = dotted.split(".")
        out: ast.expr = ast.copy_location(ast.Name(id=root, ctx=ast.Load()), node)
        for attr in attrs:
            out = ast.copy_location(ast.Attribute(value=out, attr=attr, ctx=ast.Load()), node)
        return out

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        # getattr(x, "a") is x.a; with a default or a computed name it may be something else
        if isinstance(node.func, ast.Name) and node.func.id == "getattr" and len(node.args) == 2 \
                and not node.keywords and isinstance(node.args[1], ast.Constant) \
                and isinstance(node.args[1].value, str) and node.args[1].value.isidentifier():
            return ast.copy_location(ast.Attribute(value=node.args[0], attr=node.args[1].value, ctx=ast.Load()),
                                     node)
        return node


def name_of(node: ast.AST) -> str:
    target = node.func if isinstance(node, ast.Call) else node
    return target.attr if isinstance(target, ast.Attribute) else target.id if isinstance(target, ast.Name) else ""


def owner_of(node: ast.AST) -> str:
    target = node.func if isinstance(node, ast.Call) else node
    return name_of(target.value) if isinstance(target, ast.Attribute) else ""


def parents_of(tree: ast.Module) -> dict[int, ast.AST]:
    return {id(child): parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}


def enclosing(node: ast.AST, parents: dict[int, ast.AST]) -> tuple[str, bool]:
    """The function a node is in, and whether it runs only under a condition (an if or an except)."""
    conditional = False
    while id(node) in parents:
        node = parents[id(node)]
        conditional = conditional or isinstance(node, ast.If | ast.ExceptHandler | ast.IfExp)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return node.name, conditional
    return "<module>", conditional


def skip_marks(tree: ast.Module) -> list[tuple[int, str, bool]]:
    """Every skip marker: (line, 'function:marker', conditional), keyed so that a new reason is no new skip."""
    parents: dict[int, ast.AST] = parents_of(tree)
    found: dict[str, tuple[int, str, bool]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in ("collect_ignore", "collect_ignore_glob") and \
                isinstance(parents.get(id(node)), ast.Assign | ast.AugAssign):
            found[node.id] = (node.lineno, node.id, False)  # files pytest is told not to collect
            continue
        name = name_of(node)
        if name not in SKIPS | CONDITIONAL or not isinstance(node, ast.Call | ast.Attribute | ast.Name):
            continue
        if isinstance(getattr(node, "ctx", None), ast.Store | ast.Del):
            continue  # a variable called skip is not a skip
        parent = parents.get(id(node))
        if isinstance(parent, ast.Call) and parent.func is node:
            continue  # the call itself is the marker
        owned = owner_of(node) in _SKIP_OWNERS  # names imported from pytest were resolved to pytest.<name>
        if not (is_decorator(node, parents) or owned or isinstance(parent, ast.keyword | ast.Assign | ast.Raise)):
            continue
        where, conditional = enclosing(node, parents)
        always = _constant_skip(node, name)
        soft = (name in CONDITIONAL and not always) or (conditional and name in ("skip", "skipTest", "SkipTest"))
        found[f"{where}:{name}:{soft}"] = (node.lineno, f"{where}:{name}", soft)  # a skip is not hidden by a softer one
    return sorted(found.values())


def is_decorator(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    return any(d is node for d in getattr(parents.get(id(node)), "decorator_list", []))


def _constant_skip(node: ast.AST, name: str) -> bool:
    """``skipif(True)`` or ``skipUnless(False)``: a condition that is no condition."""
    if not isinstance(node, ast.Call) or not node.args or not isinstance(node.args[0], ast.Constant):
        return False
    value = bool(node.args[0].value)
    return (name in ("skipif", "skipIf") and value) or (name == "skipUnless" and not value)


def calls_named(tree: ast.Module, names: set[str]) -> list[ast.Call]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and name_of(n) in names]


def flaky_marks(tree: ast.Module) -> list[tuple[int, str]]:
    """Retry marks: ``@flaky``, ``@retry(...)``, ``marks=pytest.mark.flaky``, and ``reruns`` set anywhere."""
    parents = parents_of(tree)
    # a decorator or a pytest mark, not a function under test that happens to be called repeat or retry; a call's
    # own name is not a second mark
    marks = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute | ast.Name | ast.Call) and
             name_of(n) in FLAKY and (is_decorator(n, parents) or owner_of(n) == "mark")
             and getattr(parents.get(id(n)), "func", None) is not n]
    reruns = [k.value for n in marks if isinstance(n, ast.Call) for k in n.keywords if k.arg == "reruns"]
    reruns += [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "reruns"
               and isinstance(n.ctx, ast.Store)]  # config.option.reruns = 5: every test retried
    return [(n.lineno, f"{enclosing(n, parents)[0]}: {name_of(n)}") for n in marks] + [(n.lineno, "reruns")
                                                                                         for n in reruns]


def _constants(tree: ast.Module) -> dict[str, ast.Constant]:
    """Module-level numbers by name (the last binding wins, as at import): a limit kept in a name is a limit."""
    out: dict[str, ast.Constant] = {}
    for stmt in tree.body:
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else \
            stmt.target if isinstance(stmt, ast.AnnAssign) else None
        value = getattr(stmt, "value", None)
        if isinstance(target, ast.Name):
            out.pop(target.id, None)
            if isinstance(value, ast.Constant) and isinstance(value.value, int | float):
                out[target.id] = value
    return out


class _Substitute(ast.NodeTransformer):
    def __init__(self, constants: dict[str, ast.Constant]) -> None:
        self.constants = constants

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return self.constants.get(node.id, node) if isinstance(node.ctx, ast.Load) else node


def _value(expr: ast.expr, constants: dict[str, ast.Constant]) -> str:
    """An expression as text, with module constants written as their values (on a copy: the tree stays)."""
    return ast.unparse(_Substitute(constants).visit(ast.parse(ast.unparse(expr), mode="eval")))


def timeouts(tree: ast.Module) -> list[tuple[int, str]]:
    """Every timeout a test sets, with its value (module constants written as their values)."""
    parents, constants = parents_of(tree), _constants(tree)
    out = [(c.lineno, f"{enclosing(c, parents)[0]}: timeout({_value(c.args[0], constants) if c.args else ''})")
           for c in calls_named(tree, {"timeout"})]
    out += [(k.value.lineno, f"{enclosing(k.value, parents)[0]}: timeout={_value(k.value, constants)}")
            for n in ast.walk(tree) if isinstance(n, ast.Call) for k in n.keywords if k.arg == "timeout"]
    return out


HOOKS = {"pytest_collection_modifyitems", "pytest_ignore_collect", "pytest_deselected", "pytest_runtest_setup",
         "pytest_runtest_call", "pytest_runtest_makereport", "pytest_report_teststatus", "pytest_collect_file"}


def hooks(tree: ast.Module) -> list[tuple[int, str]]:
    """pytest hooks that can drop, skip or rewrite the outcome of tests without touching a test."""
    return [(n.lineno, n.name) for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name in HOOKS]


def added(old: Sequence[tuple[int | None, str]], new: Sequence[tuple[int | None, str]]) -> list[tuple[int | None, str]]:
    """Occurrences in the new text beyond those the old text already had (compared by their text)."""
    left = Counter(what for _, what in old)
    out: list[tuple[int | None, str]] = []
    for line, what in new:
        if left[what] > 0:
            left[what] -= 1
        else:
            out.append((line, what))
    return out


PYTEST_CONFIG_FILES = frozenset({"pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml"})


def is_pytest_config(path: str) -> bool:
    """A file pytest may read its settings from, by its name."""
    return path.rsplit("/", 1)[-1] in PYTEST_CONFIG_FILES


def is_test_file(path: str) -> bool:
    """A file pytest collects tests or fixtures from by its name (``test_*.py``, ``*_test.py``, ``conftest.py``)."""
    name = path.rsplit("/", 1)[-1]
    return name == "conftest.py" or (name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")))
