"""Tickets: what a red score means, routed by attribution, and never carrying a sealed value.

Failures are grouped by a *signature* (route, field, reason) that survives new seeds and new case ids,
so the fuse can count fix attempts on the same defect across rounds. A ticket for the builder says where to
look and what was promised: the example row's case and key (as the target wrote it) and its column, the
line of the case's input files that holds that key (or "not located"), the target's own output, the caliber's
clause for the field or relation and the test plan's section that mentions it. It never states the expected
value, a tolerance delta or a key the target did not produce. As a last guard, every builder ticket is
leak-scanned against the answer key; one that would leak is replaced by a redacted ticket and a process
ticket for the orchestrator.

The builder's ticket folder holds exactly the open tickets (the last round's); a ticket no later round filed
again moves to ``resolved/`` with the round that resolved it written into it.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
import textwrap
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field

from .._model import Record
from ..scoring._caliber import Caliber, Relation
from ..scoring._leaks import scan_leaks
from ..scoring._report import CellFailure, RelationFailure, ScoreReport
from ._smells import Smell

Route = Literal["builder", "exam", "orchestrator"]
_EXAMPLES = 3
CASE = "case"  # the key column naming a case: it locates the inputs, never a line in them
_REPRO = 2000  # characters of a case's input a ticket shows
_QUOTE = 300  # characters of a test-plan section or an input line a ticket quotes


class Ticket(Record):
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


def _no_inputs(_case: str) -> dict[str, str]:
    return {}


@dataclass(frozen=True)
class Sources:
    """What a ticket may quote besides the score: each case's input files (name -> text, in order), the caliber
    and the exam's TESTPLAN.md. None of it holds an answer: the inputs are the cases' own, and the plan passed the
    contamination audit; the leak guard checks every ticket anyway."""

    inputs: Callable[[str], dict[str, str]] = _no_inputs
    caliber: Caliber | None = None
    plan: str = ""


def ticket_id(signature: str) -> str:
    """t-<hash of the signature>: the same defect keeps its id across rounds."""
    return "t-" + hashlib.sha256(signature.encode()).hexdigest()[:10]


_KINDS = {"builder": "builder", "exam": "exam", "orchestrator": "process"}


def ticket_kind(signature: str) -> str:
    """What a signature's route is called where people read it: builder, exam or process."""
    return _KINDS.get(signature.partition(":")[0], "process")


def _ticket(route: Route, field: str, reason: str, title: str, body: str, cases: list[str]) -> Ticket:
    signature = f"{route}:{field}:{reason}"
    return Ticket(id=ticket_id(signature), route=route, signature=signature,
                  title=title, body=body, cases=sorted(set(cases))[:_EXAMPLES])


def tickets_from(report: ScoreReport, sources: Sources = Sources()) -> list[Ticket]:
    """Tickets for every failure class of ``report``, pointing into ``sources`` (inputs, caliber, test plan)."""
    out = _cell_tickets(report.answers.failures, sources)
    out += [_drift_ticket(d.field, d.negative > d.positive, d.nonzero, sources) for d in report.answers.drift
            if d.systematic]
    if report.behaviors is not None:
        out += _behavior_tickets(report.behaviors.failures, sources)
    if report.relations is not None:
        out += _relation_tickets(report, sources)
    return sorted(out, key=lambda t: t.signature)


# --- where to look: the row, the input line, the promise -----------------------------------------------------

_CELL = re.compile(r"[,;\t|]")  # what separates the cells of a delimited line


def locate(files: dict[str, str], values: list[str]) -> tuple[str, int, str] | None:
    """(file, line number, line) of the first line of ``files`` that holds every one of ``values`` (a row's key
    as the target wrote it): as whole cells of a delimited line if any line has them so (``Chemistry`` is not
    `` Chemistry``), else anywhere in the line; None when no line does, or when there is no value to look for."""
    wanted = [v for v in values if v.strip()]
    if not wanted:
        return None
    for holds in (_in_cells, _in_text):
        for name, text in files.items():
            for number, line in enumerate(text.splitlines(), 1):
                if holds(line, wanted):
                    return name, number, line
    return None


def _in_cells(line: str, wanted: list[str]) -> bool:
    cells = set(_CELL.split(line))
    return all(v in cells for v in wanted)


def _in_text(line: str, wanted: list[str]) -> bool:
    return all(v in line for v in wanted)


