"""Channel 1 and 2 rules, the drift audit, determinism and invariance."""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from conftest import ANSWERS, CALIBER, write_csv, write_jsonl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tri_agent import MalformedInput, ScoreInputs, UsageError, load_caliber, score
from tri_agent.scoring._channels import _interesting_rows, _load, compare_tables
from tri_agent.scoring._tables import read_actual, read_table, table_from_rows

Scored = Callable[..., dict[str, Any]]


def test_identical_tables_pass(scored: Scored) -> None:
    report = scored(copy.deepcopy(ANSWERS))
    assert report["verdict"] == "pass"
    assert report["answers"]["passed"] == report["answers"]["total"] == 3


def test_missing_field_fails(scored: Scored) -> None:
    rows = copy.deepcopy(ANSWERS)
    del rows[0]["share"]
    report = scored(rows)
    assert report["verdict"] == "fail"
    [cell] = report["answers"]["failures"]
    assert (cell["field"], cell["reason"], cell["actual"]) == ("share", "missing_field", None)


def test_missing_row_fails_every_field(scored: Scored) -> None:
    report = scored(copy.deepcopy(ANSWERS[:2]))
    a = report["answers"]
    assert (a["rows_missing"], a["passed"], a["total"]) == (1, 2, 3)
    assert {f["reason"] for f in a["failures"]} == {"missing_row"} and len(a["failures"]) == 5


def test_unexpected_row_fails(scored: Scored) -> None:
    extra = dict(ANSWERS[0], case="c-9")
    a = scored([*copy.deepcopy(ANSWERS), extra])["answers"]
    assert (a["rows_unexpected"], a["passed"], a["total"]) == (1, 3, 4)
    assert a["failures"][-1]["reason"] == "unexpected_row" and a["failures"][-1]["key"] == {"case": "c-9",
                                                                                              "group": "a"}


def test_duplicate_keys_in_the_answers_are_malformed_with_both_lines(scored: Scored) -> None:
    rows = [*copy.deepcopy(ANSWERS), copy.deepcopy(ANSWERS[1])]
    with pytest.raises(MalformedInput, match=r"duplicate key \(case='c-1', group='b'\), first at line 2") as err:
        scored(rows, answers=rows)
    assert err.value.where.endswith("answers.jsonl:4")


# What the target writes is its answer: every defect of it is a red score with the reason, never exit 3.

def test_a_key_the_target_repeats_fails_as_duplicate_key(scored: Scored) -> None:
    rows = [*copy.deepcopy(ANSWERS), copy.deepcopy(ANSWERS[1]), dict(ANSWERS[0], case="c-9"),
            dict(ANSWERS[0], case="c-9")]
    a = scored(rows)["answers"]
    by_reason = {(tuple(f["key"].values()), f["reason"]) for f in a["failures"]}
    assert by_reason == {(("c-1", "b"), "duplicate_key"), (("c-9", "a"), "duplicate_key")}
    assert (a["passed"], a["total"], a["rows_actual"]) == (2, 4, 6)


@pytest.mark.parametrize("field,value", [("avg", "abc"), ("n", "2.5"), ("share", "1e999999")])
def test_a_value_the_target_writes_unreadably_fails_its_cell(scored: Scored, field: str, value: str) -> None:
    rows = copy.deepcopy(ANSWERS)
    rows[1][field] = value
    report = scored(rows)
    [cell] = report["answers"]["failures"]
    assert (cell["field"], cell["reason"], cell["actual"]) == (field, "unreadable_value", value)
    assert report["verdict"] == "fail" and report["answers"]["passed"] == 2


@pytest.mark.parametrize("field,value,message", [("avg", "", "blank"), ("state", "maybe", "declared values")])
def test_malformed_answer_cells_name_file_line_and_field(scored: Scored, field: str, value: str,
                                                          message: str) -> None:
    rows = copy.deepcopy(ANSWERS)
    rows[1][field] = value
    with pytest.raises(MalformedInput, match=message) as err:
        scored(rows, answers=rows)
    assert err.value.where.endswith("answers.jsonl:2")
    assert repr(field) in err.value.message


