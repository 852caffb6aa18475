"""The orchestrator: the one module that composes a hard acceptance, round after round.

Preflight (once): the spec is readable, the project is a clean git work tree, and the baseline (the
target as committed, on the exam at seed 0) runs twice byte-identically; sealed as the first record.

Round k: the examiner's episode (it deepens the exam: new chaos, new mutants) -> exam build at seed k
-> the builder's episode -> the gateway runs every case twice -> the tester's episode (fresh; it runs every
case through ``run_case``) -> the judge's mechanical work (three-channel score, tickets routed by
attribution and leak-guarded, leaks in what the roles may write, smells in the builder's code since
preflight, fingerprint re-runs, a K-sampled weakened-test ruling when a model judges, the mutation gate on a
rotated sample) and the judge's episode -> the gate -> one sealed record chained into the trail; its
tickets are filed for the roles only once it is sealed. After N green
rounds the final round runs the baseline and every case that was ever red, rebuilt from the current exam.
The fuse (a ticket red three times) or a run that never turns green ends in a sealed escalation record.

Every role works in its own assembled, audited workspace; a breach quarantines its output and stops the
run (exit 5). Evidence holds no clock and no duration, so an interrupted run resumed with ``resume=True``
ends with the same trail digest as an uninterrupted one.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from rich.console import Console

from .._errors import Escalation, InfrastructureFailure, TamperDetected, UsageError
from ..drivers._episode import EpisodeResult
from ..drivers._rulings import Ruling
from ..evidence._trail import EvidenceStore
from ..exam._build import Part, build_exam, compose_build
from ..exam._formats import BuildRecord
from ..mutation._gate import DETECTED, EQUIVALENT, UNDETECTED, MutationSummary, Rotation
from ..scoring._grading import score
from ..scoring._report import ScoreReport, render_markdown
from ..targets._gateway import run_exam, run_score_inputs
from . import _judging as judging
from ._cast import git_head, in_session_builder, play, ruling_asker
from ._config import (
    DEPTHS,
    AcceptanceConfig,
    PreflightCheck,
    check_git,
    check_spec,
    evidence_root,
    load_config,
    require,
)
from ._gate import FUSE, GateResult, Progress, RoundFacts, advance, gate
from ._scoreboard import TIMINGS, Deepening, RoundSummary
from ._smells import Change, Smell
from ._tickets import Ticket

_VOLATILE = frozenset({"seconds", "duration", "at", "given_at"})  # never in evidence: reruns must match
BASELINE_SEED = "0"
_JUDGED = (*DETECTED, *UNDETECTED)


@dataclass
class _Round:
    k: int
    seed: str
    final: bool
    build: Path
    run: Path
    origin: dict[str, str] = field(default_factory=dict)  # final round: case -> the seed it was built with


@dataclass
class _Outcome:
    """Everything a round established, for its evidence record."""

    rnd: _Round
    report: ScoreReport | None
    tickets: list[Ticket]
    mutation: MutationSummary | None
    rotation: Rotation | None
    smells: list[Smell]
    episodes: list[EpisodeResult]
    result: GateResult
    deepening: Deepening
    code: judging.CodeSnapshot
    ruling: Ruling | None
    ruling_usd: float
    rerun_mismatched: list[str]


def accept(project: Path, *, resume: bool = False) -> tuple[str, Progress]:
    """Run the acceptance of ``project`` to a decision; returns it ("accepted") or raises Escalation."""
    project = project.resolve()
    config = load_config(project)
    store = EvidenceStore(evidence_root(project, config))
    if store.entries() and not resume:
        raise UsageError(f"{store.root} already holds a trail", hint="continue it with --resume")
    # the baseline must be clean and committed when a run starts; a resumed run has changed it on purpose
    require([check_spec(project, config)] + ([] if store.entries() else [check_git(project)]))
    store.resume()
    _verified(store)
    if not store.has("preflight"):
        _preflight(project, config, store)
    progress = _progress(store, config)
    while progress.decision not in ("accepted", "escalate"):
        k = progress.rounds + 1
        if k > _max_rounds(config) and not progress.final_round:  # a final round earned is always played
            _escalate(store, progress, f"no acceptance after {k - 1} rounds")
        outcome, facts = _play_round(project, config, store, k, progress)
        progress, _ = advance(progress, outcome.result, facts)
        _record(store, outcome, progress, project)
        _file(project, outcome.tickets)  # only once sealed: a replayed round sees what an uninterrupted one saw
    if progress.decision == "escalate":
        _escalate(store, progress, f"a ticket failed {max(progress.attempts.values())} fix attempts")
    return "accepted", progress


def _verified(store: EvidenceStore) -> None:
    """A resumed run continues only a trail that verifies: nothing may build on tampered evidence."""
    findings = store.verify_trail()
    if findings:
        raise TamperDetected(f"the trail at {store.root} does not verify: {findings[0].where}: {findings[0].detail}",
                             hint="run tri-agent verify-trail on it; a tampered trail cannot be continued")


def _max_rounds(config: AcceptanceConfig) -> int:
    # a run that never turns green without a repeating ticket must still end
    return 3 * config.gate_n + 6


def _progress(store: EvidenceStore, config: AcceptanceConfig) -> Progress:
    entries = [e for e in store.entries() if e.kind == "round"]
    if not entries:
        return Progress(gate_n=config.gate_n)
    return Progress.model_validate_json((store.root / "records" / entries[-1].name / "progress.json").read_text())


def _escalate(store: EvidenceStore, progress: Progress, reason: str) -> NoReturn:
    """Seal the escalation report (once), then stop with exit 8: a human decides from here."""
    name = f"escalation-{progress.rounds:04d}"
    if not store.has(name):
        fused = sorted((s for s, n in progress.attempts.items() if n >= FUSE), key=lambda s: (-progress.attempts[s], s))
        lines = [f"# Escalation after round {progress.rounds}", "", f"{reason}; a human must decide.", "",
                 "Tickets that failed their fix attempts:", ""]
        lines += [f"- `{s}`: red in {progress.attempts[s]} rounds" for s in fused] or ["- none (no ticket repeated)"]
        lines += ["", f"Gate counter at the stop: {progress.green_streak} of {progress.gate_n}. Read the last round's "
                      "tickets and score in the trail; fix the exam, the target or the roles; start a new run."]

        def fill(folder: Path) -> None:
            (folder / "ESCALATION.md").write_text("\n".join(lines) + "\n", encoding="utf-8")

        store.append(name, "escalation", fill)
    raise Escalation(f"{reason}; a human must decide", hint=f"see {store.root / 'records' / name / 'ESCALATION.md'}")


class _Clock:
    """Wall time per role (not evidence: durations differ between runs) and live progress on stderr."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.seconds: dict[str, float] = json.loads(path.read_text()) if path.exists() else {}
        self.console = Console(stderr=True)

    def step(self, role: str, what: str, fn: Callable[[], Any]) -> Any:
        start = time.monotonic()
        with self.console.status(f"[bold]{what}[/bold]"):
            try:
                return fn()
            finally:
                self.seconds[role] = round(self.seconds.get(role, 0.0) + time.monotonic() - start, 3)
                self.path.write_text(json.dumps(self.seconds, indent=1, sort_keys=True) + "\n")
                self.console.print(f"  {what}: {time.monotonic() - start:.1f}s")


