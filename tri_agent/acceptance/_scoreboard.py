"""What a trail says, for people: ``SCOREBOARD.md``, the canonical ``ACCEPTANCE.json`` and ``REPORT.html``.

Everything here is read from the sealed records of an evidence store (each round's ``round.json``), so a
report can be rebuilt from the trail alone, by anyone, at any time. Wall time per role is the one thing
that is not evidence (it differs between runs); it is read from ``TIMINGS.json`` in the run's state folder.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Literal, NamedTuple

from pydantic import Field

from .._errors import UsageError
from .._model import Record
from ..evidence._trail import RECORDS, EvidenceStore, TrailEntry
from ..repository._git import git_out
from ..scoring._report import ScoreReport
from ._config import load_config
from ._gate import Verdict
from ._pages import failing_cases, pages, pages_html
from ._state import earlier_run, locate

TIMINGS = "TIMINGS.json"
_SIMULATION = "every role was scripted; this trail can never certify acceptance."


class Deepening(Record):
    """How this round's exam differs from every earlier round's."""

    new_cases: int = Field(description="Cases whose ids no earlier round ran.")
    exam_files_changed: list[str] = Field(description="Exam files whose SHA-256 changed since the last round.")
    new_mutants: list[str] = Field(description="Mutants this round judged that no earlier round judged.")


class RoundSummary(Record):
    """``round.json``: what one round's evidence record says, for the scoreboard."""

    schema_version: Literal[1] = Field(default=1, description="Version of the round summary format.")
    round: int = Field(description="Round number, from 1.")
    seed: str = Field(description="The exam seed; the final round names every seed it drew cases from.")
    final: bool = Field(description="The final round: the baseline and every case ever red, rebuilt.")
    green: bool = Field(description="The gate passed this round.")
    reasons: list[str] = Field(description="Why the round is red (empty when green).")
    passed: int = Field(description="Units passing over all channels; 0 when the run could not be scored.")
    total: int = Field(description="Units scored over all channels; 0 when the run could not be scored.")
    channels: dict[str, str] = Field(default_factory=dict, description="channel -> passed/total.")
    drift: list[str] = Field(default_factory=list, description="Systematic within-tolerance drift, per field.")
    kill_rate: str = Field(description="Mutation kill rate as killed / judged, with ignored and no-coverage counts "
                                       "beside it, e.g. '5/6 killed (83%); 1 ignored, 0 no coverage'; '-' when no "
                                       "mutation gate ran.")
    tickets: dict[str, int] = Field(description="route -> tickets filed.")
    smells: int = Field(default=0, description="Smells the judge found in the builder's code this round.")
    streak: int = Field(default=0, description="The gate counter after this round.")
    deepening: Deepening | None = Field(default=None, description="How this round's exam differs from earlier "
                                                                  "rounds'; null: not recorded.")
    simulation: bool = Field(description="Every episode of the round was a simulation (scripted): it can never "
                                         "certify.")
    cost_usd: dict[str, float] = Field(default={}, description="role -> model spend of its episode in US dollars, "
                                                               "the judge's ruling included.")
    isolation: dict[str, list[str]] = Field(default={}, description="role -> isolation layers active in its episode.")
    mutability: dict[str, int] = Field(default={}, description="Bug class -> mutants the operators could make of "
                                       "the round's code (where: mutability.json beside it).")
    canaries: str = Field(default="-", description="Canary cases the target passed, of those the round's exam "
                          "planted ('0/2 passed'; an honest target passes none); '-': none planted.")


def rounds_of(store: EvidenceStore) -> list[RoundSummary]:
    return [RoundSummary.model_validate_json((store.root / "records" / e.name / "round.json").read_text())
            for e in store.entries() if e.kind == "round"]


def verdict_of(store: EvidenceStore) -> Verdict | None:
    path = store.root / "records" / "verdict" / "verdict.json"
    return Verdict.model_validate_json(path.read_text(encoding="utf-8")) if store.has("verdict") else None


Decision = Literal["accepted", "escalated", "policy", "open"]

# what every count of the reports counts; SCOREBOARD.md, REPORT.html and ACCEPTANCE.json state the same units
UNITS = {
    "answers (rows)": "expected rows whose every field passed / expected rows plus unexpected rows the target wrote",
    "behaviours (cases)": "cases whose run ended in the expected behaviour / cases with a sealed behaviour",
    "relations (instances)": "relation instances (groups, case pairs or rows) that hold / instances checked",
    "all units": "answer rows + behaviour cases + relation instances, summed: what a round's 'N/M pass' counts",
    "kill rate (mutants)": "mutants the exam killed / mutants judged (killed, timed out, survived, no coverage), "
                           "the ignored and no-coverage counts beside it",
    "canaries (cases)": "canary cases the target passed / canaries planted: cases whose sealed expectation contradicts "
                        "the spec, scored apart; an honest target passes none",
}