def _input_line(case: str, values: list[str], sources: Sources) -> tuple[str, str | None]:
    """The ticket's ``Input:`` line, and the input file it points into (None: not located)."""
    files = sources.inputs(case) if case else {}
    if not files:
        return f"Input: not located (no input file of case {case or '-'} is at hand)", None
    hit = locate(files, values)
    names = ", ".join(files)
    if hit is None:
        looked = " and ".join(repr(v) for v in values if v.strip())
        why = f"no line of {names} holds {looked}" if looked else f"the key names only the case; its inputs: {names}"
        return f"Input: not located ({why})", None
    name, number, line = hit
    return f"Input: {name} line {number}: {_clip(line)!r}", name


def _repro(case: str, name: str | None, sources: Sources) -> str:
    """The case's input file (the one located, else the first), to reproduce the failure with."""
    files = sources.inputs(case) if case else {}
    if not files:
        return ""
    shown = name if name is not None else next(iter(files))
    return f"\n\nInput of that case ({shown}):\n\n```\n{files[shown][:_REPRO]}\n```"


def _clip(text: str) -> str:
    return text if len(text) <= _QUOTE else text[:_QUOTE] + "..."


_SECTION_START = re.compile(r"\s*(#+\s|\d+[.)]\s|[-*+]\s)")  # a heading or a list item opens a section


def plan_sections(plan: str) -> list[tuple[int, str]]:
    """(first line number, text on one line) of each section of a test plan: a heading, a list item or a
    paragraph, continuation lines joined."""
    sections: list[tuple[int, list[str]]] = []
    fresh = True
    for number, line in enumerate(plan.splitlines(), 1):
        if not line.strip():
            fresh = True
            continue
        if fresh or _SECTION_START.match(line):
            sections.append((number, []))
        sections[-1][1].append(line.strip())
        fresh = line.lstrip().startswith("#")  # a heading stands alone
    return [(number, " ".join(lines)) for number, lines in sections]


def plan_line(plan: str, terms: list[str]) -> str:
    """The first test-plan section that mentions one of ``terms`` as a word (a plural too), or a sentence that
    says none does."""
    wanted = list(dict.fromkeys(t for t in terms if t))
    if not wanted:
        return "Test plan: not searched (no column names this failure)"
    pattern = re.compile(r"(?<!\w)(?:" + "|".join(re.escape(t) for t in wanted) + r")(?:e?s)?(?!\w)", re.IGNORECASE)
    for number, text in plan_sections(plan):
        if pattern.search(text):
            return f"Test plan: TESTPLAN.md line {number}: {textwrap.shorten(text, _QUOTE, placeholder=' ...')}"
    return "Test plan: no section of TESTPLAN.md mentions " + " or ".join(repr(t) for t in wanted)


def _field_clause(field: str, caliber: Caliber | None) -> str:
    spec = caliber.fields.get(field) if caliber is not None else None
    if spec is None:
        return f"Spec: the caliber at hand declares no field {field!r}"
    places = f", written with {spec.places} decimal places" if spec.places is not None else ""
    values = f", one of {', '.join(spec.values)}" if spec.values else ""
    return f"Spec: caliber field {field!r} is {spec.cls}: {spec.rule().rule}{places}{values}"


def _row_clause(caliber: Caliber | None) -> str:
    if caliber is None:
        return "Spec: the caliber at hand declares no key"
    return f"Spec: caliber rows are keyed by {', '.join(caliber.key)}: one row per key the spec calls for"


def _relation_clause(rel: Relation | None, name: str) -> str:
    if rel is None:
        return f"Spec: the caliber at hand declares no relation {name!r}"
    promise = " ".join(str(type(rel).__doc__).split()).replace("``", "'")
    # its settings as the caliber declares them, but for the case pairs (generated ids, many)
    declared = rel.model_dump_json(exclude={"name", "kind", "pairs"}, exclude_defaults=True)
    return f"Spec: caliber relation {name!r} ({rel.kind}): {promise} Declared as {declared}."


# --- channel 1: cells and rows -------------------------------------------------------------------------------

def _cell_tickets(failures: list[CellFailure], sources: Sources) -> list[Ticket]:
    groups: dict[tuple[str, str], list[CellFailure]] = defaultdict(list)
    for f in failures:
        groups[(f.field or "row", f.reason)].append(f)
    out = []
    for (field, reason), cells in sorted(groups.items()):
        words = reason.replace("_", " ")
        body = (f"{len(cells)} cell(s) of field {field!r} fail as {words}. {_meaning(reason)}\n\n"
                + _cell_example(cells[0], field, sources))
        out.append(_ticket("builder", field, reason, f"{field}: {words} in {len(cells)} cell(s)", body,
                           [c.key.get(CASE, "") for c in cells]))
    return out


