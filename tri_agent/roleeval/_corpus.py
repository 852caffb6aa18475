"""The corpus contract: what a role under evaluation may see, what the right answer is, and where each case came from,
in three locations validated apart, so the expectations never travel with the payload.

A corpus is a folder::

    corpus.yaml                 the manifest (CorpusManifest): name, version, the role, the skill closure's extra
                                documents, and the cases in order
    visible/c-<12 hex>.json     the payload (Payload): the files the role is shown and its task, nothing else
    private/c-<12 hex>.json     the expectation (Expectation): the verdict, the root causes, accepted non-findings
    private/adjudications.jsonl a human's rulings on ambiguous findings (Resolution), reused by later runs
    provenance/c-<12 hex>.json  who planted what, from which commit, with which tool (Provenance)

A case is named by an opaque reference only (``c-`` and 12 hex digits of a hash). A reference, or a visible file
name, that names a verdict, a severity, a bug class or a disposition is refused: a name is part of what the role
sees, so it must say nothing of the answer.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import Field

from .._errors import MalformedInput
from .._model import Written
from .._yamldoc import load
from ..targets._presets import load_presets
from ._words import stem, stems, words

Role = Literal["examiner", "tester", "judge"]
Verdict = Literal["findings", "clean", "blocked"]
CASE_REF = re.compile(r"c-[0-9a-f]{12}")
# words that say what the answer is: a verdict, a severity, a disposition (the bug classes join them, from the presets)
TELLING = frozenset({
    "bug", "bugs", "buggy", "planted", "plant", "clean", "correct", "wrong", "broken", "fixed", "fix", "faulty",
    "defect", "weakened", "weak", "honest", "cheat", "cheated", "gamed", "expected", "verdict", "finding", "findings",
    "blocked", "incomplete", "pass", "passed", "fail", "failed", "failing", "critical", "major", "minor", "severe",
    "severity", "blocker", "high", "low", "mutant", "mutated", "mutation", "injected", "regression", "positive",
    "negative", "true", "false", "accept", "accepted", "reject", "rejected", "approve", "approved", "merge",
    "control", "decoy", "canary", "answer", "solution", "ok", "good", "bad", "fault", "faults", "flaw", "flawed",
    "incorrect", "unfixed", "broke", "vulnerable", "vuln", "leak", "leaked", "seeded",
})


class _CasePart(Written):
    """What the three parts of a case share: the reference they are filed under."""

    case: str = Field(description="The case's opaque reference.")


_P = TypeVar("_P", bound=_CasePart)


class CorpusManifest(Written):
    """``corpus.yaml``: the corpus as a whole."""

    schema_version: Literal[1] = Field(description="Version of the corpus manifest format.")
    name: str = Field(min_length=1, description="The corpus's name, as reports cite it.")
    version: str = Field(min_length=1, description="The corpus's version: a baseline records it, and a comparison "
                                                   "refuses two versions.")
    role: Role = Field(description="The role the corpus evaluates.")
    skill_dependencies: list[str] = Field(default_factory=list, description="Documents the role's skill closure "
                                          "needs beyond its charter and SKILL.md (project-relative paths).")
    cases: list[str] = Field(min_length=1, description="The case references, in the order attempts run.")


class Payload(_CasePart):
    """``visible/<case>.json``: everything the role is shown for one case, and nothing else."""

    schema_version: Literal[1] = Field(description="Version of the payload format.")
    task: str = Field(min_length=1, description="What the role is asked to do, in its own words.")
    files: dict[str, str] = Field(description="Relative path -> text of every file the role may read.")


class Surface(Written):
    """Where a root cause is: a file, and the lines a finding may point at to be on it."""

    path: str = Field(min_length=1, description="The file, as the payload names it.")
    lines: tuple[int, int] | None = Field(default=None, description="First and last line (inclusive); null for "
                                                                     "anywhere in the file.")


class Plant(Written):
    """How a root cause was planted in the program an examiner's exam is run against: one exact edit."""

    file: str = Field(min_length=1, description="The file of the private target it edits.")
    find: str = Field(min_length=1, description="The original text it replaces; occurs exactly once in the file.")
    replace: str = Field(description="The text put in its place.")
    bug_class: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$", description="The bug class it realises.")


