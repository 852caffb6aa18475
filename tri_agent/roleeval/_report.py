"""What a run of a role over a corpus measured: each attempt as recorded (``AttemptRecord``), and the aggregate
(``RoleEvalReport``): every rate with the trials it counts and a 95% interval clustered by program, pass@1 beside
pass^k, the flip rate, each status's rate, latency, tokens and cost. No threshold is encoded: the report says
what was measured, a reader decides what is good enough.

Evaluation failures (every status but ok and blocked) are never graded: they count in the status rates and in
nothing else. A finding awaiting a person's ruling leaves its attempt undecided: pass@1 and pass^k count decided
attempts only, and the report lists what waits.
"""

from __future__ import annotations

import html
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterator
from itertools import pairwise
from typing import Literal

from pydantic import Field

from .._model import Record
from ..drivers._episode import STATUSES, Attempt, Usage
from ._corpus import Corpus, Verdict
from ._grading import NAMING, AttemptGrade, Grade
from ._stats import rate

GRADER_VERSION = "1"  # bump when a grading rule changes: a comparison refuses reports of two graders


class GradedRecord(Record):
    """One finding of an attempt, as graded."""

    location: str = Field(description="Where the role said it is.")
    text: str = Field(description="What the role said.")
    key: str = Field(description="The finding's key (a ruling names it).")
    grade: Grade = Field(description="Its grade (docs/evaluation.md, the grades table).")
    root_cause: str | None = Field(default=None, description="The root cause it concerns, when one.")


class AttemptRecord(Record):
    """``attempts.jsonl``: one line per attempt, written as it ends."""

    schema_version: Literal[1] = Field(default=1, description="Version of the attempt record format.")
    case: str = Field(description="The case's reference.")
    index: int = Field(ge=0, description="Which attempt at the case (0-based).")
    attempt: Attempt = Field(description="The driver's account: status, model, usage, cost, seconds.")
    closure_digest: str = Field(description="Digest of the skill closure the role was given.")
    closure_members: list[str] = Field(description="The closure's documents, in order.")
    given: Verdict | None = Field(description="The verdict of the reply (null for an evaluation failure).")
    right: bool | None = Field(description="Right or wrong; null for an evaluation failure or while a finding waits "
                                           "on a ruling.")
    findings: list[GradedRecord] = Field(default_factory=list, description="Each finding, graded.")

    @property
    def valid(self) -> bool:
        return STATUSES[self.attempt.status]


def record(case: str, index: int, attempt: Attempt, digest: str, members: list[str], graded: AttemptGrade | None
           ) -> AttemptRecord:
    """The record of one attempt (``graded`` None for an evaluation failure)."""
    findings = [GradedRecord(location=g.finding.location, text=g.finding.text, key=g.key, grade=g.grade,
                             root_cause=g.root_cause) for g in (graded.findings if graded else [])]
    return AttemptRecord(case=case, index=index, attempt=attempt, closure_digest=digest,
                         closure_members=members, given=graded.given if graded else None,
                         right=graded.right if graded else None, findings=findings)


class RateRecord(Record):
    """A rate: k of n trials, what a trial is, and its 95% interval clustered by program."""

    k: float = Field(description="Successes.")
    n: int = Field(description="Trials.")
    value: float | None = Field(description="k / n; null when n is 0.")
    low: float = Field(description="Lower bound of the 95% interval (Wilson, at the clustered effective size).")
    high: float = Field(description="Upper bound of the 95% interval.")
    clusters: int = Field(description="Programs the trials came from.")
    design_effect: float = Field(description="How much the clustering widened the interval (1: not at all).")
    trial: str = Field(description="What one trial is (the denominator, in words).")


class CaseRow(Record):
    """One case of the per-case grid."""

    case: str = Field(description="The case's reference.")
    program: str = Field(description="Its program.")
    expected: Verdict = Field(description="The right verdict.")
    attempts: list[str] = Field(description="Per attempt: right, wrong, pending, or the failure status.")


class Pending(Record):
    """A finding waiting for a person's ruling."""

    case: str = Field(description="The case's reference.")
    key: str = Field(description="The finding's key: a ruling names it.")
    location: str = Field(description="Where the role said it is.")
    text: str = Field(description="What the role said.")


