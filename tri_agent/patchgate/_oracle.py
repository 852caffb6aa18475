"""Rule 15 of ``gate check``: oracle independence. A held-out test, or a scoring property, that uses a name or a
literal value the patch introduced was written from the patch, not from the spec: it agrees with the patch
because it copied it.

Read over whole files, both sides parsed, never line by line: a constant split across lines, or renamed (``CAP =
LIMIT`` with ``LIMIT = Decimal("0.37")``), or computed from literals (``Decimal(37) / 100``) is resolved to its
value, and values are compared as numbers (``0.37``, ``Decimal("0.37")`` and ``37 / 100`` are one value).

Introduced means: bound at module or class level in a code file the patch changed (a function, a class, a
constant), or a literal of such a file, that the base's code nowhere holds and the spec does not name. Values
too plain to be copied (one significant digit, quarters, booleans, short strings, strings that are one word
such as a field name) are never counted.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from ..testcode import parse
from ._map import printable

_QUARTERS = {Decimal("0.25"), Decimal("0.75"), Decimal("-0.25"), Decimal("-0.75")}
_HUGE = Decimal(10) ** 30  # past this a value is no constant anyone copies, and normalising it may overflow
_NUMBER_CALLS = {"Decimal", "Fraction", "float", "int"}
_NUMBER_TEXT = re.compile(r"(?<![\w.])-?\d+(?:[.,]\d+)?(?![\w])")
_OPS = {ast.Add: Decimal.__add__, ast.Sub: Decimal.__sub__, ast.Mult: Decimal.__mul__, ast.Div: Decimal.__truediv__}


@dataclass(frozen=True)
class Introduced:
    """A name or value the patch brought in, and where."""

    key: str  # "name:X" or the value's canonical form ("n:0.37", "s:text")
    shown: str
    where: str  # path:line in the patch's code


def _number(value: object) -> Decimal | None:
    if isinstance(value, Decimal):
        return value if value.is_finite() else None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = Decimal(repr(value) if isinstance(value, float) else str(value).strip())
    except (InvalidOperation, ValueError):
        return None
    return number if number.is_finite() else None


def _plain(number: Decimal) -> bool:
    """Too plain to be a copy: one significant digit (0, 7, 0.4, 300, 0.05), a quarter, or out of range."""
    if number.is_zero() or number in _QUARTERS or not -_HUGE < number < _HUGE:
        return True
    digits = number.as_tuple().digits
    return len(str(int("".join(map(str, digits)))).rstrip("0")) <= 1


def _key(value: object) -> str | None:
    """A value's canonical form, or None when it is too plain to be a copy."""
    number = _number(value)
    if number is not None:
        try:
            return None if _plain(number) else f"n:{number.normalize()}"
        except ArithmeticError:  # decimal's Overflow and InvalidOperation: no copy of anything
            return None
    if isinstance(value, str) and len(value.strip()) >= 4 and any(c.isalnum() for c in value) \
            and not value.isidentifier():  # a key or a field name ('total') is a name both sides may use
        return f"s:{value}"
    return None


def _resolve(node: ast.expr, env: dict[str, Decimal | str]) -> Decimal | str | None:
    """What an expression of literals is worth: a constant, a negated one, ``Decimal("0.37")``, a name bound to
    one earlier in the file, or + - * / over those."""
    if isinstance(node, ast.Constant):
        return _number(node.value) if not isinstance(node.value, str) or _number(node.value) is not None \
            else node.value
    if isinstance(node, ast.Name):
        return env.get(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _resolve(node.operand, env)
        return -inner if isinstance(inner, Decimal) else None
    if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) in _NUMBER_CALLS \
            and len(node.args) == 1 and not node.keywords:
        inner = _resolve(node.args[0], env)
        return _number(inner) if inner is not None else None
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        left, right = _resolve(node.left, env), _resolve(node.right, env)
        if isinstance(left, Decimal) and isinstance(right, Decimal):
            try:
                return _OPS[type(node.op)](left, right)
            except (InvalidOperation, ArithmeticError):
                return None
    return None


def _docstrings(tree: ast.Module) -> set[int]:
    return {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}


def values(tree: ast.Module, parts: bool = True) -> dict[str, tuple[int, str]]:
    """Every value of a file worth comparing: canonical form -> (first line, as written). With ``parts``, the
    values inside a larger expression count too (an oracle's ``Decimal("0.0125") * 2`` holds 0.0125); without,
    only the largest expression that has a value (a patch's ``-7.5`` introduces -7.5, not also 7.5)."""
    env: dict[str, Decimal | str] = {}
    for stmt in ast.walk(tree):
        if isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            worth = _resolve(stmt.value, env)
            env |= {t.id: worth for t in targets if isinstance(t, ast.Name) and worth is not None}
    skip = _docstrings(tree)
    out: dict[str, tuple[int, str]] = {}
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        worth = _resolve(node, env) if isinstance(node, ast.expr) and not isinstance(node, ast.Name) else None
        if worth is None or not isinstance(node, ast.expr) or parts:
            todo += [c for c in ast.iter_child_nodes(node) if id(c) not in skip]
        if worth is None or not isinstance(node, ast.expr):
            continue
        key = _key(worth)
        if key is not None and (key not in out or node.lineno < out[key][0]):
            out[key] = (node.lineno, ast.unparse(node)[:60])
    return out