class Headline(NamedTuple):
    """What a report opens with: the decision, its title and why (certification or escalation reasons)."""

    decision: Decision
    title: str
    why: list[str]


def headline(store: EvidenceStore) -> Headline:
    """Accepted and certified, passed but not certified (why), escalated (why), or no verdict yet."""
    verdict = verdict_of(store)
    if verdict is not None and verdict.certified:
        return Headline("accepted", f"ACCEPTED after {verdict.rounds} rounds, certified", [])
    if verdict is not None:
        return Headline("accepted", f"PASSED, NOT CERTIFIED after {verdict.rounds} rounds", verdict.reasons)
    escalations = [e for e in store.entries() if e.kind == "escalation"]
    if escalations:
        return Headline("escalated", "ESCALATED, a human must decide", [escalation_reason(store, escalations[-1].name)])
    stops = [e for e in store.entries() if e.kind == "policy"]
    if stops:
        return Headline("policy", "STOPPED, the exam was gamed (policy)", policy_reasons(store))
    return Headline("open", f"NO VERDICT YET after {len(rounds_of(store))} round(s)", [])


def escalation_reason(store: EvidenceStore, name: str) -> str:
    """Why the run escalated, as its sealed ESCALATION.md states it (the line under its title)."""
    lines = (store.root / "records" / name / "ESCALATION.md").read_text(encoding="utf-8").splitlines()
    return lines[2].removesuffix(".").removesuffix("; a human must decide") if len(lines) > 2 else "(no reason)"


def verdict_line(store: EvidenceStore) -> str:
    """One line that states the verdict: accepted and certified, passed but not certified, escalated, or open; and
    the run it replaced, when an earlier one was abandoned for it."""
    head = headline(store)
    line = f"{head.title}: {'; '.join(head.why)}" if head.why else head.title
    earlier = earlier_run(store.root)
    return line + (f" (a new run, after one abandoned with {earlier.records} record(s): {earlier.reason})"
                   if earlier else "")


def policy_reasons(store: EvidenceStore) -> list[str]:
    """The canaries a policy stop names, as the last round's sealed progress holds them."""
    rounds = [e for e in store.entries() if e.kind == "round"]
    progress = json.loads((store.root / "records" / rounds[-1].name / "progress.json").read_text()) if rounds else {}
    return [f"passed a canary planted against the spec: {g}" for g in progress.get("gamed", [])]


_WHY = {"accepted": "Not certified because:", "escalated": "Escalated because:", "policy": "Stopped because:",
        "open": ""}


def drivers_of(store: EvidenceStore) -> dict[str, str]:
    """role -> the driver(s) that played it, from the sealed episodes."""
    found: dict[str, set[str]] = {}
    for e in (e for e in store.entries() if e.kind == "round"):
        for episode in json.loads((store.root / "records" / e.name / "episodes.json").read_text()):
            driver = episode["attempts"][0]["driver"] if episode["attempts"] else "unknown"
            found.setdefault(episode["role"], set()).add(driver)
    return {role: ", ".join(sorted(names)) for role, names in sorted(found.items())}


def scoreboard(store: EvidenceStore, timings: Path | None = None) -> str:
    """``SCOREBOARD.md``: the verdict and why, the drivers, the units, then one line per round, from the sealed
    records (and wall time per role, if measured)."""
    rows = rounds_of(store)
    out = ["# Scoreboard", "", f"**Verdict**: {verdict_line(store)}", *_why_lines(headline(store)), "",
           "Drivers: " + ("; ".join(f"{role}: {d}" for role, d in drivers_of(store).items()) or "-"), "",
           "Units:", "", *(f"- **{name}**: {text}" for name, text in UNITS.items()), "",
           "| round | seed | answers (rows) | behaviours (cases) | relations (instances) | drift | kill rate "
           "(mutants) | canaries (cases) | new cases | tickets | smells | cost (USD) | streak | gate | why red |",
           "|" + "---|" * 15]
    out += [_row(r) for r in rows]
    out += _mutability(rows)
    if rows:
        out += ["", "Isolation layers (last round): " + "; ".join(
            f"{role}: {', '.join(layers)}" for role, layers in rows[-1].isolation.items())]
    if rows and all(r.simulation for r in rows):
        out += ["", f"**Simulation**: {_SIMULATION}"]
    out += _sealed_report(store, "escalation", "ESCALATION.md") + _sealed_report(store, "policy", "POLICY.md")
    if timings is not None and timings.exists():
        seconds = json.loads(timings.read_text())
        total = sum(seconds.values()) or 1.0
        out += ["", f"Wall time {total:.0f} s (not evidence): " + ", ".join(
            f"{role} {secs:.0f} s ({secs / total:.0%})" for role, secs in sorted(seconds.items()))]
    out += ["", f"Trail digest: `{store.digest()}`"]
    return "\n".join(out) + "\n"


