"""What a trail says, for people: ``SCOREBOARD.md``, the canonical ``ACCEPTANCE.json`` and ``REPORT.html``.

Everything here is read from the sealed records of an evidence store (each round's ``round.json``), so a
report can be rebuilt from the trail alone, by anyone, at any time. Wall time per role is the one thing
that is not evidence (it differs between runs); it is read from ``TIMINGS.json`` in the run's state folder.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from ..evidence._trail import EvidenceStore
from ._config import load_config
from ._gate import Verdict
from ._state import locate

TIMINGS = "TIMINGS.json"
_SIMULATION = "every role was scripted; this trail can never certify acceptance."


class Deepening(BaseModel):
    """How this round's exam differs from every earlier round's."""

    new_cases: int = Field(description="Cases whose ids no earlier round ran.")
    exam_files_changed: list[str] = Field(description="Exam files whose SHA-256 changed since the last round.")
    new_mutants: list[str] = Field(description="Mutants this round judged that no earlier round judged.")


class RoundSummary(BaseModel):
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


def rounds_of(store: EvidenceStore) -> list[RoundSummary]:
    return [RoundSummary.model_validate_json((store.root / "records" / e.name / "round.json").read_text())
            for e in store.entries() if e.kind == "round"]


def verdict_of(store: EvidenceStore) -> Verdict | None:
    path = store.root / "records" / "verdict" / "verdict.json"
    return Verdict.model_validate_json(path.read_text(encoding="utf-8")) if store.has("verdict") else None


def verdict_line(store: EvidenceStore) -> str:
    """One line that states the verdict: accepted and certified, passed but not certified, escalated, or open."""
    verdict = verdict_of(store)
    if verdict is not None and verdict.certified:
        return f"ACCEPTED after {verdict.rounds} rounds, certified"
    if verdict is not None:
        return f"PASSED, NOT CERTIFIED after {verdict.rounds} rounds: " + "; ".join(verdict.reasons)
    if any(e.kind == "escalation" for e in store.entries()):
        return "ESCALATED: a human must decide"
    return f"NO VERDICT YET after {len(rounds_of(store))} round(s)"


def drivers_of(store: EvidenceStore) -> dict[str, str]:
    """role -> the driver(s) that played it, from the sealed episodes."""
    found: dict[str, set[str]] = {}
    for e in (e for e in store.entries() if e.kind == "round"):
        for episode in json.loads((store.root / "records" / e.name / "episodes.json").read_text()):
            driver = episode["attempts"][0]["driver"] if episode["attempts"] else "unknown"
            found.setdefault(episode["role"], set()).add(driver)
    return {role: ", ".join(sorted(names)) for role, names in sorted(found.items())}


def scoreboard(store: EvidenceStore, timings: Path | None = None) -> str:
    """``SCOREBOARD.md``: one line per round, from the sealed records (and wall time per role, if measured)."""
    rows = rounds_of(store)
    out = ["# Scoreboard", "", f"**Verdict**: {verdict_line(store)}", "",
           "Drivers: " + ("; ".join(f"{role}: {d}" for role, d in drivers_of(store).items()) or "-"), "",
           "| round | seed | answers | behaviours | relations | drift | kill rate | new cases | "
           "tickets | smells | cost (USD) | streak | gate | why red |", "|" + "---|" * 14]
    out += [_row(r) for r in rows]
    if rows:
        out += ["", "Isolation layers (last round): " + "; ".join(
            f"{role}: {', '.join(layers)}" for role, layers in rows[-1].isolation.items())]
    if rows and all(r.simulation for r in rows):
        out += ["", f"**Simulation**: {_SIMULATION}"]
    out += _escalation(store)
    if timings is not None and timings.exists():
        seconds = json.loads(timings.read_text())
        total = sum(seconds.values()) or 1.0
        out += ["", f"Wall time {total:.0f} s (not evidence): " + ", ".join(
            f"{role} {secs:.0f} s ({secs / total:.0%})" for role, secs in sorted(seconds.items()))]
    out += ["", f"Trail digest: `{store.digest()}`"]
    return "\n".join(out) + "\n"


def _row(r: RoundSummary) -> str:
    tickets = ", ".join(f"{k} {v}" for k, v in sorted(r.tickets.items())) or "-"
    channels = [r.channels.get(c, "-") for c in ("answers", "behaviors", "relations")]
    new = "-" if r.deepening is None else str(r.deepening.new_cases)
    seed = r.seed if r.final else r.seed[:8]
    return (f"| {r.round}{' (final)' if r.final else ''} | {seed} | {' | '.join(channels)} | "
            f"{'; '.join(r.drift) or '-'} | {r.kill_rate} | {new} | {tickets} | {r.smells} | "
            f"{sum(r.cost_usd.values()):.4f} | {r.streak} | {'GREEN' if r.green else 'red'} | "
            f"{'; '.join(r.reasons) or '-'} |")


def _escalation(store: EvidenceStore) -> list[str]:
    escalations = [e for e in store.entries() if e.kind == "escalation"]
    if not escalations:
        return []
    text = (store.root / "records" / escalations[-1].name / "ESCALATION.md").read_text(encoding="utf-8")
    return ["", *text.rstrip("\n").splitlines()]


def acceptance_json(store: EvidenceStore) -> str:
    """The canonical JSON of the whole trail: every round's summary and the trail digest (no clock)."""
    verdict = verdict_of(store)
    data = {"schema_version": 1, "trail_digest": store.digest(), "verdict": verdict_line(store),
            "certified": bool(verdict and verdict.certified), "reasons": verdict.reasons if verdict else [],
            "drivers": drivers_of(store),
            "records": [e.model_dump(mode="json") for e in store.entries()],
            "rounds": [r.model_dump(mode="json") for r in rounds_of(store)]}
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def report_html(store: EvidenceStore) -> str:
    """A self-contained page (inline SVG, no script, no external asset) with a chart per round."""
    rows = rounds_of(store)
    width = 40 + 56 * max(len(rows), 1)
    table = "".join(f"<tr><td>{r.round}{' (final)' if r.final else ''}</td><td>{r.passed}/{r.total}</td>"
                    f"<td>{html.escape(r.kill_rate)}</td><td>{r.streak}</td><td>{'GREEN' if r.green else 'red'}</td>"
                    f"<td>{html.escape('; '.join(r.reasons) or '-')}</td></tr>" for r in rows)
    label = f"<p><b>Simulation</b>: {_SIMULATION}</p>" if rows and all(r.simulation for r in rows) else ""
    drivers = "; ".join(f"{r}: {d}" for r, d in drivers_of(store).items()) or "-"
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>tri-agent acceptance</title>
<style>body{{font-family:sans-serif;margin:2em}}td,th{{border:1px solid #ccc;padding:4px 8px;text-align:left}}
table{{border-collapse:collapse}}</style></head><body>
<h1>Hard acceptance: {len(rows)} rounds</h1>
<p><b>Verdict</b>: {html.escape(verdict_line(store))}</p>
<p>Drivers: {html.escape(drivers)}</p>{label}
<h2>Share of units passing, per round (green: the gate passed)</h2>
<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="200" role="img">{''.join(_bars(rows))}
<line x1="25" y1="170" x2="{width}" y2="170" stroke="#555"/></svg>
<table><tr><th>round</th><th>pass</th><th>kill rate</th><th>streak</th><th>gate</th><th>why red</th></tr>{table}</table>
<p>Trail digest <code>{store.digest()}</code></p></body></html>
"""


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


def write_reports(project: Path) -> EvidenceStore:
    """SCOREBOARD.md, ACCEPTANCE.json and REPORT.html beside the project, from its evidence store."""
    project = project.resolve()
    state = locate(project, load_config(project))
    store = state.store
    if store.entries():
        (project / "SCOREBOARD.md").write_text(scoreboard(store, state.root / TIMINGS), encoding="utf-8")
        (project / "ACCEPTANCE.json").write_text(acceptance_json(store), encoding="utf-8")
        (project / "REPORT.html").write_text(report_html(store), encoding="utf-8")
    return store
