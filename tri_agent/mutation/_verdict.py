"""The mutation gate's rules, apart from running anything: what a finding is, when a change of findings kills a
mutant, how a survivor's hunt decides its status, and when a gate run passes.

Everything here is pure (models in, models out): the gate (``_gate``) runs targets and hands the results to
these rules, so the rules that decide a round's mutation verdict are tested on their own.
"""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from .._model import Record
from ..scoring._report import ScoreReport
from ._hunt import HuntEvidence

Status = Literal["Killed", "Survived", "Timeout", "NoCoverage", "CompileError", "RuntimeError", "Ignored"]
DETECTED = ("Killed", "Timeout")
UNDETECTED = ("Survived", "NoCoverage")

EQUIVALENT = "equivalent: "  # the reason of an Ignored mutant no hunted input told apart


class _Strict(Record):
    model_config = ConfigDict(frozen=True)


class MutantOutcome(_Strict):
    """What the gate found for one mutant."""

    id: str = Field(description="Instance id <operator>:<file>:<digest>, or mutmut:<name> for a syntactic mutant.")
    bug_class: str = Field(description="Bug class of the menu the mutant realises; mutmut for a syntactic mutant.")
    operator: str = Field(description="Operator that made it (see the operator table), or mutmut.")
    status: Status = Field(description="Stryker status: Killed and Timeout are detected, Survived and NoCoverage "
                                       "undetected (judged, in the denominator), the others not judged.")
    reason: str = Field(description="Why, in words; an equivalent mutant's reason starts with 'equivalent: '.")
    killed_by: list[str] = Field(default_factory=list, description="Case that killed it or ran past the timeout, or "
                                                                   "whole-exam; empty otherwise.")
    cases_run: int = Field(default=0, description="Case runs spent on the mutant (first pass and confirmation).")
    confirmed: bool = Field(default=False, description="Every case ran for real, one after another in the mutant's "
                                                       "own tree, and the whole exam passed: every survivor has.")
    hunt: HuntEvidence | None = Field(default=None, description="What told the mutant apart (or proved it "
                                      "equivalent), when the exam did not kill it.")
    seconds: float = Field(default=0, description="Wall time spent judging the mutant (left out of round "
                                                  "evidence); 0 when it was not run.")


class MutationSummary(_Strict):
    """``summary.json`` of a mutation gate run."""

    schema_version: Literal[2] = Field(default=2, description="Version of the mutation summary format.")
    clean_run: Literal["pass"] = Field(default="pass", description="Always pass: a clean run that fails the exam "
                                                                   "stops the gate, unless it runs differential.")
    target_digest: str = Field(default="", description="Digest of the target tree the mutants were made from "
                                                       "(an equivalence proof holds for this code only).")
    mutants: list[MutantOutcome] = Field(description="One outcome per mutant, in plan order.")
    counts: dict[str, int] = Field(description="Mutants per status.")
    killed: int = Field(default=0, description="Detected mutants: Killed + Timeout.")
    judged: int = Field(default=0, description="Judged mutants: Killed + Timeout + Survived + NoCoverage.")
    kill_rate: float = Field(description="killed / judged (0 when nothing was judged).")
    threshold: float = Field(description="Kill rate the gate requires, from 0 to 1.")
    minimum: int = Field(description="Fewest judged mutants the gate accepts.")
    unexpressed: list[str] = Field(default_factory=list, description="Bug classes of the menu no operator could "
                                   "make a mutant of in this code (the judge may write them).")
    verdict: Literal["pass", "fail"] = Field(description="pass when no reason stands.")
    reasons: list[str] = Field(description="Why the verdict is fail (too few judged mutants, kill rate below the "
                                           "threshold), one line each.")
    isolation: list[str] = Field(default_factory=list, description="OS isolation layers around every clean, "
                                 "mutant and hunt run; empty: none.")
    fork_server: Literal["agrees", "disagrees", "unused"] = Field(
        default="unused", description="Whether the unmutated target's exam cases, run on the fork server, scored "
        "exactly as its real runs did. Only when they agree is a whole-exam kill (drift, relations) taken from "
        "the fork server's outputs; every other kill and every survivor rests on real runs.")
    carried: int = Field(default=0, ge=0, description="Verdicts a resumed gate (`mutate --resume`) kept from the run "
                         "it resumed (verdicts.jsonl, same code and exam) instead of judging them again.")
    sham: str = Field(default="not run", description="An edit that changes nothing (a statement appended to every "
                      "file the mutants were made of), run through the exam before any mutant counts: passed (no "
                      "finding changed), not run (no mutant to judge), or where it was told apart: then the target "
                      "tells its own code apart from any edit, every kill may be that alone, and the verdict is fail.")

    def figure(self) -> str:
        """The kill rate as everyone shows it: killed / judged, with ignored and no-coverage beside it."""
        return (f"{self.killed}/{self.judged} killed ({self.kill_rate:.0%}); {self.counts.get('Ignored', 0)} "
                f"ignored, {self.counts.get('NoCoverage', 0)} no coverage")


