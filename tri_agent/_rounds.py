"""The orchestrator: the one module that composes a hard acceptance, round after round.

Round k: the examiner's episode -> exam build (new seed) -> the builder's episode -> the gateway runs
every case twice -> the tester's episode (fresh; it runs every case through ``run_case``) -> the judge's
mechanical work (three-channel score, tickets routed by attribution and leak-guarded, the mutation
gate, differential in round 1 while the target is still red) and the judge's episode -> the gate ->
one sealed evidence record chained into the trail. Every role works in its own assembled workspace
and is audited; a breach quarantines the role's output and stops the run (exit 5).

Evidence holds no clock and no duration, so an interrupted run resumed with ``resume=True`` ends with
the same trail digest as an uninterrupted one.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from rich.console import Console

from ._acceptance import AcceptanceConfig, check_git, check_spec, load_config, require
from ._build import build_exam
from ._caliber import load_caliber
from ._contract import Charter, load_charter
from ._driver import Attempt, Driver, Episode, EpisodeResult, Limits, ScriptedDriver
from ._errors import BuilderTurn, Escalation, InfrastructureFailure, PolicyViolation, UsageError
from ._evidence import EvidenceStore
from ._executor import CommandDriver
from ._gate import GateResult, Progress, RoundFacts, advance, gate
from ._gateway import Provenance, run_exam, run_score_inputs
from ._grading import score
from ._leaks import scan_leaks
from ._llm import anthropic_driver, openai_driver
from ._mutation import DETECTED, UNDETECTED, MutationSummary, mutate
from ._report import ScoreReport, render_markdown
from ._sandbox import Layers
from ._tickets import Ticket, guard, tickets_from
from ._tools import ToolBox
from ._workspace import assemble, harvest, quarantine, snapshot

TIMINGS = "TIMINGS.json"
_VOLATILE = frozenset({"seconds", "duration", "at", "given_at"})  # never in evidence: reruns must match


class RoundSummary(BaseModel):
    """What one round's evidence record says, for the scoreboard."""

    round: int
    seed: str
    final: bool
    green: bool
    reasons: list[str]
    passed: int
    total: int
    kill_rate: str
    tickets: dict[str, int]
    simulation: bool
    cost_usd: dict[str, float] = {}
    isolation: dict[str, list[str]] = {}


@dataclass
class _Round:
    k: int
    seed: str
    final: bool
    build: Path
    run: Path


def accept(project: Path, *, resume: bool = False) -> tuple[str, Progress]:
    """Run the acceptance of ``project`` to a decision; returns it ("accepted") or raises Escalation."""
    project = project.resolve()
    config = load_config(project)
    store = EvidenceStore(_evidence_root(project, config))
    if store.entries() and not resume:
        raise UsageError(f"{store.root} already holds a trail", hint="continue it with --resume")
    # the baseline must be clean and committed when a run starts; a resumed run has changed it on purpose
    require([check_spec(project, config)] + ([] if store.entries() else [check_git(project)]))
    store.resume()
    progress = _progress(store, config)
    while True:
        k = progress.rounds + 1
        if k > _max_rounds(config):
            raise Escalation(f"no acceptance after {k - 1} rounds", hint=f"a human must look at {store.root}")
        facts, result, summary = _play_round(project, config, store, k, progress.final_round)
        progress, decision = advance(progress, result, facts)
        _record(store, k, summary, progress, project)
        if decision in ("accepted", "escalate"):
            break
    if decision == "escalate":
        raise Escalation(f"a ticket failed {max(progress.attempts.values())} fix attempts; a human must decide",
                         hint=f"see {store.root}")
    return decision, progress


def _max_rounds(config: AcceptanceConfig) -> int:
    # a run that never turns green without a repeating ticket must still end
    return 3 * config.gate_n + 6


def _evidence_root(project: Path, config: AcceptanceConfig) -> Path:
    root = Path(config.evidence)
    return root if root.is_absolute() else project / root


