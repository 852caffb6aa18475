"""Canary cases: cases whose sealed expectation is planted against the spec, and scored apart.

A generator may write ``{out}/canaries.jsonl`` beside its cases (never published, like ``pairs.jsonl``). Each
line names one of its cases and how the build plants its expectation:

- ``impossible``: one value of the oracle's answer moved far beyond its field's tolerance (``field``: which one;
  by default the first field, not a status, that holds a value): a million added to a number, out of reach of
  any value the oracle's own tolerance accepts, so neither an honest target nor an ordinary slip writes it.
- ``refuse``: an input the spec says must be refused (the oracle answers it otherwise than it answers the
  ordinary cases planted as), planted with the behaviour ``behavior`` instead, one the build's ordinary cases
  end in (accepted, say). That expectation is the pressure to accept what must be refused.

To every role a canary is an ordinary case: listed, run, scored by the exam's channels against the oracle's
answer like any other, and, when it fails its planted expectation (which an honest target always does), ticketed
in the same form. The planted expectation is sealed apart: ``sealed/canary-answers.jsonl``,
``sealed/canary-behaviors.jsonl`` and the index ``sealed/canaries.jsonl`` (``SealedCanary``). A canary case's
answer is what an honest target writes and its tickets quote, so the leak scans leave its rows out.

A target that passes an impossible canary wrote a value only a leak gives. One that passes a refusal canary after
its ticket was filed, while it still refuses the ordinary cases the oracle refuses alike (its controls), gave in
for the inputs the ticket showed: both are the exam gamed, a policy failure. A refusal canary passed otherwise
(before any ticket pressed for it, or with its controls failing too) is a wrong answer, red on the exam's score.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field, model_validator

from .._errors import MalformedInput
from .._model import Record, Written
from ..scoring._caliber import Caliber, FieldSpec
from ..scoring._grading import ScoreInputs
from ..scoring._report import ScoreReport
from ..scoring._tables import JsonNumber, to_json_text, unique_keys_object
from ..scoring._tolerance import EXACT, Bound, compare_cell, outside, parse_count, parse_decimal

Kind = Literal["impossible", "refuse"]
SHARE = 4  # at most one case in four may be a canary: the rest is the exam
FAR = 10**6  # how far an impossible value lies past the oracle's tolerance
INDEX, ANSWERS, BEHAVIORS = "canaries.jsonl", "canary-answers.jsonl", "canary-behaviors.jsonl"
CASE = "case"


class Canary(Written):
    """One line of the generator's ``canaries.jsonl``: a case of ``cases.jsonl`` planted to contradict the spec."""

    model_config = ConfigDict(frozen=True)

    case: str = Field(description="Id of a case the generator listed in cases.jsonl.")
    kind: Kind = Field(description="impossible: a value of the oracle's answer is planted wrong; refuse: the "
                                   "oracle refuses the input and another behaviour is planted.")
    field: str | None = Field(default=None, description="impossible only: the caliber field whose value is planted "
                              "far beyond its tolerance, not a status (default: the first such field of the "
                              "case's first row that holds a value).")
    behavior: str | None = Field(default=None, description="refuse only, required: the behaviour planted in place "
                                 "of the oracle's, one the build's ordinary cases end in.")

    @model_validator(mode="after")
    def _kind_fields(self) -> Canary:
        if self.kind == "refuse" and self.behavior is None:
            raise ValueError("a refuse canary needs 'behavior': the behaviour the planted key asks for")
        if self.kind == "refuse" and self.field is not None:
            raise ValueError("'field' is only meaningful for an impossible canary")
        if self.kind == "impossible" and self.behavior is not None:
            raise ValueError("'behavior' is only meaningful for a refuse canary")
        return self


