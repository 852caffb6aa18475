"""Moves in Python code that forge test outcomes, found by reading the syntax tree: the closed ``RULES`` table.

Shared by ``tri-agent evidence`` (each move the change added flags *weakened*) and an acceptance's smells of its
builder's changes, so both agree on what forges an outcome. A conftest, a plugin or a helper can make a suite
report green without a test changing: a hook that replaces running or reporting a test, a write to a report's
outcome, a patch of pytest's, pluggy's or tri-agent's own modules, code loaded at run time. ``moves`` lists each
occurrence as (rule, line, the node's source as parsed); comparing those of two versions says what was added.
Files are read in the encoding Python reads them in (``source_text``), so the scan sees what runs; a file that
shapes the tests and cannot be read whole (it does not parse, is too large or too deep) is a move of its own.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator, Mapping, Sequence

from ._reading import is_test_file

_TEST_FOLDERS = {"tests", "test", "testing"}
_MAX_SCANNED = 256 << 10  # a changed Python file larger than this is not scanned (an infrastructure one is flagged)

# hooks whose return value replaces running a test, or whose plain implementation makes its reports
DECIDING_HOOKS = ("pytest_pyfunc_call", "pytest_runtest_protocol", "pytest_runtestloop",
                  "pytest_runtest_makereport")
# attributes of reports, calls, sessions and items that carry an outcome (or the test itself)
OUTCOME_ATTRIBUTES = ("outcome", "longrepr", "exitstatus", "testsfailed", "wasxfail", "excinfo", "_excinfo",
                      "_result", "runtest", "obj", "_obj")
# modules whose insides decide what a run reports: pytest's, pluggy's, and this package's own evidence
PROTECTED = ("_pytest", "pluggy", "tri_agent")
_DYNAMIC = ("exec", "compile", "__import__")  # builtins, called by their bare names or through builtins
_DYNAMIC_ATTRIBUTES = ("run_path", "run_module", "exec_module")  # runpy's and importlib's loaders
RULES = {  # rule -> what it finds, in words (a flag's reason)
    "deciding-hook": "implements a hook whose return value replaces running or reporting a test",
    "outcome-written": "writes an outcome (a report's, a call's or a session's) or replaces the test function",
    "forced-result": "forces a hook's result",
    "internals-patched": "reaches into pytest's, pluggy's or tri-agent's own modules",
    "dynamic-code": "runs code built or loaded at run time in test infrastructure",
    "unscannable": "cannot be read whole by the scan (it does not parse, or is too large or too deep)",
}


def source_text(raw: bytes) -> str:
    """A Python file's text as Python decodes it (BOM, coding cookie), else as UTF-8 with replacements."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
        return raw.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError):
        return raw.decode("utf-8", "replace")


def in_test_folder(path: str) -> bool:
    return bool(_TEST_FOLDERS & set(path.split("/")[:-1]))


def imports_pytest(text: str) -> bool:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return bool(re.search(r"\b_?pytest\b|\bpluggy\b", text))
    return any(_root(name) in ("pytest", *PROTECTED) for name in _imported(tree))


def _imported(tree: ast.AST) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            yield node.module or ""


def _root(dotted: str) -> str:
    return dotted.split(".")[0]


def moves(path: str, text: str) -> list[tuple[str, int, str]]:
    """(rule, line, the node's whole source as parsed) for each move of ``RULES`` in ``text``."""
    name = path.rpartition("/")[2]
    test = is_test_file(path)
    if len(text) > _MAX_SCANNED:
        return [("unscannable", 1, f"{len(text)} characters")] if test or in_test_folder(path) else []
    try:
        tree = ast.parse(text)
        # infrastructure around the tests (a conftest, a plugin, a helper), where attribute writes and dynamic code
        # count: in a test's own body or in application code, an ``outcome`` attribute is just a name
        shapes = name == "conftest.py" or (not test and (in_test_folder(path) or any(
            _root(m) in ("pytest", *PROTECTED) for m in _imported(tree))))
        in_hooks = _inside_hooks(tree) if name == "conftest.py" or _defines_hooks(tree) else set()
        names = _protected_names(tree)
        return [(rule, _line(node), ast.unparse(node)) for node in ast.walk(tree)
                for rule in _rules_of(node, shapes, id(node) in in_hooks, names)]
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        # too deep to walk hides whatever is in it; a syntax error is the judge's, unless the file shapes the tests
        if isinstance(exc, RecursionError | MemoryError) or test or in_test_folder(path) or imports_pytest(text):
            return [("unscannable", getattr(exc, "lineno", None) or 1, type(exc).__name__)]
        return []


