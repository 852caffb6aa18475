"""Semantic mutation operators for Python targets: one table, each operator tagged with the bug classes it realises.

The examiner names bug classes (it never sees the code); these operators turn a class into concrete mutants of
the code *as it is in the round*, so an honest fix written any way still gets a full sample. Every operator
works on the syntax tree (libcst), never on text: a comment or a string that merely looks like code is never
mutated, and every mutant is valid Python by construction.

An operator looks at one node and returns its sites: the node to replace, the node that replaces it, the bug
classes this site realises and the node whose lines a case must execute for the mutant to make a difference.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

_Replacement = cst.CSTNode | cst.FlattenSentinel[cst.BaseStatement]


@dataclass(frozen=True)
class Site:
    node: cst.CSTNode
    replacement: _Replacement
    classes: tuple[str, ...]
    reach: cst.CSTNode  # a case that never executes these lines cannot tell the mutant from the original


@dataclass(frozen=True)
class Operator:
    """One row of the table: what it does, the bug classes it realises, how it finds its sites."""

    id: str
    classes: tuple[str, ...]
    description: str
    sites: Callable[[cst.CSTNode], list[Site]]


@dataclass(frozen=True)
class Instance:
    """One concrete mutant of one file, made by an operator for a bug class of the menu."""

    id: str
    operator: str
    bug_class: str
    file: str
    start: tuple[int, int]  # line, column (1-based) of the replaced code
    end: tuple[int, int]
    original: str
    replacement: str
    mutated: str  # the whole mutated file
    reach: tuple[int, int]  # first and last line a case must execute to tell the mutant apart


# --- helpers over nodes --------------------------------------------------------------------------------------------

_EMPTY = cst.Module(body=[])  # renders a node alone with the default formatting


def _code(node: cst.CSTNode) -> str:
    return _EMPTY.code_for_node(node)


def _expr(text: str) -> cst.BaseExpression:
    return cst.parse_expression(text)


def _call_name(node: cst.CSTNode) -> str | None:
    """``f`` for a call f(...), ``a.b`` for a.b(...); None for any other node."""
    if not isinstance(node, cst.Call):
        return None
    func = node.func
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
        return f"{func.value.value}.{func.attr.value}"
    return None


def _method(node: cst.CSTNode) -> str | None:
    """``m`` for a call x.m(...); None for any other node."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        return node.func.attr.value
    return None


def _string_value(node: cst.CSTNode) -> str | None:
    """The text of a plain string literal (bytes are not text; an f-string is not a SimpleString)."""
    value = node.evaluated_value if isinstance(node, cst.SimpleString) else None
    return value if isinstance(value, str) else None


def _codec(node: cst.CSTNode) -> str | None:
    """The codec a string literal names, in lower case (codec names are case-insensitive)."""
    value = _string_value(node)
    return None if value is None else value.lower()


def _stops(line: cst.CSTNode) -> TypeGuard[cst.SimpleStatementLine | cst.SimpleStatementSuite]:
    """A line that ends the path: raise, return, continue, break, or a call to exit."""
    if not isinstance(line, cst.SimpleStatementLine | cst.SimpleStatementSuite):
        return False
    for small in line.body:
        if isinstance(small, cst.Raise | cst.Return | cst.Continue | cst.Break):
            return True
        if isinstance(small, cst.Expr) and _call_name(small.value) in _EXITS:
            return True
    return False


_EXITS = ("sys.exit", "exit", "os._exit", "abort", "quit")


def _lines(suite: cst.BaseSuite) -> list[cst.CSTNode]:
    """A block's lines: a one-line block (``if x: return``) is a single line."""
    return list(suite.body) if isinstance(suite, cst.IndentedBlock) else [suite]


def _line(suite: cst.BaseSuite, small: cst.BaseSmallStatement) -> cst.CSTNode:
    """``small`` as one more line of ``suite``: a line of its own, or one more statement of a one-line block."""
    return cst.SimpleStatementLine([small]) if isinstance(suite, cst.IndentedBlock) else small


