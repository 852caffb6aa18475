"""Test infrastructure: the files around the tests that can decide what a run reports, and the code in a change
that forges outcomes.

A conftest, a plugin, a helper module or a pytest setting can make a suite report green without a test file
changing: a hook that rewrites a report's outcome, a ``pytest_pyfunc_call`` that returns before the test runs, a
patch of pytest's own modules. Two answers:

- ``infrastructure``: the changed files that are not tests yet shape them (conftest files, modules under a test
  folder, modules that import pytest, pytest's settings) go to the weakened judge beside the test files;
- ``forged``: a mechanical scan of every changed Python file for the closed set of moves in ``RULES``; each one
  added by the change is a flag by itself, no judge needed, cited at its ``after/<path>:<line>``.

What a move is "added" means: the statement (or the hook's whole definition) does not appear, word for word after
parsing, in the file's base version, so code the base already had is never flagged again.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from ..drivers._rulings import Claim
from ..testcode import is_test_file

CONFIG_FILES = ("pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml")
_TEST_FOLDERS = {"tests", "test", "testing"}
_PYTEST_SECTION = re.compile(r"^\[(?:pytest|tool:pytest|tool\.pytest[^\]]*)\]\s*$", re.MULTILINE)

# hooks whose return value replaces running a test or reporting it: a new or changed definition is a forged outcome
DECIDING_HOOKS = ("pytest_pyfunc_call", "pytest_runtest_protocol", "pytest_report_teststatus", "pytest_runtestloop")
# attributes of reports, calls, sessions and items that carry an outcome (or the test itself)
OUTCOME_ATTRIBUTES = ("outcome", "longrepr", "exitstatus", "testsfailed", "wasxfail", "excinfo", "_excinfo",
                      "_result", "runtest", "obj")
_DYNAMIC = ("exec", "eval", "compile", "__import__")  # builtins, called by name; and importlib's import_module
RULES = {  # rule -> what it finds, in words (a flag's reason)
    "deciding-hook": "defines a hook whose return value replaces running or reporting a test",
    "makereport-replaced": "replaces pytest_runtest_makereport (not as a wrapper): reports made by this code",
    "outcome-written": "writes an outcome (a report's, a call's or a session's) or replaces the test function",
    "forced-result": "forces a hook's result",
    "pytest-patched": "patches pytest's own modules",
    "dynamic-code": "runs code built at run time in test infrastructure",
}


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
    return bool(_TEST_FOLDERS & set(path.split("/")[:-1])) or any(
        _imports_pytest(t) for t in (before, after) if t is not None)


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
    return bool(re.search(r"^\s*(?:import|from)\s+_?pytest\b", text, re.MULTILINE))


def forged(path: str, before: str | None, after: str | None) -> list[Claim]:
    """The moves of ``RULES`` in ``after`` that ``before`` did not have, one claim each; a file that does not parse
    is the judge's to read, not this scan's."""
    if not path.endswith(".py") or after is None:
        return []
    found = _moves(after, _shapes(path, after))
    if found is None:
        return []
    seen = {(rule, key) for rule, _, key in _moves(before or "", _shapes(path, before or "")) or []}
    return [Claim(category="forged", location=f"after/{path}:{line}", reason=f"{RULES[rule]}: {_shown(key)}")
            for rule, line, key in found if (rule, key) not in seen]


def _shapes(path: str, text: str) -> bool:
    """Whether the file is infrastructure around the tests (a conftest, a plugin, a helper), where attribute writes
    and dynamic code count: in a test's own body or in application code, an ``outcome`` attribute is just a name."""
    if is_test_file(path):
        return path.rsplit("/", 1)[-1] == "conftest.py"
    return bool(_TEST_FOLDERS & set(path.split("/")[:-1])) or _imports_pytest(text)


def _moves(text: str, shapes: bool) -> list[tuple[str, int, str]] | None:
    """(rule, line, the node's whole source as parsed) for each move of ``RULES`` in ``text``."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    pytest_names = _pytest_aliases(tree)
    return [(rule, getattr(node, "lineno", 1), ast.unparse(node))
            for node in ast.walk(tree) for rule in _rules_of(node, shapes, pytest_names)]


def _shown(source: str) -> str:
    lines = [line for line in source.splitlines() if not line.lstrip().startswith("@")]
    return (lines or [""])[0].strip()[:120]


def _pytest_aliases(tree: ast.Module) -> set[str]:
    """Names bound to pytest's own modules (``import _pytest.runner as r``, ``from _pytest import runner``)."""
    names = {"_pytest"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.asname or a.name.split(".")[0] for a in node.names if a.name.split(".")[0] == "_pytest"}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in ("_pytest", "pytest"):
            names |= {a.asname or a.name for a in node.names}
    return names


def _rules_of(node: ast.AST, shapes: bool, pytest_names: set[str]) -> Iterator[str]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        if node.name in DECIDING_HOOKS:
            yield "deciding-hook"
        elif node.name == "pytest_runtest_makereport" and not _is_wrapper(node):
            yield "makereport-replaced"
    targets = _targets(node)
    if any(_rooted(t, pytest_names | {"pytest"}) for t in targets) or _patches_by_name(node):
        yield "pytest-patched"
    if isinstance(node, ast.Call) and _called(node) in ("force_result", "force_exception"):
        yield "forced-result"
    if not shapes:
        return
    if any(isinstance(t, ast.Attribute) and t.attr in OUTCOME_ATTRIBUTES and not _rooted(t, {"self", "cls"})
           for t in targets):
        yield "outcome-written"
    if isinstance(node, ast.Call) and (_called(node) == "import_module" or (
            isinstance(node.func, ast.Name) and node.func.id in _DYNAMIC)):
        yield "dynamic-code"


def _is_wrapper(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(isinstance(d, ast.Call) and any(k.arg in ("hookwrapper", "wrapper") for k in d.keywords)
               for d in node.decorator_list)


def _targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        return list(node.targets)
    if isinstance(node, ast.AugAssign | ast.AnnAssign):
        return [node.target]
    if isinstance(node, ast.Call) and _called(node) == "setattr" and node.args:
        return [ast.Attribute(value=node.args[0], attr=_literal(node.args[1:2]), ctx=ast.Store())]
    return []


def _literal(args: list[ast.expr]) -> str:
    return args[0].value if args and isinstance(args[0], ast.Constant) and isinstance(args[0].value, str) else ""


def _rooted(target: ast.expr, roots: set[str]) -> bool:
    """Whether an attribute target hangs off one of ``roots`` (``_pytest.runner.call_and_report = ...``)."""
    if not isinstance(target, ast.Attribute):
        return False
    value = target.value
    while isinstance(value, ast.Attribute):
        value = value.value
    return isinstance(value, ast.Name) and value.id in roots


def _patches_by_name(node: ast.AST) -> bool:
    """``monkeypatch.setattr("_pytest.runner.x", ...)``: a patch named by a dotted string."""
    return isinstance(node, ast.Call) and _called(node) == "setattr" and \
        _literal(node.args[:1]).split(".")[0] in ("_pytest", "pytest")


def _called(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