class RootCause(Written):
    """One thing the role should report, described four ways and with the words that count as naming it."""

    id: str = Field(pattern=r"^rc-[0-9]+$", description="Its id inside the case (rc-1, rc-2, ...).")
    requirement: str = Field(min_length=1, description="The requirement it breaks.")
    trigger: str = Field(min_length=1, description="The input or situation that shows it.")
    surface: Surface = Field(description="Where it is.")
    consequence: str = Field(min_length=1, description="What goes wrong because of it.")
    formulations: list[str] = Field(min_length=1, description="Accepted ways to name it: each a few words that a "
                                    "finding must all hold (in any order, any inflection) to count as naming it.")
    plant: Plant | None = Field(default=None, description="Examiner corpora: the edit that plants it in the private "
                                "target; the examiner's exam names it when the engine sees the exam kill it.")


class Expectation(_CasePart):
    """``private/<case>.json``: the right answer for one case, never shown to the role."""

    schema_version: Literal[1] = Field(description="Version of the expectation format.")
    verdict: Verdict = Field(description="findings: there is something to report; clean: nothing to report; "
                                         "blocked: the payload is too incomplete to judge, and the role must say so.")
    root_causes: list[RootCause] = Field(default_factory=list, description="What to report (verdict findings only).")
    accepted: list[str] = Field(default_factory=list, description="Formulations of findings that are true of the "
                                "case but not what it plants: reported, they are neither a match nor a false "
                                "positive.")
    target: dict[str, str] = Field(default_factory=dict, description="Examiner corpora: the program the exam is run "
                                   "against, never shown (relative path -> text, its target file target.yaml among "
                                   "them); each root cause's plant edits it.")


class Provenance(_CasePart):
    """``provenance/<case>.json``: where a case came from."""

    schema_version: Literal[1] = Field(description="Version of the provenance format.")
    program: str = Field(min_length=1, description="The program the case was made from: the cluster its intervals "
                                                   "count it in (many cases of one program are not independent).")
    kind: Literal["command", "service", "browser", "document"] = Field(description="The program's target kind.")
    planted_by: str = Field(min_length=1, description="Who or what planted it (a person, a script and its version).")
    source_commit: str = Field(description="The commit of the program the case was made from ('' when none).")
    tool: str = Field(description="The tool or operator that planted it ('' for a clean or hand-made case).")
    bug_class: str = Field(default="", description="The bug class planted ('' for a clean case).")


class Corpus:
    """A corpus read from its folder: the manifest and, per case, its three parts."""

    def __init__(self, root: Path, manifest: CorpusManifest, payloads: dict[str, Payload],
                 expectations: dict[str, Expectation], provenance: dict[str, Provenance]) -> None:
        self.root, self.manifest = root, manifest
        self.payloads, self.expectations, self.provenance = payloads, expectations, provenance


def load_corpus(root: Path) -> Corpus:
    """Read and validate every part of the corpus at ``root``; the first problem is exit 3 naming its file."""
    manifest = load(root / "corpus.yaml", CorpusManifest)
    _check_refs(manifest, root)
    payloads = {ref: _part(root / "visible" / f"{ref}.json", Payload, ref) for ref in manifest.cases}
    expectations = {ref: _part(root / "private" / f"{ref}.json", Expectation, ref) for ref in manifest.cases}
    provenance = {ref: _part(root / "provenance" / f"{ref}.json", Provenance, ref) for ref in manifest.cases}
    for ref in manifest.cases:
        _check_names(payloads[ref], root / "visible" / f"{ref}.json")
        _check_expectation(expectations[ref], payloads[ref], root / "private" / f"{ref}.json")
    return Corpus(root, manifest, payloads, expectations, provenance)


def _check_refs(manifest: CorpusManifest, root: Path) -> None:
    where = str(root / "corpus.yaml")
    seen: set[str] = set()
    for ref in manifest.cases:
        if not CASE_REF.fullmatch(ref):
            raise MalformedInput(f"case reference {ref!r} is not opaque", where=where,
                                 hint="name each case c- and 12 hex digits of a hash (case_ref())")
        if ref in seen:
            raise MalformedInput(f"case {ref} is listed twice", where=where, hint="list each case once")
        seen.add(ref)