# --- the operators ----------------------------------------------------------------------------------------------

_MODES = ("HALF_UP", "HALF_EVEN", "HALF_DOWN", "UP", "DOWN", "CEILING", "FLOOR", "05UP")
_SWAPS = {"HALF_UP": ("HALF_EVEN", "HALF_DOWN"), "HALF_EVEN": ("HALF_UP",), "HALF_DOWN": ("HALF_UP",),
          "UP": ("DOWN",), "DOWN": ("UP",), "CEILING": ("FLOOR",), "FLOOR": ("CEILING",), "05UP": ("DOWN",)}


def _mode_of(node: cst.CSTNode) -> str | None:
    """The mode a rounding argument names (ROUND_UP, decimal.ROUND_UP, "ROUND_UP", "HALF_UP"); None for an alias
    or an expression (a bare UP is some other name)."""
    if isinstance(node, cst.Attribute):
        name: str | None = node.attr.value
    elif isinstance(node, cst.Name):
        name = node.value
    else:
        name = _string_value(node)
    if name is None:
        return None
    mode = name.removeprefix("ROUND_")
    return mode if mode in _MODES and (name.startswith("ROUND_") or mode.startswith("HALF_")) else None


def _rounding(node: cst.CSTNode) -> list[Site]:
    """A rounding mode swapped for its usual confusion (HALF_UP -> HALF_EVEN, HALF_DOWN; ...)."""
    if isinstance(node, cst.Arg) and node.keyword is not None and node.keyword.value == "rounding":
        mode = _mode_of(node.value)
        swaps = _SWAPS[mode] if mode else ("HALF_EVEN", "HALF_UP")  # an alias or expression: both usual ones
        return [Site(node.value, cst.SimpleString(f'"ROUND_{m}"'), ("rounding-mode",), node)
                for m in swaps]
    return []


_NORMALISERS = {"strip": "strip-dropped", "lstrip": "strip-dropped", "rstrip": "strip-dropped",
                "lower": "case-fold", "upper": "case-fold", "casefold": "case-fold"}
_BOM = "\ufeff"


def _normalisation(node: cst.CSTNode) -> list[Site]:
    """A normalisation step removed: strip, case folding, Unicode normalisation (the value passes through)."""
    if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute):
        return []
    method, receiver = node.func.attr.value, node.func.value
    args = [a.value for a in node.args]
    if any(_string_value(a) == _BOM for a in args):
        return []  # a byte-order-mark step: the encoding operator's
    on_str = isinstance(receiver, cst.Name) and receiver.value == "str"  # str.strip(x, ...): x passes through
    if method in _NORMALISERS and (args or not on_str):
        return [Site(node, args[0] if on_str else receiver, (_NORMALISERS[method],), node)]
    if method == "normalize" and len(args) == 2:
        sites = [Site(node, args[1], ("unicode-normalisation",), node)]
        form, literal = _string_value(args[0]), args[0]
        if form in _FORMS and isinstance(literal, cst.SimpleString):
            # composed and decomposed swapped: an accented name becomes two code points, or one
            quote = literal.value[-1]
            swapped = node.with_deep_changes(literal, value=f"{quote}{_FORMS[form]}{quote}")
            sites.append(Site(node, swapped, ("unicode-normalisation",), node))
        return sites
    return []


_FORMS = {"NFC": "NFD", "NFD": "NFC", "NFKC": "NFKD", "NFKD": "NFKC"}


_BOUNDARY: dict[type, Any] = {cst.LessThan: cst.LessThanEqual, cst.LessThanEqual: cst.LessThan,
                              cst.GreaterThan: cst.GreaterThanEqual, cst.GreaterThanEqual: cst.GreaterThan}


