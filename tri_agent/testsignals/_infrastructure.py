"""Test infrastructure: the files around the tests that can decide what a run reports, and the code in a change
that forges outcomes.

A conftest, a plugin, a helper module or a pytest setting can make a suite report green without a test file
changing: a hook that rewrites a report's outcome, a ``pytest_pyfunc_call`` that returns before the test runs, a
patch of pytest's own modules or of this plugin. Two answers:

- ``infrastructure``: the changed files that are not tests yet shape them (modules under a test folder, modules
  that import pytest, pytest's settings) go to the weakened judge beside the test files;
- ``forged``: a mechanical scan of every changed Python file for the closed set of moves in ``RULES``; each one
  the change added is a flag by itself, no judge needed, cited at its ``after/<path>:<line>``.

A move is "added" when the statement (or the hook's whole definition) appears, word for word after parsing, in
no base version of the change's files: code the base already had, or code a change only moved, is not flagged
again. Python files are read in the encoding Python itself reads them in (a BOM, a coding cookie), so the scan
sees what runs; an infrastructure file the scan cannot read whole (it does not parse, or it is too large or too
deep) is flagged as such, since what cannot be read cannot be cleared.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator

from ..drivers._rulings import Claim
from ..testcode import is_test_file

CONFIG_FILES = ("pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml")
_TEST_FOLDERS = {"tests", "test", "testing"}
_PYTEST_SECTION = re.compile(r"^\[(?:pytest|tool:pytest|tool\.pytest[^\]]*)\]\s*$", re.MULTILINE)
_MAX_SCANNED = 1 << 20  # a changed Python file larger than this is not scanned (an infrastructure one is flagged)

# hooks whose return value replaces running a test, or whose plain implementation makes its reports
DECIDING_HOOKS = ("pytest_pyfunc_call", "pytest_runtest_protocol", "pytest_runtestloop",
                  "pytest_runtest_makereport")
# attributes of reports, calls, sessions and items that carry an outcome (or the test itself)
OUTCOME_ATTRIBUTES = ("outcome", "longrepr", "exitstatus", "testsfailed", "wasxfail", "excinfo", "_excinfo",
                      "_result", "runtest", "obj", "_obj")
# modules whose insides decide what a run reports: pytest's, pluggy's, and this package's own evidence
PROTECTED = ("_pytest", "pluggy", "tri_agent")
_DYNAMIC = ("exec", "compile", "__import__", "globals")  # builtins, called by their bare names
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


def is_config(path: str) -> bool:
    return path.rsplit("/", 1)[-1] in CONFIG_FILES


def infrastructure(path: str, before: str | None, after: str | None) -> bool:
    """Whether a changed file that is not a test file shapes the tests: under a test folder, importing pytest, or
    a pytest setting that changed."""
    if is_test_file(path):
        return False
    if is_config(path):
        return _pytest_settings(before) != _pytest_settings(after)
    if not path.endswith(".py"):
        return False
    return _in_test_folder(path) or any(_imports_pytest(t) for t in (before, after) if t is not None)


def _in_test_folder(path: str) -> bool:
    return bool(_TEST_FOLDERS & set(path.split("/")[:-1]))


def _pytest_settings(text: str | None) -> str:
    """The pytest sections of a settings file, as text ('' when none)."""
    if not text:
        return ""
    out, inside = [], False
    for line in text.splitlines():
        if line.startswith("["):
            inside = bool(_PYTEST_SECTION.match(line))
        if inside and line.strip():
            out.append(line.rstrip())
    return "\n".join(out)


def _imports_pytest(text: str) -> bool:
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


Texts = dict[str, tuple[str | None, str | None]]  # path -> (text at the base, text at the head)


def forged_in(texts: Texts) -> list[Claim]:
    """The moves of ``RULES`` the change added, over every changed Python file, one claim each."""
    seen: set[tuple[str, str]] = set()
    for path, (before, _) in texts.items():
        if before is not None and path.endswith(".py"):
            seen |= {(rule, key) for rule, _, key in _moves(path, before)}
    return [Claim(category="forged", location=f"after/{path}:{line}", reason=f"{RULES[rule]}: {_shown(key)}")
            for path, (_, after) in texts.items() if after is not None and path.endswith(".py")
            for rule, line, key in _moves(path, after) if (rule, key) not in seen]


def forged(path: str, before: str | None, after: str | None) -> list[Claim]:
    """``forged_in`` for one file."""
    return forged_in({path: (before, after)})


def _moves(path: str, text: str) -> list[tuple[str, int, str]]:
    """(rule, line, the node's whole source as parsed) for each move of ``RULES`` in ``text``."""
    name = path.rsplit("/", 1)[-1]
    test = is_test_file(path)
    if len(text) > _MAX_SCANNED:
        return [("unscannable", 1, f"{len(text)} characters")] if test or _in_test_folder(path) else []
    try:
        tree = ast.parse(text)
        # infrastructure around the tests (a conftest, a plugin, a helper), where attribute writes and dynamic code
        # count: in a test's own body or in application code, an ``outcome`` attribute is just a name
        shapes = name == "conftest.py" or (not test and (_in_test_folder(path) or any(
            _root(m) in ("pytest", *PROTECTED) for m in _imported(tree))))
        plugin = name == "conftest.py" or _defines_hooks(tree)
        names = _protected_names(tree)
        return [(rule, getattr(node, "lineno", 1), ast.unparse(node)) for node in ast.walk(tree)
                for rule in _rules_of(node, shapes, plugin, names)]
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        # too deep to walk hides whatever is in it; a syntax error is the judge's, unless the file shapes the tests
        if isinstance(exc, RecursionError | MemoryError) or test or _in_test_folder(path) or _imports_pytest(text):
            return [("unscannable", getattr(exc, "lineno", None) or 1, type(exc).__name__)]
        return []


def _shown(source: str) -> str:
    lines = [line for line in source.splitlines() if not line.lstrip().startswith("@")]
    return (lines or [""])[0].strip()[:120]


def _defines_hooks(tree: ast.AST) -> bool:
    return any(isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name.startswith("pytest_")
               for n in ast.walk(tree))


def _protected_names(tree: ast.Module) -> set[str]:
    """Names bound to a protected module or to anything taken from one: by import, and by assignment from an
    expression that reaches one (``runner = sys.modules["_pytest.runner"]``), followed twice."""
    names = set(PROTECTED)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.asname or _root(a.name) for a in node.names if _root(a.name) in PROTECTED}
        elif isinstance(node, ast.ImportFrom) and _root(node.module or "") in (*PROTECTED, "pytest"):
            names |= {a.asname or a.name for a in node.names}
    for _ in range(2):
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and _reaches(node.value, names):
                names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def _reaches(expr: ast.AST, names: set[str]) -> bool:
    return any((isinstance(n, ast.Name) and n.id in names) or _protected_literal(n) for n in ast.walk(expr))