def _progress(store: EvidenceStore, config: AcceptanceConfig) -> Progress:
    entries = [e for e in store.entries() if e.kind == "round"]
    if not entries:
        return Progress(gate_n=config.gate_n)
    return Progress.model_validate_json((store.root / "records" / entries[-1].name / "progress.json").read_text())


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


def _play_round(project: Path, config: AcceptanceConfig, store: EvidenceStore, k: int,
                final: bool) -> tuple[RoundFacts, GateResult, dict[str, Any]]:
    seed = "1" if final else str(k)  # the final round is the baseline again: the first round's cases
    rnd = _Round(k, seed, final, project / "builds" / f"round-{k:04d}", project / "runs" / f"round-{k:04d}")
    for path in (rnd.build, rnd.run):
        shutil.rmtree(path, ignore_errors=True)  # an interrupted round starts over; evidence is never touched
    clock = _Clock(project / TIMINGS)
    written: dict[str, list[str]] = {"builder": [], "tester": []}
    clock.console.print(f"[bold]round {k}[/bold]{' (final)' if final else ''}, seed {seed}")
    episodes = [clock.step("examiner", "examiner writes the exam", lambda: _episode(project, config, "examiner", k))]
    clock.step("examiner", "exam build and seal", lambda: build_exam(project / config.exam, seed, rnd.build))
    if config.drivers.get("builder") == "in-session":
        episodes.append(_in_session_builder(project, store, k))
    else:
        episodes.append(clock.step("builder", "builder",
                                   lambda: _episode(project, config, "builder", k, written=written["builder"])))
    stable = clock.step("tester", "every case, twice, through the gateway", lambda: _run_twice(project, config, rnd))
    report = clock.step("judge", "three-channel score",
                        lambda: score(run_score_inputs(rnd.build, rnd.run)) if stable else None)
    ran: set[str] = set()
    episodes.append(clock.step("tester", "tester (fresh)", lambda: _episode(
        project, config, "tester", k, run_case=_served(rnd, ran), written=written["tester"])))
    tickets = clock.step("judge", "tickets", lambda: _tickets(rnd, report) if report else [])
    tickets += _process_tickets(rnd, ran) + _leak_tickets(project, config, rnd, written)
    mutation = clock.step("judge", "mutation gate", lambda: _mutation(project, config, rnd, report, k))
    episodes.append(clock.step("judge", "judge", lambda: _episode(project, config, "judge", k)))
    _file(project, tickets)
    facts = _facts(rnd, report, stable, mutation, tickets, episodes)
    result = gate(facts)
    clock.console.print(f"  gate: {'GREEN' if result.green else 'red'}" + (f" ({result.reasons[0]})" if
                                                                             result.reasons else ""))
    summary = {"round": rnd, "report": report, "tickets": tickets, "mutation": mutation, "result": result,
               "episodes": episodes}
    return facts, result, summary


def _episode(project: Path, config: AcceptanceConfig, role: str, k: int,
             run_case: Callable[[str], dict[str, Any]] | None = None,
             written: list[str] | None = None) -> EpisodeResult:
    charter = load_charter(role)
    with tempfile.TemporaryDirectory(prefix=f"tri-{role}-") as tmp:
        ws = Path(tmp) / "ws"
        assemble(charter.contract, project, ws)
        before = snapshot(ws)
        tools = ToolBox(charter.contract, ws, run_case=run_case)
        driver = _driver(config, role, project, k)
        result = driver.run(Episode(charter, _task(charter, k), tools, Limits()))
        result = result.model_copy(update={"isolation": _isolation(driver)})
        after = snapshot(ws)
        try:
            changed = harvest(charter.contract, before, after, ws, project)
            if written is not None:
                written += changed
        except PolicyViolation:
            quarantine(ws, project / "quarantine", f"{role}-round-{k:04d}")
            raise
    return result