def _boundary(node: cst.CSTNode) -> list[Site]:
    """A boundary moved: < and <=, > and >= swapped."""
    if not isinstance(node, cst.ComparisonTarget) or type(node.operator) not in _BOUNDARY:
        return []
    op: Any = node.operator
    new = _BOUNDARY[type(op)](whitespace_before=op.whitespace_before, whitespace_after=op.whitespace_after)
    return [Site(node, node.with_changes(operator=new), ("boundary-shift", "off-by-one"), node)]


def _off_by_one(node: cst.CSTNode) -> list[Site]:
    """A count, a slice end or a range end off by one."""
    sites = []
    if isinstance(node, cst.Call) and _call_name(node) == "len" and len(node.args) == 1:
        sites.append(Site(node, _expr(f"({_code(node)} + 1)"), ("off-by-one",), node))
    elif isinstance(node, cst.Call) and _call_name(node) == "range" and node.args:
        last = node.args[min(len(node.args), 2) - 1]
        sites.append(Site(last.value, _expr(f"({_code(last.value)} + 1)"), ("off-by-one",), node))
    elif isinstance(node, cst.Slice):
        if node.lower is not None:
            sites.append(Site(node.lower, _expr(f"({_code(node.lower)} + 1)"), ("off-by-one",), node))
        if node.upper is not None:
            sites.append(Site(node.upper, _expr(f"({_code(node.upper)} - 1)"), ("off-by-one",), node))
    return sites


_EMITTERS = ("append", "appendleft", "extend", "insert", "writerow", "writerows", "write", "add",
             # what a document renderer emits a part with: a PDF cell or line of text (fpdf2, reportlab), a DOCX
             # paragraph, heading, run or table row (python-docx)
             "cell", "multi_cell", "text", "drawString", "add_paragraph", "add_heading", "add_run", "add_row")


def _row_dropped(node: cst.CSTNode) -> list[Site]:
    """A row of output (a total, a subtotal, a line) never emitted: the statement that adds it is gone."""
    if isinstance(node, cst.Expr) and _method(node.value) in _EMITTERS:
        return [Site(node, cst.Pass(), ("missing-total", "field-dropped"), node)]
    return []


def _early_return(node: cst.CSTNode) -> list[Site]:
    """A function returns before its last loop or block has run (what it built so far)."""
    if not isinstance(node, cst.FunctionDef) or not isinstance(node.body, cst.IndentedBlock):
        return []
    *before, last = node.body.body
    if not (isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[0], cst.Return)
            and last.body[0].value is not None):
        return []
    blocks = [s for s in before if isinstance(s, cst.For | cst.While | cst.If | cst.With | cst.Try)]
    if not blocks:
        return []
    block = blocks[-1]
    return [Site(block, cst.FlattenSentinel([last, block]), ("early-return",), block)]


def _loop_cut(node: cst.CSTNode) -> list[Site]:
    """A loop stops after its first pass."""
    if isinstance(node, cst.For | cst.While):
        cut = node.body.with_changes(body=[*node.body.body, _line(node.body, cst.Break())])
        return [Site(node.body, cut, ("early-return",), _lines(node.body)[0])]
    return []


def _swallowed(node: cst.CSTNode) -> list[Site]:
    """An error handler that stops (raises, exits) now swallows the error and carries on."""
    if isinstance(node, cst.ExceptHandler) and any(_stops(line) for line in _lines(node.body)):
        quiet = node.body.with_changes(body=[_line(node.body, cst.Pass())])
        return [Site(node.body, quiet, ("swallowed-exception", "validation-skipped"), _lines(node.body)[0])]
    return []


def _validation(node: cst.CSTNode) -> list[Site]:
    """A check skipped: an ``if`` that stops (raise, exit, return, continue) never fires; a filter dropped."""
    if isinstance(node, cst.If):
        return _check_skipped(node)
    if isinstance(node, cst.CompFor) and node.ifs:
        return [Site(node, node.with_changes(ifs=[]), ("blank-lines", "validation-skipped"), node)]
    return []


