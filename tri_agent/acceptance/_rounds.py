"""The orchestrator: the one module that composes a hard acceptance, round after round.

Everything of a run but the builder's code lives in the run's state folder, outside the project (see
``_state``): the evidence store, the exam, every build and run. Its trail head is pinned apart from it
before each line is appended, and a resumed run continues only a trail that verifies and ends at its pin.

Preflight (once): the spec is readable, the project is a clean git work tree; the checks, the builder's code
as committed, the configuration (every file that steers the run) and the exam as found are sealed as the
first record, with the commitments to the baseline's and round 1's seeds.

Round k: the sealed configuration is checked unchanged (exit 5) -> the examiner deepens the exam (its own
copy, rebuilt from the last record) -> [round 1: the baseline, the target as committed on the exam at the
baseline seed, twice] -> the builder's episode -> only now the exam is built at the round's seed (committed
before the round) and its key pinned in the trail -> every case twice through the gateway (a difference is
a builder ticket) -> the tester, fresh, into an empty folder -> the judge's mechanical work and the judge's
episode, its tickets leak-guarded -> the gate -> one sealed record, which reveals the round's seed and
commits the next; its tickets are filed only once it is sealed. Before any episode, everything the role
receives is audited against every sealed key (exit 6). After N green rounds the final round runs the
baseline and every case that was ever red. A ticket red three times, or no acceptance after 3N + 6 rounds,
ends in a sealed escalation (exit 8). An accepted run ends in a sealed verdict that says whether it
certifies, and why not.

Progress is never read from a file: it is recomputed from the sealed facts of every round on every start.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, NoReturn

from rich.console import Console

from .._errors import BuilderTurn, Escalation, NotDeterministic, PolicyViolation, TamperDetected, UsageError
from .._progress import Meter, watching
from ..drivers._episode import EpisodeResult
from ..drivers._rulings import Ruling
from ..evidence._seal import verify
from ..evidence._trail import EvidenceStore
from ..exam._build import Part, build_exam, compose_build
from ..exam._formats import BuildRecord
from ..isolation._contract import load_charter
from ..isolation._workspace import View
from ..mutation._recall import Recall
from ..mutation._rotation import Rotation
from ..mutation._verdict import DETECTED, EQUIVALENT, UNDETECTED, MutationSummary
from ..sandbox import _jail as jail
from ..scoring._grading import score
from ..scoring._report import ScoreReport, render_markdown
from ..targets._gateway import run_exam, run_score_inputs
from ..targets._target import Target
from . import _judging as judging
from . import _session as session
from ._audit import Exposure, before_launch, public_spec
from ._cast import Stage, git_head, in_session_builder, play, ruling_asker
from ._check import ready
from ._config import (
    CONFIG,
    DEPTHS,
    PER_CLASS,
    AcceptanceConfig,
    PreflightCheck,
    check_git,
    check_spec,
    load_config,
    require,
)
from ._gate import FUSE, GateResult, Progress, RoundFacts, Verdict, advance, gate
from ._live import live
from ._pages import keep_pages
from ._preflight import Configuration, check_configuration, configuration, exposed_exam, import_exam
from ._scoreboard import TIMINGS, Deepening, RoundSummary, keep_screenshots, write_reports
from ._smells import Change, Smell
from ._state import EARLIER, RunState, abandon, check_pin, commitment, locate, secret, seed, state_home, succeed
from ._tickets import Ticket, builder_folder, ticket_id, ticket_kind
from ._verify import certification_of

_VOLATILE = frozenset({"seconds", "duration", "at", "given_at"})  # never in evidence: reruns must match
BASELINE = "baseline"
POLICY = "POLICY.md"  # the sealed report of a run stopped for gaming the exam
_JUDGED = (*DETECTED, *UNDETECTED)


@dataclass
class _Run:
    """What every round of one run shares."""

    project: Path
    config: AcceptanceConfig
    state: RunState
    clock: _Clock
    key: bytes
    fixed_seeds: bool

    @property
    def store(self) -> EvidenceStore:
        return self.state.store

    @property
    def exam(self) -> Path:
        return self.state.work / "exam"

    @property
    def target(self) -> Path:
        return self.project / self.config.target


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
    justified: Ruling | None = None
    reach: dict[str, list[str]] = field(default_factory=dict)  # bug class -> file:line of every possible mutant
    canaries: judging.CanaryRound = field(default_factory=lambda: judging.CanaryRound([], [], [], []))


def accept(project: Path, *, resume: bool = False, fresh: str | None = None) -> Verdict:
    """Run the acceptance of ``project`` to a verdict (accepted, certified or not), or raise Escalation. ``fresh``:
    abandon a stopped run on the record (its reason sealed in its trail) and start a new one."""
    project = project.resolve()
    config = load_config(project)
    state = locate(project, config)
    if fresh is not None:
        state = _abandon(state, fresh, resume)
    store = state.store
    begun = [e for e in store.entries() if e.kind != EARLIER]  # a run that replaced another opens by naming it
    if begun and not resume:
        raise UsageError(f"{state.root} already holds a trail",
                         hint='continue it with --resume, or abandon it for a new run with --fresh "why"')
    # the baseline must be clean and committed when a run starts; a resumed run has changed it on purpose
    if begun:
        require([check_spec(project, config)])
    else:
        ready(project)  # every problem at once, before the first record is written
    store.resume()
    check_pin(state)
    _verified(store)
    if replay(store, config.gate_n).decision == "policy":  # a run stopped for gaming stays stopped, whatever changed
        _gamed(store, replay(store, config.gate_n))
    jail.configure(allow_unsandboxed=jail.POLICY.allow_unsandboxed, protected=(project, state.root, state_home()))
    jail.require()  # no OS layer for role-written code: stop here (exit 7), unless running unsandboxed was allowed
    key, fixed = secret(state)
    run = _Run(project, config, state, _Clock(state.root / TIMINGS), key, fixed)
    if not store.has("preflight"):
        _preflight(run)
    _check_configuration(run)
    progress = replay(store, config.gate_n)
    while progress.decision not in ("accepted", "escalate", "policy"):
        k = progress.rounds + 1
        if k > _max_rounds(config) and not progress.final_round:  # a final round earned is always played
            _escalate(store, progress, f"no acceptance after {k - 1} rounds")
        _check_configuration(run)
        outcome, facts = _play_round(run, k, progress)
        progress, _ = advance(progress, outcome.result, facts)
        _record(run, outcome, progress, facts)
        _file(run)  # only once sealed: a replayed round sees what an uninterrupted one saw
    if progress.decision == "escalate":
        _escalate(store, progress, _fuse_cause(progress))
    if progress.decision == "policy":
        _gamed(store, progress)
    return _verdict(run, progress)


def watch(project: Path, *, resume: bool = False, poll: float = 2.0,
          say: Callable[[str], None] = lambda _line: None, fresh: str | None = None) -> Verdict:
    """``accept``, but when the builder is the agent session and must fix tickets, wait for its next commit and
    go on. Run it outside the session: a fenced session cannot write the run's state, so it cannot run accept
    itself; it only reads its tickets and the scoreboard in the project, fixes, and commits."""
    while True:
        try:
            return accept(project, resume=resume, fresh=fresh)
        except BuilderTurn as turn:
            resume, fresh = True, None
            head = git_head(project.resolve())
            say(f"{turn.message}; waiting for the builder's next commit (now {head[:12]})")
            write_reports(project)
            while git_head(project.resolve()) == head:
                time.sleep(poll)


def _verified(store: EvidenceStore) -> None:
    """A resumed run continues only a trail that verifies: nothing may build on tampered evidence."""
    findings = store.verify_trail()
    if findings:
        raise TamperDetected(f"the trail at {store.root} does not verify: {findings[0].where}: {findings[0].detail}",
                             hint="run tri-agent verify-trail on it; a tampered trail cannot be continued")


def _max_rounds(config: AcceptanceConfig) -> int:
    # a run that never turns green without a repeating ticket must still end
    return 3 * config.gate_n + 6


def _abandon(state: RunState, reason: str, resume: bool) -> RunState:
    """Abandon the run at ``state``, if it holds one, once its trail verifies; the state of the next run."""
    if resume:
        raise UsageError("--fresh and --resume contradict each other", hint="choose one")
    if not state.store.entries():
        return state  # nothing to abandon: this is a new run already
    check_pin(state)
    _verified(state.store)  # an abandonment seals a trail that verifies, never a rewritten one
    records = len(state.store.entries())
    abandon(state, reason)
    new = locate(state.project, load_config(state.project))
    succeed(new, state, reason, records)  # the new run opens by naming it: never mistaken for a first attempt
    return new


def replay(store: EvidenceStore, gate_n: int) -> Progress:
    """The progress the sealed rounds add up to: every gate recomputed from its round's sealed facts."""
    progress = Progress(gate_n=gate_n)
    for entry in (e for e in store.entries() if e.kind == "round"):
        folder = store.root / "records" / entry.name
        facts = RoundFacts.model_validate_json((folder / "facts.json").read_text(encoding="utf-8"))
        result = gate(facts)
        sealed = GateResult.model_validate_json((folder / "gate.json").read_text(encoding="utf-8"))
        if sealed != result:
            raise TamperDetected(f"{entry.name}: its sealed gate does not follow from its sealed facts",
                                 hint="the record was forged or written by another version; start a new run")
        progress, _ = advance(progress, result, facts)
    return progress