def test_an_unreadable_target_table_is_every_row_missing_with_the_reason(tmp_path: Path) -> None:
    (tmp_path / "caliber.yaml").write_text(CALIBER)
    write_jsonl(tmp_path / "answers.jsonl", ANSWERS)
    csv = write_csv(tmp_path / "actual.csv", copy.deepcopy(ANSWERS))
    text = csv.read_text().splitlines()
    text[2] += ",surplus"
    csv.write_text("\n".join(text) + "\n")
    report = score(ScoreInputs(tmp_path / "caliber.yaml", tmp_path / "answers.jsonl", csv))
    [defect] = report.answers.actual_defects
    assert "fields where the header has" in defect and "actual.csv:3" in defect
    assert report.verdict == "fail" and report.answers.rows_missing == 3 and defect in report.blockers[0]


def test_a_target_table_without_a_key_column_is_every_row_missing(scored: Scored, tmp_path: Path) -> None:
    rows = [{k: v for k, v in r.items() if k != "group"} for r in ANSWERS]
    jsonl = scored(rows)["answers"]  # JSONL: an absent key column is a blank key on every row
    assert jsonl["rows_missing"] == 3 and {f["reason"] for f in jsonl["failures"]} == {"missing_row", "blank_key"}
    csv = scored(rows, fmt="csv")["answers"]  # CSV: the header says the column is not there
    assert csv["rows_missing"] == 3 and "no key column 'group'" in csv["actual_defects"][0]


def test_csv_and_jsonl_give_the_same_verdicts(scored: Scored) -> None:
    rows = copy.deepcopy(ANSWERS)
    rows[0]["avg"] = "2.34"
    rows[2]["label"] = "x, 'y'"
    a = scored(rows, fmt="jsonl")
    b = scored(rows, fmt="csv")
    for report in (a, b):
        report.pop("inputs"), report.pop("actual_sha256")
    assert a == b and a["verdict"] == "fail"


def test_json_numbers_keep_their_literal(scored: Scored, tmp_path: Path) -> None:
    (tmp_path / "x.jsonl").write_text('{"case": "c-1", "group": "a", "avg": 2.350}\n')
    from tri_agent.scoring._tables import read_table

    assert read_table(tmp_path / "x.jsonl").frame.collect()["avg"].to_list() == ["2.350"]