def _check_skipped(node: cst.If) -> list[Site]:
    """An ``if`` whose first line stops never fires; one that skips (continue) is a blank-line filter."""
    first = _lines(node.body)[0]
    if not _stops(first):
        return []
    skips = any(isinstance(s, cst.Continue) for s in first.body)
    classes = ("blank-lines", "validation-skipped") if skips else ("validation-skipped", "format-check-skipped")
    never = _expr(f"({_code(node.test)}) and False")  # the condition still runs: only the check is gone
    return [Site(node.test, never, classes, first)]


def _precision(node: cst.CSTNode) -> list[Site]:
    """Precision lost: a quantize step dropped, or a decimal built from a float."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "quantize":
        return [Site(node, node.func.value, ("precision",), node)]
    if isinstance(node, cst.Call) and _call_name(node) in ("Decimal", "decimal.Decimal") and len(node.args) == 1 \
            and not isinstance(node.args[0].value, cst.SimpleString | cst.Integer | cst.Float):
        lossy = node.with_changes(args=[node.args[0].with_changes(value=_expr(f"float({_code(node.args[0].value)})"))])
        return [Site(node, lossy, ("precision",), node)]
    return []


def _order(node: cst.CSTNode) -> list[Site]:
    """Order lost where it is specified: a sort removed."""
    if isinstance(node, cst.Call) and _call_name(node) == "sorted" and node.args:
        return [Site(node, _expr(f"list({_code(node.args[0].value)})"), ("order-lost",), node)]
    if isinstance(node, cst.Expr) and _method(node.value) == "sort":
        return [Site(node, cst.Pass(), ("order-lost",), node)]
    return []


def _duplicates(node: cst.CSTNode) -> list[Site]:
    """Repeated items merged into one."""
    if isinstance(node, cst.ListComp):
        return [Site(node, _expr(f"list(dict.fromkeys({_code(node)}))"), ("duplicates-merged",), node)]
    return []


_ENCODINGS = {"utf-8-sig": "utf-8", "utf-16": "utf-16-le", "utf_8_sig": "utf-8"}


def _encoding(node: cst.CSTNode) -> list[Site]:
    """An encoding step skipped: the byte-order mark kept, a declared encoding ignored."""
    codec = _codec(node)
    if codec is not None and codec in _ENCODINGS:
        return [Site(node, cst.SimpleString(f'"{_ENCODINGS[codec]}"'), ("encoding",), node)]
    if isinstance(node, cst.Arg) and node.keyword is not None and node.keyword.value == "encoding" and \
            _codec(node.value) in ("utf-8", "utf8"):
        return [Site(node.value, cst.SimpleString('"latin-1"'), ("encoding",), node)]
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
            any(_string_value(a.value) == _BOM for a in node.args):
        return [Site(node, node.func.value, ("encoding",), node)]
    return []


_STATUS_SWAPS = {200: 201, 201: 200, 400: 422, 401: 403, 403: 401, 404: 400, 409: 400, 413: 400, 422: 400}


def _status(node: cst.CSTNode) -> list[Site]:
    """An HTTP status given by keyword (``status_code=403``) swapped for the one it is usually confused with."""
    if isinstance(node, cst.Arg) and node.keyword is not None and node.keyword.value in ("status_code", "status") \
            and isinstance(node.value, cst.Integer) and int(node.value.value) in _STATUS_SWAPS:
        return [Site(node.value, cst.Integer(str(_STATUS_SWAPS[int(node.value.value)])), ("wrong-status",), node)]
    return []


_WRITES = ("insert", "update", "delete", "replace")


def _write_dropped(node: cst.CSTNode) -> list[Site]:
    """A database write never made: a statement ``x.execute("insert ...")`` (update, delete, replace) removed."""
    if not (isinstance(node, cst.Expr) and isinstance(node.value, cst.Call)
            and _method(node.value) in ("execute", "executemany") and node.value.args):
        return []
    sql = _string_value(node.value.args[0].value)
    if sql is None or not sql.lstrip().lower().startswith(_WRITES):
        return []
    return [Site(node, cst.Pass(), ("write-dropped", "state-lost-on-expiry"), node)]


OPERATORS: dict[str, Operator] = {op.id: op for op in (
    Operator("rounding-swap", ("rounding-mode",), "a rounding mode swapped (HALF_UP -> HALF_EVEN, HALF_DOWN, ...)",
             _rounding),
    Operator("normalisation-dropped", ("strip-dropped", "case-fold", "unicode-normalisation"),
             "strip, case folding or Unicode normalisation removed; NFC and NFD swapped", _normalisation),
    Operator("boundary-shift", ("boundary-shift", "off-by-one"), "< and <=, > and >= swapped", _boundary),
    Operator("off-by-one", ("off-by-one",), "len() + 1, a slice or range end moved by one", _off_by_one),
    Operator("row-dropped", ("missing-total", "field-dropped"), "the statement that emits a row or adds an item "
             "removed (a total, a subtotal, a field; a PDF cell, a DOCX paragraph or heading)", _row_dropped),
    Operator("early-return", ("early-return",), "a function returns before its last block", _early_return),
    Operator("loop-cut", ("early-return",), "a loop stops after its first pass", _loop_cut),
    Operator("exception-swallowed", ("swallowed-exception", "validation-skipped"),
             "an error handler that raised or exited now carries on", _swallowed),
    Operator("validation-skipped", ("validation-skipped", "format-check-skipped", "blank-lines"),
             "a check that raises, exits, returns or skips never fires; a comprehension filter dropped", _validation),
    Operator("precision-lost", ("precision",), "a quantize step dropped; a decimal built from a float", _precision),
    Operator("order-lost", ("order-lost",), "sorted() or .sort() removed", _order),
    Operator("duplicates-merged", ("duplicates-merged",), "a list made unique (repeats merged)", _duplicates),
    Operator("encoding-skipped", ("encoding",), "utf-8-sig read as utf-8, a byte-order-mark step removed, "
             "a declared utf-8 read as latin-1", _encoding),
    Operator("status-swapped", ("wrong-status",), "an HTTP status swapped (403 and 401, 404 -> 400, 201 -> 200, ...)",
             _status),
    Operator("write-dropped", ("write-dropped", "state-lost-on-expiry"),
             "a database write (insert, update, delete) never made", _write_dropped),
)}

# bug classes of a domain (the api and gui presets') realised by the sites of general ones: an authorisation check is a
# check that returns early, a page boundary an off-by-one, money rounding a rounding mode or precision
ALIASES: dict[str, tuple[str, ...]] = {
    "auth-check-dropped": ("validation-skipped",),
    "idempotency-ignored": ("validation-skipped",),
    "page-off-by-one": ("off-by-one", "boundary-shift"),
    "money-rounding": ("rounding-mode", "precision"),
    # the gui preset's: a check only the page makes, a form's one-time token, a draft kept across a sign-in
    "server-validation-missing": ("validation-skipped",),
    "duplicate-on-double-submit": ("validation-skipped",),
    "wrong-value-shown": ("off-by-one", "field-dropped"),
}


def operator_classes() -> set[str]:
    """Every bug class some operator realises, directly or through ``ALIASES``."""
    return {c for op in OPERATORS.values() for c in op.classes} | set(ALIASES)


def class_table() -> str:
    """Every bug class id a menu may name, and the operators that realise it, as a Markdown table (docs/authoring.md
    holds it; a test keeps the two the same)."""
    direct: dict[str, list[str]] = {}
    for op in OPERATORS.values():
        for cls in op.classes:
            direct.setdefault(cls, []).append(op.id)
    rows = ["| bug class | operators | through |", "|---|---|---|"]
    for cls in sorted(direct):
        rows.append(f"| `{cls}` | {', '.join(f'`{o}`' for o in direct[cls])} | |")
    for cls in sorted(ALIASES):
        ops = sorted({o for base in ALIASES[cls] for o in direct.get(base, [])})
        rows.append(f"| `{cls}` | {', '.join(f'`{o}`' for o in ops)} | {', '.join(f'`{b}`' for b in ALIASES[cls])} |")
    rows += ["", "| operator | what it does |", "|---|---|"]
    rows += [f"| `{op.id}` | {op.description} |" for op in OPERATORS.values()]
    return "\n".join(rows) + "\n"


def _menu_class(site: Site, classes: list[str]) -> str | None:
    """The class a site's mutant is filed under: the site's own first class the menu names, else the first menu
    class realised through an alias by one of the site's classes."""
    own = next((c for c in site.classes if c in classes), None)
    return own or next((c for c in classes if set(ALIASES.get(c, ())) & set(site.classes)), None)