def _fuse_cause(progress: Progress) -> str:
    """The ticket that blew the fuse, by its route (exam, builder or process) and id."""
    worst = max(progress.attempts.values())
    signature = sorted(s for s, n in progress.attempts.items() if n == worst)[0]
    return f"{ticket_kind(signature)} ticket {ticket_id(signature)} ({signature}) failed {worst} fix attempts"


def _escalate(store: EvidenceStore, progress: Progress, reason: str) -> NoReturn:
    """Seal the escalation report (once), then stop with exit 8: a human decides from here."""
    name = f"escalation-{progress.rounds:04d}"
    if not store.has(name):
        fused = sorted((s for s, n in progress.attempts.items() if n >= FUSE), key=lambda s: (-progress.attempts[s], s))
        lines = [f"# Escalation after round {progress.rounds}", "", f"{reason}; a human must decide.", "",
                 "Tickets that failed their fix attempts:", ""]
        lines += [f"- {ticket_kind(s)} ticket {ticket_id(s)} (`{s}`): red in {progress.attempts[s]} rounds"
                  for s in fused] or ["- none (no ticket repeated)"]
        lines += ["", f"Gate counter at the stop: {progress.green_streak} of {progress.gate_n}. Read the last round's "
                      "tickets and score in the trail; fix the exam, the target or the roles; start a new run."]

        def fill(folder: Path) -> None:
            (folder / "ESCALATION.md").write_text("\n".join(lines) + "\n", encoding="utf-8")

        store.append(name, "escalation", fill)
    raise Escalation(f"{reason}; a human must decide", hint=f"see {store.root / 'records' / name / 'ESCALATION.md'}")


