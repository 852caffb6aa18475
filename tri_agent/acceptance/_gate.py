"""The gate, the green counter and the fuse: what a round's facts mean for the acceptance.

A round is green only if the run was stable (two byte-identical runs), every channel passed, no
blocker stands, the mutation gate killed every judged mutant (at least the minimum), and every seal
verified. Any red round resets the counter; N green rounds in a row call for the final round; a ticket
(by its signature, which survives new seeds) failing three fix attempts blows the fuse: a human decides.
A simulated run or an unsafe contract can pass every gate and still never certify.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

FUSE = 3
Decision = Literal["next_round", "final_round", "accepted", "escalate"]


class RoundFacts(BaseModel):
    """What one round established, mechanically."""

    round: int = Field(ge=1)
    stable: bool = Field(description="The tester's run was repeated and found byte-identical.")
    passed: int = Field(description="Units passed over all channels.")
    total: int = Field(description="Units over all channels (the denominator).")
    blockers: list[str] = Field(default_factory=list)
    mutants_judged: int = 0
    mutants_detected: int = 0
    min_mutants: int = 3
    seals_ok: bool = True
    failing_tickets: list[str] = Field(default_factory=list, description="Signatures of this round's tickets.")
    red_cases: dict[str, list[str]] = Field(default_factory=dict, description="Seed -> cases some channel "
                                            "failed on.")
    mutants_used_ids: list[str] = Field(default_factory=list, description="Mutants judged, or sampled in a "
                                        "rotated round (they are not new again).")
    mutants_equivalent: list[str] = Field(default_factory=list, description="Mutants shown equivalent.")


class GateResult(BaseModel):
    """``gate.json``: the gate's verdict on one round."""

    schema_version: Literal[1] = Field(default=1, description="Version of the gate result format.")
    round: int = Field(description="Round number judged.")
    green: bool = Field(description="No reason stands: the round counts toward the green streak.")
    reasons: list[str] = Field(description="Why the round is red (empty when green).")


class Progress(BaseModel):
    """The acceptance's state between rounds."""

    schema_version: Literal[1] = Field(default=1, description="Version of the progress format.")
    gate_n: int = Field(ge=1, description="Consecutive green rounds required.")
    green_streak: int = Field(default=0, description="Green rounds in a row so far; a red round resets it to 0.")
    rounds: int = Field(default=0, description="Rounds played so far.")
    final_round: bool = Field(default=False, description="The next round is the final round.")
    attempts: dict[str, int] = Field(default_factory=dict, description="Ticket signature -> failed fix attempts.")
    ever_red: list[str] = Field(default_factory=list, description="Signatures of tickets that were ever filed.")
    red_cases: dict[str, list[str]] = Field(default_factory=dict, description="Seed -> cases that were ever red "
                                            "under it: the final round runs them again.")
    mutants_used: list[str] = Field(default_factory=list, description="Mutants judged in some round: not new again.")
    mutants_retired: list[str] = Field(default_factory=list, description="Mutants shown equivalent: never sampled.")
    last_green: bool = Field(default=False, description="Whether the last round was green (rotation needs it).")
    decision: Decision | None = Field(default=None, description="What the last round decided.")


def gate(facts: RoundFacts) -> GateResult:
    reasons = []
    if not facts.stable:
        reasons.append("the run was not byte-identical when repeated")
    if facts.total == 0 or facts.passed != facts.total:
        reasons.append(f"{facts.passed}/{facts.total} pass")
    reasons += facts.blockers
    if facts.mutants_judged < facts.min_mutants:
        reasons.append(f"only {facts.mutants_judged} mutants judged (the gate needs {facts.min_mutants})")
    elif facts.mutants_detected != facts.mutants_judged:
        reasons.append(f"kill rate {facts.mutants_detected}/{facts.mutants_judged}: the exam has blind spots")
    if not facts.seals_ok:
        reasons.append("a seal did not verify")
    return GateResult(round=facts.round, green=not reasons, reasons=reasons)


def advance(progress: Progress, result: GateResult, facts: RoundFacts) -> tuple[Progress, Decision]:
    """The state after a round, and what happens next."""
    attempts = dict(progress.attempts)
    for signature in facts.failing_tickets:
        attempts[signature] = attempts.get(signature, 0) + 1
    ever_red = sorted(set(progress.ever_red) | set(facts.failing_tickets))
    streak = progress.green_streak + 1 if result.green else 0
    red_cases = {seed: list(cases) for seed, cases in progress.red_cases.items()}
    for seed, cases in facts.red_cases.items():
        red_cases[seed] = sorted(set(red_cases.get(seed, [])) | set(cases))
    state = progress.model_copy(update={
        "green_streak": streak, "rounds": progress.rounds + 1, "attempts": attempts, "ever_red": ever_red,
        "red_cases": red_cases, "last_green": result.green,
        "mutants_used": sorted(set(progress.mutants_used) | set(facts.mutants_used_ids)),
        "mutants_retired": sorted(set(progress.mutants_retired) | set(facts.mutants_equivalent))})
    decision = _decide(progress, result, attempts, streak)
    return state.model_copy(update={"final_round": decision == "final_round", "decision": decision}), decision


def _decide(progress: Progress, result: GateResult, attempts: dict[str, int], streak: int) -> Decision:
    if any(n >= FUSE for n in attempts.values()) and not result.green:
        return "escalate"
    if progress.final_round:
        return "accepted" if result.green else "next_round"
    return "final_round" if streak >= progress.gate_n else "next_round"


def can_certify(simulation: bool, unsafe_contract: bool) -> tuple[bool, str]:
    if simulation:
        return False, "a simulation (scripted roles) can never certify acceptance"
    if unsafe_contract:
        return False, "a role ran under --unsafe-contract: this run can never certify"
    return True, ""
