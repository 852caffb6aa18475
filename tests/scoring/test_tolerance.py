"""Tolerance classes: exact boundaries, no binary floats, and the fast path never outruns the rules."""

from __future__ import annotations

from decimal import Decimal

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tri_agent.scoring._tolerance import (
    CLASSES,
    BadValue,
    canonical_json,
    canonical_set,
    check_expected,
    compare_cell,
    decimal_places,
    is_blank,
)

BOUNDARIES = [
    ("amount", "10.00", "10.01", True), ("amount", "10.00", "9.99", True),
    ("amount", "10.00", "10.0100000001", False), ("amount", "10.00", "9.989", False),
    ("amount", "0.07", "0.08", True),  # 0.08 - 0.07 > 0.01 in binary floats
    ("ratio", "0.5", "0.500001", True), ("ratio", "0.5", "0.4999989", False), ("ratio", "1e-6", "0", True),
    ("count", "3", "3", True), ("count", "3", "+3", True), ("count", "3", "4", False),
    ("status", "ok", "ok", True), ("status", "ok", "OK", False),
    ("text", "a b", "a b", True), ("text", "a b", "a b ", False),
    ("json", '{"a": [1, 2], "b": 1.0}', '{"b": 1, "a": [1, 2.00]}', True),
    ("json", '{"a": [1, 2]}', '{"a": [2, 1]}', False),
    ("set", '["x", "y", "x"]', '["y", "x", "x"]', True), ("set", '["x", "y", "x"]', '["x", "y"]', False),
]


@pytest.mark.parametrize("cls,expected,actual,ok", BOUNDARIES)
def test_boundaries(cls: str, expected: str, actual: str, ok: bool) -> None:
    c = CLASSES[cls]
    assert compare_cell(c, check_expected(c, expected), actual).ok is ok


@pytest.mark.parametrize("cls,raw", [("amount", "1,5"), ("amount", ".5"), ("amount", "NaN"), ("amount", "1e99999"),
                                     ("amount", "١٢.٥"), ("count", "٣"), ("json", "[" * 5000 + "]" * 5000),
                                     ("json", "[1e9999999]"), ("set", "null"),
                                     ("count", "1.0"), ("json", "{'a': 1}"), ("json", '{"a":1,"a":2}'),
                                     ("set", '{"a": 1}'), ("amount", " 1.5")])
def test_unreadable_values_are_bad_values(cls: str, raw: str) -> None:
    with pytest.raises(BadValue):
        check_expected(CLASSES[cls], raw)


def test_blank_is_not_a_value() -> None:
    with pytest.raises(BadValue, match="blank"):
        check_expected(CLASSES["text"], "  ")
    assert compare_cell(CLASSES["amount"], "1.00", " ").reason == "missing_field"
    assert compare_cell(CLASSES["amount"], "1.00", None).reason == "missing_field"


def test_enum_rules() -> None:
    status = CLASSES["status"]
    with pytest.raises(BadValue, match="declared values"):
        check_expected(status, "maybe", frozenset({"ok", "late"}))
    assert compare_cell(status, "ok", "maybe", frozenset({"ok", "late"})).reason == "not_in_enum"


def test_deltas_are_exact_decimals() -> None:
    cell = compare_cell(CLASSES["amount"], "123456789012345678901234567890.10", "123456789012345678901234567890.11")
    assert cell.ok and cell.delta == Decimal("0.01")
    huge = compare_cell(CLASSES["ratio"], "1e500", "1.000000000000000000000000000000001e500")
    assert not huge.ok


def test_json_numbers_compare_as_decimals() -> None:
    assert canonical_json("[1e2, 100, 100.0, -0]") == "[1E+2,1E+2,1E+2,0]"
    assert canonical_set('[{"b": 1, "a": 2}, 3]') == canonical_set('[3, {"a": 2, "b": 1}]')


_decimal_literal = st.from_regex(r"[+-]?[0-9]{1,21}(\.[0-9]{1,20})?", fullmatch=True)


def _variant(draw: st.DrawFn, literal: str) -> str:
    """Another literal near ``literal``: equal in value, one last-digit step away, or unrelated."""
    kind = draw(st.sampled_from(["zeros", "sign", "step", "same", "other"]))
    if kind == "zeros":
        return literal + ("" if "." in literal else ".") + "0" * draw(st.integers(1, 3))
    if kind == "sign" and literal.lstrip("+-").strip("0.") == "":
        return "-" + literal.lstrip("+-")
    if kind == "step":
        return format(Decimal(literal) + Decimal(draw(st.sampled_from(["1e-18", "-1e-18", "0.01", "1e-6"]))), "f")
    return literal if kind != "other" else draw(_decimal_literal)