def _mutability(rows: list[RoundSummary]) -> list[str]:
    """Per bug class, the places a mutant of it could be made in each round's code: a class that falls to nothing
    is code the gate cannot test."""
    classes = sorted({c for r in rows for c in r.mutability})
    if not classes:
        return []
    return ["", "Mutability (mutants the operators could make of each round's code, per bug class):", "",
            "| bug class | " + " | ".join(f"round {r.round}" for r in rows) + " |", "|" + "---|" * (len(rows) + 1),
            *(f"| {c} | " + " | ".join(str(r.mutability.get(c, "-")) for r in rows) + " |" for c in classes)]


def _why_lines(head: Headline) -> list[str]:
    return ["", _WHY[head.decision], "", *(f"- {reason}" for reason in head.why)] if head.why else []


def _row(r: RoundSummary) -> str:
    tickets = ", ".join(f"{k} {v}" for k, v in sorted(r.tickets.items())) or "-"
    channels = [r.channels.get(c, "-") for c in ("answers", "behaviors", "relations")]
    new = "-" if r.deepening is None else str(r.deepening.new_cases)
    seed = r.seed if r.final else r.seed[:8]
    return (f"| {r.round}{' (final)' if r.final else ''} | {seed} | {' | '.join(channels)} | "
            f"{'; '.join(r.drift) or '-'} | {r.kill_rate} | {r.canaries} | {new} | {tickets} | {r.smells} | "
            f"{sum(r.cost_usd.values()):.4f} | {r.streak} | {'GREEN' if r.green else 'red'} | "
            f"{'; '.join(r.reasons) or '-'} |")


def _sealed_report(store: EvidenceStore, kind: str, name: str) -> list[str]:
    """The last sealed report of ``kind`` (an escalation, a policy stop), as its record holds it."""
    found = [e for e in store.entries() if e.kind == kind]
    if not found:
        return []
    text = (store.root / "records" / found[-1].name / name).read_text(encoding="utf-8")
    return ["", *text.rstrip("\n").splitlines()]


class AcceptanceReport(Record):
    """``ACCEPTANCE.json``: the verdict and why first, then the whole trail: every record and every round's summary
    (no clock, so the same trail always gives the same bytes)."""

    verdict: str = Field(description="The verdict line SCOREBOARD.md and REPORT.html open with.")
    decision: Decision = Field(default="open", description="accepted (certified or not), escalated (a human must "
                               "decide), policy (stopped: the exam was gamed) or open (no verdict yet).")
    certified: bool = Field(description="The accepted run certifies (exit 0); false otherwise.")
    reasons: list[str] = Field(description="Why an accepted run does not certify; empty otherwise.")
    escalation: str | None = Field(default=None, description="Why the run escalated (the ticket that failed its fix "
                                                             "attempts, or the round limit); null when it did not.")
    gamed: list[str] = Field(default_factory=list, description="Why the run stopped for gaming the exam (policy, exit "
                             "5): the canaries the target passed; empty when it did not.")
    drivers: dict[str, str] = Field(description="role -> the driver(s) that played it, from the sealed episodes.")
    units: dict[str, str] = Field(default_factory=lambda: dict(UNITS), description="What each count of 'rounds' "
                                  "counts: column (unit) -> what passes / what is counted.")
    schema_version: Literal[1] = Field(default=1, description="Version of the acceptance report format.")
    trail_digest: str = Field(description="SHA-256 of TRAIL.jsonl: it names every record, so the whole history.")
    records: list[TrailEntry] = Field(description="Every line of TRAIL.jsonl, in order.")
    rounds: list[RoundSummary] = Field(description="Every round's round.json, in order.")


def acceptance_report(store: EvidenceStore) -> AcceptanceReport:
    verdict, head = verdict_of(store), headline(store)
    return AcceptanceReport(verdict=verdict_line(store), decision=head.decision,
                            certified=bool(verdict and verdict.certified), reasons=verdict.reasons if verdict else [],
                            escalation=head.why[0] if head.decision == "escalated" else None,
                            gamed=head.why if head.decision == "policy" else [],
                            drivers=drivers_of(store), trail_digest=store.digest(), records=store.entries(),
                            rounds=rounds_of(store))