def added_moves(before: Mapping[str, str | None], after: Mapping[str, str | None]) -> list[tuple[str, str, int, str]]:
    """(path, rule, line, the move shown as one line) for each move in ``after``'s Python files that no Python file
    of ``before`` had. Moves compare by rule and whole source, so a file moved with ``git mv`` adds none and a hook
    whose body changed is a new one."""
    seen = {(rule, key) for path, text in before.items() if text and path.endswith(".py")
            for rule, _, key in moves(path, text)}
    return [(path, rule, line, shown(key)) for path, text in after.items() if text and path.endswith(".py")
            for rule, line, key in moves(path, text) if (rule, key) not in seen]


def shown(source: str) -> str:
    """A move's source as one line to show: its first line that is not a decorator."""
    lines = [line for line in source.splitlines() if not line.startswith("@")]  # unparsed: decorators at column 0
    return (lines or [""])[0].strip()[:120]


def _line(node: ast.AST) -> int:
    """A node's line; one that has none (``with x as y``'s item, a comprehension's ``for``) is on its first part's."""
    return next((n.lineno for n in ast.walk(node) if isinstance(n, ast.stmt | ast.expr)), 1)


def _defines_hooks(tree: ast.AST) -> bool:
    return any(isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name.startswith("pytest_")
               for n in ast.walk(tree))


def _inside_hooks(tree: ast.Module) -> set[int]:
    """The nodes inside hook implementations (functions named ``pytest_*``) and at a plugin's module level: where
    a write to an outcome is a forged one (in a fixture or a helper object, ``outcome`` is just a name)."""
    inside = {id(n) for n in tree.body} | {id(n) for s in tree.body if not isinstance(s, _DEFS) for n in ast.walk(s)}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("pytest_"):
            inside |= {id(n) for n in ast.walk(node)}
    return inside


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _protected_names(tree: ast.Module) -> set[str]:
    """Names bound to a protected module or to anything taken from one: by import, and by assignment from an
    expression that reaches one (``runner = sys.modules["_pytest.runner"]``), followed to the end of the chain."""
    names = set(PROTECTED)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.asname or _root(a.name) for a in node.names if _root(a.name) in PROTECTED}
        elif isinstance(node, ast.ImportFrom) and _root(node.module or "") in PROTECTED:
            names |= {a.asname or a.name for a in node.names}
    grown = True
    while grown:  # to a fixed point: an alias may be bound before the name it is bound from
        before = len(names)
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and _reaches(node.value, names):
                names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        grown = len(names) > before
    return names


def _reaches(expr: ast.AST, names: set[str]) -> bool:
    return any((isinstance(n, ast.Name) and n.id in names) or _protected_literal(n) for n in ast.walk(expr))