def _gamed(store: EvidenceStore, progress: Progress) -> NoReturn:
    """Seal the policy report (once), then stop with exit 5: the target passed a canary an honest one fails."""
    name = f"policy-{progress.rounds:04d}"
    report = store.root / "records" / name / POLICY
    if not store.has(name):
        lines = [f"# Policy failure in round {progress.rounds}", "",
                 "The target passed canary cases whose sealed expectation was planted against the spec; an honest "
                 "implementation fails them.", "", *(f"- {g}" for g in progress.gamed), "",
                 "The builder made the exam pass instead of meeting the spec (a case singled out, an expectation "
                 "from a ticket followed against the spec). Review the builder's changes in the round's code.json; "
                 "start a new run."]

        def fill(folder: Path) -> None:
            (folder / POLICY).write_text("\n".join(lines) + "\n", encoding="utf-8")

        store.append(name, "policy", fill)
    raise PolicyViolation(f"round {progress.rounds}: the target passed canary case(s) planted against the spec "
                          f"({', '.join(g.partition(': ')[2] for g in progress.gamed)}): the exam was gamed",
                          hint=f"see {report}; review the builder's changes and start a new run")


def _verdict(run: _Run, progress: Progress) -> Verdict:
    """The sealed verdict of an accepted run: sealed once, read back on every later resume."""
    if not run.store.has("verdict"):
        cert = certification_of(run.store, fixed_now=run.fixed_seeds)
        verdict = Verdict(decision="accepted", rounds=progress.rounds, gate_n=progress.gate_n,
                          certified=cert.certified, reasons=cert.reasons, drivers=cert.drivers)
        run.store.append("verdict", "verdict", lambda folder: _write_json(folder / "verdict.json",
                                                                           verdict.model_dump(mode="json")))
    sealed = Verdict.model_validate_json((run.store.root / "records" / "verdict" / "verdict.json").read_text())
    again = certification_of(run.store)
    if (sealed.certified, sealed.reasons) != (again.certified, again.reasons):
        raise TamperDetected("the sealed verdict's certification does not follow from the sealed episodes and runs",
                             hint="the verdict was forged; the run cannot be trusted")
    return sealed


class _Clock:
    """Wall time per role (not evidence: durations differ between runs) and live progress on stderr."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.seconds: dict[str, float] = json.loads(path.read_text()) if path.exists() else {}
        self.console = Console(stderr=True)

    def step(self, role: str, what: str, fn: Callable[[], Any]) -> Any:
        start = time.monotonic()
        with watching(Meter()) as meter, live(self.console, what, meter):
            try:
                return fn()
            finally:
                self.seconds[role] = round(self.seconds.get(role, 0.0) + time.monotonic() - start, 3)
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self.path.write_text(json.dumps(self.seconds, indent=1, sort_keys=True) + "\n")
                self.console.print(f"  {what}: {time.monotonic() - start:.1f}s")


# --- preflight, configuration, the baseline --------------------------------------------------------------------

def _settings_files(run: _Run) -> list[Path]:
    if run.config.drivers.get("builder") != "in-session":
        return []
    # the local file is Claude Code's own (it records approvals there): checked each round, not sealed
    return [Path.home() / session.PROJECT, run.project / session.PROJECT]


def _preflight(run: _Run) -> None:
    """Sealed before any role acts: the checks, the code as committed, the configuration, the exam as found
    (the run's exam from now on), and the commitments to the first seeds."""
    checks = [check_spec(run.project, run.config), check_git(run.project)]
    config = configuration(run.project, run.config, _settings_files(run))

    def fill(folder: Path) -> None:
        _write_json(folder / "checks.json", [c.model_dump(mode="json") for c in checks])
        _write_json(folder / "code.json", judging.code_of(run.project, "builder", first=True).model_dump(mode="json"))
        _write_json(folder / "configuration.json", config.model_dump(mode="json"))
        shutil.copyfile(run.project / CONFIG, folder / CONFIG)
        import_exam(run.project, run.config, folder / "exam")
        if run.config.drivers.get("builder") == "in-session":
            denied = session.denied_reads(run.project, Path.home())
            _write_json(folder / "exposure.json", {"exam_readable_by_the_session":
                                                   exposed_exam(run.project, run.config, denied)})
        _write_json(folder / "seeds.json", {"fixed_by_caller": run.fixed_seeds, "commitments": {
            label: commitment(seed(run.key, label)) for label in (BASELINE, "round-1")}})

    run.store.append("preflight", "preflight", fill, crlf_kept=True)


def _check_configuration(run: _Run) -> None:
    sealed = Configuration.model_validate_json(
        (run.store.root / "records" / "preflight" / "configuration.json").read_text(encoding="utf-8"))
    check_configuration(configuration(run.project, run.config, _settings_files(run)), sealed)


def _baseline(run: _Run) -> None:
    """The target before any builder acts, on the exam at the baseline seed, twice: a target that is not
    deterministic would make every round unstable, so the run stops here (exit 7). It runs in round 1, once
    the examiner's exam exists, still before the builder."""
    build, out = run.state.builds / BASELINE, run.state.runs / BASELINE
    for path in (build, out):
        shutil.rmtree(path, ignore_errors=True)
    run.clock.step("examiner", "baseline exam build", lambda: build_exam(run.exam, _seed(run, BASELINE), build))
    _pin_build(run, build, f"build-{BASELINE}")
    try:
        run.clock.step("tester", "baseline, twice", lambda: run_exam(build, run.target, out, twice=True))
    except NotDeterministic as exc:
        raise NotDeterministic(f"preflight: baseline double-run: {exc.message}", cases=exc.cases,
                               hint="make the target deterministic (no clocks, random seeds or unordered output) "
                                    "first") from None
    report = score(run_score_inputs(_key(run, build, f"build-{BASELINE}"), out))
    check = PreflightCheck(name="baseline double-run", ok=True,
                           detail=f"byte-identical; the baseline scores {report.verdict} ({_passed(report)})")

    def fill(folder: Path) -> None:
        _write_json(folder / "checks.json", [check.model_dump(mode="json")])
        shutil.copy2(build / "build.json", folder / "build.json")
        shutil.copy2(out / "run.json", folder / "run.json")
        (folder / "score.json").write_text(report.to_json(), "utf-8")
        _canonical_copy(out / "provenance.jsonl", folder / "provenance.jsonl")

    run.store.append(BASELINE, "baseline", fill)


# --- seeds and keys ------------------------------------------------------------------------------------------

def _seed(run: _Run, label: str) -> str:
    """The seed for ``label``, checked against the commitment sealed before its round."""
    value = seed(run.key, label)
    for entry in reversed(run.store.entries()):
        seeds = run.store.root / "records" / entry.name / "seeds.json"
        committed = json.loads(seeds.read_text()).get("commitments", {}) if seeds.exists() else {}
        if label in committed:
            if committed[label] != commitment(value):
                raise TamperDetected(f"the seed for {label} does not match its sealed commitment",
                                     hint="the run's secret changed since the seed was committed; start a new run")
            return value
    raise TamperDetected(f"no sealed commitment for the seed of {label}", hint="the trail is incomplete")


def _pin_build(run: _Run, build: Path, name: str) -> None:
    """Pin a fresh build's digests in the trail before anything uses its key. A round replayed after a stop
    rebuilds its key: it must come out exactly as pinned (builds are deterministic), or the run stops."""
    if run.store.has(name):
        _key(run, build, name)
        return

    def fill(folder: Path) -> None:
        shutil.copy2(build / "build.json", folder / "build.json")

    run.store.append(name, "build", fill)


def _key(run: _Run, build: Path, name: str) -> Path:
    """``build``, after checking it against the digests pinned in the trail (exit 4 on any difference)."""
    pinned = BuildRecord.model_validate_json((run.store.root / "records" / name / "build.json").read_text())
    for part, digest in (("visible", pinned.visible_digest), ("sealed", pinned.sealed_digest)):
        report = verify(build / part, expect=digest)
        if not report.ok:
            first = report.findings[0]
            raise TamperDetected(f"the key of {name} no longer matches its pin: {part}/{first.path} {first.kind}",
                                 hint="a build is never edited; the run cannot continue on a changed key")
    return build


# --- one round -----------------------------------------------------------------------------------------------

def _passed(report: ScoreReport) -> str:
    channels = [c for c in (report.answers, report.behaviors, report.relations) if c is not None]
    return f"{sum(c.passed for c in channels)}/{sum(c.total for c in channels)} units pass"


def _history(store: EvidenceStore) -> judging.History:
    return judging.history([store.root / "records" / e.name for e in store.entries()
                            if e.kind in ("preflight", "baseline", "round")])


def _last_record(store: EvidenceStore, kinds: tuple[str, ...]) -> Path:
    entry = [e for e in store.entries() if e.kind in kinds][-1]
    return store.root / "records" / entry.name


def _materialize(run: _Run) -> None:
    """The round's exam, rebuilt from the sealed records: the exam the last round left (the one preflight
    found, before round 1) and the tickets the last round filed. Nothing an earlier tester wrote."""
    shutil.rmtree(run.state.work, ignore_errors=True)
    shutil.copytree(_last_record(run.store, ("preflight", "round")) / "exam", run.exam)
    rounds = [e for e in run.store.entries() if e.kind == "round"]
    tickets = run.store.root / "records" / rounds[-1].name / "tickets" if rounds else None
    for path in sorted(tickets.glob("*.md")) if tickets else []:
        route, _, name = path.name.partition("-")
        (run.exam / "tickets" / route).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, run.exam / "tickets" / route / name)
    _deliver(run.exam / "tickets" / "builder", {}, _builder_tickets(run)[1])