def _isolation(driver: Driver) -> list[str]:
    """The layers that really applied: a command agent acts on files itself, the others only through tools."""
    layers = ["physical-omission", "write-audit"]
    if isinstance(driver, CommandDriver):
        return [*layers, "bubblewrap"] if driver.sandbox else layers
    return [*layers, "tool-confinement"]


def _in_session_builder(project: Path, store: EvidenceStore, k: int) -> EpisodeResult:
    """The agent session is the builder: a round after builder tickets waits until it committed a fix."""
    head = _git_head(project)
    rounds = [e for e in store.entries() if e.kind == "round"]
    last = store.root / "records" / rounds[-1].name if rounds else None
    tickets = sorted((last / "tickets").glob("builder-*.md")) if last else []
    if tickets and last is not None and json.loads((last / "session.json").read_text())["head"] == head:
        raise BuilderTurn(f"round {k} waits for the builder: {len(tickets)} ticket(s) in exam/tickets/builder",
                          hint="fix them in target/, commit, then run: tri-agent accept --resume")
    summary = f"the session committed {head[:12]}" if tickets else f"the target as committed ({head[:12]})"
    attempt = Attempt(driver="in-session", model=None, status="ok", cost_basis="none: the agent session",
                      seconds=0.0)
    return EpisodeResult(role="builder", status="ok", summary=summary, simulation=False, attempts=[attempt],
                         isolation=["none: the agent session is the builder, bound by the charter and the audit of "
                                    "what it commits"])


def _git_head(project: Path) -> str:
    done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=project, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise UsageError("an in-session builder needs a git work tree with commits", hint="commit the target")
    return done.stdout.strip()


def _task(charter: Charter, k: int) -> str:
    return f"Round {k}. Play your role as your charter says, then submit."


def _driver(config: AcceptanceConfig, role: str, project: Path, k: int) -> Driver:
    name = config.drivers.get(role, "scripted")
    if name == "scripted":
        if config.script is None:
            raise UsageError(f"the {role} is scripted but acceptance.yaml names no script")
        return ScriptedDriver(project / config.script, k)
    if name == "command":
        if role not in config.commands:
            raise UsageError(f"the {role} runs as a command but acceptance.yaml has no commands.{role}")
        return CommandDriver(config.commands[role])
    if name in ("anthropic", "openai"):
        return _api_driver(config, role, name, project)
    raise UsageError(f"driver {name!r} cannot play the {role}", hint="in-session is for the builder only")


def _api_driver(config: AcceptanceConfig, role: str, name: str, project: Path) -> Driver:
    spec = config.models.get(role)
    if spec is None:
        raise UsageError(f"the {role} uses {name} but acceptance.yaml has no models.{role}")
    env = spec.api_key_env or ("ANTHROPIC_API_KEY" if name == "anthropic" else "OPENAI_API_KEY")
    key = os.environ.get(env)
    if not key:
        raise UsageError(f"the {role}'s {name} driver needs {env}", hint=f"export {env}")
    transcripts = project / "transcripts"
    if name == "anthropic":
        return anthropic_driver(spec.model, api_key=key, base_url=spec.base_url, transcripts=transcripts)
    return openai_driver(spec.model, api_key=key, base_url=spec.base_url, api=spec.api, transcripts=transcripts)


def _run_twice(project: Path, config: AcceptanceConfig, rnd: _Round) -> bool:
    try:
        run_exam(rnd.build, project / config.target, rnd.run, twice=True)
    except InfrastructureFailure:
        return False
    return True