def _part(path: Path, model: type[_P], ref: str) -> _P:
    if not path.is_file():
        raise MalformedInput(f"case {ref} has no {path.parent.name} part", where=str(path),
                             hint="every case needs visible/, private/ and provenance/ files")
    part = load(path, model)
    if part.case != ref:
        raise MalformedInput(f"names case {part.case!r}, not {ref}", where=str(path), hint="fix its case field")
    return part


def _check_names(payload: Payload, where: Path) -> None:
    for name in payload.files:
        word = telling_word(name)
        if word is not None:
            raise MalformedInput(f"visible file name {name!r} says {word!r}", where=str(where),
                                 hint="rename it: a name the role reads must not tell the answer")
        if name.startswith("/") or "\\" in name or ":" in name or ".." in name.split("/"):
            raise MalformedInput(f"visible file name {name!r} leaves the case", where=str(where),
                                 hint="use a relative path inside the case")


def _check_expectation(expectation: Expectation, payload: Payload, where: Path) -> None:
    """A findings case lists its root causes and no other does; each has its own id, a surface among the payload's
    files (an examiner case's: among its private target's) with its lines in order, formulations that hold words,
    and a plant, where it has one, that applies to its target exactly once."""
    if (expectation.verdict == "findings") != bool(expectation.root_causes):
        raise MalformedInput(f"verdict {expectation.verdict} with {len(expectation.root_causes)} root cause(s)",
                             where=str(where), hint="a findings case lists its root causes; no other case has any")
    ids = [rc.id for rc in expectation.root_causes]
    files = expectation.target or payload.files
    for rc in expectation.root_causes:
        problem = "its id is used twice" if ids.count(rc.id) > 1 else \
            f"its surface {rc.surface.path!r} is no file of the {'target' if expectation.target else 'payload'}" \
            if rc.surface.path not in files else \
            "its surface's lines end before they start" if rc.surface.lines and rc.surface.lines[0] > \
            rc.surface.lines[1] else "a formulation holds no word" if not all(
                words(f) for f in (*rc.formulations, *expectation.accepted)) else _plant_problem(rc, expectation)
        if problem:
            raise MalformedInput(f"root cause {rc.id}: {problem}", where=str(where), hint="fix the expectation")


def _plant_problem(rc: RootCause, expectation: Expectation) -> str:
    if rc.plant is None:
        return "it has no plant, and its case a target" if expectation.target else ""
    text = expectation.target.get(rc.plant.file)
    if text is None:
        return f"its plant edits {rc.plant.file!r}, no file of the target"
    found = text.count(rc.plant.find)
    return "" if found == 1 else f"its plant's text occurs {found} times in {rc.plant.file} (must be once)"


def telling_word(name: str) -> str | None:
    """What in ``name`` (read as words: ``_words``, camelCase and digits split) tells an answer, else None: a word
    of ``TELLING`` in any inflection, or a bug class of the shipped presets, its words in a row (``off_by_one.py``)."""
    found = stems(name)
    told = next((w for w, s in zip(words(name), found, strict=True) if s in _telling_stems()), None)
    return told or next(("-".join(c) for c, cs in _bug_classes() if any(
        tuple(found[i:i + len(cs)]) == cs for i in range(len(found)))), None)


@lru_cache(maxsize=1)
def _telling_stems() -> frozenset[str]:
    return frozenset(stem(w) for w in TELLING)


@lru_cache(maxsize=1)
def _bug_classes() -> tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]:
    ids = {item.id for preset in load_presets().values() for item in preset.mutation_bug_classes}
    return tuple(sorted((tuple(words(i)), tuple(stems(i))) for i in ids))


def case_ref(seed: str) -> str:
    """An opaque reference made from ``seed`` (any text that identifies the case to its maker)."""
    return "c-" + hashlib.sha256(seed.encode()).hexdigest()[:12]
