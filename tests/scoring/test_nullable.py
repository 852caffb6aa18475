"""Nullable fields: a null in the answer key means the row has no such value, and the target's must be absent too."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write_csv, write_jsonl

from tri_agent import MalformedInput, ScoreInputs, load_caliber, score
from tri_agent.exam._build import _corrupt
from tri_agent.scoring._report import ScoreReport

CALIBER = """schema_version: 1
key: [case, step]
fields:
  status: {class: status, nullable: true}
  balance: {class: text, nullable: true}
"""
ANSWERS = [{"case": "c-1", "step": "pay", "status": "201", "balance": "10.00"},
           {"case": "c-1", "step": "accounts", "status": None, "balance": "10.00"},
           {"case": "c-1", "step": "fail", "status": "404", "balance": None}]


def _score(tmp: Path, actual: list[dict[str, object]], caliber: str = CALIBER,
           answers: list[dict[str, str | None]] = ANSWERS) -> ScoreReport:
    (tmp / "c.yaml").write_text(caliber)
    write_jsonl(tmp / "a.jsonl", answers)
    write_jsonl(tmp / "x.jsonl", actual)
    return score(ScoreInputs(tmp / "c.yaml", tmp / "a.jsonl", tmp / "x.jsonl"))


def _reasons(report: ScoreReport) -> list[tuple[str, str | None, str]]:
    return [(f.key["step"], f.field, f.reason) for f in report.answers.failures]


def test_a_null_answer_matches_an_absent_or_blank_value(tmp_path: Path) -> None:
    actual = [ANSWERS[0], {"case": "c-1", "step": "accounts", "balance": "10.00"},
              {"case": "c-1", "step": "fail", "status": "404", "balance": "  "}]
    report = _score(tmp_path, actual)
    assert report.verdict == "pass" and report.answers.passed == 3


def test_a_value_where_the_key_holds_null_fails_as_unexpected_value(tmp_path: Path) -> None:
    actual = [ANSWERS[0], {**ANSWERS[1], "status": "200"}, {**ANSWERS[2], "balance": "0.00"}]
    report = _score(tmp_path, actual)
    assert report.verdict == "fail"
    assert _reasons(report) == [("accounts", "status", "unexpected_value"), ("fail", "balance", "unexpected_value")]


@pytest.mark.parametrize("cls", ["json", "set"])
def test_a_null_answer_of_json_or_set_matches_a_csv_cell_null(tmp_path: Path, cls: str) -> None:
    """For json and set a CSV cell ``null`` is JSONL's null: blank, so it matches an empty answer; for text the
    same cell is a value, and an unexpected one."""
    answers = [{"case": "c-1", "step": "pay", "status": "201", "balance": "[1]"},
               {"case": "c-1", "step": "fail", "status": "404", "balance": ""}]
    actual = [answers[0], {**answers[1], "balance": " null "}]
    (tmp_path / "c.yaml").write_text(CALIBER.replace("balance: {class: text", f"balance: {{class: {cls}"))
    inputs = ScoreInputs(tmp_path / "c.yaml", write_csv(tmp_path / "a.csv", answers),
                         write_csv(tmp_path / "x.csv", actual))
    assert score(inputs).verdict == "pass"
    (tmp_path / "c.yaml").write_text(CALIBER)
    assert _reasons(score(inputs)) == [("fail", "balance", "unexpected_value")]


def test_a_value_the_key_holds_is_still_required(tmp_path: Path) -> None:
    report = _score(tmp_path, [{**ANSWERS[0], "balance": None}, ANSWERS[1], ANSWERS[2]])
    assert _reasons(report) == [("pay", "balance", "missing_field")]


def test_a_missing_row_fails_whatever_its_nulls(tmp_path: Path) -> None:
    report = _score(tmp_path, ANSWERS[:2])
    assert report.verdict == "fail" and ("fail", "status", "missing_row") in _reasons(report)
    assert ("fail", "balance", "missing_row") in _reasons(report)


def test_without_nullable_a_null_in_the_key_stays_malformed(tmp_path: Path) -> None:
    with pytest.raises(MalformedInput) as err:
        _score(tmp_path, ANSWERS, CALIBER.replace(", nullable: true", ""))
    # the key's two nulls (lines 2 and 3): whichever the scorer meets first is named
    assert "blank is not a value" in err.value.message
    assert err.value.where in (f"{tmp_path / 'a.jsonl'}:2", f"{tmp_path / 'a.jsonl'}:3")


def test_the_corrupted_key_changes_a_cell_that_holds_a_value(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(CALIBER)
    answers = [{"case": "c-1", "step": "accounts", "status": None, "balance": "10.00"}, *ANSWERS[:1]]
    write_jsonl(tmp_path / "a.jsonl", answers)
    _corrupt(tmp_path / "a.jsonl", load_caliber(tmp_path / "c.yaml")[0], tmp_path / "bad.jsonl")
    bad = (tmp_path / "bad.jsonl").read_text().splitlines()
    assert '"status": null' in bad[0] and '"balance": "10.00\u2021"' in bad[0]
    assert bad[1] == '{"case": "c-1", "step": "pay", "status": "201", "balance": "10.00"}'