class RoleEvalReport(Record):
    """``report.json``: one run of a role over a corpus."""

    schema_version: Literal[1] = Field(default=1, description="Version of the role evaluation report format.")
    corpus: str = Field(description="The corpus's name.")
    corpus_version: str = Field(description="The corpus's version.")
    role: str = Field(description="The role evaluated.")
    driver: str = Field(description="The driver that played it.")
    models: list[str] = Field(description="Every model identity the attempts reported.")
    simulated: bool = Field(description="True when a scripted or fixture executor answered: such a run measures the "
                                        "plumbing, never the role, and can never be written as a baseline.")
    suite_commit: str = Field(description="The commit of tri-agent that ran it ('' when unknown).")
    grader_version: str = Field(description="The version of the grading rules.")
    closure_digest: str = Field(description="Digest of the skill closure.")
    closure_members: list[str] = Field(description="The closure's documents.")
    attempts_per_case: int = Field(description="K: attempts made at each case.")
    metrics: dict[str, RateRecord] = Field(description="Each measure of METRICS, by name.")
    statuses: dict[str, RateRecord] = Field(description="Each status's share of all attempts.")
    latency_median_s: float | None = Field(description="Median wall time of an attempt (null when none ran).")
    usage: Usage = Field(description="Tokens of every attempt, cache reads and writes included.")
    cost_usd: float = Field(description="Cost of every attempt.")
    cost_bases: list[str] = Field(description="How the costs were computed, each basis once.")
    pending: list[Pending] = Field(description="Findings waiting for a ruling (their attempts are undecided).")
    cases: list[CaseRow] = Field(description="The per-case grid.")


_Trials = Iterator[tuple[str, bool]]  # (program, success)
_Measure = Callable[["_View"], _Trials]


class _View:
    """The attempts of a run, read per case with what the corpus says of each."""

    def __init__(self, corpus: Corpus, records: list[AttemptRecord]) -> None:
        self.corpus = corpus
        self.by_case: dict[str, list[AttemptRecord]] = defaultdict(list)
        for r in sorted(records, key=lambda r: (r.case, r.index)):
            self.by_case[r.case].append(r)

    def valid(self, verdict: Verdict | None = None) -> Iterator[tuple[str, AttemptRecord]]:
        for ref in self.corpus.manifest.cases:
            if verdict is None or self.corpus.expectations[ref].verdict == verdict:
                yield from ((self.program(ref), r) for r in self.by_case[ref] if r.valid)

    def program(self, ref: str) -> str:
        return self.corpus.provenance[ref].program


def _named(r: AttemptRecord) -> set[str]:
    return {f.root_cause for f in r.findings if f.grade in NAMING and f.root_cause is not None}


def _recall(v: _View) -> _Trials:
    for program, r in v.valid("findings"):
        causes = [rc.id for rc in v.corpus.expectations[r.case].root_causes]
        yield from ((program, rc in _named(r)) for rc in causes if r.given != "blocked")


def _false_clean(v: _View) -> _Trials:
    return ((p, r.given == "clean") for p, r in v.valid("findings"))


def _false_positive(v: _View) -> _Trials:
    return ((p, f.grade == "unexpected") for p, r in v.valid("findings") for f in r.findings)


def _false_alarm(v: _View) -> _Trials:
    return ((p, any(f.grade == "unexpected" for f in r.findings)) for p, r in v.valid("clean"))


def _verdict_right(v: _View) -> _Trials:
    return ((p, r.given == v.corpus.expectations[r.case].verdict) for p, r in v.valid())


def _blocked_right(v: _View) -> _Trials:
    return ((p, r.given == "blocked") for p, r in v.valid("blocked"))


def _pass_1(v: _View) -> _Trials:
    return ((p, bool(r.right)) for p, r in v.valid() if r.right is not None)


def _per_case(v: _View) -> Iterator[tuple[str, list[AttemptRecord]]]:
    for ref in v.corpus.manifest.cases:
        valid = [r for r in v.by_case[ref] if r.valid]
        if len(valid) >= 2:
            yield v.program(ref), valid


def _pass_k(v: _View) -> _Trials:
    for ref in v.corpus.manifest.cases:
        attempts = v.by_case[ref]
        if attempts and all(r.valid and r.right is not None for r in attempts):
            yield v.program(ref), all(r.right for r in attempts)


def _verdict_stable(v: _View) -> _Trials:
    return ((p, len({r.given for r in rs}) == 1) for p, rs in _per_case(v))


def _findings_stable(v: _View) -> _Trials:
    # a blocked attempt found nothing *because it blocked*: not the same as a graded attempt that named nothing
    return ((p, len({("blocked",) if r.given == "blocked" else tuple(sorted(_named(r))) for r in rs}) == 1)
            for p, rs in _per_case(v))


def _flips(v: _View) -> _Trials:
    return ((p, a.given != b.given) for p, rs in _per_case(v) for a, b in pairwise(rs))


