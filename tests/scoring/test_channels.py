"""Channel 1 and 2 rules, the drift audit, determinism and invariance."""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import ANSWERS, CALIBER, write_csv, write_jsonl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tri_agent import MalformedInput, ScoreInputs, UsageError, score

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