@st.composite
def _pair(draw: st.DrawFn) -> tuple[str, str]:
    e = draw(_decimal_literal)
    return e, _variant(draw, e)


@given(st.lists(_pair(), min_size=1, max_size=30), st.sampled_from(["amount", "ratio"]))
def test_fast_path_only_claims_what_python_confirms(pairs: list[tuple[str, str]], cls: str) -> None:
    c = CLASSES[cls]
    assert c.fast is not None
    frame = pl.DataFrame({"e": [p[0] for p in pairs], "a": [p[1] for p in pairs]})
    certain = frame.select(c.fast.equal(pl.col("e"), pl.col("a")).fill_null(False))["e"].to_list()
    valid = frame.select(c.fast.valid(pl.col("e")).fill_null(False))["e"].to_list()
    for (e, a), sure, ok in zip(pairs, certain, valid, strict=True):
        if sure:
            cell = compare_cell(c, check_expected(c, e), a)
            assert cell.ok and not cell.delta, (e, a)
        if ok:
            check_expected(c, e)  # the fast grammar is a subset of the exact one


@given(st.lists(st.from_regex(r"[+-]?[0-9]{1,20}", fullmatch=True).flatmap(
    lambda e: st.tuples(st.just(e), st.sampled_from([e, "+" + e.lstrip("+-"), e + "0", "0" + e.lstrip("+-")]))),
    min_size=1, max_size=30))
def test_fast_count_only_claims_what_python_confirms(pairs: list[tuple[str, str]]) -> None:
    c = CLASSES["count"]
    assert c.fast is not None
    frame = pl.DataFrame({"e": [p[0] for p in pairs], "a": [p[1] for p in pairs]})
    certain = frame.select(c.fast.equal(pl.col("e"), pl.col("a")).fill_null(False))["e"].to_list()
    for (e, a), sure in zip(pairs, certain, strict=True):
        if sure:
            assert compare_cell(c, e, a).ok


def test_fast_path_claims_most_equal_pairs() -> None:
    """The property above must not hold vacuously: equal literals are mostly proven in polars."""
    c = CLASSES["amount"]
    assert c.fast is not None
    frame = pl.DataFrame({"e": ["1.50", "-0.00", "12"], "a": ["1.5", "0", "12.000"]})
    assert frame.select(c.fast.equal(pl.col("e"), pl.col("a")))["e"].to_list() == [True, True, True]


def test_json_null_is_blank_in_both_formats() -> None:
    assert compare_cell(CLASSES["json"], '{"a": 1}', "null").reason == "missing_field"


# --- documented limits, tried at their edge -------------------------------------------------------------------

@pytest.mark.parametrize("raw", ["", " ", "\t\n\r\f\v", None])
def test_ascii_whitespace_alone_is_blank(raw: str | None) -> None:
    assert is_blank(raw) and compare_cell(CLASSES["text"], "a", raw).reason == "missing_field"


@pytest.mark.parametrize("raw", ["\u00a0", "\u2003", "\u3000", "\u200b", "\u1680"])
def test_unicode_whitespace_is_a_value_not_blank(raw: str) -> None:
    """Only ASCII whitespace is blank: a no-break or ideographic space is text someone wrote."""
    assert not is_blank(raw)
    assert check_expected(CLASSES["text"], raw) == raw
    assert compare_cell(CLASSES["text"], raw, raw).ok and compare_cell(CLASSES["text"], raw, " ").reason == \
        "missing_field"


def test_null_is_blank_only_for_json_and_set() -> None:
    assert is_blank(" null\n", "json") and is_blank("null", "set")
    assert not is_blank("null", "text") and not is_blank("null") and not is_blank("nullx", "json")


@pytest.mark.parametrize(("cls", "ok", "bad"), [
    ("amount", "1" * 200, "1" * 201), ("count", "9" * 200, "9" * 201),
    ("amount", "1e1000", "1e1001"), ("amount", "1e-1000", "1e-1001"), ("ratio", "-9.5e1000", "-9.5e1001"),
])
def test_literal_length_and_exponent_limits_hold_at_their_edge(cls: str, ok: str, bad: str) -> None:
    assert check_expected(CLASSES[cls], ok) == ok
    with pytest.raises(BadValue) as err:
        check_expected(CLASSES[cls], bad)
    if "e" in bad:
        assert str(err.value) == f"number {bad!r} is outside the supported range (exponent over 1000)"
    else:
        kind = "an integer literal like 42" if cls == "count" else "a decimal number literal like 12.30"
        assert str(err.value) == f"needs {kind}, found {bad!r}"


