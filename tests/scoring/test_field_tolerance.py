"""A field's own tolerance in the caliber: absolute, relative, significant digits; validated, sealed, honoured."""

from __future__ import annotations

import hashlib
from decimal import Decimal
from pathlib import Path

import pytest
from conftest import write_jsonl

from tri_agent import MalformedInput, ScoreInputs, load_caliber, score
from tri_agent._errors import ExitCode
from tri_agent.exam._build import _corrupt, _write_caliber
from tri_agent.scoring._caliber import Caliber, FieldSpec, Tolerance
from tri_agent.scoring._report import ScoreReport
from tri_agent.scoring._tolerance import (
    CLASSES,
    Bound,
    check_expected,
    compare_cell,
    half_unit,
    outside,
    with_bound,
)


def _spec(tolerance: dict[str, object], cls: str = "ratio") -> FieldSpec:
    return FieldSpec.model_validate({"class": cls, "tolerance": tolerance})


def _ok(spec: FieldSpec, expected: str, actual: str) -> bool:
    rule = spec.rule()
    return compare_cell(rule, check_expected(rule, expected), actual).ok


# --- absolute ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("actual", "ok"), [
    ("1.000", True), ("1.005", True), ("0.995", True),               # exactly at the bound passes
    ("1.0050000000000000000000000001", False),                      # one digit beyond, far past a float's reach
    ("0.9949999999999999999999999999", False), ("1.01", False),
])
def test_absolute_bound_at_its_edge(actual: str, ok: bool) -> None:
    assert _ok(_spec({"absolute": "0.005"}, "amount"), "1.000", actual) is ok


def test_an_absolute_bound_replaces_the_class_default_both_ways() -> None:
    assert not _ok(_spec({"absolute": "0.001"}, "amount"), "1.00", "1.005")  # the default 0.01 would pass it
    assert _ok(_spec({"absolute": "0.5"}, "amount"), "1.00", "1.5")  # and would fail this
    assert _ok(FieldSpec.model_validate({"class": "amount"}), "1.00", "1.01")  # no tolerance: the default holds
    assert not _ok(FieldSpec.model_validate({"class": "amount"}), "1.00", "1.0100001")


# --- relative ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("expected", "actual", "ok"), [
    ("200", "200.0000002", True), ("200", "199.9999998", True),     # 1e-9 of 200 is 2e-7: at the bound
    ("200", "200.00000020000000000001", False), ("200", "199.99999979999999999999", False),
    ("-200", "-200.0000002", True), ("-200", "-200.00000020000000000001", False),  # scales with |expected|
    ("2E+6", "2000000.002", True), ("2E+6", "2000000.0020001", False),
])
def test_relative_bound_scales_with_the_sealed_value(expected: str, actual: str, ok: bool) -> None:
    assert _ok(_spec({"relative": "1e-9"}), expected, actual) is ok


def test_relative_bound_is_taken_from_the_sealed_value_not_the_actual() -> None:
    spec = _spec({"relative": "0.1"})
    assert _ok(spec, "110", "99")  # |99 - 110| = 11 = 0.1 * 110: at the bound
    assert not _ok(spec, "100", "111")  # 11 > 0.1 * 100, though 11 < 0.1 * 111: the actual value sets nothing


def test_relative_bound_near_zero_only_zero_passes() -> None:
    spec = _spec({"relative": "1e-9"})
    assert _ok(spec, "0", "0") and _ok(spec, "0.000", "-0")
    assert not _ok(spec, "0", "1E-300")  # no magnitude to scale: the bound at a sealed zero is zero
    assert not _ok(spec, "1E-20", "1.00000001E-20") and _ok(spec, "1E-20", "1.000000001E-20")


def test_absolute_and_relative_together_the_wider_bound_holds() -> None:
    spec = _spec({"relative": "1e-6", "absolute": "1e-12"})
    assert _ok(spec, "0", "1e-12") and not _ok(spec, "0", "1.0000001e-12")  # near zero: the absolute floor
    assert _ok(spec, "1000", "1000.001") and not _ok(spec, "1000", "1000.0010001")  # far from it: relative