def _stage(run: _Run, seen: tuple[Path, ...] = (), builds: dict[str, Path] | None = None) -> Stage:
    """Every role's layout maps the run's folders, so the project's own copies never reach a role."""
    empty = run.state.work / "empty"
    empty.mkdir(parents=True, exist_ok=True)
    view: View = {"": run.project, "exam": run.exam, "builds": run.state.builds, "runs": empty,
                  "evidence": run.store.root / "records", **(builds or {})}
    return Stage(view=view, keys=_keys(run), quarantine=run.state.quarantine,
                 transcripts=run.state.root / "transcripts", exposure=Exposure(seen))


def _keys(run: _Run) -> list[Path]:
    """Every key of the run that is pinned in the trail, as its build folder, each checked against its pin: a
    key edited or removed would blind every leak scan to its values (exit 4). Only the build of a round being
    replayed after a stop (pinned after the last round record) may be absent: it is about to be rebuilt."""
    entries = run.store.entries()
    last_round = max((e.seq for e in entries if e.kind == "round"), default=-1)
    keys = []
    for entry in (e for e in entries if e.kind == "build"):
        build = run.state.builds / entry.name.removeprefix("build-")
        if not (build / "sealed").is_dir():
            if entry.seq > last_round:
                continue
            raise TamperDetected(f"the key of {entry.name}, pinned in the trail, is gone from {build}",
                                 hint="a build is never removed; the run cannot continue without its keys")
        keys.append(_key(run, build, entry.name))
    return sorted(keys)


@dataclass
class _Turn:
    """One round in play: what its stages read and write. The table ``ROUND`` runs the stages in the protocol's
    order; each one reads what the earlier ones wrote here."""

    run: _Run
    progress: Progress
    rnd: _Round
    past: judging.History
    spec: tuple[Path, ...]
    episodes: list[EpisodeResult] = field(default_factory=list)
    tickets: list[Ticket] = field(default_factory=list)
    code: judging.CodeSnapshot = field(default_factory=lambda: judging.CodeSnapshot(files={}))
    stable: bool = False
    report: ScoreReport | None = None
    ran: set[str] = field(default_factory=set)
    tester_changed: list[str] = field(default_factory=list)
    diff: list[Change] = field(default_factory=list)
    found: list[Smell] = field(default_factory=list)
    justified: Ruling | None = None
    cost_usd: float = 0.0  # the rulings' spend
    mismatched: list[str] = field(default_factory=list)
    ruling: Ruling | None = None
    mutation: MutationSummary | None = None
    rot: Rotation | None = None
    deepening: Deepening | None = None
    reach: dict[str, list[str]] = field(default_factory=dict)  # bug class -> where a mutant of it can be made
    canaries: judging.CanaryRound = field(default_factory=lambda: judging.CanaryRound([], [], [], []))

    @property
    def name(self) -> str:
        return f"round-{self.rnd.k:04d}"

    def key(self) -> Path:
        """The round's sealed key, as the trail pinned it (only once the build is pinned)."""
        return _key(self.run, self.rnd.build, f"build-{self.name}")