def _protected_literal(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and _root(node.value) in PROTECTED


def _rules_of(node: ast.AST, shapes: bool, plugin: bool, names: set[str]) -> Iterator[str]:
    if _hook_of(node) in DECIDING_HOOKS:
        yield "deciding-hook"
    targets = _targets(node)
    if any(_reaches(t, names) or _pytest_attribute(t) for t in targets) or _patches_by_name(node) or \
            _imports_own(node):
        yield "internals-patched"
    if isinstance(node, ast.Call) and _called(node) in ("force_result", "force_exception"):
        yield "forced-result"
    if not shapes:
        return
    if plugin and (any(_outcome_target(t) for t in targets) or _behind_the_back(node)):
        yield "outcome-written"
    if isinstance(node, ast.Call) and (_called(node) in _DYNAMIC_ATTRIBUTES or (
            isinstance(node.func, ast.Name) and node.func.id in _DYNAMIC)):
        yield "dynamic-code"


def _hook_of(node: ast.AST) -> str | None:
    """The hook a node implements: a plain (non-wrapper) definition by its name or its ``specname``, or a name
    bound to a callable by assignment (``pytest_pyfunc_call = lambda item: True``)."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        if _is_wrapper(node):
            return None
        spec = [_literal(k.value) for d in node.decorator_list if isinstance(d, ast.Call)
                for k in d.keywords if k.arg == "specname"]
        return spec[0] if spec else node.name
    for target in _targets(node):
        name = target.id if isinstance(target, ast.Name) else target.attr if isinstance(target, ast.Attribute) \
            else None
        if name in DECIDING_HOOKS:
            return name
    return None


def _is_wrapper(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """``@hookimpl(hookwrapper=True)``, ``@hookimpl(wrapper=True)`` or the legacy ``@pytest.mark.hookwrapper``: a
    wrapper cannot replace the result, only force one (a move of its own)."""
    for d in node.decorator_list:
        if isinstance(d, ast.Call) and any(k.arg in ("hookwrapper", "wrapper") for k in d.keywords):
            return True
        if isinstance(d, ast.Attribute) and d.attr == "hookwrapper":
            return True
    return False


def _targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        return list(node.targets)
    if isinstance(node, ast.AugAssign | ast.AnnAssign | ast.NamedExpr):
        return [node.target]
    if isinstance(node, ast.Call) and _called(node) == "setattr" and node.args:
        return [ast.Attribute(value=node.args[0], attr=_literal(node.args[1]) if len(node.args) > 1 else "",
                              ctx=ast.Store())]
    return []


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
        return node.func.attr == "__setattr__"
    return False


def _is_dict_of(expr: ast.expr) -> bool:
    if isinstance(expr, ast.NamedExpr):  # (d := x.__dict__).update(...)
        expr = expr.value
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
    """``pytest.fail = ...``: one of pytest's own names replaced (a name pytest does not have is only stored)."""
    import pytest

    return isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and \
        target.value.id == "pytest" and hasattr(pytest, target.attr)


def _imports_own(node: ast.AST) -> bool:
    """An import of this package's test signals (the plugin, the spool): nothing in a project's code needs them."""
    modules = [a.name for a in node.names] if isinstance(node, ast.Import) else \
        [node.module or ""] if isinstance(node, ast.ImportFrom) else []
    return any(m == "tri_agent.testsignals" or m.startswith("tri_agent.testsignals.") for m in modules)


def _called(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