def _preflight(project: Path, config: AcceptanceConfig, store: EvidenceStore) -> None:
    """Sealed before any role acts: the checks that passed and the code as committed (the first diff's base)."""
    checks = [check_spec(project, config), check_git(project)]

    def fill(folder: Path) -> None:
        _write_json(folder / "checks.json", [c.model_dump(mode="json") for c in checks])
        _write_json(folder / "code.json", judging.code_of(project, "builder").model_dump(mode="json"))

    store.append("preflight", "preflight", fill)


def _baseline(project: Path, config: AcceptanceConfig, store: EvidenceStore, clock: _Clock) -> None:
    """The target before any builder acts, on the exam at seed 0, twice: a target that is not deterministic
    would make every round unstable, so the run stops here. Without an exam at preflight this runs in
    round 1, as soon as the examiner's exam is built, still before the builder."""
    build, run = project / "builds" / "baseline", project / "runs" / "baseline"
    for path in (build, run):
        shutil.rmtree(path, ignore_errors=True)
    clock.step("examiner", "baseline exam build (seed 0)", lambda: build_exam(project / config.exam, BASELINE_SEED,
                                                                               build))
    try:
        clock.step("tester", "baseline, twice", lambda: run_exam(build, project / config.target, run, twice=True))
    except InfrastructureFailure as exc:
        raise InfrastructureFailure(f"preflight: baseline double-run: {exc.message}", hint="make the target "
                                    "deterministic (no clocks, random seeds or unordered output) first") from None
    report = score(run_score_inputs(build, run))
    check = PreflightCheck(name="baseline double-run", ok=True,
                           detail=f"byte-identical; the baseline scores {report.verdict} ({_passed(report)})")

    def fill(folder: Path) -> None:
        _write_json(folder / "checks.json", [check.model_dump(mode="json")])
        shutil.copy2(build / "build.json", folder / "build.json")
        (folder / "score.json").write_text(report.to_json(), "utf-8")
        _canonical_copy(run / "provenance.jsonl", folder / "provenance.jsonl")

    store.append("baseline", "baseline", fill)