def _cell_example(cell: CellFailure, field: str, sources: Sources) -> str:
    """Where the first failing cell is, what the target wrote there, and what the spec promised for it."""
    case = cell.key.get(CASE) or ""
    # a missing row's key is the answer's own, not the target's: naming it or its input line would reveal it
    own_key = cell.reason != "missing_row"
    row = ", ".join(f"{k}={v!r}" for k, v in cell.key.items() if k != CASE)
    where = (f"row {row}" if row else "its only row") if own_key else "a row the target did not write (its key is " \
        "the sealed answer's, so it is not shown)"
    column = f"column {field!r}" if cell.field else "the whole row"
    if own_key:
        located, name = _input_line(case, [v for k, v in cell.key.items() if k != CASE], sources)
    else:
        located, name = "Input: not located (the row's key is not shown)", None
    clause = _field_clause(field, sources.caliber) if cell.field else _row_clause(sources.caliber)
    terms = [field] if cell.field else [k for k in (sources.caliber.key if sources.caliber else []) if k != CASE]
    return (f"Example: case {case or '-'}, {where}, {column}: {_own_output(cell)}\n{located}\n{clause}\n"
            f"{plan_line(sources.plan, terms)}" + _repro(case, name, sources))


def _own_output(cell: CellFailure) -> str:
    if cell.reason == "unexpected_row":
        return "the target wrote a row the spec does not call for."
    if cell.reason in ("missing_row", "missing_field"):
        return "the target wrote nothing there."
    return f"the target wrote {cell.actual!r}."


def _meaning(reason: str) -> str:
    return {
        "out_of_tolerance": "The value is further from the spec's result than its tolerance allows.",
        "not_equal": "The value is not the one the spec calls for.",
        "not_in_enum": "The value is not one of the categories the spec allows.",
        "missing_field": "A value the spec requires is absent.",
        "unexpected_value": "A value appears where the spec calls for none.",
        "wrong_places": "The value is written with other decimal places than the spec prescribes.",
        "missing_row": "Rows the spec requires are absent.",
        "unexpected_row": "Rows appear that the spec does not produce (check how keys are normalised).",
    }.get(reason, "")


def _drift_ticket(field: str, down: bool, n: int, sources: Sources) -> Ticket:
    way = "below" if down else "above"
    body = (f"{n} values of {field!r} lie within tolerance but all {way} the spec's results: a systematic "
            "difference such as a rounding mode (half-even instead of half-up) or a truncation. Check the "
            "rounding and precision rules the spec states.\n\n"
            f"Column {field!r}; no single row is named: the drift is a pattern over {n} passing cells.\n"
            f"{_field_clause(field, sources.caliber)}\n{plan_line(sources.plan, [field])}")
    return _ticket("builder", field, "drift", f"{field}: systematic drift {way} the spec's results", body, [])


# --- channel 2: behaviours -----------------------------------------------------------------------------------

def _behavior_tickets(failures: list[CellFailure], sources: Sources) -> list[Ticket]:
    groups: dict[str, list[CellFailure]] = defaultdict(list)
    for f in failures:
        groups[str(f.actual)].append(f)
    return [_ticket("builder", "behavior", f"observed-{observed}",
                    f"behaviour {observed!r} where the spec calls for another",
                    f"{len(cells)} case(s) behaved as {observed!r}; re-read how the spec says such inputs must be "
                    "handled.\n\n" + _behavior_example(cells[0], sources), [c.key.get(CASE, "") for c in cells])
            for observed, cells in sorted(groups.items())]


def _behavior_example(cell: CellFailure, sources: Sources) -> str:
    case = cell.key.get(CASE) or ""
    field = cell.field or "behavior"
    located, name = _input_line(case, [v for k, v in cell.key.items() if k != CASE], sources)
    declared = sources.caliber.behaviors if sources.caliber is not None else None
    clause = (f"Spec: caliber behaviours: each case's run ends in one of {', '.join(declared.values)} (column "
              f"{declared.field!r}), compared for equality" if declared is not None
              else "Spec: the caliber at hand declares no behaviours")
    return (f"Example: case {case or '-'}, column {field!r}: the target's run ended {cell.actual!r}.\n{located}\n"
            f"{clause}\n{plan_line(sources.plan, [field, 'behaviour', 'behavior'])}" + _repro(case, name, sources))


# --- channel 3: relations ------------------------------------------------------------------------------------

def _relation_tickets(report: ScoreReport, sources: Sources) -> list[Ticket]:
    assert report.relations is not None
    declared = {r.name: r for r in sources.caliber.relations} if sources.caliber is not None else {}
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
            example, cases = _relation_example(failing[0], declared.get(rel.name), rel.name, sources)
            out.append(_ticket(route, rel.name, "relation", f"relation {rel.name} fails", body + "\n\n" + example,
                               cases))
    return out