def _served(rnd: _Round, seen: set[str]) -> Callable[[str], dict[str, Any]]:
    """The tester's run_case: the gateway already ran the case; the tester gets its outputs, nothing else.
    ``seen`` collects the cases the tester ran, so a skipped case is a process finding."""
    if not (rnd.run / "provenance.jsonl").exists():
        return lambda case: {"case": case, "error": "the run was unstable; no output is served"}
    provenance = {p.case: p for p in (Provenance.model_validate_json(x)
                                      for x in (rnd.run / "provenance.jsonl").read_text().splitlines() if x)}
    rows = [json.loads(x) for x in (rnd.run / "actual.jsonl").read_text().splitlines() if x]

    def run_case(case: str) -> dict[str, Any]:
        if case not in provenance:
            return {"case": case, "error": "no such case in this round"}
        p = provenance[case]
        seen.add(case)
        return {"case": case, "behavior": p.behavior, "exit_code": p.exit_code,
                "rows": [r for r in rows if r.get("case") == case]}

    return run_case


def _process_tickets(rnd: _Round, ran: set[str]) -> list[Ticket]:
    """Findings about the run itself: a designed case that never ran is debt, and the round is red."""
    cases = [json.loads(x)["case"] for x in (rnd.build / "visible" / "cases.jsonl").read_text().splitlines() if x]
    skipped = sorted(set(cases) - ran)
    if not skipped:
        return []
    return [Ticket(id="t-" + hashlib.sha256(b"orchestrator:tester:skipped").hexdigest()[:10], route="orchestrator",
                   signature="orchestrator:tester:skipped", title=f"the tester skipped {len(skipped)} case(s)",
                   body=f"{len(skipped)} of {len(cases)} designed cases never ran through run_case in round "
                        f"{rnd.k}; every case must run.", cases=skipped[:3])]


def _leak_tickets(project: Path, config: AcceptanceConfig, rnd: _Round, written: dict[str, list[str]]) -> list[Ticket]:
    """Sealed values in what the builder or the tester wrote this round (hard-coded answers, copied keys)."""
    caliber, _ = load_caliber(rnd.build / "caliber.yaml")
    inputs = [rnd.build / "visible", *(project / s for s in config.spec)]
    out = []
    for role, paths in sorted(written.items()):
        files = [project / p for p in paths if (project / p).is_file()]
        if not files:
            continue
        hits = scan_leaks([rnd.build / "sealed" / "answers.jsonl"], files, inputs=inputs, key=list(caliber.key)).hits
        if hits:
            where = ", ".join(h.where.removeprefix(str(project) + "/") for h in hits[:3])
            out.append(Ticket(id="t-" + hashlib.sha256(f"leak:{role}".encode()).hexdigest()[:10], route="orchestrator",
                              signature=f"orchestrator:leak:{role}", title=f"the {role} wrote sealed values",
                              body=f"{len(hits)} sealed value(s) in what the {role} wrote this round: {where}",
                              cases=[]))
    return out


def _tickets(rnd: _Round, report: ScoreReport) -> list[Ticket]:
    visible = rnd.build / "visible"

    def case_input(case: str) -> str | None:
        files = sorted((visible / "inputs" / case).glob("*")) if case else []
        return files[0].read_text(encoding="utf-8", errors="replace") if files else None

    key = report.answers.failures[0].key if report.answers.failures else {}
    return guard(tickets_from(report, case_input), rnd.build / "sealed" / "answers.jsonl", [visible], list(key))


def _mutation(project: Path, config: AcceptanceConfig, rnd: _Round, report: ScoreReport | None,
              k: int) -> MutationSummary | None:
    menu = project / config.exam / "mutations.yaml"
    if report is None or not menu.is_file():
        return None
    red = report.verdict != "pass"
    return mutate(project / config.target, rnd.build, menu, rnd.run / "mutation", differential=red,
                  skip_drifted=True, threshold=1.0, minimum=3)


def _file(project: Path, tickets: list[Ticket]) -> None:
    for t in tickets:
        folder = project / "exam" / "tickets" / t.route
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{t.id}.md").write_text(t.markdown(), encoding="utf-8")


