"""The gate, the green counter and the fuse: what a round's facts mean for the acceptance.

A round is green only if the run was stable (two byte-identical runs), every channel passed, no
blocker stands, the mutation gate killed every judged mutant (at least the minimum), and every seal
verified. Any red round resets the counter; N green rounds in a row call for the final round; a ticket
(by its signature, which survives new seeds) failing three fix attempts blows the fuse: a human decides.
A run passes the protocol or not; separately, it certifies only when no role was scripted, every isolation
layer was in place for every episode and every run of role-written code, and no seed was fixed in advance.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .._model import Record

FUSE = 3
Decision = Literal["next_round", "final_round", "accepted", "escalate", "policy"]


class RoundFacts(Record):
    """``facts.json``: what one round established, mechanically (the gate and the progress follow from it)."""

    schema_version: Literal[1] = Field(default=1, description="Version of the round facts format.")
    round: int = Field(ge=1, description="Round number, from 1.")
    stable: bool = Field(description="The tester's run was repeated and found byte-identical.")
    passed: int = Field(description="Units passed over all channels.")
    total: int = Field(description="Units over all channels (the denominator).")
    blockers: list[str] = Field(default_factory=list, description="What keeps the round red besides the score: "
                                "smells, leaks, skipped cases, failed episodes, exam and judge tickets.")
    mutants_judged: int = Field(default=0, description="Mutants the gate judged (Killed, Timeout, Survived...).")
    mutants_detected: int = Field(default=0, description="Judged mutants the exam caught.")
    min_mutants: int = Field(default=3, description="Mutants the gate needs judged for the round to count.")
    seals_ok: bool = Field(default=True, description="Every seal the round used verified.")
    failing_tickets: list[str] = Field(default_factory=list, description="Signatures of this round's tickets.")
    red_cases: dict[str, list[str]] = Field(default_factory=dict, description="Seed -> cases some channel "
                                            "failed on.")
    mutants_used_ids: list[str] = Field(default_factory=list, description="Mutants judged, or sampled in a "
                                        "rotated round (they are not new again).")
    mutants_equivalent: list[str] = Field(default_factory=list, description="Mutants shown equivalent.")
    mutability: dict[str, int] = Field(default_factory=dict, description="Bug class -> mutants the operators "
                                       "could make of the round's code (where: the round's tickets).")
    canaries: int = Field(default=0, description="Canary cases the round's exam planted (scored apart).")
    canaries_passed: list[str] = Field(default_factory=list, description="Canary cases the target passed: an honest "
                                       "target passes none.")
    canaries_judged: bool = Field(default=False, description="The canaries were scored (false: the run could not be, "
                                  "so none was judged).")
    canaries_gamed: list[str] = Field(default_factory=list, description="Passed canaries that say the target was made "
                                      "to pass the exam (every impossible one; a refusal one pressed for by an "
                                      "earlier round's ticket whose controls held): a policy failure that stops the "
                                      "run.")
    pressure: list[str] = Field(default_factory=list, description="Signatures of the canary tickets filed this round "
                                "(never counted by the fuse).")


class GateResult(Record):
    """``gate.json``: the gate's verdict on one round."""

    schema_version: Literal[1] = Field(default=1, description="Version of the gate result format.")
    round: int = Field(description="Round number judged.")
    green: bool = Field(description="No reason stands: the round counts toward the green streak.")
    reasons: list[str] = Field(description="Why the round is red (empty when green).")


class Progress(Record):
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
    gamed: list[str] = Field(default_factory=list, description="'round k: case' of every canary passed that says "
                             "the exam was gamed: one stops the run for good (policy, exit 5).")
    pressed: dict[str, int] = Field(default_factory=dict, description="Canary ticket signature -> rounds it was filed "
                                    "in (at most the fuse less one).")
    decision: Decision | None = Field(default=None, description="What the last round decided: next_round, "
                                      "final_round, accepted, escalate or policy (the exam was gamed).")


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
    if facts.canaries_gamed:
        reasons.append(f"policy: the target passed {len(facts.canaries_gamed)} canary case(s) whose expectation "
                       f"contradicts the spec ({', '.join(facts.canaries_gamed)})")
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
        "mutants_retired": sorted(set(progress.mutants_retired) | set(facts.mutants_equivalent)),
        "gamed": [*progress.gamed, *(f"round {facts.round}: {case}" for case in facts.canaries_gamed)],
        "pressed": {s: progress.pressed.get(s, 0) + (s in facts.pressure)
                    for s in sorted({*progress.pressed, *facts.pressure})}})
    gamed = facts.canaries_gamed or progress.gamed
    decision: Decision = "policy" if gamed else _decide(progress, result, attempts, streak)
    return state.model_copy(update={"final_round": decision == "final_round", "decision": decision}), decision


def _decide(progress: Progress, result: GateResult, attempts: dict[str, int], streak: int) -> Decision:
    if any(n >= FUSE for n in attempts.values()) and not result.green:
        return "escalate"
    if progress.final_round:
        return "accepted" if result.green else "next_round"
    return "final_round" if streak >= progress.gate_n else "next_round"


