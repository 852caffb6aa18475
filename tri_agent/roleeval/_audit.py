"""The contamination audit, run over every case before any attempt starts, and the skill closure the role is given.

- **Structural**: each payload file holds exactly the permitted keys (``PERMITTED``), its files a mapping of
  names to texts; anything else could carry the answer past the textual check.
- **Textual**: every private string of a case of more than one word (its root causes' requirement, trigger,
  consequence and formulations, its accepted non-findings, its bug class and tool) is searched in the payload's
  real string values (file names, file texts, the task), both sides NFC-normalised, case-folded, and read as
  words, so neither a non-ASCII character, a line break, a quote nor a re-wrapped line hides it.
- **Closure**: the role's charter, SKILL.md, the corpus's declared documents and every ``docs/*.md`` any of them
  names, read whole; a declared document that is missing, listed twice, or is the charter or SKILL.md itself fails
  closed. Its members and digest are recorded with every run and every attempt.

A contaminated case anywhere (the last one too) stops the run before the first attempt: exit 6.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._errors import LeakDetected, MalformedInput
from .._resources import shipped
from ._corpus import Corpus, Expectation, Provenance

PERMITTED = frozenset({"schema_version", "case", "task", "files"})
_DOC_REF = re.compile(r"\bdocs/[\w./-]+?\.md\b")


@dataclass(frozen=True)
class Closure:
    """The documents that define the role's job, as the role is given them: (name, text) in order, and a digest."""

    documents: tuple[tuple[str, str], ...]

    @property
    def members(self) -> list[str]:
        return [name for name, _ in self.documents]

    @property
    def digest(self) -> str:
        h = hashlib.sha256()
        for name, text in self.documents:
            h.update(f"{name}\0{hashlib.sha256(text.encode()).hexdigest()}\n".encode())
        return h.hexdigest()


def audit(corpus: Corpus) -> None:
    """Every case, structurally then textually, before anything launches; the first problem raises."""
    for ref in corpus.manifest.cases:
        path = corpus.root / "visible" / f"{ref}.json"
        values = _strings(_structure(path))
        for needle in private_strings(corpus.expectations[ref], corpus.provenance[ref]):
            hit = next((v for v in values if _normal(needle) in v), None)
            if hit is not None:
                raise LeakDetected(f"case {ref}: the payload holds the private string {needle[:60]!r}",
                                   hint=f"rewrite {path} (or the expectation) so the role cannot read the answer; "
                                        "no attempt was started")


def _structure(path: Path) -> dict[str, object]:
    """The payload's raw document, checked against the permitted keys and shapes."""
    try:
        raw: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise MalformedInput(f"not a JSON payload ({type(exc).__name__})", where=str(path),
                             hint="write the payload as UTF-8 JSON") from None
    keys = set(raw) if isinstance(raw, dict) else set()
    if keys != PERMITTED:
        extra, missing = sorted(keys - PERMITTED), sorted(PERMITTED - keys)
        raise LeakDetected(f"payload keys are not the permitted ones (extra {extra}, missing {missing})",
                           hint=f"a payload holds exactly {sorted(PERMITTED)}; fix {path}")
    files = raw["files"]
    if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()) \
            or not isinstance(raw["task"], str):
        raise LeakDetected("payload files must map names to texts, and its task be a text",
                           hint=f"fix {path}")
    return dict(raw)


def _strings(raw: dict[str, object]) -> list[str]:
    files = raw["files"]
    assert isinstance(files, dict)
    return [_normal(s) for s in (str(raw["task"]), *files.keys(), *files.values())]


def private_strings(expectation: Expectation, provenance: Provenance) -> list[str]:
    """The strings of a case that must never reach its payload."""
    found = [s for rc in expectation.root_causes for s in (rc.requirement, rc.trigger, rc.consequence,
                                                            *rc.formulations)]
    found += expectation.accepted
    found += [provenance.bug_class, provenance.tool]
    return [s for s in found if len(_normal(s).split()) > 1]  # a lone word is a name any code may hold


def _normal(text: str) -> str:
    """NFC, case-folded, every run of anything not a letter or digit (an underscore too) one space: text as words."""
    folded = unicodedata.normalize("NFC", text).casefold()
    return " " + " ".join(re.findall(r"[^\W_]+", folded)) + " "


def closure(role: str, declared: list[str]) -> Closure:
    """The charter of ``role``, SKILL.md, the ``declared`` documents, and every ``docs/*.md`` they name, whole."""
    charter, skill = f"roles/{role}.md", "SKILL.md"
    if len(set(declared)) != len(declared):
        twice = next(d for d in declared if declared.count(d) > 1)
        raise MalformedInput(f"skill dependency {twice!r} is listed twice", where="corpus.yaml",
                             hint="list each document once")
    if set(declared) & {charter, skill}:
        raise MalformedInput(f"skill dependency {sorted(set(declared) & {charter, skill})[0]!r} lists the closure's "
                             "own root", where="corpus.yaml", hint="the charter and SKILL.md are always included")
    names, documents = [charter, skill, *declared], list[tuple[str, str]]()
    while names:
        name = names.pop(0)
        if name in (n for n, _ in documents):
            continue
        text = _read(name)
        documents.append((name, text))
        names += [ref for ref in _DOC_REF.findall(text) if ref not in names]
    return Closure(tuple(documents))


def _read(name: str) -> str:
    first, _, rest = name.partition("/")
    path = shipped(first) / rest if rest else shipped(name)
    if not path.is_file():
        raise MalformedInput(f"skill dependency {name!r} is missing ({path})", where="corpus.yaml",
                             hint="ship the document or drop it from skill_dependencies; nothing was started")
    return path.read_text(encoding="utf-8")
