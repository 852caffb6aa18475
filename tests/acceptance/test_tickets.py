"""Tickets from a red toy-grades round: routed, stable across seeds, and never carrying sealed values."""

from __future__ import annotations

from pathlib import Path

from conftest import toy_copy

from tri_agent import score
from tri_agent.acceptance._tickets import Ticket, guard, tickets_from
from tri_agent.scoring._leaks import scan_leaks
from tri_agent.targets._gateway import run_exam, run_score_inputs


def _red_report(toy_build: Path, tmp: Path):  # type: ignore[no-untyped-def]
    toy = toy_copy(tmp / "toy", fixed=False)
    run_exam(toy_build, toy / "target.yaml", tmp / "run")
    return score(run_score_inputs(toy_build, tmp / "run"))


def test_buggy_toy_grades_tickets(toy_build: Path, tmp_path: Path) -> None:
    report = _red_report(toy_build, tmp_path)
    visible = toy_build / "visible"

    def case_input(case: str) -> str | None:
        path = visible / "inputs" / case / "scores.csv"
        return path.read_text() if path.exists() else None

    tickets = tickets_from(report, case_input)
    signatures = {t.signature for t in tickets}
    assert "builder:average:drift" in signatures  # the rounding bug
    assert "builder:row:unexpected_row" in signatures  # the untrimmed keys
    assert all(t.route == "builder" for t in tickets) and all(t.id.startswith("t-") for t in tickets)
    drift = next(t for t in tickets if t.signature == "builder:average:drift")
    assert "below" in drift.body and "-0.01" not in drift.body
    # no builder ticket carries a sealed value
    for t in tickets:
        (tmp_path / f"{t.id}.md").write_text(t.markdown())
    hits = scan_leaks([toy_build / "sealed" / "answers.jsonl"], [tmp_path / f"{t.id}.md" for t in tickets],
                      inputs=[visible], key=["case", "group"]).hits
    assert hits == []
    assert guard(tickets, toy_build / "sealed" / "answers.jsonl", [visible], ["case", "group"]) == tickets


def test_a_ticket_that_would_leak_is_redacted(toy_build: Path, tmp_path: Path) -> None:
    answers = toy_build / "sealed" / "answers.jsonl"
    inputs = "".join(p.read_text() for p in (toy_build / "visible" / "inputs").rglob("*.csv"))
    averages = [line.split('"average": "')[1].split('"')[0] for line in answers.read_text().splitlines()]
    sealed_average = next(a for a in averages if a not in inputs)  # a value only the key holds
    leaky = Ticket(id="t-x", route="builder", signature="builder:average:not_equal", title="average wrong",
                   body=f"the average should be {sealed_average}", cases=[])
    guarded = guard([leaky], answers, [toy_build / "visible"], ["case", "group"])
    assert "redacted" in guarded[0].body and sealed_average not in guarded[0].markdown()
    assert guarded[1].route == "orchestrator" and "leak-guard" in guarded[1].signature


def test_signatures_survive_a_new_seed(toy_build: Path, tmp_path: Path) -> None:
    from conftest import TOY

    from tri_agent.exam._build import build_exam

    other = build_exam(TOY / "exam", "2", tmp_path / "b2") and tmp_path / "b2"
    first = {t.signature for t in tickets_from(_red_report(toy_build, tmp_path / "1"))}
    second = {t.signature for t in tickets_from(_red_report(other, tmp_path / "2"))}
    assert {"builder:average:drift", "builder:row:unexpected_row"} <= first & second