def _passed(report: ScoreReport) -> str:
    channels = [c for c in (report.answers, report.behaviors, report.relations) if c is not None]
    return f"{sum(c.passed for c in channels)}/{sum(c.total for c in channels)} units pass"


def _history(store: EvidenceStore) -> judging.History:
    return judging.history([store.root / "records" / e.name for e in store.entries()
                            if e.kind in ("preflight", "baseline", "round")])


def _play_round(project: Path, config: AcceptanceConfig, store: EvidenceStore, k: int,
                progress: Progress) -> tuple[_Outcome, RoundFacts]:
    final = progress.final_round
    rnd = _Round(k, str(k), final, project / "builds" / f"round-{k:04d}", project / "runs" / f"round-{k:04d}")
    for path in (rnd.build, rnd.run, rnd.build.with_name(rnd.build.name + "-parts")):
        shutil.rmtree(path, ignore_errors=True)  # an interrupted round starts over; evidence is never touched
    clock = _Clock(project / TIMINGS)
    past = _history(store)
    clock.console.print(f"[bold]round {k}[/bold]{' (final: baseline and every case ever red)' if final else ''}")
    episodes = [clock.step("examiner", "examiner deepens the exam", lambda: play(project, config, "examiner", k))]
    tickets: list[Ticket] = []
    if final:
        tickets += clock.step("examiner", "regression exam build", lambda: _regression_build(
            project, config, progress, rnd, past))
    else:
        clock.step("examiner", "exam build and seal", lambda: build_exam(project / config.exam, rnd.seed, rnd.build))
    if not store.has("baseline"):
        _baseline(project, config, store, clock)
    if config.drivers.get("builder") == "in-session":
        episodes.append(in_session_builder(project, store, k))
    else:
        episodes.append(clock.step("builder", "builder", lambda: play(project, config, "builder", k)))
    code = judging.code_of(project, "builder")
    stable = clock.step("tester", "every case, twice, through the gateway", lambda: _run_twice(project, config, rnd))
    report = clock.step("judge", "three-channel score",
                        lambda: score(run_score_inputs(rnd.build, rnd.run)) if stable else None)
    ran: set[str] = set()
    episodes.append(clock.step("tester", "tester (fresh)", lambda: play(
        project, config, "tester", k, run_case=judging.served(rnd.build, rnd.run, ran))))
    ids = frozenset(past.case_inputs) | frozenset(judging.case_ids(rnd.build))
    diff = judging.code_changes(past.baseline_code or judging.CodeSnapshot(files={}), code)
    found = judging.builder_smells(code, diff, ids)
    tickets += clock.step("judge", "tickets", lambda: _tickets(project, config, rnd, report, ran, code, found))
    mismatched = clock.step("judge", "fingerprint re-runs", lambda: judging.fingerprint_rerun(
        rnd.build, rnd.run, project / config.target, k))
    tickets += judging.rerun_tickets(mismatched)
    ruling, ruling_usd = clock.step("judge", "weakened-test ruling", lambda: _ruling(project, config, k, diff))
    tickets += judging.weakened_tickets(ruling) if ruling else []
    menu = project / config.exam / "mutations.yaml"
    rot = judging.sample(menu, k=k, final=final, size=DEPTHS[config.depth][1], used=progress.mutants_used,
                         retired=progress.mutants_retired, last_green=progress.last_green) if menu.is_file() else None
    mutation = clock.step("judge", "mutation gate", lambda: judging.mutation(
        project / config.target, rnd.build, menu, rnd.run / "mutation", report, rot))
    tickets += judging.stale_ticket(rot) + judging.too_few_ticket(mutation)
    deepening = _deepening(store, rnd, mutation, progress, past)
    tickets += judging.shallow_ticket(deepening.new_cases, k, final)
    episodes.append(clock.step("judge", "judge", lambda: play(project, config, "judge", k)))
    tickets += judging.episode_tickets(episodes)
    facts = _facts(rnd, report, stable, mutation, rot, tickets, episodes)
    result = gate(facts)
    clock.console.print(f"  gate: {'GREEN' if result.green else 'red'}" + (f" ({result.reasons[0]})" if
                                                                             result.reasons else ""))
    return _Outcome(rnd, report, tickets, mutation, rot, found, episodes, result, deepening, code, ruling,
                    ruling_usd, mismatched), facts


