"""Grading one attempt's reply against its case's expectation: each finding gets one grade of the closed ``GRADES``
table, and the attempt is right, wrong, or waits on a human.

A finding names a root cause when it is at the root cause's place (its file, within two lines of its lines) and
holds every word of one of its formulations: verbatim is a *match*, in another order or inflection a
*paraphrase*. A second finding of a root cause already named is a *duplicate* symptom, counted once. Some of a
formulation's words at the place, or all of them at another place, is *partial*: neither found nor false. What
could name two root causes, or stands at a root cause's place in words the case does not hold, is *ambiguous*: it
waits in the adjudication queue until a person rules (``Resolution``), and the ruling is reused by every later
run. What is true of the case but not what it plants is *accepted*; anything else is *unexpected*: a false
positive on a case with a planted bug, a false alarm on a clean one.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Literal

from pydantic import Field

from .._model import Written
from ._corpus import Expectation, RootCause, Verdict

Grade = Literal["match", "paraphrase", "duplicate", "partial", "ambiguous", "accepted", "unexpected"]
GRADES: dict[Grade, str] = {  # grade -> what it means
    "match": "names a root cause at its place, in one of its formulations as written",
    "paraphrase": "names a root cause at its place with every word of a formulation, in another order or inflection",
    "duplicate": "names a root cause another finding of the attempt already named: the same symptom, counted once",
    "partial": "some words of a formulation at a root cause's place, or all of them at another place",
    "ambiguous": "could name two root causes, or stands at one's place in other words: a person rules",
    "accepted": "true of the case but not what it plants: neither found nor false",
    "unexpected": "names nothing the case holds: a false positive (on a clean case, a false alarm)",
}
NAMING: frozenset[Grade] = frozenset({"match", "paraphrase"})
_NEAR = 2  # lines: a finding this close to a root cause's lines is at its place
_SUFFIXES = ("ing", "ied", "ies", "ed", "es", "s", "ly", "e")


class Finding(Written):
    """One thing the role reported."""

    location: str = Field(description="Where: 'path:line', 'path:first-last' or 'path'.")
    text: str = Field(description="What, in the role's words.")


class Reply(Written):
    """A role's answer to one case, read from its reply (never from its packet)."""

    blocked: bool = Field(default=False, description="The role refused to judge: the payload is too incomplete.")
    findings: list[Finding] = Field(default_factory=list, description="What it reported.")


class Resolution(Written):
    """A person's ruling on an ambiguous finding (a line of ``private/adjudications.jsonl``)."""

    schema_version: Literal[1] = Field(default=1, description="Version of the ruling format.")
    case: str = Field(description="The case's reference.")
    key: str = Field(description="The finding's key, as the adjudication queue gives it.")
    grade: Literal["match", "partial", "accepted", "unexpected"] = Field(description="The ruling.")
    root_cause: str | None = Field(default=None, description="The root cause it names (match and partial).")
    by: str = Field(min_length=1, description="Who ruled.")
    note: str = Field(default="", description="Why.")


@dataclass(frozen=True)
class Graded:
    """One finding and its grade (with the root cause it concerns, when one)."""

    finding: Finding
    key: str
    grade: Grade
    root_cause: str | None = None


@dataclass
class AttemptGrade:
    """One attempt, graded: the verdict expected and given, each finding, and whether the attempt was right."""

    case: str
    expected: Verdict
    given: Verdict
    findings: list[Graded] = field(default_factory=list)
    root_causes: list[str] = field(default_factory=list)  # every root cause of the case

    @property
    def named(self) -> set[str]:
        return {g.root_cause for g in self.findings if g.grade in NAMING and g.root_cause is not None}

    @property
    def pending(self) -> int:
        return sum(g.grade == "ambiguous" for g in self.findings)

    @property
    def unexpected(self) -> int:
        return sum(g.grade == "unexpected" for g in self.findings)

    @property
    def right(self) -> bool | None:
        """Right, wrong, or None while a finding waits on a ruling that could decide it."""
        if self.expected == "blocked" or self.given == "blocked":
            return self.expected == self.given
        if self.unexpected or (self.expected == "findings" and self.named != set(self.root_causes)) or \
                (self.expected == "clean" and self.named):
            return False
        return None if self.pending else True