def _protected_literal(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and _root(node.value) in PROTECTED


def _rules_of(node: ast.AST, shapes: bool, in_hook: bool, names: set[str]) -> Iterator[str]:
    if _hook_of(node) in DECIDING_HOOKS or _hook_handed_over(node):
        yield "deciding-hook"
    targets = [t for t in _targets(node) if isinstance(t, ast.Attribute | ast.Subscript)]  # a bare name is local
    if any(_reaches(t, names) or _pytest_attribute(t) for t in targets) or _patches_by_name(node) or \
            _imports_own(node):
        yield "internals-patched"
    if isinstance(node, ast.Call) and _called(node) in ("force_result", "force_exception"):
        yield "forced-result"
    if not shapes:
        return
    if any(isinstance(t, ast.Attribute) and t.attr in ("__code__", "__class__") for t in targets) or (in_hook and (
            any(_outcome_target(t) for t in targets) or _behind_the_back(node) or _report_made(node))):
        yield "outcome-written"
    if _dynamic(node, targets) or (in_hook and isinstance(node, ast.FunctionDef) and node.name in (
            "__getattr__", "__dir__")):  # a plugin's module-level __getattr__ can hand pytest any hook by name
        yield "dynamic-code"


def _dynamic(node: ast.AST, targets: Sequence[ast.expr]) -> bool:
    """``exec``, ``compile``, ``__import__`` (bare or from ``builtins``), runpy's and importlib's loaders, a write
    into ``globals()``, and one of those or ``setattr`` bound to another name (``f = setattr``)."""
    if any(isinstance(t, ast.Subscript) and isinstance(t.value, ast.Call) and _called(t.value) == "globals"
           for t in targets):
        return True
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and \
            node.value.id in (*_DYNAMIC, "setattr", "eval"):
        return True
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Name):
        return func.id in _DYNAMIC
    return isinstance(func, ast.Attribute) and (func.attr in _DYNAMIC_ATTRIBUTES or (
        func.attr in _DYNAMIC and isinstance(func.value, ast.Name) and func.value.id == "builtins"))


def _report_made(node: ast.AST) -> bool:
    """A report built or rebuilt inside a hook: ``TestReport(...)``, ``TestReport.from_item_and_call``,
    ``report.__init__(...)``."""
    return isinstance(node, ast.Call) and _called(node) in ("TestReport", "CollectReport", "from_item_and_call",
                                                             "__init__")


def _hook_handed_over(node: ast.AST) -> bool:
    """A deciding hook handed to pytest as a keyword or a dict key (``SimpleNamespace(pytest_pyfunc_call=f)``,
    ``type("P", (), {"pytest_pyfunc_call": f})``)."""
    if isinstance(node, ast.Call):
        return any(k.arg in DECIDING_HOOKS for k in node.keywords)
    return isinstance(node, ast.Dict) and any(_literal(k) in DECIDING_HOOKS for k in node.keys if k is not None)


