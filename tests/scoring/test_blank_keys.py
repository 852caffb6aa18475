"""Blank strings as key values, where the caliber's ``blank_keys`` says so; null and absent keys stay no value."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write_jsonl

from tri_agent import MalformedInput, ScoreInputs, load_caliber, score
from tri_agent.exam._build import _write_caliber
from tri_agent.scoring._channels import validate_keys
from tri_agent.scoring._report import ScoreReport
from tri_agent.scoring._tables import read_table

PLAIN = """schema_version: 1
key: [case, group]
fields: {n: count}
"""
BLANK = PLAIN + "blank_keys: [group]\n"
# datamash -g 1 count 1: a line whose first field is empty makes a group named by the empty string
ANSWERS = [{"case": "c-1", "group": "", "n": "2"}, {"case": "c-1", "group": "x", "n": "1"}]


def _score(tmp: Path, caliber: str, actual: list[dict[str, object]] | str, answers: list[dict[str, object]] = ANSWERS,
           replay: str | None = None) -> ScoreReport:
    (tmp / "c.yaml").write_text(caliber)
    write_jsonl(tmp / "a.jsonl", answers)
    if isinstance(actual, str):  # CSV text, written as is
        (tmp / "x.csv").write_text(actual)
    else:
        write_jsonl(tmp / "x.jsonl", actual)
    if replay is not None:
        (tmp / "r.csv").write_text(replay)
    return score(ScoreInputs(tmp / "c.yaml", tmp / "a.jsonl", tmp / ("x.csv" if isinstance(actual, str) else "x.jsonl"),
                             replay=tmp / "r.csv" if replay is not None else None))


def _failures(report: ScoreReport) -> list[tuple[dict[str, str], str]]:
    return [(f.key, f.reason) for f in report.answers.failures]


def test_an_empty_group_is_a_key_value_where_the_caliber_says_so(tmp_path: Path) -> None:
    report = _score(tmp_path, BLANK, ANSWERS)
    assert report.verdict == "pass" and report.answers.passed == report.answers.total == 2


def test_without_blank_keys_an_empty_group_in_the_answers_is_malformed(tmp_path: Path) -> None:
    with pytest.raises(MalformedInput) as err:
        _score(tmp_path, PLAIN, ANSWERS)
    assert err.value.message.endswith(": blank key value; blank is not a value")
    assert err.value.where == f"{tmp_path / 'a.jsonl'}:1"


def test_without_blank_keys_an_empty_group_in_the_actual_table_fails_as_blank_key(tmp_path: Path) -> None:
    answers = [dict(ANSWERS[1])]
    report = _score(tmp_path, PLAIN, [*ANSWERS], answers=answers)
    assert report.verdict == "fail" and _failures(report) == [({}, "blank_key")]
    assert (report.answers.passed, report.answers.rows_unexpected) == (1, 1)


@pytest.mark.parametrize("csv_text", ["case,group,n\nc-1,,2\nc-1,x,1\n", 'case,group,n\nc-1,"",2\nc-1,x,1\n'])
def test_in_csv_an_empty_cell_of_a_blank_key_column_is_the_empty_string(tmp_path: Path, csv_text: str) -> None:
    report = _score(tmp_path, BLANK, csv_text)
    assert report.verdict == "pass" and report.answers.passed == 2


def test_in_csv_an_empty_cell_of_another_key_column_still_fails(tmp_path: Path) -> None:
    report = _score(tmp_path, BLANK, "case,group,n\n,,2\nc-1,x,1\n")
    assert _failures(report) == [({}, "blank_key"), ({"case": "c-1", "group": ""}, "missing_row")]


@pytest.mark.parametrize("row", [{"case": "c-1", "group": None, "n": "2"}, {"case": "c-1", "n": "2"}])
def test_a_null_or_absent_key_in_the_answers_stays_malformed(tmp_path: Path, row: dict[str, object]) -> None:
    with pytest.raises(MalformedInput) as err:
        _score(tmp_path, BLANK, ANSWERS, answers=[ANSWERS[1], row])
    assert err.value.message.endswith(": null key value in 'group'; a null is no value, even where blank_keys lets "
                                      "a blank string be one")
    assert err.value.where == f"{tmp_path / 'a.jsonl'}:2"


def test_a_blank_in_a_column_blank_keys_does_not_name_stays_malformed(tmp_path: Path) -> None:
    with pytest.raises(MalformedInput) as err:
        _score(tmp_path, BLANK, ANSWERS, answers=[*ANSWERS, {"case": " ", "group": "y", "n": "1"}])
    assert err.value.message.endswith(": blank key value in 'case'; blank is not a value (blank_keys does not name "
                                      "'case')")
    assert err.value.where == f"{tmp_path / 'a.jsonl'}:3"


@pytest.mark.parametrize("row", [{"case": "c-1", "group": None, "n": "2"}, {"case": "c-1", "n": "2"}])
def test_a_null_or_absent_key_in_the_actual_table_fails_as_blank_key(tmp_path: Path, row: dict[str, object]) -> None:
    report = _score(tmp_path, BLANK, [row, ANSWERS[1]])
    assert report.verdict == "fail"
    assert _failures(report) == [({}, "blank_key"), ({"case": "c-1", "group": ""}, "missing_row")]


def test_an_absent_key_column_in_the_actual_table_is_no_value(tmp_path: Path) -> None:
    report = _score(tmp_path, BLANK, "case,n\nc-1,2\n")  # a CSV header says what exists
    assert report.verdict == "fail" and report.answers.rows_missing == 2
    assert report.answers.actual_defects == ["the actual table has no key column 'group' (columns: case, n)"]
    jsonl = _score(tmp_path, BLANK, [{"case": "c-1", "n": "2"}])  # in JSONL an absent key is a null
    assert _failures(jsonl)[0] == ({}, "blank_key") and jsonl.answers.rows_missing == 2


def test_a_blank_of_spaces_is_another_value_than_the_empty_string(tmp_path: Path) -> None:
    report = _score(tmp_path, BLANK, [{"case": "c-1", "group": " ", "n": "2"}, ANSWERS[1]])
    assert _failures(report) == [({"case": "c-1", "group": ""}, "missing_row"),
                                 ({"case": "c-1", "group": " "}, "unexpected_row")]


def test_duplicate_blank_keys_are_still_duplicates(tmp_path: Path) -> None:
    with pytest.raises(MalformedInput, match=r"duplicate key \(case='c-1', group=''\), first at line 1"):
        _score(tmp_path, BLANK, ANSWERS, answers=[*ANSWERS, ANSWERS[0]])
    report = _score(tmp_path, BLANK, [*ANSWERS, ANSWERS[0]])
    assert _failures(report) == [({"case": "c-1", "group": ""}, "duplicate_key")]


def test_a_replay_with_a_blank_key_is_checked_the_same_way(tmp_path: Path) -> None:
    good = _score(tmp_path, BLANK, ANSWERS, replay="case,group,n\nc-1,,2\nc-1,x,1\n")
    assert good.verdict == "pass"
    bad = _score(tmp_path, BLANK, ANSWERS, replay="case,group,n\n,,2\nc-1,x,1\n")
    assert bad.blockers == [f"replay: {tmp_path / 'r.csv'}:2: blank key value in 'case'; blank is not a value "
                            "(blank_keys does not name 'case'); every row needs case, group"]


def test_validate_keys_reads_csv_blanks_as_values_only_where_named(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text("case,group\nc-1,\n")
    validate_keys(["case", "group"], read_table(tmp_path / "t.csv"), frozenset({"group"}))
    with pytest.raises(MalformedInput) as err:
        validate_keys(["case", "group"], read_table(tmp_path / "t.csv"))
    assert err.value.message == f"{tmp_path / 't.csv'}:2: blank key value; blank is not a value"


def test_relations_see_the_empty_group(tmp_path: Path) -> None:
    caliber = BLANK + """relations:
  - {name: sums, kind: sum_of_parts, field: n, by: [case], parts: {where_not: {group: ALL}},
     total: {where: {group: ALL}}}
  - {name: sorted, kind: ordered, field: group, by: [case], rows: {where_not: {group: ALL}}}