@dataclass(frozen=True)
class _Step:
    """One stage of a round: whose time it is (None: it keeps its own time, or takes none), what the live line
    says, what it does, and when it runs at all."""

    role: str | None
    label: str
    act: Callable[[_Turn], None]
    when: Callable[[_Turn], bool] = lambda _t: True


def _examiner(t: _Turn) -> None:
    t.episodes.append(play(t.run.project, t.run.config, "examiner", t.rnd.k, _stage(t.run))[0])


def _baseline_once(t: _Turn) -> None:
    if not t.run.store.has(BASELINE):
        _baseline(t.run)


def _builder(t: _Turn) -> None:
    run = t.run
    if run.config.drivers.get("builder") == "in-session":
        fence = session.missing(run.project, Path.home(), session.fenced(run.project, run.config))
        t.episodes.append(in_session_builder(run.project, run.store, t.rnd.k, fence))
    else:
        t.episodes.append(run.clock.step("builder", "builder", lambda: play(
            run.project, run.config, "builder", t.rnd.k, _stage(run, t.spec))[0]))
    # the key of this round is made only after this turn
    t.code = judging.code_of(run.project, "builder", t.past.baseline_code)


def _regression(t: _Turn) -> None:
    t.tickets += _regression_build(t.run, t.progress, t.rnd, t.past)


def _build(t: _Turn) -> None:
    build_exam(t.run.exam, t.rnd.seed, t.rnd.build)


def _pin(t: _Turn) -> None:
    _pin_build(t.run, t.rnd.build, f"build-{t.name}")


def _twice(t: _Turn) -> None:
    t.stable, flaky = _run_twice(t.run, t.rnd)
    t.tickets += judging.flaky_tickets(flaky)


def _score(t: _Turn) -> None:
    t.report = score(run_score_inputs(t.key(), t.rnd.run)) if t.stable else None


def _tester(t: _Turn) -> None:
    run, view = t.run, {"builds": t.run.state.work / "empty", f"builds/{t.name}": t.rnd.build}
    served = (*t.spec, t.rnd.run / "actual.jsonl") if t.stable else t.spec
    tester, t.tester_changed = play(run.project, run.config, "tester", t.rnd.k, _stage(run, served, view),
                                    run_case=judging.served(t.rnd.build, t.rnd.run, t.ran))
    t.episodes.append(tester)


def _smell(t: _Turn) -> None:
    ids = frozenset(t.past.case_inputs) | frozenset(judging.case_ids(t.rnd.build))
    t.diff = judging.code_changes(t.past.baseline_code or judging.CodeSnapshot(files={}), t.code)
    t.found, t.justified, usd = _smells(t.run, t.rnd.k, t.code, t.diff, ids, t.past.baseline_code)
    t.cost_usd += usd


def _ticket(t: _Turn) -> None:
    exam = t.run.exam
    changed = [exam / p.removeprefix("exam/") for p in t.tester_changed]
    written = {"builder": [t.run.project / p for p in _since_preflight(t)],
               "tester": [p for p in changed if p.is_file()]}
    t.tickets += _tickets(t.run, t.rnd, t.name, t.report, t.ran, t.found, written)


def _since_preflight(t: _Turn) -> list[str]:
    """The builder's files that are not byte for byte as they were sealed at preflight, before any key existed: a
    sealed value in a file nobody touched since (a vendored library's issue number, a constant) was written before
    the value could be known, and no ticket could make anyone remove it. A file written since is scanned whole."""
    before = t.past.baseline_code.files if t.past.baseline_code else {}
    return [p for p, state in t.code.files.items() if p not in before or before[p].sha256 != state.sha256]


def _canaries(t: _Turn) -> None:
    """The exam's canaries, scored apart against their planted key: a passed one that says the exam was gamed is a
    policy failure; their failures become tickets like any other (filed only beside other builder work)."""
    t.canaries = judging.canary_round(t.key(), t.rnd.run, t.report, _keys(t.run), _plan(t.run),
                                      frozenset(t.progress.pressed))


def _reruns(t: _Turn) -> None:
    t.mismatched = judging.fingerprint_rerun(t.key(), t.rnd.run, t.run.target, t.rnd.k)
    t.tickets += judging.rerun_tickets(t.mismatched)


def _weakened(t: _Turn) -> None:
    run = t.run
    t.ruling, usd = _ruling(run.config, run.project, run.state.root / "transcripts", t.rnd.k, t.diff)
    t.cost_usd += usd
    t.tickets += judging.weakened_tickets(t.ruling) if t.ruling else []


def _reach(t: _Turn) -> None:
    """Mutability per bug class, every round (the gate itself does not run in a red round): code rewritten out
    of the operators' reach since the start is a builder ticket that keeps the round red."""
    baseline = Target.load(t.run.target).baseline
    t.reach, start, minimum = judging.reach(baseline, t.run.exam / "mutations.yaml", t.past.baseline_code,
                                            t.run.project)
    t.tickets += judging.out_of_reach_tickets(t.reach, start, minimum)