# --- instantiation ----------------------------------------------------------------------------------------------

class _Collector(cst.CSTVisitor):
    def __init__(self, operators: list[Operator]) -> None:
        self.operators = operators
        self.found: list[tuple[Operator, Site]] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Import | cst.ImportFrom):
            return False  # names in imports are declarations, not behaviour
        for op in self.operators:
            self.found += [(op, s) for s in op.sites(node)]
        return True


Scope = tuple[tuple[str, ...], tuple[str, ...]]  # (include, exclude) patterns of the menu
EVERYWHERE: Scope = ((), ())


def instances(baseline: Path, classes: list[str], files: list[str] | None = None,
              scope: Scope = EVERYWHERE) -> list[Instance]:
    """Every mutant the operators make of the Python files of ``baseline`` (those ``scope`` includes) for the bug
    classes ``classes`` (when a site realises several, its own first one the menu names), in file and position
    order."""
    named = set(classes) | {base for c in classes for base in ALIASES.get(c, ())}
    wanted = [op for op in OPERATORS.values() if set(op.classes) & named]
    out: list[Instance] = []
    for rel in files if files is not None else python_files(baseline, scope):
        out += _of_file(baseline, rel, wanted, classes)
    return out


def mutability(baseline: Path, classes: list[str], scope: Scope = EVERYWHERE) -> dict[str, list[str]]:
    """Bug class -> where the operators can make a mutant of it in ``baseline`` (``file:line``, one per mutant),
    for every class of the menu: code that gives a class no place cannot be shown to be tested for it."""
    found = instances(baseline, classes, scope=scope)
    return {c: [f"{i.file}:{i.start[0]}" for i in found if i.bug_class == c] for c in classes}