def test_numbers_at_the_exponent_limits_still_subtract_exactly() -> None:
    cell = compare_cell(CLASSES["amount"], "1e1000", "1e1000")
    assert cell.ok and cell.delta == 0
    tiny = compare_cell(CLASSES["ratio"], "1e-1000", "-1e-1000")
    assert tiny.ok and tiny.delta == Decimal("-2e-1000")


@pytest.mark.parametrize("cls", ["json", "set"])
@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_no_json_in_json_and_set_cells(cls: str, constant: str) -> None:
    with pytest.raises(BadValue) as err:
        check_expected(CLASSES[cls], f"[{constant}]")
    assert str(err.value) == f"needs JSON text, found {constant}, which JSON has no literal for"


def test_json_errors_name_the_value_clipped() -> None:
    with pytest.raises(BadValue) as err:
        canonical_set('{"k": "' + "v" * 80 + '"}')
    assert str(err.value) == "needs a JSON list, found " + repr('{"k": "' + "v" * 50) [:-1] + "...'"
    for read in (canonical_set, canonical_json):
        with pytest.raises(BadValue) as err:
            read("[1e9999999]")
        assert str(err.value) == "JSON '[1e9999999]' is nested too deeply or holds a number out of range"


def test_places_count_what_is_written() -> None:
    assert [decimal_places(t) for t in ("80.02", "80.020", "80", "8E+1", " 1.5 ", "-0.001")] == [2, 3, 0, 0, 1, 3]


def test_each_class_says_its_rule_and_tolerance() -> None:
    rules = {name: (c.rule, c.tolerance) for name, c in CLASSES.items()}
    assert rules["amount"] == ("exact decimal, |actual - expected| <= 0.01", Decimal("0.01"))
    assert rules["ratio"] == ("exact decimal, |actual - expected| <= 1e-6", Decimal("1e-6"))
    assert {n: t for n, (_, t) in rules.items() if t is None} == dict.fromkeys(
        ["count", "status", "text", "json", "set"])


def test_json_null_is_blank_only_with_ascii_whitespace_around() -> None:
    assert is_blank(" null\t", "json") and is_blank("null", "set")
    assert not is_blank("\u2003null", "json")  # an em space is not blank: the cell is malformed JSON
    assert not is_blank("null", "text")


def test_a_json_null_answer_is_blank_for_json_and_set() -> None:
    for cls in ("json", "set"):
        with pytest.raises(BadValue) as err:
            check_expected(CLASSES[cls], "null")
        assert str(err.value) == "the answer key holds a blank value; blank is not a value"


@pytest.mark.parametrize(("raw", "canonical"), [
    ('{"b": 1, "a": "\u00e9"}', '{"a":"\u00e9","b":1}'),
    ('{"\u00e9": [1.50, 2]}', '{"\u00e9":[1.5,2]}'),
    ('"x"', '"x"'),
    ("1.00000000000000000000000000000000001", "1.00000000000000000000000000000000001"),
    ("[0.0, -0]", "[0,0]"),
])
def test_canonical_json_is_exact_text(raw: str, canonical: str) -> None:
    assert canonical_json(raw) == canonical


def test_canonical_set_sorts_canonical_elements() -> None:
    assert canonical_set('[2, "\u00e9", 1.0, {"b": 1, "a": 2}]') == '["\u00e9",1,2,{"a":2,"b":1}]'
    assert canonical_set("[]") == "[]"


def test_clip_keeps_sixty_characters_and_cuts_sixty_one() -> None:
    for n, clipped in ((60, False), (61, True)):
        raw = "x" * n
        with pytest.raises(BadValue) as err:
            canonical_set(raw)
        shown = repr(raw[:57] + "...") if clipped else repr(raw)
        assert str(err.value) == f"needs JSON text, found {shown} (JSONDecodeError)"


def test_a_failed_cell_is_false_not_just_falsy() -> None:
    assert compare_cell(CLASSES["text"], "a", " ") == (False, "missing_field", None)
    enum = frozenset({"ok", "late"})
    assert compare_cell(CLASSES["status"], "ok", "gone", enum) == (False, "not_in_enum", None)