def bindings(tree: ast.Module) -> dict[str, int]:
    """Names bound at module or class level (functions, classes, constants): the API a patch can introduce."""
    out: dict[str, int] = {}
    scopes: list[list[ast.stmt]] = [tree.body]
    while scopes:
        for stmt in scopes.pop():
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                out.setdefault(stmt.name, stmt.lineno)
                if isinstance(stmt, ast.ClassDef):
                    scopes.append(stmt.body)
            elif isinstance(stmt, ast.Assign | ast.AnnAssign):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                out |= {t.id: stmt.lineno for t in targets if isinstance(t, ast.Name) and t.id not in out}
    return {n: line for n, line in out.items() if len(n) > 2 and not n.startswith("__")}


def names(tree: ast.Module) -> dict[str, int]:
    """Every name a file uses or binds, with its first line."""
    out: dict[str, int] = {}
    for node in ast.walk(tree):
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else \
            node.name if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) else None
        if name is not None:
            out.setdefault(name, getattr(node, "lineno", 0))
        if isinstance(node, ast.alias):
            out.setdefault((node.asname or node.name).split(".")[0], getattr(node, "lineno", 0))
            out.setdefault(node.name.split(".")[-1], getattr(node, "lineno", 0))
    return out


def _bound(tree: ast.Module) -> set[str]:
    """Names a file binds itself (assigned, defined, a parameter): its own, whatever the patch calls its own."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            out.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.add(node.name)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
    return out


def borrowed(tree: ast.Module) -> dict[str, int]:
    """The names an oracle file takes from elsewhere: imported, read as an attribute, or read without binding
    them. A name it binds itself (``CAP = Decimal("0.40")``) is its own even when the patch binds it too."""
    own = _bound(tree)
    out: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.alias):
            out.setdefault(node.name.split(".")[-1], getattr(node, "lineno", 0))
        elif isinstance(node, ast.Attribute):
            out.setdefault(node.attr, node.lineno)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in own:
            out.setdefault(node.id, node.lineno)
    return out


def _spec_keys(spec: str) -> set[str]:
    """What the spec names: its words (as names and as strings, in any case), and its numbers in canonical form."""
    found = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", spec)
    words = {f"name:{w}" for w in found} | {f"s:{w}" for w in found} | {f"s:{w.lower()}" for w in found}
    numbers = {k for t in _NUMBER_TEXT.findall(spec) if (k := _key(t.replace(",", "."))) is not None}
    return words | numbers


def introduced(base_code: list[str], changed: dict[str, str], spec: str) -> list[Introduced]:
    """The names and values of the patch's code (``changed``: path -> text at the head) that the base's code
    (``base_code``: every code file's text at the base) nowhere holds and the spec does not name."""
    known = _spec_keys(spec)
    for text in base_code:
        tree = parse(text)
        if tree is not None:
            known |= {f"{kind}:{n}" for n in names(tree) for kind in ("name", "s")} | set(values(tree))
    out: dict[str, Introduced] = {}
    for path, text in sorted(changed.items()):
        tree = parse(text)
        if tree is None:
            continue
        found = [(f"name:{n}", n, line) for n, line in bindings(tree).items()]
        found += [(k, shown, line) for k, (line, shown) in values(tree, parts=False).items()]
        for key, shown, line in found:
            if key not in known and key not in out:
                out[key] = Introduced(key, shown, f"{printable(path)}:{line}")
    return list(out.values())


def leaning(path: str, text: str, patch: list[Introduced]) -> list[tuple[str, str]]:
    """What of the patch one oracle file (a held-out test, a scoring property) uses: (the line anyone may read,
    the operator's detail). The first names only the patch's own place and value, so a report shown to the patch
    author says nothing of the hidden file; the second names the oracle's file and line."""
    tree = parse(text)
    if tree is None or not patch:
        return []
    used = {f"name:{n}": line for n, line in borrowed(tree).items()} | \
        {k: line for k, (line, _) in values(tree).items()}
    return [(f"{i.where}: the patch introduced {'the name' if i.key.startswith('name:') else 'the value'} "
             f"{i.shown}, which the spec does not name and a hidden test uses: the oracle copied the patch",
             f"{printable(path)}:{used[i.key]}") for i in patch if i.key in used]