def acceptance_json(store: EvidenceStore) -> str:
    """The canonical JSON of the whole trail, the verdict first (no clock)."""
    return json.dumps(acceptance_report(store).model_dump(mode="json"), indent=1, ensure_ascii=False) + "\n"


class Shot(NamedTuple):
    """A screenshot a browser case kept: evidence shown in the report, never scored."""

    round: int
    case: str
    name: str
    png: bytes


SHOT_BYTES = 8 << 20  # all screenshots one round's record keeps
SHOTS_PER_ROUND = 4
SHOTS = "screenshots"  # the folder of a round's record that holds them
_PNG = b"\x89PNG\r\n\x1a\n"


def keep_screenshots(outputs: Path, report: ScoreReport | None, final: bool, folder: Path) -> None:
    """Into a round's record (sealed with it, so the report can be rebuilt from the trail alone): the last
    screenshot of up to four failing cases of the run; for a final round where none failed, of its first two
    cases. Command and service targets have none: nothing is written."""
    cases = failing_cases(report) if report is not None else []
    if not cases and final and outputs.is_dir():
        cases = sorted(p.name for p in outputs.iterdir())[:2]
    budget = SHOT_BYTES
    for case in cases[:SHOTS_PER_ROUND]:
        shot = _last_shot(outputs / case / "screenshots")
        if shot is not None and len(shot[1]) <= budget:
            (folder / SHOTS).mkdir(exist_ok=True)
            (folder / SHOTS / f"{case}.{shot[0]}").write_bytes(shot[1])
            budget -= len(shot[1])


def screenshots(store: EvidenceStore) -> list[Shot]:
    """Every screenshot the rounds' records keep, round by round: what a person looks at beside a red round."""
    shots = []
    for summary in rounds_of(store):
        folder = store.root / RECORDS / f"round-{summary.round:04d}" / SHOTS
        for path in sorted(folder.glob("*.png")) if folder.is_dir() else []:
            data = path.read_bytes()
            case, _, name = path.name.partition(".")
            if data.startswith(_PNG) and not path.is_symlink():
                shots.append(Shot(summary.round, case, name, data))
    return shots


def _last_shot(folder: Path) -> tuple[str, bytes] | None:
    """A stuck step's screenshot, else the end of the case; a plain PNG file only."""
    if not folder.is_dir() or folder.is_symlink():
        return None
    names = [*sorted(p.name for p in folder.glob("*-stuck.png")), "end.png"]
    for name in names:
        path = folder / name
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            if data.startswith(_PNG):
                return name, data
    return None


def _shots_html(shots: list[Shot]) -> str:
    if not shots:
        return ""
    import base64

    figures = "".join(
        f'<figure><img alt="case {html.escape(s.case)}, round {s.round}: {html.escape(s.name)}" width="480" '
        f'src="data:image/png;base64,{base64.b64encode(s.png).decode()}"><figcaption>round {s.round}, case '
        f"<code>{html.escape(s.case)}</code> ({html.escape(s.name)})</figcaption></figure>" for s in shots)
    return ("\n<h2>Screenshots (evidence, never scored)</h2>\n<p>What the browser showed at the end of failing "
            f"cases. No score reads a screenshot; the verdict rests on the machine channels.</p>{figures}")