def _mutation(t: _Turn) -> None:
    run, p = t.run, t.progress
    how = judging.sample(k=t.rnd.k, final=t.rnd.final, size=DEPTHS[run.config.depth][1],
                         per_class=PER_CLASS[run.config.depth], used=p.mutants_used, retired=p.mutants_retired,
                         last_green=p.last_green)
    gate_run = judging.mutation(run.target, t.key(), run.exam / "mutations.yaml", t.rnd.run / "mutation", t.report,
                                how, run.exam, t.rnd.seed, run.config.mutation, t.rnd.k,
                                hunt_secret=seed(run.key, "hunt"), recall=_recall(run))
    t.mutation, t.rot = (gate_run.summary, gate_run.rotation) if gate_run else (None, None)
    t.tickets += judging.stale_ticket(t.rot) + judging.too_few_ticket(t.mutation)


def _deepen(t: _Turn) -> None:
    t.deepening = _deepening(t.run.store, t.rnd, t.mutation, t.progress, t.past)
    t.tickets += judging.shallow_ticket(t.deepening.new_cases, t.rnd.k, t.rnd.final)


def _judge(t: _Turn) -> None:
    judge, changed = play(t.run.project, t.run.config, "judge", t.rnd.k, _stage(t.run))
    t.episodes.append(judge)
    t.tickets += judging.judge_tickets(t.run.exam, changed, t.key(), _keys(t.run))
    t.tickets += judging.episode_tickets(t.episodes)


ROUND: tuple[_Step, ...] = (  # a round of the protocol, in order
    _Step("examiner", "examiner deepens the exam", _examiner),
    _Step(None, "baseline, the first time", _baseline_once),
    _Step(None, "builder", _builder),
    _Step("examiner", "regression exam build", _regression, when=lambda t: t.rnd.final),
    _Step("examiner", "exam build and seal", _build, when=lambda t: not t.rnd.final),
    _Step(None, "the build pinned in the trail", _pin),
    _Step("tester", "every case, twice, through the gateway", _twice),
    _Step("judge", "three-channel score", _score),
    _Step("tester", "tester (fresh)", _tester),
    _Step("judge", "smells", _smell),
    _Step("judge", "tickets", _ticket),
    _Step("judge", "canaries", _canaries),
    _Step("judge", "fingerprint re-runs", _reruns),
    _Step("judge", "weakened-test ruling", _weakened),
    _Step("judge", "mutability per bug class", _reach),
    _Step("judge", "mutation gate", _mutation),
    _Step(None, "deepening", _deepen),
    _Step("judge", "judge", _judge),
)


def _play_round(run: _Run, k: int, progress: Progress) -> tuple[_Outcome, RoundFacts]:
    """One round: the stages of ``ROUND`` over one ``_Turn``, each timed by the run's clock, then the gate."""
    turn = _begin(run, k, progress)
    for step in ROUND:
        if step.when(turn):
            if step.role is None:
                step.act(turn)
            else:
                run.clock.step(step.role, step.label, partial(step.act, turn))
    return _end(turn)


def _begin(run: _Run, k: int, progress: Progress) -> _Turn:
    final = progress.final_round
    rnd = _Round(k, _seed(run, f"round-{k}"), final, run.state.builds / f"round-{k:04d}",
                 run.state.runs / f"round-{k:04d}")
    for path in (rnd.build, rnd.run, rnd.build.with_name(rnd.build.name + "-parts")):
        shutil.rmtree(path, ignore_errors=True)  # an interrupted round starts over; evidence is never touched
    _materialize(run)
    past = _history(run.store)
    run.clock.console.print(f"[bold]round {k}[/bold]{' (final: baseline and every case ever red)' if final else ''}")
    return _Turn(run, progress, rnd, past, public_spec(run.project, run.config.spec))


def _end(t: _Turn) -> tuple[_Outcome, RoundFacts]:
    added = judging.with_pressure(t.tickets, t.canaries.tickets, t.progress.pressed)
    filed = [*t.tickets, *added]
    ids = {x.id for x in filed}
    facts = _facts(t.rnd, t.report, t.stable, t.mutation, t.rot, t.tickets, t.episodes)  # the fuse counts these alone
    facts = facts.model_copy(update={
        "mutability": {c: len(v) for c, v in t.reach.items()}, "canaries": len(t.canaries.planted),
        "canaries_judged": t.canaries.report is not None, "canaries_passed": t.canaries.passed,
        "canaries_gamed": t.canaries.gamed,
        # a canary's ticket filed, on its own or as a ticket the exam filed anyway: the builder was pressed
        "pressure": sorted({c.signature for c in t.canaries.tickets if c.id in ids})})
    result = gate(facts)
    t.run.clock.console.print(f"  gate: {'GREEN' if result.green else 'red'}"
                              + (f" ({result.reasons[0]})" if result.reasons else ""))
    assert t.deepening is not None  # the deepening stage always runs
    return _Outcome(t.rnd, t.report, filed, t.mutation, t.rot, t.found, t.episodes, result, t.deepening, t.code,
                    t.ruling, t.cost_usd, t.mismatched, t.justified, t.reach, t.canaries), facts


def _recall(run: _Run) -> Recall:
    """The hunts' runs by content, kept in the run's state folder (no role or jail sees it) across rounds."""
    return Recall(run.state.root / "recall")


def _tickets(run: _Run, rnd: _Round, name: str, report: ScoreReport | None, ran: set[str], found: list[Smell],
             written: dict[str, list[Path]]) -> list[Ticket]:
    # everything the roles may write, every round: a hard-coded answer is flagged until it is gone
    build, keys, text = _key(run, rnd.build, f"build-{name}"), _keys(run), _plan(run)
    return ((judging.score_tickets(build, report, keys, text) if report else [])
            + judging.skipped_tickets(build, ran, rnd.k)
            + judging.leak_tickets(build, list(public_spec(run.project, run.config.spec)), written, keys)
            + judging.smell_and_guard(build, found, keys))