def _facts(rnd: _Round, report: ScoreReport | None, stable: bool, mutation: MutationSummary | None,
           tickets: list[Ticket], episodes: list[EpisodeResult]) -> RoundFacts:
    passed = total = 0
    if report is not None:
        channels = [report.answers, report.behaviors, report.relations]
        passed = sum(c.passed for c in channels if c is not None)
        total = sum(c.total for c in channels if c is not None)
    blockers = list(report.blockers) if report else ["the run could not be scored"]
    blockers += [f"{e.role} episode ended {e.status}" for e in episodes if not e.valid]
    blockers += [t.title for t in tickets if t.route == "orchestrator"]
    detected = sum(1 for m in (mutation.mutants if mutation else []) if m.status in DETECTED)
    judged = detected + sum(1 for m in (mutation.mutants if mutation else []) if m.status in UNDETECTED)
    return RoundFacts(round=rnd.k, stable=stable, passed=passed, total=total, blockers=blockers,
                      mutants_judged=judged, mutants_detected=detected,
                      failing_tickets=[t.signature for t in tickets])


def _record(store: EvidenceStore, k: int, summary: dict[str, Any], progress: Progress, project: Path) -> None:
    rnd: _Round = summary["round"]
    report: ScoreReport | None = summary["report"]
    result: GateResult = summary["result"]
    mutation: MutationSummary | None = summary["mutation"]

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
        for t in summary["tickets"]:
            (tickets / f"{t.route}-{t.id}.md").write_text(t.markdown(), "utf-8")
        _write_json(folder / "gate.json", result.model_dump(mode="json"))
        _write_json(folder / "progress.json", progress.model_dump(mode="json"))
        _write_json(folder / "episodes.json", [e.model_dump(mode="json") for e in summary["episodes"]])
        _write_json(folder / "layers.json", Layers().model_dump(mode="json"))
        _write_json(folder / "round.json", _round_summary(rnd, result, report, mutation, summary).model_dump())
        if any(e.attempts and e.attempts[0].driver == "in-session" for e in summary["episodes"]):
            _write_json(folder / "session.json", {"head": _git_head(project)})

    store.append(f"round-{k:04d}", "round", fill)


def _round_summary(rnd: _Round, result: GateResult, report: ScoreReport | None, mutation: MutationSummary | None,
                   summary: dict[str, Any]) -> RoundSummary:
    channels = [c for c in ((report.answers, report.behaviors, report.relations) if report else ()) if c]
    routes: dict[str, int] = {}
    for t in summary["tickets"]:
        routes[t.route] = routes.get(t.route, 0) + 1
    kill = "-" if mutation is None else f"{mutation.kill_rate:.0%} of {sum(mutation.counts.values())}"
    episodes: list[EpisodeResult] = summary["episodes"]
    return RoundSummary(round=rnd.k, seed=rnd.seed, final=rnd.final, green=result.green, reasons=result.reasons,
                        passed=sum(c.passed for c in channels), total=sum(c.total for c in channels),
                        kill_rate=kill, tickets=routes, simulation=all(e.simulation for e in episodes),
                        cost_usd={e.role: round(sum(a.cost_usd for a in e.attempts), 6) for e in episodes},
                        isolation={e.role: e.isolation for e in episodes})


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