def report_html(store: EvidenceStore) -> str:
    """A self-contained page (inline SVG and images, no script, no external asset): the verdict and why, the
    drivers, the units, a chart and a table per round, in the scoreboard's units; a browser target's
    screenshots of failing cases below them, a document target's first pages (``_pages``)."""
    rows, head = rounds_of(store), headline(store)
    width = 40 + 56 * max(len(rows), 1)
    label = f"<p><b>Simulation</b>: {_SIMULATION}</p>" if rows and all(r.simulation for r in rows) else ""
    drivers = "; ".join(f"{r}: {d}" for r, d in drivers_of(store).items()) or "-"
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>tri-agent acceptance: {html.escape(head.title)}</title>
<style>body{{font-family:sans-serif;margin:2em}}td,th{{border:1px solid #ccc;padding:4px 8px;text-align:left}}
table{{border-collapse:collapse}}</style></head><body>
<h1 id="verdict">{html.escape(head.title)}</h1>{_why_html(head)}
<p>Drivers: {html.escape(drivers)}</p>{label}
<h2>Units</h2>
<ul>{''.join(f'<li><b>{html.escape(n)}</b>: {html.escape(t)}</li>' for n, t in UNITS.items())}</ul>
<h2>Share of all units passing, per round (green: the gate passed)</h2>
<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="200" role="img">{''.join(_bars(rows))}
<line x1="25" y1="170" x2="{width}" y2="170" stroke="#555"/></svg>
<table><tr><th>round</th><th>answers (rows)</th><th>behaviours (cases)</th><th>relations (instances)</th>
<th>all units</th><th>kill rate (mutants)</th><th>canaries (cases)</th><th>streak</th><th>gate</th><th>why red</th></tr>
{_table_html(rows)}</table>{_shots_html(screenshots(store))}{pages_html(pages(store), head.decision == "accepted")}
<p>{len(rows)} round(s). Trail digest <code>{store.digest()}</code></p></body></html>
"""


def _why_html(head: Headline) -> str:
    if not head.why:
        return ""
    return f"\n<p>{_WHY[head.decision]}</p><ul>{''.join(f'<li>{html.escape(r)}</li>' for r in head.why)}</ul>"


def _table_html(rows: list[RoundSummary]) -> str:
    return "".join(f"<tr><td>{r.round}{' (final)' if r.final else ''}</td>"
                   + "".join(f"<td>{r.channels.get(c, '-')}</td>" for c in ("answers", "behaviors", "relations"))
                   + f"<td>{r.passed}/{r.total}</td><td>{html.escape(r.kill_rate)}</td>"
                   f"<td>{html.escape(r.canaries)}</td><td>{r.streak}</td>"
                   f"<td>{'GREEN' if r.green else 'red'}</td><td>{html.escape('; '.join(r.reasons) or '-')}</td></tr>"
                   for r in rows)


def _bars(rows: list[RoundSummary]) -> list[str]:
    bars = []
    for i, r in enumerate(rows):
        share = r.passed / r.total if r.total else 0.0
        height, x = int(150 * share), 30 + 56 * i
        colour = "#1e8e3e" if r.green else "#d93025"
        bars.append(f'<rect x="{x}" y="{170 - height}" width="40" height="{height}" fill="{colour}"/>'
                    f'<text x="{x + 20}" y="188" text-anchor="middle" font-size="12">{r.round}</text>'
                    f'<text x="{x + 20}" y="{164 - height}" text-anchor="middle" font-size="11">{share:.0%}</text>')
    return bars


REPORTS = ("SCOREBOARD.md", "ACCEPTANCE.json", "REPORT.html")


def write_reports(project: Path) -> EvidenceStore:
    """SCOREBOARD.md, ACCEPTANCE.json and REPORT.html beside the project, from its evidence store; git is told to
    ignore them first."""
    project = project.resolve()
    state = locate(project, load_config(project))
    store = state.store
    if store.entries():
        ignore_reports(project)
        (project / "SCOREBOARD.md").write_text(scoreboard(store, state.root / TIMINGS), encoding="utf-8")
        (project / "ACCEPTANCE.json").write_text(acceptance_json(store), encoding="utf-8")
        (project / "REPORT.html").write_text(report_html(store), encoding="utf-8")
    return store


def ignore_reports(project: Path) -> None:
    """The reports are views of the evidence store, rewritten every round: committed, they would go stale and
    ``verify-trail`` would rightly call them edited. So git ignores them, in the repository's own exclude file
    (``.git/info/exclude``), which is no file of the tree: the work tree stays exactly as the builder left it."""
    try:  # one git call a round: the work tree's top and its exclude file
        said = git_out(project, "rev-parse", "--path-format=absolute", "--show-toplevel", "--git-path", "info/exclude")
    except UsageError:
        return  # not a git work tree: there is nothing to commit them to
    top, exclude = (Path(line) for line in said.decode("utf-8", "surrogateescape").splitlines()[:2])
    where = project.relative_to(top.resolve()).as_posix() if project != top.resolve() else ""
    wanted = [f"/{where}/{name}" if where else f"/{name}" for name in REPORTS]
    text = exclude.read_text(encoding="utf-8", errors="replace") if exclude.is_file() else ""
    missing = [line for line in wanted if line not in text.splitlines()]
    if missing:
        exclude.parent.mkdir(parents=True, exist_ok=True)
        with exclude.open("a", encoding="utf-8") as out:
            out.write(("\n" if text and not text.endswith("\n") else "") + "# tri-agent's reports: views of the "
                      "evidence store, rewritten every round (never commit them)\n"
                      + "".join(f"{line}\n" for line in missing))