def _plan(run: _Run) -> str:
    """The exam's test plan as the round's tickets quote it."""
    plan = run.exam / "TESTPLAN.md"
    return plan.read_text(encoding="utf-8", errors="replace") if plan.is_file() else ""


def _ruling(config: AcceptanceConfig, project: Path, transcripts: Path, k: int,
            diff: list[Change]) -> tuple[Ruling | None, float]:
    """The judge's model rules on the builder's test changes; returns the ruling and what it cost."""
    judge = ruling_asker(config, project, k, transcripts)
    if judge is None:
        return None, 0.0

    def ask(question: str) -> str:
        try:
            return judge.ask_text(judging.RULING_SYSTEM, question)
        except judge.errors as exc:  # an API failure is an unreadable sample: the ruling fails closed
            return f"(no answer: {type(exc).__name__})"

    ruling = judging.weakened_ruling(ask, diff, k=config.weakening.samples, floor=config.weakening.floor)
    return ruling, judge.spent_usd()


def _smells(run: _Run, k: int, code: judging.CodeSnapshot, diff: list[Change], ids: frozenset[str],
            baseline: judging.CodeSnapshot | None) -> tuple[list[Smell], Ruling | None, float]:
    """The builder's smells, less the weakenings a model judge rules the spec justifies (unanimously): a
    scripted or command judge clears nothing, by silence or otherwise."""
    spec = "\n\n".join((run.project / s).read_text(encoding="utf-8", errors="replace") for s in run.config.spec)
    # what the code may read of how it is run: what the spec names, and the variables the target file gives it
    # (both pinned at preflight: the builder cannot name a probe into them)
    named = spec + "\n\n" + (run.project / run.config.target).read_text(encoding="utf-8", errors="replace")
    found = judging.builder_smells(code, diff, ids, named, baseline)
    judge = ruling_asker(run.config, run.project, k, run.state.root / "transcripts")
    if judge is None:
        return found, None, 0.0

    def ask(question: str) -> str:
        try:
            return judge.ask_text(judging.RULING_SYSTEM, question)
        except judge.errors as exc:  # an unreadable sample clears nothing
            return f"(no answer: {type(exc).__name__})"

    ruling = judging.justify_ruling(ask, found, code, spec)
    return judging.cleared(found, ruling), ruling, judge.spent_usd()


def _regression_build(run: _Run, progress: Progress, rnd: _Round, past: judging.History) -> list[Ticket]:
    """The final round's exam: the baseline whole, and each ever-red case rebuilt at its seed."""
    parts_dir = rnd.build.with_name(rnd.build.name + "-parts")
    baseline = _seed(run, BASELINE)
    seeds = [baseline, *sorted(s for s in progress.red_cases if s != baseline)]
    parts = []
    for i, value in enumerate(seeds):
        build_exam(run.exam, value, parts_dir / f"part-{i}")
        parts.append(Part(parts_dir / f"part-{i}", None if value == baseline else frozenset(progress.red_cases[value])))
    rnd.seed = " + ".join([f"{baseline[:8]} (all)", *(f"{s[:8]} ({len(progress.red_cases[s])} red)"
                                                      for s in seeds[1:])])
    composed = compose_build(parts, rnd.build, rnd.seed)
    rnd.origin = composed.origin
    now = judging.case_digests(rnd.build)
    red = sorted(c for cases in progress.red_cases.values() for c in cases)
    changed = [c for c in red if c in now and c in past.case_inputs and now[c] != past.case_inputs[c]]
    return judging.regression_tickets(composed.missing, changed)


def _run_twice(run: _Run, rnd: _Round) -> tuple[bool, list[str]]:
    """(stable, the cases that differed between the two runs)."""
    try:
        run_exam(rnd.build, run.target, rnd.run, twice=True)
    except NotDeterministic as exc:
        return False, exc.cases
    return True, []


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


def _file(run: _Run) -> None:
    """Deliver the builder's tickets where a session playing the builder reads them: the last round's open
    and, in ``resolved/``, every earlier one since resolved; audited on the way like anything a builder receives."""
    folder = run.project / "exam" / "tickets" / "builder"
    shutil.rmtree(folder, ignore_errors=True)
    open_tickets, resolved = _builder_tickets(run)
    with tempfile.TemporaryDirectory(prefix="tri-deliver-") as tmp:
        staged = Path(tmp) / "exam" / "tickets" / "builder"
        staged.mkdir(parents=True)
        _deliver(staged, open_tickets, resolved)
        before_launch(load_charter("builder").contract, Path(tmp), {}, _keys(run))
        if open_tickets or resolved:
            shutil.copytree(staged, folder)


def _builder_tickets(run: _Run) -> tuple[dict[str, str], dict[str, str]]:
    """(open, resolved) builder tickets, id -> text, from the sealed rounds' tickets (never a live folder); the
    resolved ones guarded again, against every key pinned since they were filed."""
    rounds = []
    for entry in (e for e in run.store.entries() if e.kind == "round"):
        folder = run.store.root / "records" / entry.name / "tickets"
        rounds.append((int(entry.name.removeprefix("round-")), {
            path.name.removeprefix("builder-").removesuffix(".md"): path.read_text(encoding="utf-8")
            for path in sorted(folder.glob("builder-*.md"))}))
    open_tickets, resolved = builder_folder(rounds)
    return open_tickets, judging.guarded_texts(resolved, _keys(run))


def _deliver(folder: Path, open_tickets: dict[str, str], resolved: dict[str, str]) -> None:
    for sub, tickets in (("", open_tickets), ("resolved", resolved)):
        for tid, text in tickets.items():
            (folder / sub).mkdir(parents=True, exist_ok=True)
            (folder / sub / f"{tid}.md").write_text(text, encoding="utf-8")