def _unique(v: _View) -> _Trials:
    for ref in v.corpus.manifest.cases:
        found: dict[str, int] = defaultdict(int)
        for r in (r for r in v.by_case[ref] if r.valid):
            for rc in _named(r):
                found[rc] += 1
        yield from ((v.program(ref), count == 1) for count in found.values())


METRICS: dict[str, tuple[str, _Measure]] = {  # name -> (one trial, what a success is), the measure
    "recall": ("a root cause of a planted case, in a valid attempt that did not block: named", _recall),
    "false_clean": ("a valid attempt at a planted case: answered clean", _false_clean),
    "false_positive": ("a finding on a planted case: unexpected", _false_positive),
    "false_alarm": ("a valid attempt at a clean case: with an unexpected finding", _false_alarm),
    "verdict_accuracy": ("a valid attempt: the right verdict (findings, clean or blocked)", _verdict_right),
    "blocked_accuracy": ("a valid attempt at an incomplete case: blocked", _blocked_right),
    "pass_at_1": ("a valid, decided attempt: right", _pass_1),
    "pass_hat_k": ("a case whose every attempt is valid and decided: all of them right", _pass_k),
    "verdict_stability": ("a case with two valid attempts or more: one verdict throughout", _verdict_stable),
    "finding_stability": ("a case with two valid attempts or more: the same root causes named throughout (blocked "
                          "counts as its own answer)", _findings_stable),
    "flip_rate": ("two consecutive valid attempts at a case: different verdicts", _flips),
    "unique_finding": ("a root cause some valid attempt named: named by one attempt only", _unique),
}


def aggregate(corpus: Corpus, records: list[AttemptRecord], *, driver: str, simulated: bool, suite_commit: str,
              attempts_per_case: int) -> RoleEvalReport:
    """The report of ``records`` over ``corpus``."""
    view = _View(corpus, records)
    metrics = {name: _rate(trial, measure(view)) for name, (trial, measure) in METRICS.items()}
    programs = [(view.program(r.case), r) for r in records]
    statuses = {s: _rate(f"an attempt: ended {s}", ((p, r.attempt.status == s) for p, r in programs))
                for s in STATUSES}
    usage = sum((r.attempt.usage for r in records), Usage())
    seconds = [r.attempt.seconds for r in records]
    first = records[0] if records else None
    return RoleEvalReport(
        corpus=corpus.manifest.name, corpus_version=corpus.manifest.version, role=corpus.manifest.role,
        driver=driver, models=sorted({r.attempt.model for r in records if r.attempt.model}), simulated=simulated,
        suite_commit=suite_commit, grader_version=GRADER_VERSION,
        closure_digest=first.closure_digest if first else "", closure_members=first.closure_members if first else [],
        attempts_per_case=attempts_per_case, metrics=metrics, statuses=statuses,
        latency_median_s=statistics.median(seconds) if seconds else None, usage=usage,
        cost_usd=round(sum(r.attempt.cost_usd for r in records), 6),
        cost_bases=sorted({r.attempt.cost_basis for r in records}),
        pending=[Pending(case=r.case, key=f.key, location=f.location, text=f.text) for r in records
                 for f in r.findings if f.grade == "ambiguous"],
        cases=[_row(view, ref) for ref in corpus.manifest.cases])


def _rate(trial: str, trials: _Trials) -> RateRecord:
    found = rate(trials)
    return RateRecord(k=found.k, n=found.n, value=found.value, low=round(found.low, 4), high=round(found.high, 4),
                      clusters=found.clusters, design_effect=round(found.design_effect, 3), trial=trial)


def _row(view: _View, ref: str) -> CaseRow:
    def cell(r: AttemptRecord) -> str:
        if not r.valid:
            return r.attempt.status
        return "pending" if r.right is None else "right" if r.right else "wrong"

    return CaseRow(case=ref, program=view.program(ref), expected=view.corpus.expectations[ref].verdict,
                   attempts=[cell(r) for r in view.by_case[ref]])


