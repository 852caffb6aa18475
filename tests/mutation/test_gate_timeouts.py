"""A hang proves nothing when the original hangs too: a timeout kills a mutant only where the clean run finished,
and a run killed on its timeout never passes for an answer when no behaviour channel can expect it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from conftest import write_jsonl

from tri_agent.exam._formats import read_cases
from tri_agent.mutation._gate import _case_findings, _case_verdict, _load_exam, _Seen
from tri_agent.scoring._grading import ScoreInputs, score


def test_a_timeout_kills_only_where_the_clean_run_finished(toy_build: Path) -> None:
    exam = _load_exam(toy_build)
    case = read_cases(toy_build / "visible" / "cases.jsonl")[0]
    hung = _Seen(case.case, [], "timeout", timed_out=True)
    assert _case_verdict(exam, case, hung) == ("Timeout", f"case {case.case} ran past the timeout")
    shared = replace(exam, clean_timeouts=frozenset({case.case}),
                     per_case={case.case: _case_findings(exam, case, hung)})
    assert _case_verdict(shared, case, hung) is None  # the original hung the same way: nothing told apart
    differs = replace(shared, per_case={case.case: frozenset()})
    verdict = _case_verdict(differs, case, hung)
    assert verdict is not None and verdict[0] == "Killed"  # decided by what the runs wrote, not by the clock


def _inputs(tmp_path: Path, behaviors: bool, timed_out: tuple[str, ...]) -> ScoreInputs:
    caliber = "schema_version: 1\nkey: [case, g]\nfields: {n: count}\n"
    channel = "behaviors: {values: [accepted, timeout]}\n" if behaviors else ""
    (tmp_path / "caliber.yaml").write_text(caliber + channel)
    rows = write_jsonl(tmp_path / "rows.jsonl", [{"case": "c-1", "g": "a", "n": "1"}])
    b = write_jsonl(tmp_path / "b.jsonl", [{"case": "c-1", "behavior": "timeout"}]) if behaviors else None
    return ScoreInputs(tmp_path / "caliber.yaml", rows, rows, b, b, timed_out=timed_out)


def test_without_a_behaviour_channel_a_run_killed_on_its_timeout_is_a_blocker(tmp_path: Path) -> None:
    report = score(_inputs(tmp_path, behaviors=False, timed_out=("c-1",)))
    assert report.verdict == "fail" and report.blockers == ["run: case c-1 ran past its timeout"]
    assert score(_inputs(tmp_path, behaviors=False, timed_out=())).verdict == "pass"


def test_with_a_behaviour_channel_a_timeout_is_scored_as_a_behaviour(tmp_path: Path) -> None:
    report = score(_inputs(tmp_path, behaviors=True, timed_out=("c-1",)))
    assert report.verdict == "pass" and report.blockers == []  # the oracle expected exactly this timeout