def test_rerun_is_byte_identical_and_echoes_hashes(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(CALIBER)
    write_jsonl(tmp_path / "a.jsonl", ANSWERS)
    rows = copy.deepcopy(ANSWERS)
    rows[0]["n"] = "3"
    write_csv(tmp_path / "b.csv", rows)
    inputs = ScoreInputs(tmp_path / "c.yaml", tmp_path / "a.jsonl", tmp_path / "b.csv")
    first, second = score(inputs).to_json(), score(inputs).to_json()
    assert first == second
    import hashlib

    assert hashlib.sha256((tmp_path / "c.yaml").read_bytes()).hexdigest() in first
    assert hashlib.sha256((tmp_path / "a.jsonl").read_bytes()).hexdigest() in first


def test_drift_audit_flags_systematic_rounding(scored: Scored) -> None:
    answers = [{"case": f"c-{i}", "group": "g", "avg": f"{i}.35", "share": "0.1", "n": "1", "state": "ok",
                "label": "l"} for i in range(5)]
    actual = [dict(r, avg=f"{i}.34") for i, r in enumerate(copy.deepcopy(answers))]  # half-even instead of half-up
    report = scored(actual, answers=answers)
    [audit] = [d for d in report["answers"]["drift"] if d["field"] == "avg"]
    assert audit["systematic"] and audit["negative"] == 5 and audit["top_deltas"][0] == {"delta": "-0.01",
                                                                                         "count": 5}
    assert report["answers"]["verdict"] == "pass" and report["verdict"] == "fail"
    assert any("drift" in b for b in report["blockers"])
    mixed = [dict(r, avg=f"{i}.3{4 if i % 2 else 6}") for i, r in enumerate(copy.deepcopy(answers))]
    assert scored(mixed, answers=answers)["verdict"] == "pass"


def test_behaviours_channel(tmp_path: Path) -> None:
    cal = tmp_path / "c.yaml"
    cal.write_text(CALIBER + "behaviors: {values: [accepted, rejected, warned]}\n")
    write_jsonl(tmp_path / "a.jsonl", ANSWERS)
    write_jsonl(tmp_path / "eb.jsonl", [{"case": "c-bom", "behavior": "accepted"},
                                        {"case": "c-crlf", "behavior": "warned"}])
    ok = write_jsonl(tmp_path / "ob.jsonl", [{"case": "c-crlf", "behavior": "warned"},
                                             {"case": "c-bom", "behavior": "accepted"}])
    report = score(ScoreInputs(cal, tmp_path / "a.jsonl", tmp_path / "a.jsonl", tmp_path / "eb.jsonl", ok))
    assert report.behaviors is not None and report.behaviors.verdict == "pass"
    bad = write_jsonl(tmp_path / "ob2.jsonl", [{"case": "c-crlf", "behavior": "accepted"},
                                               {"case": "c-bom", "behavior": "crashed"}])
    report = score(ScoreInputs(cal, tmp_path / "a.jsonl", tmp_path / "a.jsonl", tmp_path / "eb.jsonl", bad))
    assert report.verdict == "fail" and report.behaviors is not None
    assert [f.reason for f in report.behaviors.failures] == ["not_in_enum", "not_equal"]
    with pytest.raises(UsageError, match="no behaviour files"):
        score(ScoreInputs(cal, tmp_path / "a.jsonl", tmp_path / "a.jsonl"))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32), drop=st.integers(0, 2), change=st.integers(0, 2))
def test_row_and_column_order_do_not_matter(tmp_path_factory: pytest.TempPathFactory, seed: int, drop: int,
                                            change: int) -> None:
    d = tmp_path_factory.mktemp("order")
    (d / "c.yaml").write_text(CALIBER)
    write_jsonl(d / "a.jsonl", ANSWERS)
    rows = copy.deepcopy(ANSWERS)
    rows[change]["avg"] = "99.99"
    del rows[drop]
    rng = random.Random(seed)
    shuffled = copy.deepcopy(rows)
    rng.shuffle(shuffled)
    columns = list(ANSWERS[0])
    rng.shuffle(columns)
    write_csv(d / "x.csv", rows)
    write_csv(d / "y.csv", shuffled, columns)
    x = score(ScoreInputs(d / "c.yaml", d / "a.jsonl", d / "x.csv")).model_dump()
    y = score(ScoreInputs(d / "c.yaml", d / "a.jsonl", d / "y.csv")).model_dump()
    for r in (x, y):
        r.pop("inputs"), r.pop("actual_sha256")
    assert x == y


def test_an_empty_answer_key_is_malformed(scored: Scored) -> None:
    with pytest.raises(MalformedInput, match="no rows"):
        scored([], answers=[])


def test_drift_share_is_compared_exactly(scored: Scored) -> None:
    answers = [{"case": f"c-{i}", "group": "g", "avg": "1.00", "share": "0.1", "n": "1", "state": "ok",
                "label": "l"} for i in range(25)]
    actual = [dict(r, avg="1.01" if i < 14 else "0.99") for i, r in enumerate(copy.deepcopy(answers))]
    cal = CALIBER + "drift: {min_cases: 3, direction_share: 0.56}\n"  # 14 of 25 is exactly 56%
    [audit] = [d for d in scored(actual, caliber=cal, answers=answers)["answers"]["drift"] if d["field"] == "avg"]
    assert audit["systematic"]


