"""``verdicts.jsonl``: each mutant's verdict written the moment it is reached, so a gate cut short keeps what it
measured, and a gate run again over the same code and exam (``mutate --resume``) judges only what is left.

A line names the code (the target's tree digest) and the exam (the build's visible digest) it was judged against;
a resumed gate takes a verdict only when both are the ones it runs with now, and only for a mutant it is about to
judge: a verdict is never carried to other code or another exam. The final reports are written from every
verdict, kept and new, exactly as a gate that ran whole writes them.
"""

from __future__ import annotations

import json
from pathlib import Path
from threading import Lock
from typing import Literal

from pydantic import ConfigDict, Field, ValidationError

from .._errors import MalformedInput, UsageError
from .._model import Record
from ._verdict import MutantOutcome

NAME = "verdicts.jsonl"
_REPORTS = ("summary.json", "mutation-report.json", "mutation-report.html")


class VerdictLine(Record):
    """One line of ``verdicts.jsonl``: a mutant's verdict and what it was judged against."""

    model_config = ConfigDict(frozen=True)

    schema_version: Literal[1] = Field(default=1, description="Version of the verdict line format.")
    tree: str = Field(description="Tree digest of the target's code the mutant was made of.")
    exam: str = Field(description="Visible digest of the exam build that judged it.")
    outcome: MutantOutcome = Field(description="The verdict, as the summary lists it.")


class Ledger:
    """The verdicts of one gate run's ``out`` folder: those kept from a run cut short, and each new one appended."""

    def __init__(self, out: Path, tree: str, exam: str, *, resume: bool) -> None:
        self.path, self.tree, self.exam, self._lock = out / NAME, tree, exam, Lock()
        self.kept = _open(out, self.path, tree, exam, resume)

    def write(self, outcome: MutantOutcome) -> None:
        line = VerdictLine(tree=self.tree, exam=self.exam, outcome=outcome).model_dump_json() + "\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)  # made by the first verdict: a gate that never
            with self.path.open("a", encoding="utf-8") as out:  # judged (its clean run failed) leaves nothing
                out.write(line)


def _open(out: Path, path: Path, tree: str, exam: str, resume: bool) -> dict[str, MutantOutcome]:
    """The verdicts a resumed run may keep (by mutant id); a fresh run's folder must be new."""
    held = out.exists() and any(out.iterdir())
    if held and not resume:
        raise UsageError(f"{out} already holds a mutation report", hint="reports are evidence: choose a new --out "
                         "(or --resume a gate that was cut short)")
    done = [name for name in _REPORTS if (out / name).exists()]
    if resume and done:
        raise UsageError(f"{out} holds a finished gate ({done[0]}): there is nothing to resume",
                         hint="choose a new --out")
    return {line.outcome.id: line.outcome for line in _lines(path) if (line.tree, line.exam) == (tree, exam)}


def _lines(path: Path) -> list[VerdictLine]:
    if not path.is_file():
        return []
    lines, texts = [], path.read_text(encoding="utf-8").splitlines()
    for number, text in enumerate(texts, start=1):
        if not text.strip():
            continue
        try:
            lines.append(VerdictLine.model_validate(json.loads(text)))
        except (ValueError, ValidationError):
            if number == len(texts):
                continue  # the line a kill cut in half: its mutant is judged again
            raise MalformedInput(f"{path}:{number} is not a verdict line", where=f"{path}:{number}",
                                 hint="remove the folder and run the gate again") from None
    return lines