# --- significant digits ------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("expected", "digits", "actual", "ok"), [
    ("0.000123", 3, "0.0001234", True),     # half a unit in the 3rd digit is 5E-7; 4E-7 apart
    ("0.000123", 3, "0.0001235", True),     # exactly at the bound
    ("0.000123", 3, "0.00012350000001", False),  # one digit beyond
    ("0.0001234", 3, "0.000123", True),     # and the other way round
    ("0.0001234", 4, "0.000123", False),    # four digits: 0.0001234 vs 0.0001230 differ
    ("0.0001234", 4, "0.00012345", True),   # at the bound of 5E-8
    ("123456", 2, "125000", True), ("123456", 2, "128456", True), ("123456", 2, "128456.1", False),
    ("-9.99", 3, "-9.995", True), ("-9.99", 3, "-9.9951", False),
    ("0", 6, "0.0", True), ("0", 6, "1E-100", False),  # zero has no significant digit: only zero passes
])
def test_significant_digits_at_their_edge(expected: str, digits: int, actual: str, ok: bool) -> None:
    assert _ok(_spec({"digits": digits}), expected, actual) is ok


def test_half_unit_is_independent_of_how_the_sealed_value_is_written() -> None:
    assert half_unit(Decimal("0.000123"), 3) == half_unit(Decimal("0.0001230"), 3) == Decimal("5E-7")
    assert half_unit(Decimal("123.4"), 1) == Decimal("50")
    assert half_unit(Decimal("0.000"), 3) == 0


# --- validation: one line naming the field and the value ---------------------------------------------------------

def _load(tmp_path: Path, tolerance: str, cls: str = "ratio") -> Caliber:
    path = tmp_path / "caliber.yaml"
    path.write_text(f"schema_version: 1\nkey: [case]\nfields:\n  n: count\n  mean: {{class: {cls}, tolerance: "
                    f"{tolerance}}}\n")
    return load_caliber(path)[0]


@pytest.mark.parametrize(("tolerance", "message"), [
    ('{relative: "-1e-9"}', r"fields\.mean\.tolerance\.relative: .*must be greater than zero, found '-1e-9'"),
    ('{absolute: "0"}', r"fields\.mean\.tolerance\.absolute: .*must be greater than zero, found '0'"),
    ('{absolute: "0.000"}', r"must be greater than zero, found '0.000'"),
    ('{absolute: "NaN"}', r"fields\.mean\.tolerance\.absolute: .*needs a decimal number literal.*'NaN'"),
    ('{absolute: "Infinity"}', r"needs a decimal number literal.*'Infinity'"),
    ('{absolute: "a cent"}', r"needs a decimal number literal.*'a cent'"),
    ("{absolute: 0.005}", r"fields\.mean\.tolerance\.absolute: .*quoted decimal string like \"0.005\", not 0.005"),
    ("{absolute: 1}", r"quoted decimal string.*not 1"),
    ('{relative: "1"}', r"relative '1' must be below 1"),
    ('{relative: "2.5"}', r"relative '2.5' must be below 1"),
    ("{digits: 0}", r"fields\.mean\.tolerance\.digits: .*greater than or equal to 1"),
    ("{digits: 51}", r"less than or equal to 50"),
    ('{digits: "6"}', r"fields\.mean\.tolerance\.digits: .*valid integer"),
    ("{digits: true}", r"fields\.mean\.tolerance\.digits: .*valid integer"),
    ('{digits: 6, absolute: "0.1"}', r"'digits' cannot be combined with 'absolute' or 'relative'"),
    ("{}", r"declare 'absolute', 'relative' or 'digits'"),
    ('{abs: "0.1"}', r"fields\.mean\.tolerance\.abs: unknown key 'abs'"),
])
def test_nonsense_tolerance_is_one_clear_line(tmp_path: Path, tolerance: str, message: str) -> None:
    with pytest.raises(MalformedInput, match=message) as err:
        _load(tmp_path, tolerance)
    assert err.value.exit_code == ExitCode.MALFORMED
    assert err.value.where == f"{tmp_path / 'caliber.yaml'}:5"
    assert "\n" not in err.value.line()


@pytest.mark.parametrize("cls", ["count", "status", "text", "json", "set"])
def test_tolerance_is_refused_outside_the_decimal_classes(tmp_path: Path, cls: str) -> None:
    with pytest.raises(MalformedInput, match=rf"'tolerance' is only meaningful for classes amount and ratio, "
                                             rf"not {cls}"):
        _load(tmp_path, '{absolute: "1"}', cls if cls != "status" else "status, values: [a]")


def test_valid_shapes_load_as_written(tmp_path: Path) -> None:
    spec = _load(tmp_path, '{relative: "1e-9", absolute: "1E-12"}').fields["mean"]
    assert spec.tolerance == Tolerance(relative="1e-9", absolute="1E-12")
    assert spec.tolerance.bound() == Bound(absolute=Decimal("1E-12"), relative=Decimal("1e-9"))
    assert _load(tmp_path, "{digits: 6}").fields["mean"].tolerance == Tolerance(digits=6)