def test_unicode_digits_are_not_numbers(scored: Scored) -> None:
    report = scored([*copy.deepcopy(ANSWERS[:1]), dict(ANSWERS[1], avg="١.١٠"), *copy.deepcopy(ANSWERS[2:])])
    assert [f["reason"] for f in report["answers"]["failures"]] == ["unreadable_value"]
    with pytest.raises(MalformedInput, match="decimal number"):  # in the answer key, it is the exam's error
        scored(copy.deepcopy(ANSWERS), answers=[*ANSWERS[:1], dict(ANSWERS[1], avg="١.١٠"), *ANSWERS[2:]])


PLACES = """schema_version: 1
key: [id]
fields: {amount: {class: amount, places: 2}}
"""


@pytest.mark.parametrize(("actual", "reason"), [("10.00", None), ("10.001", "wrong_places"), ("10.0", "wrong_places"),
                                                ("10", "wrong_places"), ("10.02", "out_of_tolerance"),
                                                ("1.0E+1", "wrong_places")])
def test_places_fail_a_value_written_with_other_places_even_within_tolerance(scored: Scored, actual: str,
                                                                              reason: str | None) -> None:
    report = scored([{"id": "a", "amount": actual}], caliber=PLACES, answers=[{"id": "a", "amount": "10.00"}])
    failures = report["answers"]["failures"]  # type: ignore[index]
    assert [f["reason"] for f in failures] == ([reason] if reason else [])


def test_places_are_only_for_amounts_and_ratios(scored: Scored) -> None:
    with pytest.raises(MalformedInput, match="'places' is only meaningful"):
        scored([{"id": "a", "amount": "1"}], caliber=PLACES.replace("class: amount", "class: count"),
               answers=[{"id": "a", "amount": "1"}])


def test_counts_add_up_when_several_rows_fail(scored: Scored) -> None:
    actual = [dict(ANSWERS[0], avg="2.36"), dict(ANSWERS[1], n="5", label="c"), dict(ANSWERS[2], state="late"),
              dict(ANSWERS[2], case="c-3")]
    a = scored(actual)["answers"]
    assert (a["verdict"], a["passed"], a["total"]) == ("fail", 1, 4)
    assert (a["rows_expected"], a["rows_actual"], a["rows_missing"], a["rows_unexpected"]) == (3, 4, 0, 1)
    tallies = {name: (t["passed"], t["failed"], t["within_tolerance_nonzero"]) for name, t in a["fields"].items()}
    assert tallies == {"avg": (3, 0, 1), "share": (3, 0, 0), "n": (2, 1, 0), "state": (2, 1, 0),
                       "label": (2, 1, 0)}
    assert [(f["key"]["case"], f["key"]["group"], f["field"], f["reason"]) for f in a["failures"]] == [
        ("c-1", "b", "n", "not_equal"), ("c-1", "b", "label", "not_equal"), ("c-2", "a", "state", "not_equal"),
        ("c-3", "a", None, "unexpected_row")]


def test_missing_rows_fail_every_field_and_count_once_each(scored: Scored) -> None:
    a = scored([ANSWERS[0]])["answers"]
    assert (a["passed"], a["total"], a["rows_missing"], a["rows_unexpected"]) == (1, 3, 2, 0)
    assert {name: t["failed"] for name, t in a["fields"].items()} == dict.fromkeys(["avg", "share", "n", "state",
                                                                                   "label"], 2)
    assert len(a["failures"]) == 10 and {f["reason"] for f in a["failures"]} == {"missing_row"}


SINGLE = "schema_version: 1\nkey: [id]\nfields: {v: count}\n"


def test_a_single_column_key_repeated_in_the_answers_names_both_lines(scored: Scored) -> None:
    rows = [{"id": "b", "v": "1"}, {"id": "a", "v": "2"}, {"id": "c", "v": "3"}, {"id": "a", "v": "4"}]
    with pytest.raises(MalformedInput) as err:
        scored(rows[:3], caliber=SINGLE, answers=rows)
    assert err.value.line().endswith("answers.jsonl:4: duplicate key (id='a'), first at line 2; "
                                     "keys must be unique in a table")