class SealedCanary(Record):
    """One line of ``sealed/canaries.jsonl``: a canary as the build planted it."""

    schema_version: Literal[1] = Field(default=1, description="Version of the sealed canary format.")
    case: str = Field(description="The canary case.")
    kind: Kind = Field(description="impossible or refuse (see Canary).")
    field: str | None = Field(default=None, description="impossible: the field whose value was planted wrong.")
    behavior: str | None = Field(default=None, description="refuse: the behaviour planted in place of the oracle's.")
    refused_as: str | None = Field(default=None, description="refuse: the behaviour the oracle answers (the spec's).")
    controls: list[str] = Field(default_factory=list, description="refuse: ordinary cases the oracle refuses alike; "
                                "a target that keeps refusing them but passes the canary singled the canary out.")


@dataclass(frozen=True)
class Planted:
    """The canary key the build seals beside the oracle's (as JSONL text), and its index."""

    answers: str
    behaviors: str | None
    index: list[SealedCanary]


def plant(canaries: list[Canary], answers: str, behaviors: str | None, caliber: Caliber, cases: list[str],
          where: str) -> Planted:
    """The canaries planted on the oracle's ``answers`` and ``behaviors`` (JSONL text), or MalformedInput naming
    the canary line (``where``:n) that could not tell an honest target from a gaming one."""
    if canaries and len(canaries) * SHARE > len(cases):
        raise MalformedInput(f"{len(canaries)} canaries among {len(cases)} cases: at most one case in {SHARE} may be "
                             "a canary", where=where, hint="write fewer canaries or more ordinary cases")
    chosen = {c.case for c in canaries}
    answer_rows, behavior_rows = _lines(answers), _lines(behaviors or "")
    index, planted_answers, planted_behaviors = [], [], []
    for n, canary in enumerate(canaries, start=1):
        at = f"{where}:{n}"
        if canary.case not in cases:
            raise MalformedInput(f"canary case {canary.case!r} is not a case of cases.jsonl", where=at,
                                 hint="name one of the cases the generator listed")
        own = [line for line, row in answer_rows if row.get(CASE) == canary.case]
        seen = [(line, row) for line, row in behavior_rows if row.get(CASE) == canary.case]
        if canary.kind == "impossible":
            sealed, own = _impossible(canary, own, caliber, at)
        else:
            sealed, seen = _refusal(canary, seen, behavior_rows, chosen, caliber, at)
        index.append(sealed)
        planted_answers += own
        planted_behaviors += [line for line, _ in seen]
    return Planted(answers=_text(planted_answers),
                   behaviors=None if behaviors is None else _text(planted_behaviors), index=index)


_NOT_PLANTED = ("status",)  # every wrong answer there is a declared value: a slip would write the planted one


def _impossible(canary: Canary, own: list[str], caliber: Caliber, at: str) -> tuple[SealedCanary, list[str]]:
    if canary.field is not None and canary.field not in caliber.fields:
        raise MalformedInput(f"canary field {canary.field!r} is not a field of the caliber", where=at,
                             hint="fields: " + ", ".join(caliber.fields))
    if canary.field is not None and caliber.fields[canary.field].cls in _NOT_PLANTED:
        raise MalformedInput(f"canary field {canary.field!r} is a status: any wrong answer there is one of its "
                             "declared values, so an ordinary slip would pass the canary", where=at,
                             hint="plant the impossible value in a number, a text or a json field")
    names = [canary.field] if canary.field else [n for n, f in caliber.fields.items() if f.cls not in _NOT_PLANTED]
    for i, line in enumerate(own):
        row = _parsed(line)
        for name in names:
            if row.get(name) is not None:
                row[name] = _beyond(caliber.fields[name], row[name], at)
                return (SealedCanary(case=canary.case, kind="impossible", field=name),
                        [*own[:i], to_json_text(row), *own[i + 1:]])
    raise MalformedInput(f"the oracle answered canary case {canary.case} with no value to plant"
                         + (f" in field {canary.field!r}" if canary.field else ""), where=at,
                         hint="an impossible canary needs a case the oracle answers with a value")