# --- sealed with the caliber -------------------------------------------------------------------------------------

def _built(tmp_path: Path, tolerance: str, name: str) -> tuple[Caliber, str, bytes]:
    caliber = _load(tmp_path, tolerance)
    out = tmp_path / f"{name}.yaml"
    _write_caliber(caliber, out)  # what `exam build` writes and hashes into build.json
    again, sha = load_caliber(out)
    assert again == caliber  # the tolerance survives the build's rewrite unchanged
    return again, sha, out.read_bytes()


def test_a_changed_tolerance_changes_the_sealed_digest(tmp_path: Path) -> None:
    _, first, text = _built(tmp_path, '{relative: "1e-9"}', "a")
    _, same, _ = _built(tmp_path, '{relative: "1e-9"}', "b")
    _, other, _ = _built(tmp_path, '{relative: "1e-8"}', "c")
    _, digits, _ = _built(tmp_path, "{digits: 9}", "d")
    assert first == same == hashlib.sha256(text).hexdigest()
    assert len({first, other, digits}) == 3
    assert b"tolerance:\n      relative: 1e-9" in text


def test_a_caliber_without_tolerances_is_built_byte_for_byte_as_before(tmp_path: Path) -> None:
    path = tmp_path / "plain.yaml"
    path.write_text("schema_version: 1\nkey: [case]\nfields:\n  mean: ratio\n")
    _write_caliber(load_caliber(path)[0], tmp_path / "out.yaml")
    assert b"tolerance" not in (tmp_path / "out.yaml").read_bytes()


@pytest.mark.parametrize("tolerance", ['{absolute: "50"}', '{relative: "0.9"}', "{digits: 1}"])
def test_the_builds_corrupted_key_leaves_even_a_wide_tolerance(tmp_path: Path, tolerance: str) -> None:
    caliber = _load(tmp_path, tolerance)
    answers = write_jsonl(tmp_path / "answers.jsonl", [{"case": "c-1", "mean": "97.5", "n": "1"}])
    bad = _corrupt(answers, caliber.model_copy(update={"fields": {"mean": caliber.fields["mean"]}}),
                   tmp_path / "bad.jsonl")
    changed = bad.read_text().split('"mean": "')[1].split('"')[0]
    assert not _ok(caliber.fields["mean"], "97.5", changed)


@pytest.mark.parametrize("value", ["0", "97.5", "-3E+5", "0.000123"])
@pytest.mark.parametrize("bound", [Bound(absolute=Decimal("0.01")), Bound(relative=Decimal("0.5")), Bound(digits=1)])
def test_outside_is_always_beyond_the_bound(value: str, bound: Bound) -> None:
    moved = outside(bound, value)
    cell = compare_cell(with_bound(CLASSES["ratio"], bound), value, moved)
    assert (cell.ok, cell.reason) == (False, "out_of_tolerance")
    assert abs(cell.delta or 0) == bound.allowed(Decimal(value)) + 1


# --- honoured by scoring: channel 1, the drift audit and relations -----------------------------------------------

CAL = """schema_version: 1
key: [case, group]
fields:
  mean: {class: ratio, tolerance: {relative: "1e-9"}}
  sd: {class: ratio, tolerance: {digits: 3}}
  total: {class: amount, tolerance: {absolute: "0.5"}}
relations:
  - {name: totals, kind: sum_of_parts, field: total, by: [case],
     parts: {where_not: {group: ALL}}, total: {where: {group: ALL}}}
drift: {min_cases: 2, direction_share: 0.9, gate: true}
"""
ANSWERS = [
    {"case": "c-1", "group": "a", "mean": "2.5", "sd": "0.000123", "total": "1.0"},
    {"case": "c-1", "group": "b", "mean": "1000", "sd": "7.77", "total": "2.0"},
    {"case": "c-1", "group": "ALL", "mean": "3", "sd": "1", "total": "3.0"},
]


def _score(tmp_path: Path, actual: list[dict[str, str]]) -> ScoreReport:
    (tmp_path / "c.yaml").write_text(CAL)
    write_jsonl(tmp_path / "a.jsonl", ANSWERS)
    write_jsonl(tmp_path / "x.jsonl", actual)
    return score(ScoreInputs(tmp_path / "c.yaml", tmp_path / "a.jsonl", tmp_path / "x.jsonl"))