def judged_count(outcomes: list[MutantOutcome]) -> int:
    """Mutants in the denominator: detected or undetected, never ignored or broken."""
    return sum(1 for o in outcomes if o.status in (*DETECTED, *UNDETECTED))


def mutant_timeout(limit: float, factor: float, clean_seconds: dict[str, float]) -> float:
    """A multiple of the slowest clean case, at least a second (start-up noise), never above the target's limit."""
    return min(limit, max(1.0, factor * max(clean_seconds.values(), default=1.0)))


def findings(report: ScoreReport) -> frozenset[str]:
    """Everything the exam found wrong, as comparable lines: cells, drift flags, failed relations."""
    cells = [f"{c.key}|{c.field}|{c.reason}|{c.actual}" for c in report.answers.failures]
    if report.behaviors is not None:
        cells += [f"behavior|{c.key}|{c.actual}" for c in report.behaviors.failures]
    cells += [f"drift|{d.field}|{d.positive}|{d.negative}" for d in report.answers.drift if d.systematic]
    if report.relations is not None:
        cells += [f"relation|{r.name}|{f.where}" for r in report.relations.relations for f in r.failures]
    return frozenset(cells)


def changed(before: frozenset[str], now: frozenset[str]) -> str | None:
    """How one case's findings changed from the original's, in words; None when they did not."""
    if now == before:
        return None
    shown = sorted(now - before) or sorted(before - now)
    return f"{said(shown[0])} ({len(now ^ before)} finding(s) changed)"


def whole_change(report: ScoreReport, baseline: frozenset[str] | None) -> str | None:
    """Killed by the exam as a whole: its findings changed from the original's (calibrating), or it fails."""
    if baseline is not None:
        now = findings(report)
        new, gone = len(now - baseline), len(baseline - now)
        return f"the exam's findings changed: {new} new, {gone} gone" if new or gone else None
    return "whole exam: " + "; ".join(report.blockers) if report.verdict == "fail" else None


def said(finding: str) -> str:
    """A finding line in words: cells are key|field|reason|actual, behaviours behavior|key|actual."""
    parts = finding.split("|")
    if parts[0] == "behavior":
        return f"behaviour {parts[-1]!r}"
    if parts[0] == "unreadable":
        return f"unreadable output ({finding.removeprefix('unreadable|')})"  # the message may hold a |
    return f"{parts[2]} on {parts[1] or 'a row'}" if len(parts) >= 4 else finding  # an actual value may hold a |


def hunted(decided: MutantOutcome, evidence: HuntEvidence, reached: bool) -> MutantOutcome:
    """A survivor of every real case, with what the hunt found: Ignored (equivalent) only when the hunt ran
    inputs and none told it apart; else Survived (a case reached its lines) or NoCoverage."""
    if evidence.difference is None and evidence.inputs > 0:
        return decided.model_copy(update={"status": "Ignored", "hunt": evidence, "reason": EQUIVALENT +
                                          f"no difference over {evidence.inputs} hunted inputs "
                                          f"({evidence.class_inputs} of the class, the generator at "
                                          f"{len(evidence.seeds)} fresh seeds)"})
    why = f"live: {evidence.difference}" if evidence.difference else "no hunt input to prove it equivalent"
    status: Status = "Survived" if reached else "NoCoverage"
    return decided.model_copy(update={"status": status, "hunt": evidence, "reason": decided.reason + f"; {why}"})


def calibrating(decided: MutantOutcome) -> MutantOutcome:
    return decided.model_copy(update={"reason": decided.reason + "; not hunted (a calibration round): it stays "
                                                                 "in the denominator"})


def summarise(outcomes: list[MutantOutcome], threshold: float, minimum: int, digest: str, unexpressed: list[str],
              isolation: list[str], sham: str = "not run") -> MutationSummary:
    """The gate's verdict: fail when fewer than ``minimum`` mutants were judged or the kill rate is below
    ``threshold``, each reason one line."""
    statuses = sorted({o.status for o in outcomes})
    counts: dict[str, int] = {s: sum(1 for o in outcomes if o.status == s) for s in statuses}
    detected = sum(counts.get(s, 0) for s in DETECTED)
    judged = detected + sum(counts.get(s, 0) for s in UNDETECTED)
    rate = detected / judged if judged else 0.0
    reasons = []
    if judged < minimum:
        reasons.append(f"only {judged} judged mutant(s); the gate needs at least {minimum}")
    if rate < threshold:
        survivors = [o.id for o in outcomes if o.status in UNDETECTED]
        reasons.append(f"kill rate {detected}/{judged} ({rate:.0%}) is below {threshold:.0%}; blind spots: "
                       f"{', '.join(survivors)}")
    if sham not in ("passed", "not run"):
        reasons.append(f"an edit that changes nothing was told apart ({sham}): the target tells its own code apart, "
                       "so no kill shows what the exam catches")
    return MutationSummary(target_digest=digest, mutants=outcomes, counts=counts, killed=detected, judged=judged,
                           kill_rate=round(rate, 4), threshold=threshold, minimum=minimum, unexpressed=unexpressed,
                           verdict="fail" if reasons else "pass", reasons=reasons, isolation=isolation, sham=sham)