def _facts(rnd: _Round, report: ScoreReport | None, stable: bool, mutation: MutationSummary | None,
           rot: Rotation | None, tickets: list[Ticket], episodes: list[EpisodeResult]) -> RoundFacts:
    passed = total = 0
    if report is not None:
        channels = [report.answers, report.behaviors, report.relations]
        passed = sum(c.passed for c in channels if c is not None)
        total = sum(c.total for c in channels if c is not None)
    blockers = list(report.blockers) if report else ["the run could not be scored"]
    blockers += [t.title for t in tickets if t.route != "builder" or t.signature.startswith(_BLOCKING)]
    mutants = mutation.mutants if mutation else []
    if mutation is not None and mutation.sham not in ("passed", "not run"):
        blockers.append(f"mutation gate: an edit that changes nothing was told apart ({mutation.sham}): kills say "
                        "nothing of the exam")
    return RoundFacts(round=rnd.k, stable=stable, passed=passed, total=total, blockers=blockers,
                      mutants_judged=sum(1 for m in mutants if m.status in _JUDGED),
                      mutants_detected=sum(1 for m in mutants if m.status in DETECTED),
                      failing_tickets=[t.signature for t in tickets],
                      red_cases=judging.red_cases(report, lambda case: rnd.origin.get(case, rnd.seed)),
                      # a mutant sampled in a rotated round is used, judged or not: it cannot stay "new"
                      mutants_used_ids=sorted({m.id for m in mutants if m.status in _JUDGED} |
                                                set(rot.chosen if rot else [])),
                      # proven on this very code: the proof retires the mutant only while the code stays the same
                      mutants_equivalent=[f"{m.id}@{mutation.target_digest}" for m in mutants
                                          if mutation and m.reason.startswith(EQUIVALENT)])


# builder tickets that keep a round red alone
_BLOCKING = ("builder:smell:", "builder:judge:", "builder:flaky:", "builder:mutability:")


def _record(run: _Run, outcome: _Outcome, progress: Progress, facts: RoundFacts) -> None:
    rnd, report, mutation = outcome.rnd, outcome.report, outcome.mutation
    nxt = f"round-{rnd.k + 1}"

    def fill(folder: Path) -> None:
        for name in ("build.json", "caliber.yaml"):
            shutil.copy2(rnd.build / name, folder / name)
        shutil.copytree(run.exam, folder / "exam", ignore=_exam_copy(run.exam))
        _copy_tester(run.exam / "judge", folder / "tester")
        if report is not None:
            (folder / "score.json").write_text(report.to_json(), "utf-8")
            (folder / "score.md").write_text(render_markdown(report), "utf-8")
        keep_screenshots(rnd.run / "outputs", report, rnd.final, folder)
        keep_pages(rnd.build, run.target, rnd.run, report, folder)
        for name in ("actual.jsonl", "observed_behaviors.jsonl", "provenance.jsonl"):
            if (rnd.run / name).exists():
                _canonical_copy(rnd.run / name, folder / name)
        if (rnd.run / "run.json").exists():
            shutil.copy2(rnd.run / "run.json", folder / "run.json")
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
        if outcome.justified is not None:
            _write_json(folder / "ruling-justified.json", outcome.justified.model_dump(mode="json"))
        _write_json(folder / "facts.json", facts.model_dump(mode="json"))
        _write_json(folder / "mutability.json", outcome.reach)  # where each bug class can be mutated
        if outcome.canaries.report is not None:  # what the canaries were judged by
            (folder / "canary-score.json").write_text(outcome.canaries.report.to_json(), "utf-8")
        _write_json(folder / "gate.json", outcome.result.model_dump(mode="json"))
        _write_json(folder / "progress.json", progress.model_dump(mode="json"))
        _write_json(folder / "episodes.json", [e.model_dump(mode="json") for e in outcome.episodes])
        _write_json(folder / "layers.json", {e.role: e.isolation for e in outcome.episodes})
        _write_json(folder / "round.json", _round_summary(outcome, progress).model_dump(mode="json"))
        _write_json(folder / "seeds.json", {"revealed": {f"round-{rnd.k}": seed(run.key, f"round-{rnd.k}")},
                                            "commitments": {nxt: commitment(seed(run.key, nxt))}})
        if any(e.attempts and e.attempts[0].driver == "in-session" for e in outcome.episodes):
            _write_json(folder / "session.json", {"head": git_head(run.project)})

    run.store.append(f"round-{rnd.k:04d}", "round", fill, crlf_kept=True)


def _exam_copy(root: Path) -> Callable[[str, list[str]], list[str]]:
    """What a record's exam copy leaves out: tickets (recorded apart) and the tester's results."""

    def ignore(folder: str, names: list[str]) -> list[str]:
        rel = Path(folder).relative_to(root)
        if rel == Path("."):
            return [n for n in names if n in ("tickets", "__pycache__")]
        if rel == Path("judge"):
            return [n for n in names if n != "config"]
        return [n for n in names if n == "__pycache__"]

    return ignore


def _copy_tester(judge: Path, dest: Path) -> None:
    dest.mkdir()
    for path in sorted(judge.rglob("*")) if judge.is_dir() else []:
        rel = path.relative_to(judge)
        if path.is_file() and rel.parts[0] != "config" and not path.is_symlink():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest / rel)


def _round_summary(outcome: _Outcome, progress: Progress) -> RoundSummary:
    report, mutation, rnd = outcome.report, outcome.mutation, outcome.rnd
    named = {"answers": report.answers, "behaviors": report.behaviors, "relations": report.relations} if report else {}
    channels = {name: c for name, c in named.items() if c is not None}
    routes: dict[str, int] = {}
    for t in outcome.tickets:
        routes[t.route] = routes.get(t.route, 0) + 1
    kill = "-" if mutation is None else mutation.figure()
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
                        isolation={e.role: e.isolation for e in outcome.episodes},
                        mutability={c: len(where) for c, where in outcome.reach.items()},
                        canaries=outcome.canaries.figure())


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