def _tickets(project: Path, config: AcceptanceConfig, rnd: _Round, report: ScoreReport | None, ran: set[str],
             code: judging.CodeSnapshot, found: list[Smell]) -> list[Ticket]:
    # everything the roles may write, every round: a hard-coded answer is flagged until it is gone
    written = {"builder": sorted(code.files), "tester": judging.writable_paths(project, "tester")}
    return ((judging.score_tickets(rnd.build, report) if report else [])
            + judging.skipped_tickets(rnd.build, ran, rnd.k)
            + judging.leak_tickets(project, rnd.build, config.spec, written)
            + judging.smell_and_guard(rnd.build, found))


def _ruling(project: Path, config: AcceptanceConfig, k: int, diff: list[Change]) -> tuple[Ruling | None, float]:
    """The judge's model rules on the builder's test changes; returns the ruling and what it cost."""
    judge = ruling_asker(config, project, k)
    if judge is None:
        return None, 0.0
    def ask(question: str) -> str:
        try:
            return judge.ask_text(judging.RULING_SYSTEM, question)
        except judge.errors as exc:  # an API failure is an unreadable sample: the ruling fails closed
            return f"(no answer: {type(exc).__name__})"

    ruling = judging.weakened_ruling(ask, diff)
    return ruling, judge.spent_usd()


def _regression_build(project: Path, config: AcceptanceConfig, progress: Progress, rnd: _Round,
                      past: judging.History) -> list[Ticket]:
    """The final round's exam: the baseline (seed 0) whole, and each ever-red case rebuilt at its seed."""
    parts_dir = rnd.build.with_name(rnd.build.name + "-parts")
    seeds = [BASELINE_SEED, *sorted((s for s in progress.red_cases if s != BASELINE_SEED), key=_seed_order)]
    parts = []
    for seed in seeds:
        build_exam(project / config.exam, seed, parts_dir / f"seed-{seed}")
        parts.append(Part(parts_dir / f"seed-{seed}", None if seed == BASELINE_SEED else
                          frozenset(progress.red_cases[seed])))
    rnd.seed = " + ".join([f"{BASELINE_SEED} (all)", *(f"{s} ({len(progress.red_cases[s])} red)" for s in seeds[1:])])
    composed = compose_build(parts, rnd.build, rnd.seed)
    rnd.origin = composed.origin
    now = judging.case_digests(rnd.build)
    red = sorted(c for cases in progress.red_cases.values() for c in cases)
    changed = [c for c in red if c in now and c in past.case_inputs and now[c] != past.case_inputs[c]]
    return judging.regression_tickets(composed.missing, changed)