def grade(case: str, expectation: Expectation, reply: Reply, rulings: dict[str, Resolution] | None = None
          ) -> AttemptGrade:
    """Grade ``reply`` against ``expectation``; ``rulings`` by finding key decide what was ambiguous."""
    given: Verdict = "blocked" if reply.blocked else "findings" if reply.findings else "clean"
    out = AttemptGrade(case, expectation.verdict, given, root_causes=[rc.id for rc in expectation.root_causes])
    if reply.blocked:
        return out
    for finding in reply.findings:
        key = finding_key(case, finding)
        ruled = (rulings or {}).get(key)
        graded = Graded(finding, key, ruled.grade, ruled.root_cause) if ruled is not None else \
            _graded(finding, key, expectation)
        if graded.grade in NAMING and graded.root_cause in out.named:
            graded = Graded(finding, key, "duplicate", graded.root_cause)
        out.findings.append(graded)
    return out


def _graded(finding: Finding, key: str, expectation: Expectation) -> Graded:
    path, lines = _location(finding.location)
    words = _stems(finding.text)
    named = [(rc, how) for rc in expectation.root_causes if _at(rc, path, lines)
             for how in [_named(rc, finding.text, words)] if how is not None]
    if len(named) == 1:
        return Graded(finding, key, named[0][1], named[0][0].id)
    if len(named) > 1:
        return Graded(finding, key, "ambiguous")
    partial = [rc for rc in expectation.root_causes if _partial(rc, _at(rc, path, lines), finding.text, words)]
    if len(partial) == 1:
        return Graded(finding, key, "partial", partial[0].id)
    if partial:
        return Graded(finding, key, "ambiguous")
    if any(_formulated(f, finding.text, words) for f in expectation.accepted):
        return Graded(finding, key, "accepted")
    at_a_place = any(_at(rc, path, lines) for rc in expectation.root_causes)
    return Graded(finding, key, "ambiguous" if at_a_place else "unexpected")


def _named(rc: RootCause, text: str, words: set[str]) -> Grade | None:
    hows = [_formulated(f, text, words) for f in rc.formulations]
    return "match" if "match" in hows else "paraphrase" if "paraphrase" in hows else None


def _formulated(formulation: str, text: str, words: set[str]) -> Grade | None:
    if _phrase(formulation) in _phrase(text):
        return "match"
    return "paraphrase" if _stems(formulation) <= words else None


def _partial(rc: RootCause, at: bool, text: str, words: set[str]) -> bool:
    """Half a formulation's words or more at the place, or all of them elsewhere."""
    if not at:
        return _named(rc, text, words) is not None
    return any(2 * len(_stems(f) & words) >= len(_stems(f)) > 0 for f in rc.formulations)


def _at(rc: RootCause, path: str, lines: tuple[int, int] | None) -> bool:
    if path != rc.surface.path:
        return False
    if rc.surface.lines is None or lines is None:
        return True
    first, last = rc.surface.lines
    return lines[0] <= last + _NEAR and lines[1] >= first - _NEAR


def _location(location: str) -> tuple[str, tuple[int, int] | None]:
    found = re.fullmatch(r"(.+?):(\d+)(?:-(\d+))?", location.strip())
    if found is None:
        return location.strip(), None
    first = int(found[2])
    return found[1], (first, int(found[3]) if found[3] else first)


def _phrase(text: str) -> str:
    return " " + " ".join(re.findall(r"[^\W_]+", unicodedata.normalize("NFC", text).casefold())) + " "


def _stems(text: str) -> set[str]:
    return {_stem(w) for w in _phrase(text).split()}


def _stem(word: str) -> str:
    """A crude stem: one common English suffix off when three letters stay, and a doubled last consonant made
    single (remove, removed, removing -> remov; skipped -> skip)."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            stem = word[: -len(suffix)]
            return stem[:-1] if len(stem) > 3 and stem[-1] == stem[-2] and stem[-1] not in "aeiou" else stem
    return word


def finding_key(case: str, finding: Finding) -> str:
    """A finding's key: the same finding of the same case, worded the same, gets the same ruling in every run."""
    text = f"{case}\0{finding.location.strip()}\0{_phrase(finding.text)}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]
