"""The aggregate of a run: each measure with its denominator, evaluation failures kept out of every quality rate."""

from __future__ import annotations

from pathlib import Path

from tests.roleeval.corpus_files import CLEAN, INCOMPLETE, PLANTED, write_corpus
from tri_agent.drivers._episode import Attempt, Status, Usage
from tri_agent.roleeval._corpus import load_corpus
from tri_agent.roleeval._grading import Finding, Reply, grade
from tri_agent.roleeval._report import METRICS, AttemptRecord, aggregate, record

NAMED = Finding(location="after/tests/test_total.py:2", text="the assertion removed leaves the sum unchecked")
ODD = Finding(location="src/total.py:1", text="the loop is slow")


def _records(tmp_path: Path) -> list[AttemptRecord]:
    corpus = load_corpus(write_corpus(tmp_path))
    plan: list[tuple[str, int, Status, Reply | None]] = [
        (PLANTED, 0, "ok", Reply(findings=[NAMED])), (PLANTED, 1, "ok", Reply()),
        (CLEAN, 0, "ok", Reply()), (CLEAN, 1, "ok", Reply(findings=[ODD])),
        (INCOMPLETE, 0, "blocked", Reply(blocked=True)), (INCOMPLETE, 1, "timeout", None),
    ]
    out = []
    for ref, index, status, reply in plan:
        attempt = Attempt(driver="command", model="m-1", status=status, cost_basis="provider", seconds=2.0 + index,
                          cost_usd=0.01, usage=Usage(input_tokens=10, cache_read_tokens=90, output_tokens=5))
        graded = grade(ref, corpus.expectations[ref], reply) if reply is not None else None
        out.append(record(ref, index, attempt, "d1", ["roles/judge.md"], graded))
    return out


def test_each_measure_counts_its_own_trials(tmp_path: Path) -> None:
    corpus = load_corpus(write_corpus(tmp_path / "c"))
    report = aggregate(corpus, _records(tmp_path / "r"), driver="command", simulated=False, suite_commit="abc",
                       attempts_per_case=2)
    got = {name: (m.k, m.n) for name, m in report.metrics.items()}
    assert got == {"recall": (1, 2), "false_clean": (1, 2), "false_positive": (0, 1), "false_alarm": (1, 2),
                   "verdict_accuracy": (3, 5), "blocked_accuracy": (1, 1), "pass_at_1": (3, 5),
                   "pass_hat_k": (0, 2), "verdict_stability": (0, 2), "finding_stability": (1, 2),
                   "flip_rate": (2, 2), "unique_finding": (1, 1)}
    assert set(report.metrics) == set(METRICS)
    assert all(m.trial and m.low <= (m.value or 0) <= m.high for m in report.metrics.values())
    assert {s: (m.k, m.n) for s, m in report.statuses.items() if m.k} == {"ok": (4, 6), "blocked": (1, 6),
                                                                          "timeout": (1, 6)}
    assert report.usage == Usage(input_tokens=60, cache_read_tokens=540, output_tokens=30)
    assert (report.cost_usd, report.latency_median_s, report.models) == (0.06, 2.5, ["m-1"])
    assert [row.attempts for row in report.cases] == [["right", "wrong"], ["right", "wrong"], ["right", "timeout"]]


def test_an_evaluation_failure_is_in_no_quality_denominator(tmp_path: Path) -> None:
    corpus = load_corpus(write_corpus(tmp_path / "c"))
    records = _records(tmp_path / "r")
    failed = [r.model_copy(update={"attempt": r.attempt.model_copy(update={"status": "malformed_output"}),
                                   "given": None, "right": None, "findings": []}) for r in records]
    report = aggregate(corpus, failed, driver="command", simulated=False, suite_commit="", attempts_per_case=2)
    assert all(m.n == 0 and m.value is None for m in report.metrics.values())
    assert report.statuses["malformed_output"].k == 6


def test_a_finding_awaiting_a_ruling_leaves_its_attempt_undecided(tmp_path: Path) -> None:
    corpus = load_corpus(write_corpus(tmp_path / "c"))
    odd = Finding(location="after/tests/test_total.py:1", text="this looks off")
    graded = grade(PLANTED, corpus.expectations[PLANTED], Reply(findings=[NAMED, odd]))
    attempt = Attempt(driver="command", model="m", status="ok", cost_basis="none", seconds=1.0)
    report = aggregate(corpus, [record(PLANTED, 0, attempt, "d", [], graded)], driver="command", simulated=False,
                       suite_commit="", attempts_per_case=1)
    assert report.metrics["pass_at_1"].n == 0 and report.metrics["recall"].k == 1
    assert [(p.case, p.text) for p in report.pending] == [(PLANTED, "this looks off")]
    assert report.cases[0].attempts == ["pending"]
