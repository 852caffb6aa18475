"""Tolerance classes: the closed set of ways a sealed value and an actual value can agree.

One row of ``CLASSES`` per class. Each row says how to read a cell exactly (never through a binary
float), how two cells compare, and, for speed, a polars expression that recognises the cells that are
*certainly* equal and valid; every other cell is decided by the Python rule, which is the reference.
Blank (empty or ASCII-whitespace-only text, or null) is never a value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from decimal import Context, Decimal, Inexact, InvalidOperation
from functools import partial
from typing import Any, Literal, NamedTuple

import polars as pl

from ._tables import unique_keys_object

ClassName = Literal["amount", "ratio", "count", "status", "text", "json", "set"]
Reason = Literal["out_of_tolerance", "not_equal", "missing_field", "not_in_enum"]

BLANK_CHARS = " \t\n\r\f\v"
_NUMBER = re.compile(r"[+-]?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?")  # ASCII digits only: "١٢" is no number
_INTEGER = re.compile(r"[+-]?[0-9]+")
_FAST_DECIMAL = r"^[+-]?[0-9]{1,19}(\.[0-9]{1,18})?$"
_FAST_INTEGER = r"^[+-]?[0-9]{1,18}$"
_BLANK_RE = r"^[ \t\n\r\f\v]*$"
_MAX_LITERAL = 200
_MAX_EXPONENT = 1000
# wide enough that subtracting any two accepted literals is exact; Inexact is trapped to prove it
EXACT = Context(prec=2 * _MAX_EXPONENT + 2 * _MAX_LITERAL, Emax=10**6, Emin=-(10**6), traps=[Inexact])


class BadValue(ValueError):
    """A cell that cannot be read as its class: malformed input, never a scored failure."""


class Cell(NamedTuple):
    """How one actual cell compares with its sealed value."""

    ok: bool
    reason: Reason | None = None
    delta: Decimal | None = None  # actual - expected, for the decimal classes


def is_blank(raw: str | None, cls: ClassName | None = None) -> bool:
    """Blank is no value: null, empty or whitespace; for json and set also the JSON literal null, so that
    a CSV cell ``null`` and a JSONL ``null`` mean the same."""
    if raw is None or not raw.strip(BLANK_CHARS):
        return True
    return cls in ("json", "set") and raw.strip(BLANK_CHARS) == "null"


def parse_decimal(raw: str) -> Decimal:
    if len(raw) > _MAX_LITERAL or not _NUMBER.fullmatch(raw):
        raise BadValue(f"needs a decimal number literal like 12.30, found {raw!r}")
    value = Decimal(raw)
    if abs(value.adjusted()) > _MAX_EXPONENT:
        raise BadValue(f"number {raw!r} is outside the supported range (exponent over {_MAX_EXPONENT})")
    return value


def parse_count(raw: str) -> int:
    if len(raw) > _MAX_LITERAL or not _INTEGER.fullmatch(raw):
        raise BadValue(f"needs an integer literal like 42, found {raw!r}")
    return int(raw)


def canonical_json(raw: str) -> str:
    """Semantic JSON: object key order ignored, list order kept, numbers compared as decimals."""
    value = _load_json(raw)
    try:
        return _dump(value)
    except (RecursionError, ArithmeticError):
        raise BadValue(f"JSON {_clip(raw)} is nested too deeply or holds a number out of range") from None


def canonical_set(raw: str) -> str:
    """Unordered list equality with duplicates significant: sort the canonical elements."""
    value = _load_json(raw)
    if not isinstance(value, list):
        raise BadValue(f"needs a JSON list, found {_clip(raw)}")
    try:
        return "[" + ",".join(sorted(_dump(v) for v in value)) + "]"
    except (RecursionError, ArithmeticError):
        raise BadValue(f"JSON {_clip(raw)} is nested too deeply or holds a number out of range") from None


def _load_json(raw: str) -> Any:
    try:
        return json.loads(raw, parse_float=Decimal, parse_int=Decimal, parse_constant=_no_constant,
                          object_pairs_hook=unique_keys_object)
    except BadValue:
        raise
    except (ValueError, RecursionError, ArithmeticError) as exc:
        raise BadValue(f"needs JSON text, found {_clip(raw)} ({type(exc).__name__})") from None


def _no_constant(name: str) -> Any:
    raise BadValue(f"needs JSON text, found {name}, which JSON has no literal for")


def _dump(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(k, ensure_ascii=False)}:{_dump(value[k])}" for k in sorted(value)) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_dump(v) for v in value) + "]"
    if isinstance(value, Decimal):
        return "0" if value.is_zero() else str(value.normalize(EXACT))
    return json.dumps(value, ensure_ascii=False)


def _clip(raw: str) -> str:
    return repr(raw if len(raw) <= 60 else raw[:57] + "...")


@dataclass(frozen=True)
class Bound:
    """How far an actual decimal may lie from its sealed value: an absolute bound, a bound relative to the
    sealed value (with both, the wider one holds), or agreement to ``digits`` significant digits.

    The sealed value is the reference: relative and digit bounds scale with it, not with the actual value,
    so a bound never depends on what the target wrote. At a sealed zero both give a zero bound (zero has no
    magnitude and no significant digit): only an exact zero passes, unless an absolute bound is declared too.
    """

    absolute: Decimal = Decimal(0)
    relative: Decimal = Decimal(0)
    digits: int | None = None

    def allowed(self, expected: Decimal) -> Decimal:
        """The largest |actual - expected| that passes, computed exactly."""
        if self.digits is not None:
            return half_unit(expected, self.digits)
        return max(self.absolute, EXACT.multiply(self.relative, EXACT.abs(expected)))

    def __str__(self) -> str:
        if self.digits is not None:
            return f"{self.digits} significant digits"
        parts = [str(self.absolute)] if self.absolute else []
        parts += [f"relative {self.relative}"] if self.relative else []
        return " or ".join(parts)


def half_unit(expected: Decimal, digits: int) -> Decimal:
    """Half a unit in the ``digits``-th significant place of ``expected``: 0.000123 to 3 digits is 5E-7, so
    0.0001234 passes and 0.0001236 does not. Zero has no significant digit: its bound is zero."""
    if expected.is_zero():
        return Decimal(0)
    return Decimal((0, (5,), expected.adjusted() - digits))  # built from its digits: exact, whatever the context


def _compare_decimal(bound: Bound, expected: str, actual: str) -> Cell:
    # a module-level function bound with functools.partial (not a closure made at import), so that what it
    # does is also what the project's own mutation run can reach
    e, a = parse_decimal(expected), parse_decimal(actual)
    try:
        delta = EXACT.subtract(a, e)
    except (Inexact, InvalidOperation):
        raise BadValue(f"cannot subtract {expected!r} from {actual!r} exactly") from None
    ok = EXACT.abs(delta) <= bound.allowed(e)
    return Cell(ok, None if ok else "out_of_tolerance", delta)


def _compare_by(read: Callable[[str], object], expected: str, actual: str) -> Cell:
    ok = read(expected) == read(actual)
    return Cell(ok, None if ok else "not_equal")


def _valid_decimal(x: pl.Expr) -> pl.Expr:
    return x.str.contains(_FAST_DECIMAL)


def _equal_decimal(e: pl.Expr, a: pl.Expr) -> pl.Expr:
    dec = pl.Decimal(38, 18)  # exact for the fast grammar: at most 19 + 18 digits
    return _valid_decimal(e) & _valid_decimal(a) & (e.cast(dec, strict=False) == a.cast(dec, strict=False))


def _valid_count(x: pl.Expr) -> pl.Expr:
    return x.str.contains(_FAST_INTEGER)


def _equal_count(e: pl.Expr, a: pl.Expr) -> pl.Expr:
    return _valid_count(e) & _valid_count(a) & (e.cast(pl.Int64, strict=False) == a.cast(pl.Int64, strict=False))


def not_blank(x: pl.Expr) -> pl.Expr:
    return x.is_not_null() & ~x.str.contains(_BLANK_RE)


def _equal_text(e: pl.Expr, a: pl.Expr) -> pl.Expr:
    return (e == a) & not_blank(e)


@dataclass(frozen=True)
class FastPath:
    """Polars tests that prove a cell passes with a zero difference; anything unproven goes to Python.

    ``valid`` recognises a literal of the fast grammar (a subset of what Python accepts), ``equal``
    proves two cells equal in value (``1.5`` and ``1.50`` included).
    """

    valid: Callable[[pl.Expr], pl.Expr]
    equal: Callable[[pl.Expr, pl.Expr], pl.Expr]


@dataclass(frozen=True)
class ToleranceClass:
    """One closed-set class: its rule in words, its exact comparison and its fast certain-pass test."""

    name: ClassName
    rule: str
    compare: Callable[[str, str], Cell]
    fast: FastPath | None
    tolerance: Decimal | None = None  # the decimal classes' default absolute bound
    validate: Callable[[str], object] = str
    bound: Bound | None = None  # what decimal cells are judged by: the default, or a field's own (``with_bound``)


_DECIMAL_FAST = FastPath(_valid_decimal, _equal_decimal)
_CENT, _MICRO = Bound(absolute=Decimal("0.01")), Bound(absolute=Decimal("1e-6"))
_TEXT_FAST = FastPath(not_blank, _equal_text)
CLASSES: dict[str, ToleranceClass] = {
    c.name: c
    for c in (
        ToleranceClass("amount", "exact decimal, |actual - expected| <= 0.01",
                       partial(_compare_decimal, _CENT), _DECIMAL_FAST, _CENT.absolute, parse_decimal, _CENT),
        ToleranceClass("ratio", "exact decimal, |actual - expected| <= 1e-6",
                       partial(_compare_decimal, _MICRO), _DECIMAL_FAST, _MICRO.absolute, parse_decimal, _MICRO),
        ToleranceClass("count", "integer equality", partial(_compare_by, parse_count),
                       FastPath(_valid_count, _equal_count), None, parse_count),
        ToleranceClass("status", "exact equality against an enum", partial(_compare_by, str), _TEXT_FAST),
        ToleranceClass("text", "exact string equality", partial(_compare_by, str), _TEXT_FAST),
        ToleranceClass("json", "semantic JSON equality (key order ignored, list order kept)",
                       partial(_compare_by, canonical_json), None, None, canonical_json),
        ToleranceClass("set", "unordered list equality, duplicates significant",
                       partial(_compare_by, canonical_set), None, None, canonical_set),
    )
}


def with_bound(cls: ToleranceClass, bound: Bound) -> ToleranceClass:
    """A decimal class judged by a field's own bound instead of its default (the fast path is unchanged: it only
    ever proves a zero difference, which every bound admits)."""
    return replace(cls, rule=f"exact decimal, within {bound}", compare=partial(_compare_decimal, bound), bound=bound)


def outside(bound: Bound, value: str) -> str:
    """A decimal literal beyond ``bound`` from ``value`` (what a corrupted key holds, whatever the field allows)."""
    v = parse_decimal(value)
    return format(EXACT.add(v, EXACT.add(bound.allowed(v), 1)), "f")


def decimal_places(text: str) -> int:
    """Places after the point as written: 80.02 has 2, 80.020 has 3, 80 and 8E+1 have 0."""
    exponent = Decimal(text.strip()).as_tuple().exponent
    return -exponent if isinstance(exponent, int) and exponent < 0 else 0


def check_expected(cls: ToleranceClass, expected: str | None, enum: frozenset[str] | None = None) -> str:
    """The sealed value, or BadValue: the answer key must hold a readable, non-blank value."""
    if expected is None or is_blank(expected, cls.name):
        raise BadValue("the answer key holds a blank value; blank is not a value")
    if enum is not None and expected not in enum:
        raise BadValue(f"answer {expected!r} is not in the declared values {sorted(enum)}")
    cls.validate(expected)
    return expected


def compare_cell(cls: ToleranceClass, expected: str, actual: str | None,
                 enum: frozenset[str] | None = None) -> Cell:
    """Judge one actual cell against a sealed value already passed by ``check_expected``.

    An unreadable actual value raises BadValue (malformed input); a blank one is a missing field.
    """
    if actual is None or is_blank(actual, cls.name):
        return Cell(False, "missing_field")
    if enum is not None and actual not in enum:
        return Cell(False, "not_in_enum")
    return cls.compare(expected, actual)