def _with(**cells: str) -> list[dict[str, str]]:
    rows = [dict(r) for r in ANSWERS]
    for name, value in cells.items():
        group, field = name.split("_")
        next(r for r in rows if r["group"] == group)[field] = value
    return rows


def test_scoring_honours_each_fields_own_bound(tmp_path: Path) -> None:
    inside = _score(tmp_path, _with(a_mean="2.5000000025", b_sd="7.774", ALL_total="3.5"))
    assert inside.verdict == "pass" and inside.answers.fields["mean"].within_tolerance_nonzero == 1
    outside_ = _score(tmp_path, _with(a_mean="2.5000000026", b_sd="7.7751", ALL_total="3.51"))
    assert outside_.verdict == "fail"
    assert sorted((f.key["group"], f.field, f.reason) for f in outside_.answers.failures) == [
        ("ALL", "total", "out_of_tolerance"), ("a", "mean", "out_of_tolerance"), ("b", "sd", "out_of_tolerance")]


def test_the_drift_audit_names_the_fields_own_bound(tmp_path: Path) -> None:
    report = _score(tmp_path, _with(a_total="1.4", b_total="2.4", ALL_total="3.4"))
    audits = {d.field: d for d in report.answers.drift}
    assert (audits["mean"].tolerance, audits["sd"].tolerance, audits["total"].tolerance) == (
        "relative 1E-9", "3 significant digits", "0.5")
    assert audits["total"].systematic and audits["total"].positive == 3
    assert report.verdict == "fail" and any(b.startswith("drift: total") for b in report.blockers)
    both = FieldSpec.model_validate({"class": "ratio", "tolerance": {"absolute": "0.001", "relative": "1e-9"}})
    assert str(both.rule().bound) == "0.001 or relative 1E-9"
    assert both.rule().rule == "exact decimal, within 0.001 or relative 1E-9"


def test_sum_of_parts_judges_the_total_within_the_fields_own_bound(tmp_path: Path) -> None:
    # parts 1.0 + 2.0 = 3.0; the total row may say 3.4 under absolute 0.5 (the amount default 0.01 would fail it)
    within = _score(tmp_path, [dict(r) for r in ANSWERS[:2]] + [dict(ANSWERS[2], total="3.4")])
    assert within.relations is not None and within.relations.verdict == "pass"
    beyond = _score(tmp_path, [dict(r) for r in ANSWERS[:2]] + [dict(ANSWERS[2], total="3.6")])
    assert beyond.relations is not None and beyond.relations.relations[0].failed == 1


def test_outside_writes_plain_decimal_notation_as_an_oracle_would() -> None:
    # -1.00000001 + (1E-9 + 1) is -9E-9, which str() would write in scientific notation
    assert outside(Bound(absolute=Decimal("1E-9")), "-1.00000001") == "-0.000000009"


@pytest.mark.parametrize(("tolerance", "message"), [
    ('{relative: "-1e-9"}', "fields.mean.tolerance.relative: Value error, must be greater than zero, found '-1e-9' "
                            "(value '-1e-9')"),
    ("{absolute: 0.005}", 'fields.mean.tolerance.absolute: Value error, write the bound as a quoted decimal string '
                          'like "0.005", not 0.005 (value 0.005)'),
    ('{relative: "1"}', "fields.mean.tolerance: Value error, relative '1' must be below 1 (1 passes any value of the "
                        "same sign)"),
    ('{digits: 6, relative: "0.1"}', "fields.mean.tolerance: Value error, 'digits' cannot be combined with "
                                     "'absolute' or 'relative'"),
    ("{}", "fields.mean.tolerance: Value error, declare 'absolute', 'relative' or 'digits'"),
])
def test_the_whole_line_names_the_field_the_value_and_the_fix(tmp_path: Path, tolerance: str, message: str) -> None:
    with pytest.raises(MalformedInput) as err:
        _load(tmp_path, tolerance)
    assert err.value.message == f"{tmp_path / 'caliber.yaml'}:5: {message}"


def test_a_tolerance_on_another_class_is_refused_in_one_whole_line(tmp_path: Path) -> None:
    with pytest.raises(MalformedInput) as err:
        _load(tmp_path, '{absolute: "1"}', "count")
    assert err.value.message == (f"{tmp_path / 'caliber.yaml'}:5: fields.mean: Value error, 'tolerance' is only "
                                 "meaningful for classes amount and ratio, not count")