def test_a_single_column_key_the_target_repeats_fails_each_way(scored: Scored) -> None:
    answers = [{"id": "a", "v": "1"}, {"id": "b", "v": "2"}, {"id": "c", "v": "3"}]
    actual = [{"id": "c", "v": "3"}, {"id": "a", "v": "1"}, {"id": "a", "v": "1"}, {"id": "z", "v": "9"},
              {"id": "z", "v": "9"}, {"id": "b", "v": "2"}, {"id": " ", "v": "0"}]
    a = scored(actual, caliber=SINGLE, answers=answers)["answers"]
    assert [(f["key"], f["reason"]) for f in a["failures"]] == [({}, "blank_key"), ({"id": "a"}, "duplicate_key"),
                                                               ({"id": "z"}, "duplicate_key")]
    assert (a["passed"], a["total"], a["rows_missing"], a["rows_unexpected"]) == (2, 5, 1, 2)
    in_order = [{"id": "a", "v": "1"}, {"id": "b", "v": "2"}, {"id": "c", "v": "4"}]  # a rising key: the fast proof
    assert scored(in_order, caliber=SINGLE, answers=answers)["answers"]["passed"] == 2


def test_every_kind_of_row_failure_is_counted_each_time(scored: Scored) -> None:
    answers = [{"id": x, "v": "1"} for x in "abcd"]
    actual = [{"id": "a", "v": "1"}, {"id": "a", "v": "1"}, {"id": "b", "v": "1"}, {"id": "b", "v": "1"},
              {"id": "y", "v": "1"}, {"id": "y", "v": "1"}, {"id": "z", "v": "1"}, {"id": "z", "v": "1"},
              {"id": "u1", "v": "1"}, {"id": "u2", "v": "1"}, {"id": "", "v": "1"}, {"id": "\t", "v": "1"},
              {"id": "c", "v": "1"}, {"id": "d", "v": "1"}]
    a = scored(actual, caliber=SINGLE, answers=answers)["answers"]
    assert [(f["key"], f["reason"]) for f in a["failures"]] == [
        ({}, "blank_key"), ({}, "blank_key"), ({"id": "a"}, "duplicate_key"), ({"id": "b"}, "duplicate_key"),
        ({"id": "u1"}, "unexpected_row"), ({"id": "u2"}, "unexpected_row"), ({"id": "y"}, "duplicate_key"),
        ({"id": "z"}, "duplicate_key")]
    assert (a["passed"], a["total"], a["rows_missing"], a["rows_unexpected"], a["rows_actual"]) == (2, 10, 2, 6, 14)


def test_a_failing_cell_carries_its_class_and_both_values(scored: Scored) -> None:
    [failure] = scored([*ANSWERS[:2], dict(ANSWERS[2], share="0.3")])["answers"]["failures"]
    assert failure == {"key": {"case": "c-2", "group": "a"}, "field": "share", "cls": "ratio",
                       "expected": "0.250000", "actual": "0.3", "reason": "out_of_tolerance"}


@pytest.mark.parametrize("rows", [[{"id": "a"}, {"id": "a"}, {"id": "b"}], [{"id": "a"}, {"id": "b"}, {"id": "b"}],
                                  [{"id": "b"}, {"id": "c"}, {"id": "a"}, {"id": "c"}]])
def test_a_repeated_single_column_key_is_found_in_any_order(scored: Scored, rows: list[dict[str, str]]) -> None:
    answers = [dict(r, v="1") for r in rows]
    with pytest.raises(MalformedInput, match="duplicate key"):
        scored(answers, caliber=SINGLE, answers=answers)


def test_the_first_repeated_key_by_line_is_the_one_named(scored: Scored) -> None:
    answers = [{"id": "y", "v": "1"}, {"id": "x", "v": "1"}, {"id": "x", "v": "2"}, {"id": "y", "v": "3"}]
    with pytest.raises(MalformedInput) as err:
        scored(answers, caliber=SINGLE, answers=answers)
    assert "answers.jsonl:4: duplicate key (id='y'), first at line 1" in err.value.line()