def scoreboard(store: EvidenceStore, timings: Path | None = None) -> str:
    """``SCOREBOARD.md``: one line per round, from the sealed records (and wall time per role, if measured)."""
    rows = rounds_of(store)
    out = ["# Scoreboard", "", "| round | seed | pass | kill rate | tickets | cost (USD) | gate | why red |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        tickets = ", ".join(f"{k} {v}" for k, v in sorted(r.tickets.items())) or "-"
        cost = f"{sum(r.cost_usd.values()):.4f}"
        out.append(f"| {r.round}{' (final)' if r.final else ''} | {r.seed} | {r.passed}/{r.total} | {r.kill_rate} | "
                   f"{tickets} | {cost} | {'GREEN' if r.green else 'red'} | {'; '.join(r.reasons) or '-'} |")
    if rows:
        out += ["", "Isolation layers (last round): " + "; ".join(
            f"{role}: {', '.join(layers)}" for role, layers in rows[-1].isolation.items())]
    if rows and all(r.simulation for r in rows):
        out += ["", "**Simulation**: every role was scripted; this trail can never certify acceptance."]
    if timings is not None and timings.exists():
        seconds = json.loads(timings.read_text())
        total = sum(seconds.values()) or 1.0
        out += ["", f"Wall time {total:.0f} s (not evidence): " + ", ".join(
            f"{role} {secs:.0f} s ({secs / total:.0%})" for role, secs in sorted(seconds.items()))]
    out += ["", f"Trail digest: `{store.digest()}`"]
    return "\n".join(out) + "\n"




def rounds_of(store: EvidenceStore) -> list[RoundSummary]:
    return [RoundSummary.model_validate_json((store.root / "records" / e.name / "round.json").read_text())
            for e in store.entries() if e.kind == "round"]


def acceptance_json(store: EvidenceStore) -> str:
    """The canonical JSON of the whole trail: every round's summary and the trail digest (no clock)."""
    data = {"schema_version": 1, "trail_digest": store.digest(),
            "rounds": [r.model_dump(mode="json") for r in rounds_of(store)]}
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def report_html(store: EvidenceStore) -> str:
    """A self-contained page (inline SVG, no script, no external asset) with a chart per round."""
    rows = rounds_of(store)
    width, bar = 40 + 56 * max(len(rows), 1), 40
    bars = []
    for i, r in enumerate(rows):
        share = r.passed / r.total if r.total else 0.0
        height = int(150 * share)
        colour = "#1e8e3e" if r.green else "#d93025"
        x = 30 + 56 * i
        bars.append(f'<rect x="{x}" y="{170 - height}" width="{bar}" height="{height}" fill="{colour}"/>'
                    f'<text x="{x + bar / 2}" y="188" text-anchor="middle" font-size="12">{r.round}</text>'
                    f'<text x="{x + bar / 2}" y="{164 - height}" text-anchor="middle" font-size="11">'
                    f"{share:.0%}</text>")
    table = "".join(f"<tr><td>{r.round}{' (final)' if r.final else ''}</td><td>{r.passed}/{r.total}</td>"
                    f"<td>{html.escape(r.kill_rate)}</td><td>{'GREEN' if r.green else 'red'}</td>"
                    f"<td>{html.escape('; '.join(r.reasons) or '-')}</td></tr>" for r in rows)
    label = ("<p><b>Simulation</b>: every role was scripted; this trail can never certify acceptance.</p>"
             if rows and all(r.simulation for r in rows) else "")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>tri-agent acceptance</title>
<style>body{{font-family:sans-serif;margin:2em}}td,th{{border:1px solid #ccc;padding:4px 8px;text-align:left}}
table{{border-collapse:collapse}}</style></head><body>
<h1>Hard acceptance: {len(rows)} rounds</h1>{label}
<h2>Share of units passing, per round (green: the gate passed)</h2>
<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="200" role="img">{''.join(bars)}
<line x1="25" y1="170" x2="{width}" y2="170" stroke="#555"/></svg>
<table><tr><th>round</th><th>pass</th><th>kill rate</th><th>gate</th><th>why red</th></tr>{table}</table>
<p>Trail digest <code>{store.digest()}</code></p></body></html>
"""


def write_reports(project: Path) -> EvidenceStore:
    """SCOREBOARD.md, ACCEPTANCE.json and REPORT.html beside the project, from its evidence store."""
    project = project.resolve()
    store = EvidenceStore(_evidence_root(project, load_config(project)))
    if store.entries():
        (project / "SCOREBOARD.md").write_text(scoreboard(store, project / TIMINGS), encoding="utf-8")
        (project / "ACCEPTANCE.json").write_text(acceptance_json(store), encoding="utf-8")
        (project / "REPORT.html").write_text(report_html(store), encoding="utf-8")
    return store