def _seed_order(seed: str) -> tuple[int, str]:
    return (int(seed), seed) if seed.isdigit() else (1 << 62, seed)


def _run_twice(project: Path, config: AcceptanceConfig, rnd: _Round) -> bool:
    try:
        run_exam(rnd.build, project / config.target, rnd.run, twice=True)
    except InfrastructureFailure:
        return False
    return True


def _deepening(store: EvidenceStore, rnd: _Round, mutation: MutationSummary | None, progress: Progress,
               past: judging.History) -> Deepening:
    """How this round's exam differs from every earlier one: cases with inputs never run before (a new id
    with old content is not new), changed exam files, mutants never judged before."""
    rounds = [e for e in store.entries() if e.kind == "round"]
    now = BuildRecord.model_validate_json((rnd.build / "build.json").read_text()).exam_sha256
    before = BuildRecord.model_validate_json((store.root / "records" / rounds[-1].name / "build.json").read_text(
    )).exam_sha256 if rounds else now
    judged = [m.id for m in (mutation.mutants if mutation else []) if m.status in _JUDGED]
    fresh = [c for c, digest in judging.case_digests(rnd.build).items() if digest not in past.inputs]
    return Deepening(new_cases=len(fresh), exam_files_changed=sorted(n for n in now if before.get(n) != now[n]),
                     new_mutants=sorted(set(judged) - set(progress.mutants_used)))


def _file(project: Path, tickets: list[Ticket]) -> None:
    for t in tickets:
        folder = project / "exam" / "tickets" / t.route
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{t.id}.md").write_text(t.markdown(), encoding="utf-8")


def _facts(rnd: _Round, report: ScoreReport | None, stable: bool, mutation: MutationSummary | None,
           rot: Rotation | None, tickets: list[Ticket], episodes: list[EpisodeResult]) -> RoundFacts:
    passed = total = 0
    if report is not None:
        channels = [report.answers, report.behaviors, report.relations]
        passed = sum(c.passed for c in channels if c is not None)
        total = sum(c.total for c in channels if c is not None)
    blockers = list(report.blockers) if report else ["the run could not be scored"]
    blockers += [t.title for t in tickets if t.route != "builder" or t.signature.startswith("builder:smell:")]
    mutants = mutation.mutants if mutation else []
    return RoundFacts(round=rnd.k, stable=stable, passed=passed, total=total, blockers=blockers,
                      mutants_judged=sum(1 for m in mutants if m.status in _JUDGED),
                      mutants_detected=sum(1 for m in mutants if m.status in DETECTED),
                      failing_tickets=[t.signature for t in tickets],
                      red_cases=judging.red_cases(report, lambda case: rnd.origin.get(case, rnd.seed)),
                      # a mutant sampled in a rotated round is used, judged or not: it cannot stay "new"
                      mutants_used_ids=sorted({m.id for m in mutants if m.status in _JUDGED} |
                                                set(rot.chosen if rot else [])),
                      mutants_equivalent=[m.id for m in mutants if m.reason.startswith(EQUIVALENT)])