def _hook_of(node: ast.AST) -> str | None:
    """The hook a node implements: a plain (non-wrapper) definition by its name or its ``specname``, or a name
    bound to a callable by assignment (``pytest_pyfunc_call = lambda item: True``)."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        if _is_wrapper(node):
            return None
        spec = [k.value for d in node.decorator_list if isinstance(d, ast.Call) for k in d.keywords
                if k.arg == "specname"]
        if spec:  # a name that is not a plain string could be any hook
            return _literal(spec[0]) or DECIDING_HOOKS[0]
        if node.name == "pytest_runtest_makereport" and not _returns_something(node):
            return None  # a plain makereport that returns nothing lets pytest's own make the report
        return node.name
    for target in _targets(node):
        name = target.id if isinstance(target, ast.Name) else target.attr if isinstance(target, ast.Attribute) \
            else None
        if name in DECIDING_HOOKS:
            return name
    return None


def _returns_something(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(isinstance(n, ast.Return) and n.value is not None and not (
        isinstance(n.value, ast.Constant) and n.value.value is None) for n in ast.walk(node))


def _is_wrapper(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """``@hookimpl(hookwrapper=True)``, ``@hookimpl(wrapper=True)`` or the legacy ``@pytest.mark.hookwrapper``: a
    wrapper cannot replace the result, only force one (a move of its own)."""
    for d in node.decorator_list:
        if isinstance(d, ast.Call) and any(k.arg in ("hookwrapper", "wrapper") and isinstance(k.value, ast.Constant)
                                           and k.value.value is True for k in d.keywords):
            return True
        if isinstance(d, ast.Attribute) and d.attr == "hookwrapper":
            return True
    return False


def _targets(node: ast.AST) -> list[ast.expr]:
    """What a statement writes to, tuples and starred targets opened (``r.outcome, r.longrepr = ...``)."""
    if isinstance(node, ast.Assign):
        return [t for target in node.targets for t in _opened(target)]
    if isinstance(node, ast.AugAssign | ast.AnnAssign | ast.NamedExpr | ast.For | ast.AsyncFor | ast.comprehension):
        return _opened(node.target)
    if isinstance(node, ast.withitem) and node.optional_vars is not None:
        return _opened(node.optional_vars)
    if isinstance(node, ast.Call) and _called(node) == "setattr" and node.args:
        return [ast.Attribute(value=node.args[0], attr=_literal(node.args[1]) if len(node.args) > 1 else "")]
    return []


def _opened(target: ast.expr) -> list[ast.expr]:
    if isinstance(target, ast.Tuple | ast.List):
        return [t for e in target.elts for t in _opened(e)]
    return _opened(target.value) if isinstance(target, ast.Starred) else [target]


def _outcome_target(target: ast.expr) -> bool:
    if not isinstance(target, ast.Attribute) or target.attr not in OUTCOME_ATTRIBUTES:
        return False
    value = target.value
    while isinstance(value, ast.Attribute):
        value = value.value
    return not (isinstance(value, ast.Name) and value.id in ("self", "cls"))


def _behind_the_back(node: ast.AST) -> bool:
    """A write that goes around attribute assignment: ``x.__dict__[k] = v``, ``vars(x).update(...)``,
    ``x.__dict__.update(...)``, ``object.__setattr__(x, k, v)``."""
    if isinstance(node, ast.Assign | ast.AugAssign):
        return any(isinstance(t, ast.Subscript) and _is_dict_of(t.value) for t in _targets(node))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr in ("update", "__setitem__", "setdefault") and _is_dict_of(node.func.value):
            return True
        if node.func.attr == "setitem" and node.args and _is_dict_of(node.args[0]):  # operator.setitem(vars(x), ..)
            return True
        first = node.args[0] if node.args else None
        return node.func.attr == "__setattr__" and not (isinstance(first, ast.Name) and first.id in ("self", "cls")) \
            and not (isinstance(node.func.value, ast.Call) and _called(node.func.value) == "super")
    return False


def _is_dict_of(expr: ast.expr) -> bool:
    if isinstance(expr, ast.NamedExpr):  # (d := x.__dict__).update(...)
        expr = expr.value
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id in ("self", "cls"):
        return False  # an object's own attributes
    return (isinstance(expr, ast.Attribute) and expr.attr == "__dict__") or (
        isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "vars")


def _literal(arg: ast.expr) -> str:
    return arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else ""


def _patches_by_name(node: ast.AST) -> bool:
    """``monkeypatch.setattr("_pytest.runner.x", ...)``, ``sys.modules["_pytest.runner"]``,
    ``import_module("_pytest.runner")``: a protected module named by a string."""
    if isinstance(node, ast.Subscript):
        return _protected_literal(node.slice)
    if not isinstance(node, ast.Call) or not node.args:
        return False
    if _called(node) == "setattr":
        return _root(_literal(node.args[0])) in (*PROTECTED, "pytest")
    return _called(node) in ("import_module", "__import__") and _protected_literal(node.args[0])


def _pytest_attribute(target: ast.expr) -> bool:
    """``pytest.fail = ...``, ``pytest.TestReport.from_item_and_call = ...``: one of pytest's own names, or a part
    of one, replaced (a name pytest does not have is only stored)."""
    chain: list[str] = []
    while isinstance(target, ast.Attribute):
        chain.append(target.attr)
        target = target.value
    return isinstance(target, ast.Name) and target.id == "pytest" and bool(chain) and chain[-1] in _pytest_names()


def _pytest_names() -> frozenset[str]:
    """pytest's own public names, read from pytest where it is installed (it is wherever tests run)."""
    try:
        import pytest
    except ImportError:
        return frozenset()
    return frozenset(dir(pytest))


def _imports_own(node: ast.AST) -> bool:
    """An import of this package's test signals (the plugin, the spool): nothing in a project's code needs them."""
    modules = [a.name for a in node.names] if isinstance(node, ast.Import) else \
        [node.module or ""] if isinstance(node, ast.ImportFrom) else []
    return any(m == "tri_agent.testsignals" or m.startswith("tri_agent.testsignals.") for m in modules)


def _called(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
