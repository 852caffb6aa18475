"""Tickets: what a red score means, routed by attribution, and never carrying a sealed value.

Failures are grouped by a *signature* (route, field, reason) that survives new seeds and new case ids,
so the fuse can count fix attempts on the same defect across rounds. A ticket for the builder states
what the target did (its own output, the input that shows it) and which promise of the spec it broke,
never the expected value, a tolerance delta or a key the target did not produce. As a last guard,
every builder ticket is leak-scanned against the answer key; one that would leak is replaced by a
redacted ticket and a process ticket for the orchestrator.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from ..scoring._leaks import scan_leaks
from ..scoring._report import CellFailure, ScoreReport
from ._smells import Smell

Route = Literal["builder", "exam", "orchestrator"]
_EXAMPLES = 3


class Ticket(BaseModel):
    """One ticket."""

    id: str = Field(description="t-<hash of the signature>: the same defect keeps its id across rounds.")
    route: Route
    signature: str = Field(description="route:field:reason, stable across seeds.")
    title: str
    body: str
    cases: list[str] = Field(description="Opaque ids of cases that show it (at most a few).")

    def markdown(self) -> str:
        cases = ", ".join(self.cases) or "-"
        return f"# {self.title}\n\nticket: {self.id}\nroute: {self.route}\ncases: {cases}\n\n{self.body}\n"


def ticket_id(signature: str) -> str:
    """t-<hash of the signature>: the same defect keeps its id across rounds."""
    return "t-" + hashlib.sha256(signature.encode()).hexdigest()[:10]


_KINDS = {"builder": "builder", "exam": "exam", "orchestrator": "process"}


def ticket_kind(signature: str) -> str:
    """What a signature's route is called where people read it: builder, exam or process."""
    return _KINDS.get(signature.split(":", 1)[0], "process")


def _ticket(route: Route, field: str, reason: str, title: str, body: str, cases: list[str]) -> Ticket:
    signature = f"{route}:{field}:{reason}"
    return Ticket(id=ticket_id(signature), route=route, signature=signature,
                  title=title, body=body, cases=sorted(set(cases))[:_EXAMPLES])


def tickets_from(report: ScoreReport, case_input: Callable[[str], str | None] = lambda _c: None) -> list[Ticket]:
    """Tickets for every failure class of ``report``; ``case_input`` gives a case's input for a repro."""
    out = _cell_tickets(report.answers.failures, case_input)
    out += [_drift_ticket(d.field, d.negative > d.positive, d.nonzero) for d in report.answers.drift if d.systematic]
    if report.behaviors is not None:
        out += _behavior_tickets(report.behaviors.failures)
    if report.relations is not None:
        out += _relation_tickets(report)
    return sorted(out, key=lambda t: t.signature)


def _cell_tickets(failures: list[CellFailure], case_input: Callable[[str], str | None]) -> list[Ticket]:
    groups: dict[tuple[str, str], list[CellFailure]] = defaultdict(list)
    for f in failures:
        groups[(f.field or "row", f.reason)].append(f)
    out = []
    for (field, reason), cells in sorted(groups.items()):
        cases = [c.key.get("case", "") for c in cells]
        example = cells[0]
        shown = _own_output(example)
        repro = case_input(cases[0]) if cases[0] else None
        body = (f"{len(cells)} cell(s) of field {field!r} fail as {reason.replace('_', ' ')}. "
                f"{_meaning(reason)}\n\nExample case {cases[0] or '-'}: {shown}"
                + (f"\n\nInput of that case:\n\n```\n{repro[:2000]}\n```" if repro else ""))
        out.append(_ticket("builder", field, reason, f"{field}: {reason.replace('_', ' ')} in {len(cells)} cell(s)",
                           body, cases))
    return out


def _own_output(cell: CellFailure) -> str:
    if cell.reason == "unexpected_row":
        keys = ", ".join(f"{k}={v!r}" for k, v in cell.key.items() if k != "case")
        return f"the target wrote a row the spec does not call for ({keys})."
    if cell.reason in ("missing_row", "missing_field"):
        return "the target wrote nothing there."
    return f"the target wrote {cell.actual!r}."