def _record(store: EvidenceStore, outcome: _Outcome, progress: Progress, project: Path) -> None:
    rnd, report, mutation = outcome.rnd, outcome.report, outcome.mutation

    def fill(folder: Path) -> None:
        shutil.copy2(rnd.build / "build.json", folder / "build.json")
        shutil.copy2(rnd.build / "caliber.yaml", folder / "caliber.yaml")
        if report is not None:
            (folder / "score.json").write_text(report.to_json(), "utf-8")
            (folder / "score.md").write_text(render_markdown(report), "utf-8")
        for name in ("actual.jsonl", "observed_behaviors.jsonl", "provenance.jsonl"):
            if (rnd.run / name).exists():
                _canonical_copy(rnd.run / name, folder / name)
        if mutation is not None:
            _write_json(folder / "mutation-summary.json", mutation.model_dump(mode="json"))
        tickets = folder / "tickets"
        tickets.mkdir()
        for t in outcome.tickets:
            (tickets / f"{t.route}-{t.id}.md").write_text(t.markdown(), "utf-8")
        _write_json(folder / "smells.json", [s.model_dump(mode="json") for s in outcome.smells])
        _write_json(folder / "code.json", outcome.code.model_dump(mode="json"))
        _write_json(folder / "rerun.json", judging.RerunRecord(
            sample=judging.RERUN_SAMPLE, mismatched=outcome.rerun_mismatched).model_dump(mode="json"))
        if outcome.ruling is not None:
            _write_json(folder / "ruling-weakened.json", outcome.ruling.model_dump(mode="json"))
        _write_json(folder / "gate.json", outcome.result.model_dump(mode="json"))
        _write_json(folder / "progress.json", progress.model_dump(mode="json"))
        _write_json(folder / "episodes.json", [e.model_dump(mode="json") for e in outcome.episodes])
        _write_json(folder / "layers.json", {e.role: e.isolation for e in outcome.episodes})
        _write_json(folder / "round.json", _round_summary(outcome, progress).model_dump(mode="json"))
        if any(e.attempts and e.attempts[0].driver == "in-session" for e in outcome.episodes):
            _write_json(folder / "session.json", {"head": git_head(project)})

    store.append(f"round-{rnd.k:04d}", "round", fill)


def _round_summary(outcome: _Outcome, progress: Progress) -> RoundSummary:
    report, mutation, rnd = outcome.report, outcome.mutation, outcome.rnd
    named = {"answers": report.answers, "behaviors": report.behaviors, "relations": report.relations} if report else {}
    channels = {name: c for name, c in named.items() if c is not None}
    routes: dict[str, int] = {}
    for t in outcome.tickets:
        routes[t.route] = routes.get(t.route, 0) + 1
    kill = "-" if mutation is None else f"{mutation.kill_rate:.0%} of {sum(mutation.counts.values())}"
    drift = [f"{d.field}: {d.negative} below, {d.positive} above" for d in (report.answers.drift if report else [])
             if d.systematic]
    return RoundSummary(round=rnd.k, seed=rnd.seed, final=rnd.final, green=outcome.result.green,
                        reasons=outcome.result.reasons, passed=sum(c.passed for c in channels.values()),
                        total=sum(c.total for c in channels.values()),
                        channels={n: f"{c.passed}/{c.total}" for n, c in channels.items()}, drift=drift,
                        kill_rate=kill, tickets=routes, smells=len(outcome.smells), streak=progress.green_streak,
                        deepening=outcome.deepening, simulation=all(e.simulation for e in outcome.episodes),
                        cost_usd={e.role: round(sum(a.cost_usd for a in e.attempts) +
                                                (outcome.ruling_usd if e.role == "judge" else 0.0), 6)
                                  for e in outcome.episodes},
                        isolation={e.role: e.isolation for e in outcome.episodes})


def _write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(_scrub(data), indent=1, sort_keys=True, ensure_ascii=False) + "\n", "utf-8")


def _canonical_copy(src: Path, dest: Path) -> None:
    lines = [json.dumps(_scrub(json.loads(x)), sort_keys=True, ensure_ascii=False)
             for x in src.read_text(encoding="utf-8").splitlines() if x.strip()]
    dest.write_text("".join(line + "\n" for line in lines), "utf-8")


def _scrub(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _scrub(v) for k, v in data.items() if k not in _VOLATILE}
    if isinstance(data, list):
        return [_scrub(v) for v in data]
    return data