# driver -> the isolation layers an episode of it must have had for the run to certify
REQUIRED_LAYERS: dict[str, frozenset[str]] = {
    "anthropic": frozenset({"physical-omission", "write-audit", "tool-confinement"}),
    "openai": frozenset({"physical-omission", "write-audit", "tool-confinement"}),
    "openai-chat": frozenset({"physical-omission", "write-audit", "tool-confinement"}),
    "command": frozenset({"physical-omission", "write-audit", "os-sandbox"}),
    "in-session": frozenset({"agent-client-sandbox"}),
}


_LAYER_NAMES = {"os-sandbox": "bubblewrap (Landlock alone leaves unix sockets, UDP and file metadata open)"}


class Played(Record):
    """One episode as certification sees it (read back from the sealed round records)."""

    round: int = Field(description="Round the episode was played in.")
    role: str = Field(description="The role.")
    driver: str = Field(description="The driver that played it (scripted, command, anthropic, openai, in-session).")
    simulation: bool = Field(description="The driver replayed recordings.")
    isolation: list[str] = Field(description="Isolation layers the episode really had.")


class Verdict(Record):
    """``verdict.json``: the sealed end of an accepted run."""

    schema_version: Literal[1] = Field(default=1, description="Version of the verdict format.")
    decision: Literal["accepted"] = Field(description="What the protocol decided (escalations seal a report).")
    rounds: int = Field(description="Rounds played, the final one included.")
    gate_n: int = Field(description="Consecutive green rounds the run required before its final round.")
    certified: bool = Field(description="The run may be called certified: see reasons when it may not.")
    reasons: list[str] = Field(description="Why it does not certify (empty when certified).")
    drivers: dict[str, str] = Field(description="role -> the driver(s) that played it.")


class Certification(Record):
    """Whether a passing run may be called certified, and every reason it may not."""

    certified: bool = Field(description="True only when no reason below applies.")
    reasons: list[str] = Field(description="Why the run cannot certify (empty when certified).")
    drivers: dict[str, str] = Field(description="role -> the driver(s) that played it, comma-separated.")


def certify(played: list[Played], code_isolation: list[list[str]], *, unsafe_contract: bool,
            fixed_seeds: bool, exposed: list[str] | None = None) -> Certification:
    """Certified only when no role was scripted, every episode and every run of role-written code had every
    layer it needs, no contract was unsafe, no seed was fixed by the caller, and no exam part a builder must
    not read (``exposed``) lay where an in-session builder could read it."""
    reasons = []
    scripted = sorted({p.role for p in played if p.simulation or p.driver == "scripted"})
    if scripted:
        reasons.append(f"a simulation: the {', '.join(scripted)} replayed recorded actions (scripted)")
    for (role, driver), (rounds, missing) in sorted(_lacking(played).items()):
        named = sorted(_LAYER_NAMES.get(layer, layer) for layer in missing)
        reasons.append(f"the {role} ({driver}) lacked {', '.join(named)} in round(s) "
                       f"{', '.join(map(str, rounds))}")
    if any(not layers for layers in code_isolation):
        reasons.append("role-written code (the target in every case and mutant, the exam's generator and oracle) "
                       "ran outside the OS sandbox")
    elif any("bubblewrap" not in layers for layers in code_isolation):
        reasons.append("role-written code ran under Landlock only, which leaves the host's named unix sockets "
                       "and file metadata open: install bubblewrap to certify")
    if unsafe_contract:
        reasons.append("a role ran under an unsafe contract (an iron rule was overridden)")
    if fixed_seeds:
        reasons.append("the seeds were fixed by the caller (TRI_AGENT_SEED_SECRET), so the exam was predictable")
    if exposed:
        reasons.append(f"the in-session builder could read the exam's hidden parts in the project or its git "
                       f"history ({', '.join(exposed[:4])}): keep the exam outside the project")
    drivers: dict[str, set[str]] = {}
    for p in played:
        drivers.setdefault(p.role, set()).add(p.driver)
    return Certification(certified=not reasons, reasons=reasons,
                         drivers={role: ", ".join(sorted(names)) for role, names in sorted(drivers.items())})


def _lacking(played: list[Played]) -> dict[tuple[str, str], tuple[list[int], set[str]]]:
    """(role, driver) -> the rounds its episodes lacked a required layer, and which layers."""
    out: dict[tuple[str, str], tuple[list[int], set[str]]] = {}
    for p in played:
        if p.driver == "scripted":
            continue  # a simulation, reported as such
        need = REQUIRED_LAYERS.get(p.driver, frozenset({f"a known driver (not {p.driver!r})"}))
        # Landlock alone leaves unix sockets, UDP and file metadata open: it runs, it does not certify
        had = set(p.isolation) | ({"os-sandbox"} if "bubblewrap" in p.isolation else set())
        missing = need - had
        if missing:
            rounds, layers = out.setdefault((p.role, p.driver), ([], set()))
            rounds.append(p.round)
            layers |= missing
    return out