def where_parts(where: str) -> tuple[list[str], list[str]]:
    """(cases, other key values) a relation failure's ``where`` names: 'case=c-1, group=x' (a group or row),
    'c-1 vs c-2' or 'c-1 within c-2' (a pair of cases), 'all rows'."""
    for joint in (" vs ", " within "):
        if joint in where:
            return where.split(joint, 1), []
    pairs = dict(part.split("=", 1) for part in where.split(", ") if "=" in part)
    cases = [pairs.pop(CASE)] if CASE in pairs else []
    return cases, list(pairs.values())


def relation_columns(rel: Relation | None) -> list[str]:
    """The columns a relation compares, in declaration order (empty: every field, or no relation at hand)."""
    named = [getattr(rel, "field", None), getattr(rel, "total_field", None), *(getattr(rel, "fields", None) or [])]
    return [c for i, c in enumerate(named) if c and c not in named[:i]]


def _relation_example(failure: RelationFailure, rel: Relation | None, name: str,
                      sources: Sources) -> tuple[str, list[str]]:
    cases, values = where_parts(failure.where)
    case = cases[0] if cases else ""
    located, file = _input_line(case, values, sources)
    columns = relation_columns(rel)
    shown = ", ".join(repr(c) for c in columns) or ("every field" if rel is not None else "-")
    terms = [name, *columns]
    text = (f"Example: case {case or '-'}, at {failure.where}, column(s) {shown}: "
            f"{failure.detail}\n{located}\n{_relation_clause(rel, name)}\n{plan_line(sources.plan, terms)}"
            + _repro(case, file, sources))
    return text, cases


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


def guard(tickets: list[Ticket], answers: Path | list[Path], inputs: list[Path], key: list[str],
          aside: frozenset[str] = frozenset()) -> list[Ticket]:
    """Leak-scan builder tickets against the answer key(s), less the ``aside`` cases' rows (canaries: their
    tickets quote what an honest target wrote); a leaking one is redacted and reported."""
    keys = answers if isinstance(answers, list) else [answers]
    out = []
    with tempfile.TemporaryDirectory(prefix="tri-tickets-") as tmp:
        for t in tickets:
            if t.route != "builder":
                out.append(t)
                continue
            path = Path(tmp) / f"{t.id}.md"
            path.write_text(t.markdown(), encoding="utf-8")
            hits = scan_leaks(keys, [path], inputs=inputs, key=key, aside=aside).hits
            if not hits:
                out.append(t)
                continue
            out.append(t.model_copy(update={"body": "(redacted: the description would have revealed a sealed value)"}))
            out.append(_ticket("orchestrator", t.signature, "leak-guard", f"ticket {t.id} was redacted",
                               f"The builder ticket {t.id} would have revealed a sealed value "
                               f"({hits[0].detail}); the judge must describe it without it.", []))
    return out


def builder_folder(rounds: list[tuple[int, dict[str, str]]]) -> tuple[dict[str, str], dict[str, str]]:
    """The builder's ticket folder after ``rounds`` ((round, {ticket id: its text}), oldest first): the open
    tickets, exactly those the last round filed, and the resolved ones, each earlier ticket that no round filed
    again since, its text marked with the round that resolved it. A ticket filed again is open again."""
    last: dict[str, tuple[int, str]] = {}
    resolved_in: dict[str, int] = {}
    for k, filed in rounds:
        for tid in sorted(last.keys() - filed.keys() - resolved_in.keys()):
            resolved_in[tid] = k
        for tid, text in filed.items():
            last[tid] = (k, text)
            resolved_in.pop(tid, None)
    open_tickets = dict(rounds[-1][1]) if rounds else {}
    return open_tickets, {tid: resolved_text(last[tid][1], k, last[tid][0]) for tid, k in sorted(resolved_in.items())}


def resolved_text(text: str, resolved: int, filed: int) -> str:
    """A ticket's text with a ``resolved:`` line among its header lines: the round that resolved it, and the last
    round that filed it."""
    title, gap, rest = text.partition("\n\n")
    header, gap2, body = rest.partition("\n\n")
    return f"{title}{gap}{header}\nresolved: round {resolved} (last filed in round {filed}){gap2}{body}"


def redacted_text(text: str) -> str:
    """A ticket's title and header lines with its body replaced: a resolved ticket may hold the target's own old
    output, which a later round's sealed answers can happen to share, and that is never delivered."""
    title, gap, rest = text.partition("\n\n")
    header = rest.partition("\n\n")[0]
    return f"{title}{gap}{header}\n\n(redacted: the description shares a value with a later round's sealed answers)\n"