def markdown(report: RoleEvalReport) -> str:
    """The report as Markdown: every measure with its trials and interval, the statuses, the cost, the grid."""
    head = [f"# {report.role} on {report.corpus} {report.corpus_version}", "",
            f"driver {report.driver}, models {', '.join(report.models) or 'none reported'}, "
            f"{report.attempts_per_case} attempt(s) per case, grader {report.grader_version}, "
            f"closure {report.closure_digest[:12]}", ""]
    if report.simulated:
        head += ["**A simulation**: the replies were recorded, not a role's. This measures the plumbing only.", ""]
    rows = ["| measure | value | k / n | 95% interval | programs | one trial |", "|---|---:|---:|---|---:|---|"]
    rows += [_line(name, m) for name, m in report.metrics.items()]
    statuses = ["", "| status | share | k / n |", "|---|---:|---:|"]
    statuses += [f"| {s} | {_pct(m.value)} | {m.k:g} / {m.n} |" for s, m in report.statuses.items() if m.k]
    cost = ["", f"tokens: {report.usage.input_tokens} in, {report.usage.cache_read_tokens} cache read, "
                f"{report.usage.cache_write_tokens} cache written, {report.usage.output_tokens} out; "
                f"cost ${report.cost_usd:.4f} ({'; '.join(report.cost_bases) or 'no basis'}); median latency "
                f"{report.latency_median_s if report.latency_median_s is not None else '-'} s",
            f"findings awaiting a ruling: {len(report.pending)}"]
    grid = ["", "| case | program | expected | attempts |", "|---|---|---|---|"]
    grid += [f"| {c.case} | {c.program} | {c.expected} | {' '.join(c.attempts)} |" for c in report.cases]
    return "\n".join(head + rows + statuses + cost + grid) + "\n"


def _line(name: str, m: RateRecord) -> str:
    interval = f"{_pct(m.low)} to {_pct(m.high)}" if m.n else "-"
    return f"| {name} | {_pct(m.value)} | {m.k:g} / {m.n} | {interval} | {m.clusters} | {m.trial} |"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def compare(now: RoleEvalReport, before: RoleEvalReport) -> list[str]:
    """What changed since ``before`` (a baseline): each measure, whether its change is beyond both intervals, and
    each case whose attempts changed. Reports of other corpus versions or graders are not comparable."""
    for field_name in ("corpus", "corpus_version", "grader_version", "role"):
        if getattr(now, field_name) != getattr(before, field_name):
            raise ValueError(f"the baseline's {field_name} is {getattr(before, field_name)!r}, this run's "
                             f"{getattr(now, field_name)!r}")
    out = []
    for name, m in now.metrics.items():
        b = before.metrics.get(name)
        if b is None or m.value is None or b.value is None:
            continue
        beyond = m.low > b.high or m.high < b.low
        out.append(f"{name}: {_pct(b.value)} -> {_pct(m.value)} ({'beyond' if beyond else 'within'} the intervals)")
    cells = {c.case: c.attempts for c in before.cases}
    out += [f"case {c.case}: {' '.join(cells.get(c.case, []))} -> {' '.join(c.attempts)}" for c in now.cases
            if cells.get(c.case) != c.attempts]
    return out


_CELL = {"right": "#cfc", "wrong": "#fcc", "pending": "#ffc"}  # anything else is an evaluation failure


def page(report: RoleEvalReport) -> str:
    """The report as one self-contained HTML page (no script, no external asset): the measures, then the per-case
    grid, one cell per attempt."""
    esc = html.escape
    simulated = "<p><b>A simulation</b>: the replies were recorded, not a role's.</p>" if report.simulated else ""
    measures = "".join(
        f"<tr><td>{esc(name)}</td><td>{_pct(m.value)}</td><td>{m.k:g} / {m.n}</td>"
        f"<td>{_pct(m.low) + ' to ' + _pct(m.high) if m.n else '-'}</td><td>{m.clusters}</td>"
        f"<td>{esc(m.trial)}</td></tr>"
        for name, m in report.metrics.items())
    grid = "".join(
        f"<tr><td><code>{esc(c.case)}</code></td><td>{esc(c.program)}</td><td>{esc(c.expected)}</td>"
        + "".join(f'<td style="background:{_CELL.get(a, "#ddd")}">{esc(a)}</td>' for a in c.attempts) + "</tr>"
        for c in report.cases)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{esc(report.role)} on {esc(report.corpus)}</title>
<style>body{{font-family:sans-serif;margin:2em}}td,th{{border:1px solid #ccc;padding:4px 8px;text-align:left}}
table{{border-collapse:collapse}}</style></head><body>
<h1>{esc(report.role)} on {esc(report.corpus)} {esc(report.corpus_version)}</h1>{simulated}
<p>driver {esc(report.driver)}; models {esc(', '.join(report.models) or 'none reported')};
{report.attempts_per_case} attempt(s) per case; grader {esc(report.grader_version)};
closure <code>{esc(report.closure_digest[:12])}</code></p>
<table><tr><th>measure</th><th>value</th><th>k / n</th><th>95% interval</th><th>programs</th><th>one trial</th></tr>
{measures}</table>
<h2>Cases</h2>
<table><tr><th>case</th><th>program</th><th>expected</th><th colspan="{report.attempts_per_case}">attempts</th></tr>
{grid}</table></body></html>
"""