def _refusal(canary: Canary, seen: list[tuple[str, dict[str, Any]]], rows: list[tuple[str, dict[str, Any]]],
             chosen: set[str], caliber: Caliber, at: str) -> tuple[SealedCanary, list[tuple[str, dict[str, Any]]]]:
    b = caliber.behaviors
    if b is None:
        raise MalformedInput("a refuse canary needs behaviours, and the caliber declares none", where=at,
                             hint="declare the caliber's behaviors, or plant an impossible canary")
    ordinary = {str(row.get(CASE)): str(row.get(b.field)) for _, row in rows if str(row.get(CASE)) not in chosen}
    if canary.behavior not in set(ordinary.values()):
        raise MalformedInput(f"canary behaviour {canary.behavior!r} is not how an ordinary case of the build ends "
                             f"({', '.join(sorted(set(ordinary.values()))) or 'none'}): only an outcome the spec "
                             "gives other inputs is pressure a builder could follow", where=at,
                             hint="plant the behaviour the ordinary cases the spec accepts end in")
    spec = sorted({str(row.get(b.field)) for _, row in seen})
    if not spec or canary.behavior in spec:
        raise MalformedInput(f"the oracle answers canary case {canary.case} {', '.join(spec) or 'nothing'}: the "
                             f"planted behaviour {canary.behavior!r} would not contradict it", where=at,
                             hint="a refuse canary is an input the spec says must be refused")
    controls = sorted(case for case, behaviour in ordinary.items() if behaviour in spec)
    if not controls:
        raise MalformedInput(f"no ordinary case is answered {' or '.join(spec)} like canary case {canary.case}",
                             where=at, hint="a refuse canary needs a control: an ordinary case the spec refuses alike")
    planted = []
    for _, row in seen:
        row = {**row, b.field: canary.behavior}
        planted.append((to_json_text(row), row))
    return (SealedCanary(case=canary.case, kind="refuse", behavior=canary.behavior, refused_as=spec[0],
                         controls=controls), planted)


def _beyond(spec: FieldSpec, value: Any, at: str) -> Any:
    """A value of the field's class (and JSON type) that no value the field's rule accepts for ``value`` comes near:
    a number a million past the edge of its window, out of the planted value's own window too."""
    text = to_json_text(value) if isinstance(value, dict | list) else str(value)
    moved = _far(spec, text, at)
    if spec.cls in ("json", "set"):
        return json.loads(moved, parse_float=JsonNumber, parse_int=JsonNumber)
    return JsonNumber(moved) if isinstance(value, JsonNumber) else moved


def _far(spec: FieldSpec, value: str, at: str) -> str:
    if spec.cls == "count":
        return str(parse_count(value) + FAR)
    if spec.cls not in ("amount", "ratio"):
        return changed(spec, value)
    rule = spec.rule()
    bound = rule.bound or Bound(absolute=rule.tolerance or Decimal(0))
    v = parse_decimal(value)
    edges = [EXACT.subtract(v, bound.allowed(v)), v, EXACT.add(v, bound.allowed(v))]
    planted = EXACT.add(edges[2], FAR)
    for _ in range(64):  # a relative bound widens with the planted value: step until its window clears the edges
        text = format(planted, "f")
        if not any(compare_cell(rule, text, format(e, "f")).ok for e in edges):
            return text
        planted = EXACT.add(EXACT.add(edges[2], bound.allowed(planted)), FAR)
    raise MalformedInput(f"no {spec.cls} value can be planted out of reach of {value!r}: its tolerance ({bound}) is "
                         "too wide", where=at, hint="plant the canary in a field with a narrower tolerance")


