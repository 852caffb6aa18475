"""Grading one attempt's reply against its case's expectation: each finding gets one grade of the closed ``GRADES``
table, and the attempt is right, wrong, or waits on a human.

A finding names a root cause when it is at the root cause's place (its file, within two lines of its lines, pinned
no wider than they are) and holds every word of one of its formulations, none of them negated ("not removed"):
verbatim is a *match*, in another order or inflection a *paraphrase* (words read as ``_words`` reads them). A
second finding of a root cause already named is a *duplicate* symptom, counted once. Some of a formulation's
words at the place, or all of them elsewhere in its file (or with no line), is *partial*: neither found nor
false, and no right answer either; in another file it names nothing. What names two root causes at their
places, or stands at a root cause's place in words the case does not hold, is *ambiguous*: it waits in the
adjudication queue until a person rules (``Resolution``), and the ruling is reused by every later run. What is
true of the case but not what it plants, said about as briefly, is *accepted*; anything else is *unexpected*: a
false positive on a case with a planted bug, a false alarm on a clean one.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Literal

from pydantic import Field

from .._model import Written
from ._corpus import Expectation, RootCause, Verdict
from ._words import NEGATORS, content, phrase, stems

Grade = Literal["match", "paraphrase", "duplicate", "partial", "ambiguous", "accepted", "unexpected"]
GRADES: dict[Grade, str] = {  # grade -> what it means
    "match": "names a root cause at its place, in one of its formulations as written",
    "paraphrase": "names a root cause at its place with every word of a formulation, in another order or inflection",
    "duplicate": "names a root cause another finding of the attempt already named: the same symptom, counted once",
    "partial": "some words of a formulation at a root cause's place, or all of them at another place",
    "ambiguous": "names two root causes at their places, or stands at one's place in other words: a person rules",
    "accepted": "true of the case but not what it plants: neither found nor false",
    "unexpected": "names nothing the case holds: a false positive (on a clean case, a false alarm)",
}
NAMING: frozenset[Grade] = frozenset({"match", "paraphrase"})
_NEAR = 2  # lines: a finding this close to a root cause's lines is at its place


class Finding(Written):
    """One thing the role reported."""

    location: str = Field(description="Where: 'path:line', 'path:first-last' or 'path'.")
    text: str = Field(description="What, in the role's words.")


class Reply(Written):
    """A role's answer to one case, read from its reply (never from its packet)."""

    blocked: bool = Field(default=False, description="The role refused to judge: the payload is too incomplete.")
    findings: list[Finding] = Field(default_factory=list, description="What it reported.")
    exam: dict[str, str] = Field(default_factory=dict, description="An examiner's answer: the exam folder it wrote "
                                 "(relative path -> text); the engine turns it into findings (``_examine``).")


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
        partial = any(g.grade == "partial" for g in self.findings)  # a near miss is no right answer, nor is noise
        if self.unexpected or partial or (self.expected == "findings" and self.named != set(self.root_causes)) or \
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
    places = {rc.id: _at(rc, path, lines) for rc in expectation.root_causes}
    named = [(rc, how) for rc in expectation.root_causes if places[rc.id]
             for how in [_named(rc, finding.text)] if how is not None]
    if len(named) == 1:
        return Graded(finding, key, named[0][1], named[0][0].id)
    if len(named) > 1:
        return Graded(finding, key, "ambiguous")
    partial = [rc for rc in expectation.root_causes if _partial(rc, places[rc.id], finding.text)]
    if partial:  # a near miss of one root cause, or of several at once: no name for any
        return Graded(finding, key, "partial", partial[0].id if len(partial) == 1 else None)
    if any(_accepted(f, finding.text) for f in expectation.accepted):
        return Graded(finding, key, "accepted")
    return Graded(finding, key, "ambiguous" if True in places.values() else "unexpected")


def _named(rc: RootCause, text: str) -> Grade | None:
    hows = [_formulated(f, text) for f in rc.formulations]
    return "match" if "match" in hows else "paraphrase" if "paraphrase" in hows else None


def _formulated(formulation: str, text: str) -> Grade | None:
    """How ``text`` holds ``formulation``: as written, or with every stem in any order; not at all when the text
    negates one of its words ("not removed"), unless the formulation is a negative one itself ("no longer checks")."""
    wanted, found = set(stems(formulation)), stems(text)
    if not wanted <= set(found) or (not wanted & NEGATORS and _negated(wanted, found)):
        return None
    return "match" if phrase(formulation) in phrase(text) else "paraphrase"


def _negated(wanted: set[str], found: list[str]) -> bool:
    """A wanted stem whose every occurrence follows a negator by three words or fewer."""
    return any(all(any(w in NEGATORS for w in found[max(0, i - 3):i]) for i, s in enumerate(found) if s == want)
               for want in wanted)


def _accepted(formulation: str, text: str) -> bool:
    """An accepted non-finding, said about as briefly as the case words it: every stem of it, and not many more
    (a false alarm with an accepted phrase tacked on is still a false alarm)."""
    wanted, found = content(formulation), content(text)
    return bool(wanted) and _formulated(formulation, text) is not None and len(found - wanted) <= max(3, len(wanted))


def _partial(rc: RootCause, place: bool | None, text: str) -> bool:
    """In the root cause's file: half a formulation's stems or more at its lines, or all of them at other lines,
    with no line, or over a range much wider than it."""
    if place is None:
        return False
    if not place:
        return _named(rc, text) is not None
    found = set(stems(text))
    return any(2 * len(set(stems(f)) & found) >= len(set(stems(f))) > 0 for f in rc.formulations)


def _at(rc: RootCause, path: str, lines: tuple[int, int] | None) -> bool | None:
    """True: at the root cause's lines (within two, no wider than they are); False: in its file but not pinned to
    them; None: another file."""
    if path != rc.surface.path:
        return None
    if rc.surface.lines is None:
        return True
    if lines is None:
        return False
    first, last = rc.surface.lines
    near = lines[0] <= last + _NEAR and lines[1] >= first - _NEAR
    narrow = lines[1] - lines[0] <= (last - first) + 2 * _NEAR
    return near and narrow


def _location(location: str) -> tuple[str, tuple[int, int] | None]:
    """The path (a leading ``./`` and backslashes undone) and the lines of a location; a trailing column is
    dropped."""
    found = re.fullmatch(r"(.+?):(\d+)(?:-(\d+))?(?::\d+)?", location.strip())
    path, lines = (found[1], (int(found[2]), int(found[3] or found[2]))) if found else (location.strip(), None)
    path = path.replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    return path, lines


def finding_key(case: str, finding: Finding) -> str:
    """A finding's key: the same finding of the same case, worded the same, gets the same ruling in every run."""
    text = f"{case}\0{finding.location.strip()}\0{phrase(finding.text)}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]