def _meaning(reason: str) -> str:
    return {
        "out_of_tolerance": "The value is further from the spec's result than its tolerance allows.",
        "not_equal": "The value is not the one the spec calls for.",
        "not_in_enum": "The value is not one of the categories the spec allows.",
        "missing_field": "A value the spec requires is absent.",
        "wrong_places": "The value is written with other decimal places than the spec prescribes.",
        "missing_row": "Rows the spec requires are absent.",
        "unexpected_row": "Rows appear that the spec does not produce (check how keys are normalised).",
    }.get(reason, "")


def _drift_ticket(field: str, down: bool, n: int) -> Ticket:
    way = "below" if down else "above"
    body = (f"{n} values of {field!r} lie within tolerance but all {way} the spec's results: a systematic "
            "difference such as a rounding mode (half-even instead of half-up) or a truncation. Check the "
            "rounding and precision rules the spec states.")
    return _ticket("builder", field, "drift", f"{field}: systematic drift {way} the spec's results", body, [])


def _behavior_tickets(failures: list[CellFailure]) -> list[Ticket]:
    groups: dict[str, list[CellFailure]] = defaultdict(list)
    for f in failures:
        groups[str(f.actual)].append(f)
    return [_ticket("builder", "behavior", f"observed-{observed}",
                    f"behaviour {observed!r} where the spec calls for another", f"{len(cells)} case(s) behaved as "
                    f"{observed!r}; re-read how the spec says such inputs must be handled.",
                    [c.key.get("case", "") for c in cells]) for observed, cells in sorted(groups.items())]


def _relation_tickets(report: ScoreReport) -> list[Ticket]:
    assert report.relations is not None
    out = []
    for rel in report.relations.relations:
        for attribution in ("engine", "exam"):
            failing = [f for f in rel.failures if f.attribution == attribution]
            if not failing:
                continue
            route: Route = "builder" if attribution == "engine" else "exam"
            body = (f"Relation {rel.name!r} ({rel.kind}) fails in {len(failing)} of {rel.checked} instance(s), "
                    f"e.g. at {failing[0].where}: {failing[0].detail}")
            if route == "exam":
                body += ("\n\nThe sealed answers agree with the target there: the caliber declares an identity "
                         "the spec does not promise, or the oracle is wrong.")
            out.append(_ticket(route, rel.name, "relation", f"relation {rel.name} fails", body, []))
    return out


def smell_tickets(found: list[Smell]) -> list[Ticket]:
    """One builder ticket per blocker smell: the builder undoes what hid a failing check."""
    groups: dict[str, list[Smell]] = defaultdict(list)
    for s in found:
        if s.severity == "blocker":
            groups[s.name].append(s)
    return [_ticket("builder", "smell", name, f"test-quality smell: {name} ({len(items)})",
                    "What you changed weakens what checks the target:\n\n" + "\n".join(
                        f"- {s.path}{f':{s.line}' if s.line else ''}: {s.detail}" for s in items[:10])
                    + "\n\nRestore the checks; make the target pass them instead.", [])
            for name, items in sorted(groups.items())]


def guard(tickets: list[Ticket], answers: Path | list[Path], inputs: list[Path], key: list[str]) -> list[Ticket]:
    """Leak-scan builder tickets against the answer key(s); a leaking one is redacted and reported."""
    keys = answers if isinstance(answers, list) else [answers]
    out = []
    with tempfile.TemporaryDirectory(prefix="tri-tickets-") as tmp:
        for t in tickets:
            if t.route != "builder":
                out.append(t)
                continue
            path = Path(tmp) / f"{t.id}.md"
            path.write_text(t.markdown(), encoding="utf-8")
            hits = scan_leaks(keys, [path], inputs=inputs, key=key).hits
            if not hits:
                out.append(t)
                continue
            out.append(t.model_copy(update={"body": "(redacted: the description would have revealed a sealed value)"}))
            out.append(_ticket("orchestrator", t.signature, "leak-guard", f"ticket {t.id} was redacted",
                               f"The builder ticket {t.id} would have revealed a sealed value "
                               f"({hits[0].detail}); the judge must describe it without it.", []))
    return out