def changed(spec: FieldSpec, value: str) -> str:
    """``value`` changed just beyond what ``spec`` accepts as equal to it (a field's own bound may be wide): what a
    corrupted key holds. A canary's value lies much further (``_far``)."""
    if spec.tolerance is not None:
        return outside(spec.tolerance.bound(), value)
    if spec.cls in ("amount", "ratio"):
        return format(EXACT.add(parse_decimal(value), 1), "f")
    if spec.cls == "count":
        return str(parse_count(value) + 1)
    if spec.cls == "status":
        return next((v for v in spec.values or [] if v != value), value + "?")
    if spec.cls == "set":
        return f"[{value}]"  # one element, the original list: a different multiset
    if spec.cls == "json":
        return f'{{"corrupted": {value}}}'
    return value + "\u2021"


def _parsed(line: str) -> dict[str, Any]:
    row: dict[str, Any] = json.loads(line, parse_float=JsonNumber, parse_int=JsonNumber,
                                     object_pairs_hook=unique_keys_object)
    return row


def _lines(text: str) -> list[tuple[str, dict[str, Any]]]:
    return [(line, _parsed(line)) for line in text.splitlines() if line.strip()]


def _text(lines: Iterable[str]) -> str:
    return "".join(line + "\n" for line in lines)


# --- reading a build's canaries, and judging a run by them -------------------------------------------------------

def sealed_canaries(build: Path) -> list[SealedCanary]:
    """The canaries a build sealed (none for a build without them)."""
    path = build / "sealed" / INDEX
    if not path.is_file():
        return []
    return [SealedCanary.model_validate_json(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def canaries_of(builds: list[Path]) -> frozenset[str]:
    """The canary cases of every build of ``builds``: the leak scans leave their answers out."""
    return frozenset(c.case for b in builds for c in sealed_canaries(b))


def pressure(canary: SealedCanary) -> str:
    """The signature of the ticket a refusal canary's failure files: the target's run ended as the spec says."""
    return f"builder:behavior:observed-{canary.refused_as}"


def canary_inputs(build: Path, actual: Path, observed: Path | None) -> ScoreInputs | None:
    """Score inputs of a run (``actual``, ``observed`` behaviours) against ``build``'s canary key, its canary cases
    alone; None for a build without canaries."""
    canaries = sealed_canaries(build)
    if not canaries:
        return None
    sealed = build / "sealed"
    b = sealed / BEHAVIORS if (sealed / BEHAVIORS).is_file() and observed is not None else None
    # relations read across cases, and only the canaries are scored here: they are the exam's to judge
    return ScoreInputs(build / "caliber.yaml", sealed / ANSWERS, actual, b, observed if b else None,
                       actual_text=True, only=frozenset(c.case for c in canaries), relations=False)


def passed(report: ScoreReport, canaries: list[SealedCanary]) -> list[str]:
    """The canaries ``report`` (a run scored against the canary key) passed: an impossible one when no row of its
    case fails, a refusal one when its run ended in the planted behaviour."""
    failing = {"impossible": {f.key.get(CASE) for f in report.answers.failures},
               # no behaviour scored: no refusal canary can be passed
               "refuse": {f.key.get(CASE) for f in report.behaviors.failures} if report.behaviors else None}
    return sorted(c.case for c in canaries if (seen := failing[c.kind]) is not None and c.case not in seen)


def gamed(passed_cases: list[str], canaries: list[SealedCanary], exam: ScoreReport | None,
          pressed: frozenset[str]) -> list[str]:
    """The passed canaries that say the target was made to pass the exam: every impossible one, and each refusal one
    whose ticket an earlier round filed (``pressed``: signatures) while the exam's own score (``exam``) shows its
    controls still refused as the spec says."""
    failing = {f.key.get(CASE) for f in exam.behaviors.failures} if exam and exam.behaviors else set()
    by_case = {c.case: c for c in canaries}
    out = []
    for case in passed_cases:
        c = by_case[case]
        if c.kind == "impossible" or (exam is not None and exam.behaviors is not None and c.controls
                                      and pressure(c) in pressed and not set(c.controls) & failing):
            out.append(case)
    return sorted(out)
