"""The contamination audit, run over every case before any attempt starts, and the skill closure the role is given.

- **Structural**: each payload file holds exactly the permitted keys (``PERMITTED``), its files a mapping of
  names to texts; anything else could carry the answer past the textual check.
- **Textual**: every private string of a case of more than one word (its root causes' requirement, trigger,
  consequence and formulations, its accepted non-findings, its bug class and tool) is searched in the payload's
  real string values (file names, file texts, the task), read as words (``_words``: compatibility forms,
  entities, escapes, invisible characters, camelCase and case all undone), as a phrase and as its meaningful
  stems within any three lines, so no spelling, line break, quote or word order the grader would still
  recognise hides it. A task word that tells an answer must be in every case's task.
- **Closure**: the role's charter, SKILL.md, the corpus's declared documents and every ``docs/*.md`` any of them
  names, read whole; a declared document that is missing, listed twice, or is the charter or SKILL.md itself fails
  closed. Its members and digest are recorded with every run and every attempt.

A contaminated case anywhere (the last one too) stops the run before the first attempt: exit 6.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._errors import LeakDetected, MalformedInput
from .._resources import shipped
from ._corpus import Corpus, Expectation, Provenance, telling_word
from ._words import content, phrase, words

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
    tasks = [set(words(corpus.payloads[ref].task)) for ref in corpus.manifest.cases]
    for ref in corpus.manifest.cases:
        path = corpus.root / "visible" / f"{ref}.json"
        texts = [_Read(text) for text in _texts(_structure(path))]
        for needle in private_strings(corpus.expectations[ref], corpus.provenance[ref]):
            if any(text.holds(needle) for text in texts):
                raise LeakDetected(f"case {ref}: the payload holds the private string {needle[:60]!r}",
                                   hint=f"rewrite {path} (or the expectation) so the role cannot read the answer; "
                                        "no attempt was started")
        told = _task_tells(corpus.payloads[ref].task, tasks)
        if told:
            raise LeakDetected(f"case {ref}: its task says {told!r}, which not every case's task says",
                               hint=f"give every case the same task, or one that tells nothing; fix {path}")


class _Read:
    """A payload text read once: as a phrase, and as the meaningful stems of each three lines."""

    def __init__(self, text: str) -> None:
        lines = text.splitlines() or [text]
        self.phrase = phrase(text)
        self.windows = [content("\n".join(lines[i:i + 3])) for i in range(max(1, len(lines) - 2))]

    def holds(self, needle: str) -> bool:
        """``needle`` as a phrase, or its meaningful stems (two or more) all within three lines."""
        if phrase(needle) in self.phrase:
            return True
        wanted = content(needle)
        return len(wanted) >= 2 and any(wanted <= window for window in self.windows)


def _task_tells(task: str, tasks: list[set[str]]) -> str | None:
    """A word of the task that tells an answer and that some other case's task does not hold: a task that varies
    with the case must not vary with its answer."""
    told = {w for w in words(task) if telling_word(w)}
    return next((w for w in sorted(told) if not all(w in t for t in tasks)), None)


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


def _texts(raw: dict[str, object]) -> list[str]:
    files = raw["files"]
    assert isinstance(files, dict)
    return [str(raw["task"]), *files.keys(), *files.values()]


def private_strings(expectation: Expectation, provenance: Provenance) -> list[str]:
    """The strings of a case that must never reach its payload."""
    found = [s for rc in expectation.root_causes for s in (rc.requirement, rc.trigger, rc.consequence,
                                                            *rc.formulations)]
    found += expectation.accepted
    found += [provenance.bug_class, provenance.tool]
    return [s for s in found if len(words(s)) > 1]  # a lone word is a name any code may hold


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
    path = shipped(name)
    if not path.is_file():
        raise MalformedInput(f"skill dependency {name!r} is missing ({path})", where="corpus.yaml",
                             hint="ship the document or drop it from skill_dependencies; nothing was started")
    return path.read_text(encoding="utf-8")
