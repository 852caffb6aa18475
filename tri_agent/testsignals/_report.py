"""The evidence report of a change (``tri-agent evidence``): the three signals, their exit code, and three views.

The terminal view is three lines, one per signal; *weakened* never carries a check mark (silence is not a pass).
The Markdown view is a pull-request comment; the JUnit XML view has one test case per signal, and *weakened*
is a skipped case when silent, never a passed one.
"""

from __future__ import annotations

from typing import Literal
from xml.sax.saxutils import quoteattr

from pydantic import Field

from .._errors import ExitCode
from .._model import Record
from ._passed import Passed
from ._reduced import Reduced
from ._weakened import Weakened


class EvidenceReport(Record):
    """What a change's own tests say: passed, reduced, weakened."""

    schema_version: Literal[1] = Field(default=1, description="Version of the evidence report format.")
    base: str = Field(description="The base commit.")
    head: str | None = Field(description="The head commit; null: the working tree.")
    tree_sha256: str = Field(description="The hash of the tree judged (testsignals._tree).")
    changed_tests: list[str] = Field(description="Test files the change touched.")
    changed_infrastructure: list[str] = Field(default_factory=list, description=(
        "Files the change touched that are not tests yet shape them (conftest files aside: modules under a test "
        "folder or importing pytest, pytest's settings): asked about beside the tests."))
    passed: Passed = Field(description="Whether the tests ran and passed on this very tree (harvested).")
    reduced: Reduced = Field(description="Tests collected at the base and gone at the head.")
    weakened: Weakened = Field(description="Tests a judge flagged as checking less than before (flag-only).")
    exit_code: int = Field(description="17 reduced, 18 weakened, 16 no run of this tree (or reduced inconclusive), "
                                       "1 tests failed, 0; the first that holds, in that order.")


def exit_code(passed: Passed, reduced: Reduced, weakened: Weakened) -> ExitCode:
    if reduced.state == "reduced":
        return ExitCode.TESTS_REDUCED
    if weakened.state == "flagged":
        return ExitCode.TESTS_WEAKENED
    if passed.state in ("no_evidence", "stale", "not_checked") or reduced.state == "inconclusive":
        return ExitCode.EVIDENCE_MISSING
    return ExitCode.FAIL if passed.state == "failed" else ExitCode.PASS


def lines(report: EvidenceReport) -> list[str]:
    """The terminal summary: one line per signal."""
    p, r, w = report.passed, report.reduced, report.weakened
    bound = f" ({p.assurance}: {p.source})" if p.assurance else ""
    counts = ", ".join(f"{n} {k}" for k, n in sorted(p.counts.items()))
    passed = {"passed": f"✓ {p.collected} collected, {counts}{bound}",
              "failed": f"✗ {len(p.failing)} failing of {p.collected}{bound}",
              }.get(p.state, f"✗ {p.state.replace('_', ' ')}: {(p.notes or ['no test report, no spool entry'])[-1]}")
    gone = {"reduced": f"✗ {len(r.removed)} test(s) removed since base (no removal on record): "
                       + ", ".join(r.removed[:3]),
            "disclosed": f"✓ {len(r.disclosed)} removal(s), each on record with a reason",
            "none": "✓ no tests removed",
            "inconclusive": "? not checked whole: files of the base did not collect: "
                            + ", ".join(r.collect_errors.get("base", [])[:3])}[r.state]
    claims = [*w.forged, *w.flags]
    who = f"judge: {w.judge} · samples: {w.samples}/{w.k}" if w.judge else "found without a judge"
    weak = {"flagged": f"✗ {len(claims)} flagged: " + "; ".join(f"{c.location} {c.reason}" for c in claims[:2])
                       + f" ({who})",
            "silent": f"- nothing flagged (judge: {w.judge} · samples: {w.samples}/{w.k}): silence, not a pass",
            "inconclusive": f"? inconclusive: {w.reason}",
            "not_judged": f"- not judged: {w.reason}"}[w.state]
    return [f"passed    {passed}", f"reduced   {gone}", f"weakened  {weak}"]


def markdown(report: EvidenceReport) -> str:
    """A pull-request comment."""
    head = report.head[:12] if report.head else "the working tree"
    out = [f"### Test evidence: {report.base[:12]}..{head}", "", "| signal | finding |", "|---|---|"]
    out += [f"| {line[:9].strip()} | {_cell(line[10:])} |" for line in lines(report)]
    p, r, w = report.passed, report.reduced, report.weakened
    details = [*(f"- passed: {n}" for n in p.notes), *(f"- failing: `{t}`" for t in p.failing[:20]),
               *(f"- removed: `{i}`" for i in r.removed), *(f"- removed, on record: `{d.id}`: {d.reason}"
                                                           for d in r.disclosed),
               *(f"- bare removal entry (clears nothing): `{b}`" for b in r.bare),
               *(f"- added: `{i}`" for i in r.added[:20]),
               *(f"- forged outcome: `{c.location}`: {c.reason}" for c in w.forged),
               *(f"- weakened: `{c.location}`: {c.reason}" for c in w.flags)]
    return "\n".join([*out, "", *details, "", f"Exit code {report.exit_code}.", ""])


def junit(report: EvidenceReport) -> str:
    """One test case per signal; weakened is skipped, never passed, when nothing was flagged."""
    p, r, w = report.passed, report.reduced, report.weakened
    cases = [("passed", None if p.state == "passed" else lines(report)[0][10:], False),
             ("reduced", lines(report)[1][10:] if r.state == "reduced" else None, False),
             ("weakened", lines(report)[2][10:], w.state != "flagged")]
    failures = sum(1 for _, msg, skip in cases if msg is not None and not skip)
    body = []
    for name, msg, skip in cases:
        inner = "" if msg is None else f"<skipped message={quoteattr(msg)}/>" if skip else \
            f"<failure message={quoteattr(msg)}/>"
        body.append(f'  <testcase classname="tri-agent.evidence" name="{name}">{inner}</testcase>')
    return "\n".join(['<?xml version="1.0" encoding="utf-8"?>',
                      f'<testsuite name="tri-agent evidence" tests="3" failures="{failures}" '
                      f'skipped="{int(cases[2][2])}">', *body, "</testsuite>", ""])


def _cell(text: str) -> str:
    return text.strip().replace("|", "\\|")
