"""The mutation gate's rules on their own: findings, what kills a mutant, a survivor's status, the gate's verdict."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write_jsonl

from tri_agent.mutation._hunt import HuntEvidence
from tri_agent.mutation._verdict import (
    DETECTED,
    EQUIVALENT,
    UNDETECTED,
    MutantOutcome,
    Status,
    calibrating,
    changed,
    findings,
    hunted,
    judged_count,
    mutant_timeout,
    said,
    summarise,
    whole_change,
)
from tri_agent.scoring._grading import ScoreInputs, score
from tri_agent.scoring._report import ScoreReport

CALIBER = """schema_version: 1
key: [case, g]
fields: {total: amount}
behaviors: {values: [accepted, rejected]}
relations:
  - {name: parts-add-up, kind: sum_of_parts, field: total, by: [case], parts: {where_not: {g: ALL}},
     total: {where: {g: ALL}}}
drift: {min_cases: 2, direction_share: 0.9}
"""
ANSWERS = [{"case": "c-1", "g": "a", "total": "1.00"}, {"case": "c-1", "g": "b", "total": "2.00"},
           {"case": "c-1", "g": "ALL", "total": "3.00"}, {"case": "c-2", "g": "a", "total": "5.00"},
           {"case": "c-2", "g": "ALL", "total": "5.00"}]


def _report(tmp_path: Path, actual: list[dict[str, str]], behaviors: list[str]) -> ScoreReport:
    (tmp_path / "caliber.yaml").write_text(CALIBER)
    answers = write_jsonl(tmp_path / "answers.jsonl", ANSWERS)
    act = write_jsonl(tmp_path / "actual.jsonl", actual)
    expected = write_jsonl(tmp_path / "eb.jsonl", [{"case": "c-1", "behavior": "accepted"},
                                                    {"case": "c-2", "behavior": "accepted"}])
    observed = write_jsonl(tmp_path / "ob.jsonl", [{"case": c, "behavior": b}
                                                   for c, b in zip(("c-1", "c-2"), behaviors, strict=True)])
    return score(ScoreInputs(tmp_path / "caliber.yaml", answers, act, expected, observed))


def _outcome(status: Status, reason: str = "r") -> MutantOutcome:
    return MutantOutcome(id=f"op:f.py:{status}", bug_class="c", operator="op", status=status, reason=reason)


def test_findings_name_cells_behaviours_drift_and_relations_as_lines(tmp_path: Path) -> None:
    actual = [{"case": "c-1", "g": "a", "total": "0.99"}, {"case": "c-1", "g": "b", "total": "1.99"},
              {"case": "c-1", "g": "ALL", "total": "3.50"}, {"case": "c-2", "g": "a", "total": "4.99"},
              {"case": "c-2", "g": "ALL", "total": "5.00"}]
    report = _report(tmp_path, actual, ["accepted", "rejected"])
    assert findings(report) == frozenset({
        "{'case': 'c-1', 'g': 'ALL'}|total|out_of_tolerance|3.50",
        "behavior|{'case': 'c-2'}|rejected",
        "drift|total|0|3",
        "relation|parts-add-up|case=c-1",  # c-2's parts are one cent off: inside the tolerance, no failure
    })
    assert whole_change(report, None) == "whole exam: " + "; ".join(report.blockers)


def test_a_clean_report_has_no_findings_and_no_whole_exam_kill(tmp_path: Path) -> None:
    report = _report(tmp_path, ANSWERS, ["accepted", "accepted"])
    assert findings(report) == frozenset() and report.verdict == "pass"
    assert whole_change(report, None) is None
    assert whole_change(report, frozenset()) is None


def test_calibrating_a_whole_exam_kill_is_a_change_of_findings_either_way(tmp_path: Path) -> None:
    report = _report(tmp_path, ANSWERS, ["accepted", "rejected"])
    now = findings(report)
    assert whole_change(report, now) is None  # the same failures as the original: nothing told apart
    assert whole_change(report, frozenset()) == "the exam's findings changed: 1 new, 0 gone"
    assert whole_change(report, now | {"x", "y"}) == "the exam's findings changed: 0 new, 2 gone"


@pytest.mark.parametrize(("before", "now", "said_"), [
    (set(), {"{'g': 'a'}|total|out_of_tolerance|9"}, "out_of_tolerance on total (1 finding(s) changed)"),
    ({"behavior|{'case': 'c'}|rejected"}, set(), "behaviour 'rejected' (1 finding(s) changed)"),
    ({"a|f|r|1"}, {"c|h|s|1", "b|g|r|1"}, "r on g (3 finding(s) changed)"),
])
def test_a_changed_case_is_said_from_its_first_new_finding_or_else_its_first_gone_one(
        before: set[str], now: set[str], said_: str) -> None:
    assert changed(frozenset(before), frozenset(now)) == said_
    assert changed(frozenset(now), frozenset(now)) is None


@pytest.mark.parametrize(("line", "words"), [
    ("behavior|{'case': 'c-1'}|crashed", "behaviour 'crashed'"),
    ("unreadable|no column total", "unreadable output (no column total)"),
    ("unreadable|cell 'a|b' is no number", "unreadable output (cell 'a|b' is no number)"),
    ("{'g': 'a'}|total|not_equal|x|y", "not_equal on total"),
    ("{'g': 'a'}|total|missing_field|None", "missing_field on total"),
    ("||unexpected|None", "unexpected on a row"),
    ("drift|total|3", "drift|total|3"),
])
def test_said_puts_a_finding_in_words(line: str, words: str) -> None:
    assert said(line) == words


def test_only_detected_and_undetected_mutants_are_judged() -> None:
    assert set(DETECTED) == {"Killed", "Timeout"} and set(UNDETECTED) == {"Survived", "NoCoverage"}
    statuses: list[Status] = ["Killed", "Timeout", "Survived", "NoCoverage", "Ignored", "CompileError",
                              "RuntimeError"]
    assert judged_count([_outcome(s) for s in statuses]) == 4
    assert judged_count([]) == 0


@pytest.mark.parametrize(("limit", "factor", "seconds", "expected"), [
    (30, 5, {"a": 0.1, "b": 0.3}, 1.5),
    (30, 5, {"a": 0.01}, 1.0),   # never below a second
    (2, 5, {"a": 1.0}, 2),       # never above the target's own limit
    (30, 3, {}, 3.0),            # no clean timing: a second per case, times the factor
])
def test_a_mutants_timeout(limit: float, factor: float, seconds: dict[str, float], expected: float) -> None:
    assert mutant_timeout(limit, factor, seconds) == expected


def _evidence(inputs: int, difference: str | None) -> HuntEvidence:
    return HuntEvidence(seeds=["s1", "s2"], inputs=inputs, class_inputs=1, difference=difference)


def test_a_survivor_no_hunted_input_told_apart_is_ignored_as_equivalent() -> None:
    out = hunted(_outcome("Survived", "all 3 cases passed"), _evidence(7, None), reached=True)
    assert out.status == "Ignored" and out.hunt == _evidence(7, None)
    assert out.reason == EQUIVALENT + "no difference over 7 hunted inputs (1 of the class, the generator at 2 " \
                                      "fresh seeds)"


@pytest.mark.parametrize(("reached", "status"), [(True, "Survived"), (False, "NoCoverage")])
def test_a_live_survivor_stays_judged_with_its_evidence(reached: bool, status: str) -> None:
    evidence = _evidence(4, "seed:s1/c-1: outputs differ")
    out = hunted(_outcome("Survived", "all 3 cases passed"), evidence, reached)
    assert (out.status, out.reason) == (status, "all 3 cases passed; live: seed:s1/c-1: outputs differ")
    assert out.hunt == evidence


def test_one_hunted_input_that_shows_no_difference_is_enough_evidence() -> None:
    assert hunted(_outcome("Survived"), _evidence(1, None), reached=False).status == "Ignored"


def test_without_a_hunt_input_a_survivor_is_never_called_equivalent() -> None:
    out = hunted(_outcome("Survived", "passed"), _evidence(0, None), reached=True)
    assert (out.status, out.reason) == ("Survived", "passed; no hunt input to prove it equivalent")


def test_a_calibrating_survivor_stays_in_the_denominator() -> None:
    out = calibrating(_outcome("Survived", "passed"))
    assert (out.status, out.reason) == ("Survived", "passed; not hunted (a calibration round): it stays in the "
                                                    "denominator")


def test_the_gate_passes_at_its_threshold_and_minimum_exactly() -> None:
    outcomes = [_outcome("Killed"), _outcome("Timeout"), _outcome("Killed"), _outcome("Survived"),
                _outcome("Ignored")]
    summary = summarise(outcomes, threshold=0.75, minimum=4, digest="d1", unexpressed=["x"], isolation=["bwrap"])
    assert (summary.verdict, summary.reasons) == ("pass", [])
    assert summary.counts == {"Ignored": 1, "Killed": 2, "Survived": 1, "Timeout": 1}
    assert (summary.killed, summary.judged, summary.kill_rate) == (3, 4, 0.75)
    assert (summary.threshold, summary.minimum, summary.target_digest) == (0.75, 4, "d1")
    assert (summary.unexpressed, summary.isolation, summary.mutants) == (["x"], ["bwrap"], outcomes)
    assert summary.figure() == "3/4 killed (75%); 1 ignored, 0 no coverage"


def test_the_gate_fails_below_the_threshold_naming_the_blind_spots() -> None:
    outcomes = [_outcome("Killed"), _outcome("Survived"), _outcome("NoCoverage")]
    summary = summarise(outcomes, threshold=0.5, minimum=3, digest="", unexpressed=[], isolation=[])
    assert summary.verdict == "fail" and summary.kill_rate == 0.3333
    assert summary.reasons == ["kill rate 1/3 (33%) is below 50%; blind spots: op:f.py:Survived, "
                               "op:f.py:NoCoverage"]


def test_the_gate_fails_with_too_few_judged_mutants_even_at_full_kill_rate() -> None:
    summary = summarise([_outcome("Killed"), _outcome("Ignored")], threshold=0.8, minimum=2, digest="",
                        unexpressed=[], isolation=[])
    assert summary.verdict == "fail"
    assert summary.reasons == ["only 1 judged mutant(s); the gate needs at least 2"]
    empty = summarise([], threshold=0.8, minimum=0, digest="", unexpressed=[], isolation=[])
    assert (empty.kill_rate, empty.verdict, empty.reasons) == (0.0, "fail", ["kill rate 0/0 (0%) is below 80%; "
                                                                             "blind spots: "])


def test_the_figure_counts_no_coverage_and_a_missing_ignored_as_zero() -> None:
    summary = summarise([_outcome("Killed"), _outcome("NoCoverage"), _outcome("NoCoverage")], threshold=0.1,
                        minimum=1, digest="", unexpressed=[], isolation=[])
    assert summary.figure() == "1/3 killed (33%); 0 ignored, 2 no coverage"


@pytest.mark.parametrize("sham, fails", [("passed", False), ("not run", False),
                                         ("case c-1: behaviour 'crashed' (1 finding(s) changed)", True)])
def test_a_sham_told_apart_fails_the_gate_at_a_full_kill_rate(sham: str, fails: bool) -> None:
    summary = summarise([_outcome("Killed")], threshold=1.0, minimum=1, digest="", unexpressed=[], isolation=[],
                        sham=sham)
    assert summary.sham == sham and summary.kill_rate == 1.0
    if fails:
        assert (summary.verdict, summary.reasons) == ("fail", [
            "an edit that changes nothing was told apart (case c-1: behaviour 'crashed' (1 finding(s) changed)): the "
            "target tells its own code apart, so no kill shows what the exam catches"])
    else:
        assert (summary.verdict, summary.reasons) == ("pass", [])