"""
    answers = [*ANSWERS, {"case": "c-1", "group": "ALL", "n": "3"}]
    report = _score(tmp_path, caliber, "case,group,n\nc-1,,2\nc-1,x,1\nc-1,ALL,3\n", answers=answers)
    assert report.verdict == "pass" and report.relations is not None and report.relations.passed == 2
    swapped = _score(tmp_path, caliber, "case,group,n\nc-1,x,1\nc-1,,2\nc-1,ALL,3\n", answers=answers)
    assert swapped.relations is not None
    assert [(r.name, r.failed) for r in swapped.relations.relations] == [("sums", 0), ("sorted", 1)]
    assert swapped.relations.relations[1].failures[0].detail == "'' comes after 'x'"


def test_blank_keys_must_name_key_columns(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(PLAIN + "blank_keys: [n]\n")
    with pytest.raises(MalformedInput, match=r"blank_keys: 'n' is not a key column \(key: \['case', 'group'\]\)"):
        load_caliber(tmp_path / "c.yaml")


def test_blank_keys_are_sealed_with_the_caliber(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(BLANK)
    caliber, _ = load_caliber(tmp_path / "c.yaml")
    _write_caliber(caliber, tmp_path / "built.yaml")
    again, sha = load_caliber(tmp_path / "built.yaml")
    assert again.blank_keys == ["group"] and again == caliber
    (tmp_path / "c.yaml").write_text(PLAIN)
    _write_caliber(load_caliber(tmp_path / "c.yaml")[0], tmp_path / "plain.yaml")
    assert load_caliber(tmp_path / "plain.yaml")[1] != sha
    assert b"blank_keys" not in (tmp_path / "plain.yaml").read_bytes()


def test_the_message_names_the_column_that_holds_no_value(tmp_path: Path) -> None:
    # a no-break space is a value (blank is ASCII whitespace only): the null group is what is wrong
    with pytest.raises(MalformedInput) as err:
        _score(tmp_path, BLANK, ANSWERS, answers=[{"case": "\xa0", "group": None, "n": "1"}])
    assert err.value.message.endswith(": null key value in 'group'; a null is no value, even where blank_keys lets "
                                      "a blank string be one")