def python_files(baseline: Path, scope: Scope = EVERYWHERE) -> list[str]:
    """The target's Python sources that ``scope`` includes and does not exclude: tests, caches and environments
    are never the code under acceptance."""
    include, exclude = scope
    out = []
    for path in sorted(baseline.rglob("*.py")):
        rel = path.relative_to(baseline).as_posix()
        parts = rel.split("/")
        if path.is_symlink() or not path.is_file() or set(parts) & _NOT_CODE or _is_test(parts[-1]):
            continue
        if (include and not any(fnmatch.fnmatchcase(rel, p) for p in include)) or any(
                fnmatch.fnmatchcase(rel, p) for p in exclude):
            continue
        out.append(rel)
    return out


_NOT_CODE = {"tests", "test", "__pycache__", ".venv", "venv", "node_modules", ".git", "site-packages"}


def _is_test(name: str) -> bool:
    return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"


def _of_file(baseline: Path, rel: str, operators: list[Operator], classes: list[str]) -> list[Instance]:
    try:
        module = cst.parse_module((baseline / rel).read_text(encoding="utf-8"))
    except (cst.ParserSyntaxError, UnicodeDecodeError, OSError):
        return []  # not Python we can read: the judge writes mutants for it
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    collector = _Collector(operators)
    wrapper.module.visit(collector)
    seen: dict[str, int] = {}
    out = []
    for op, site in collector.found:
        cls = _menu_class(site, classes)
        if cls is None:
            continue
        out.append(_instance(module, positions, rel, op, site, cls, seen))
    return out