def test_an_answer_key_without_rows_names_itself_and_the_fix(scored: Scored) -> None:
    with pytest.raises(MalformedInput) as err:
        scored([], answers=[])
    assert err.value.line().endswith("answers.jsonl: the answer key has no rows; an empty key would pass anything; "
                                     "check that the oracle wrote its answers")


def test_an_answer_key_without_a_needed_column_names_it_and_what_it_has(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(CALIBER)
    columns = [c for c in ANSWERS[0] if c != "share"]
    answers = write_csv(tmp_path / "a.csv", ANSWERS, columns)
    with pytest.raises(MalformedInput) as err:
        score(ScoreInputs(tmp_path / "c.yaml", answers, write_jsonl(tmp_path / "x.jsonl", ANSWERS)))
    assert err.value.line() == (f"{answers}:1: column 'share' is absent (columns: case, group, avg, n, state, label); "
                                "name it in the header, or fix the caliber's key/fields")


def test_a_blank_key_in_the_answers_names_its_line_and_the_key(scored: Scored) -> None:
    answers = [ANSWERS[0], dict(ANSWERS[1], group=" ")]
    with pytest.raises(MalformedInput) as err:
        scored(ANSWERS, answers=answers)
    assert err.value.line().endswith("answers.jsonl:2: blank key value; blank is not a value; "
                                     "every row needs case, group")


def test_a_target_table_without_a_key_column_says_which_and_what_it_has(scored: Scored, tmp_path: Path) -> None:
    a = scored([{k: v for k, v in r.items() if k != "group"} for r in ANSWERS], fmt="csv")["answers"]
    assert a["actual_defects"] == ["the actual table has no key column 'group' (columns: case, avg, share, n, "
                                   "state, label)"]
    (tmp_path / "empty.csv").write_text("\n")
    report = score(ScoreInputs(tmp_path / "caliber.yaml", tmp_path / "answers.jsonl", tmp_path / "empty.csv"))
    assert report.answers.actual_defects[0].startswith("unreadable table: ")
    caliber = load_caliber(tmp_path / "caliber.yaml")[0]
    channel, _ = compare_tables(caliber.key, dict(caliber.fields), read_table(tmp_path / "answers.jsonl"),
                                table_from_rows("none.jsonl", []))
    assert channel.actual_defects == ["the actual table has no key column 'case' (columns: none)"]


def test_a_defective_target_table_is_red_even_where_no_row_was_expected(tmp_path: Path) -> None:
    caliber = load_caliber(_write(tmp_path / "c.yaml", SINGLE))[0]
    expected = read_table(write_jsonl(tmp_path / "a.jsonl", []), columns=("id", "v"))
    broken = read_actual(_write(tmp_path / "x.jsonl", "{not json\n"), columns=("id", "v"))
    channel, failing = compare_tables(caliber.key, dict(caliber.fields), expected, broken, allow_empty=True)
    assert channel.verdict == "fail" and channel.actual_defects[0].startswith("unreadable table: ")
    assert failing == set()


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_without_a_drift_section_no_field_is_audited(tmp_path: Path) -> None:
    caliber = load_caliber(_write(tmp_path / "c.yaml", CALIBER))[0]
    table = read_table(write_jsonl(tmp_path / "a.jsonl", ANSWERS))
    channel, failing = compare_tables(caliber.key, dict(caliber.fields), table, table)
    assert channel.drift == [] and channel.verdict == "pass" and failing == set()


def test_the_drift_audit_ranks_differences_and_keeps_ten(scored: Scored) -> None:
    caliber = "schema_version: 1\nkey: [id]\nfields: {v: ratio}\ndrift: {min_cases: 13, direction_share: 1.0}\n"
    answers = [{"id": f"r{i:02d}", "v": "0.5"} for i in range(13)]
    deltas = ["0.0000003", "0.0000003", "0.0000001", "0.0000002", "0.0000002", "0.0000004", "0.0000005",
              "0.0000006", "0.0000007", "0.0000008", "0.0000009", "0.00000095", "0.00000099"]  # 11 distinct
    actual = [{"id": f"r{i:02d}", "v": str(Decimal("0.5") + Decimal(d))} for i, d in enumerate(deltas)]
    audit = scored(actual, caliber=caliber, answers=answers)["answers"]["drift"][0]
    assert audit["top_deltas"][:4] == [{"delta": "0.0000002", "count": 2}, {"delta": "0.0000003", "count": 2},
                                       {"delta": "0.0000001", "count": 1}, {"delta": "0.0000004", "count": 1}]
    assert len(audit["top_deltas"]) == 10 and audit["tolerance"] == "0.000001"
    assert (audit["nonzero"], audit["positive"], audit["negative"], audit["systematic"]) == (13, 13, 0, True)


def test_a_status_answer_outside_its_values_is_malformed_even_when_the_target_agrees(scored: Scored) -> None:
    answers = [dict(ANSWERS[0], state="maybe"), *ANSWERS[1:]]
    with pytest.raises(MalformedInput, match="not in the declared values"):
        scored(answers, answers=answers)


def test_identical_tables_are_proven_by_the_fast_path_alone(tmp_path: Path) -> None:
    """Equal values (1.5 and 1.50 included), enum values and fixed places never reach the exact Python rules."""
    caliber = load_caliber(_write(tmp_path / "c.yaml", CALIBER.replace("avg: amount", "avg: {class: amount, "
                                                                                      "places: 2}")))[0]
    expected = read_table(write_jsonl(tmp_path / "a.jsonl", ANSWERS))
    actual = read_table(write_jsonl(tmp_path / "x.jsonl", [dict(r, share=r["share"].rstrip("0")) for r in ANSWERS]))
    fields = dict(caliber.fields)
    e, a = _load(caliber.key, fields, expected, actual)
    assert _interesting_rows(caliber.key, fields, e, a).height == 0
    other = read_table(write_jsonl(tmp_path / "y.jsonl", [dict(r, avg=r["avg"] + "0") for r in ANSWERS]))
    e, a = _load(caliber.key, fields, expected, other)
    assert _interesting_rows(caliber.key, fields, e, a).height == 3  # 2.350 has three places: the rules decide


def test_of_several_bad_sealed_values_the_first_line_is_named_every_time(tmp_path: Path) -> None:
    """The join's row order varies from run to run: the refusal must name the answer key's first bad line, always
    the same one (it named any of them before)."""
    rows = [{"case": "c-1", "group": f"g{k}", "avg": "1.00", "share": "0.5", "n": "1", "state": "ok",
             "label": " " if k % 3 == 1 else "x"} for k in range(60)]
    (tmp_path / "c.yaml").write_text(CALIBER)
    answers = write_csv(tmp_path / "a.csv", rows)
    got: set[str] = set()
    for _ in range(25):
        with pytest.raises(MalformedInput, match="field 'label': the answer key holds a blank value") as exc:
            score(ScoreInputs(tmp_path / "c.yaml", answers, write_csv(tmp_path / "x.csv", rows[::-1])))
        got.add(exc.value.where)
    assert got == {f"{answers}:3"}


@pytest.mark.parametrize("spread", [1, 2])
def test_keys_that_share_a_hash_are_joined_on_the_key_itself(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              spread: int) -> None:
    """The join pairs rows by a hash of the key; two keys with one hash (an adversary can find them) must not
    pair rows of different keys: the report is the one an honest hash gives."""
    import polars as pl

    from tri_agent.scoring import _channels

    (tmp_path / "c.yaml").write_text(CALIBER)
    answers = write_csv(tmp_path / "a.csv", ANSWERS)
    rows = copy.deepcopy(ANSWERS)
    rows[1]["avg"] = "99.99"
    actual = write_csv(tmp_path / "x.csv", rows[::-1])
    honest = score(ScoreInputs(tmp_path / "c.yaml", answers, actual)).model_dump()
    monkeypatch.setattr(_channels, "key_hash", lambda key: pl.col(key[0]).str.len_bytes().cast(pl.UInt64) % spread)
    assert score(ScoreInputs(tmp_path / "c.yaml", answers, actual)).model_dump() == honest