def _instance(module: cst.Module, positions: object, rel: str, op: Operator, site: Site, cls: str,
              seen: dict[str, int]) -> Instance:
    where, reach = positions[site.node], positions[site.reach]  # type: ignore[index]
    mutated = module.deep_replace(site.node, site.replacement)  # type: ignore[type-var]  # a FlattenSentinel too
    assert isinstance(mutated, cst.Module)
    code, changed = module.code, mutated.code
    start, end = _span(code, changed, _offset(code, where.start.line, where.start.column),
                       _offset(code, where.end.line, where.end.column))
    original, replacement = code[start:end], changed[start:len(changed) - (len(code) - end)]
    key = f"{op.id}\0{rel}\0{original}\0{replacement}"
    seen[key] = seen.get(key, 0) + 1  # the same edit at two places: two mutants, told apart by their order
    digest = hashlib.sha256(f"{key}\0{seen[key]}".encode()).hexdigest()[:10]
    return Instance(id=f"{op.id}:{rel}:{digest}", operator=op.id, bug_class=cls, file=rel,
                    start=_position(code, start), end=_position(code, end), original=original,
                    replacement=replacement, mutated=changed, reach=(reach.start.line, reach.end.line))


def _span(before: str, after: str, start: int, end: int) -> tuple[int, int]:
    """The node's span [start, end) of ``before``, widened just enough that the replacement put over it gives
    ``after``: a statement brings along what its node's extent leaves out (the comments above it)."""
    head = min(start, len(os.path.commonprefix([before, after])))  # noqa: RUF071 (characters, not paths)
    tail = min(len(before) - end, len(os.path.commonprefix([before[head:][::-1], after[head:][::-1]])))  # noqa: RUF071
    return head, len(before) - tail


def _offset(text: str, line: int, column: int) -> int:
    """The index in ``text`` of a (line, 0-based column) position."""
    return sum(len(s) + 1 for s in text.split("\n")[:line - 1]) + column


def _position(text: str, offset: int) -> tuple[int, int]:
    """The (line, 1-based column) of an index in ``text``."""
    before = text[:offset]
    return before.count("\n") + 1, len(before) - before.rfind("\n")


def walk(instances_: list[Instance]) -> Iterator[tuple[str, list[Instance]]]:
    """Instances grouped by bug class, in first-seen order."""
    groups: dict[str, list[Instance]] = {}
    for i in instances_:
        groups.setdefault(i.bug_class, []).append(i)
    yield from groups.items()


def concrete(baseline: Path, rel: str, mutant_id: str, bug_class: str, find: str, replace: str) -> Instance | str:
    """A judge's exact edit as an instance, or why it does not apply to this code (any text file)."""
    path = (baseline / rel).resolve()
    if not path.is_relative_to(baseline.resolve()) or not path.is_file() or (baseline / rel).is_symlink():
        return f"file {rel!r} is not a file of the target"
    text = path.read_text(encoding="utf-8", errors="replace")
    occurs = text.count(find)
    if occurs != 1:
        return f"its text occurs {occurs} times in {rel} (must be once): written for other code"
    before = text.split(find)[0]
    start, end = _position(text, len(before)), _position(text, len(before) + len(find))
    return Instance(id=f"judge:{mutant_id}", operator="judge", bug_class=bug_class, file=rel, start=start, end=end,
                    original=find, replacement=replace, mutated=text.replace(find, replace), reach=(start[0], end[0]))
