"""One evaluation run: the audit of every case, then K attempts at each, each a fresh episode, graded as it ends.

An executor plays one attempt at one payload and returns the driver's account and the reply it read (None for an
evaluation failure). ``driver_executor`` plays it through any driver (scripted, command, anthropic, openai): a
fresh workspace holding only the payload's files, the role's skill closure as its charter, read tools and
``submit``; the reply is what the role submitted (``REPLY_FORMAT``), classified as it came, never from the packet.
``fixture_executor`` answers from recorded replies and is a simulation: its run can never be a baseline.

An examiner writes an exam instead of findings (``EXAM_FORMAT``): the folder ``exam/`` of its workspace, which the
engine builds and runs against the case's private target and each of its plants (``_examine``) before grading.
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
from collections.abc import Callable
from itertools import islice
from pathlib import Path

from pydantic import ValidationError

from .._errors import MalformedInput, UsageError
from .._yamldoc import validate
from ..drivers._episode import Attempt, Driver, Episode, Limits
from ..isolation._contract import Contract, load_charter
from ..isolation._tools import ToolBox
from ._audit import Closure, audit, closure
from ._corpus import Corpus, Expectation, Payload
from ._examine import EXAM_LIMIT, examine, graded
from ._grading import AttemptGrade, Reply, Resolution, grade
from ._report import AttemptRecord, RoleEvalReport, aggregate, record

Executor = Callable[[Payload, Closure, int], tuple[Attempt, Reply | None]]
REPLY_FORMAT = """Read the files in your workspace, then call submit once. Put in its summary a JSON object:
{"findings": [{"location": "path:line", "text": "what is wrong, in a sentence"}]}
with one entry per problem you find (an empty list when there is none). If the files are too incomplete to judge,
submit with blocked true and say why in reason."""
EXAM_FORMAT = """Read the files in your workspace, then write your exam under exam/ (the files the task names) and
call submit once; its summary is not read. If the files are too incomplete to write an exam, submit with blocked true
and say why in reason."""
_TOOLS = ["list", "read", "search", "submit"]
EXAM_FILES = 64  # files of an exam folder an attempt hands in at most


def evaluate(corpus: Corpus, executor: Executor, *, attempts: int, driver: str, simulated: bool, out: Path,
             suite_commit: str = "") -> RoleEvalReport:
    """Audit every case (nothing starts if one is contaminated), then ``attempts`` attempts at each case, each
    recorded in ``out/attempts.jsonl`` as it ends; the report of them all."""
    if attempts < 1:
        raise UsageError(f"--attempts {attempts} runs nothing", hint="give 1 or more")
    audit(corpus)
    skill = closure(corpus.manifest.role, corpus.manifest.skill_dependencies)
    rulings = rulings_of(corpus.root / "private" / "adjudications.jsonl")
    out.mkdir(parents=True, exist_ok=True)
    records: list[AttemptRecord] = []
    with (out / "attempts.jsonl").open("w", encoding="utf-8") as log:
        for ref in corpus.manifest.cases:
            for index in range(attempts):
                attempt, reply = executor(corpus.payloads[ref], skill, index)
                grading = _graded(corpus.manifest.role, ref, corpus.expectations[ref], reply, rulings,
                                  corpus.payloads[ref])
                records.append(record(ref, index, attempt, skill.digest, skill.members, grading))
                log.write(records[-1].model_dump_json() + "\n")
                log.flush()
    return aggregate(corpus, records, driver=driver, simulated=simulated, suite_commit=suite_commit,
                     attempts_per_case=attempts)


def _graded(role: str, ref: str, expectation: Expectation, reply: Reply | None,
            rulings: dict[str, Resolution], payload: Payload) -> AttemptGrade | None:
    """A reply's grade (None for an evaluation failure): an examiner's exam by what the engine sees it kill (the exam
    files the case gave it put back as given: it may not rewrite its own caliber), every other reply by its words."""
    if reply is None:
        return None
    fixed = {name.removeprefix("exam/"): text for name, text in payload.files.items() if name.startswith("exam/")}
    if role == "examiner" and not reply.blocked:
        return graded(ref, expectation, examine(expectation, {**reply.exam, **fixed}))
    return grade(ref, expectation, reply, rulings)


def rulings_of(path: Path) -> dict[str, Resolution]:
    """The rulings on record, by finding key (none when the file does not exist)."""
    if not path.is_file():
        return {}
    found = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            ruling = validate(line, f"{path}:{n}", Resolution)
            found[ruling.key] = ruling
    return found


def driver_executor(driver: Driver, role: str, limits: Limits | None = None, model: str | None = None) -> Executor:
    """Each attempt a fresh episode of ``driver`` on the payload alone; ``model``: the identity to record when the
    driver reports none (an attempt that can name no model is a runtime failure)."""
    base = load_charter(role)
    examiner = role == "examiner"
    evaluated = Contract(role=base.contract.role, readable=["**"], memory="fresh", writable=["exam/**"] if examiner
                         else [], tools=[*_TOOLS, "write"] if examiner else _TOOLS)

    def play(payload: Payload, skill: Closure, index: int) -> tuple[Attempt, Reply | None]:
        with tempfile.TemporaryDirectory(prefix="tri-agent-eval-") as tmp:
            workspace = Path(tmp)
            for name, text in payload.files.items():
                (workspace / name).parent.mkdir(parents=True, exist_ok=True)
                (workspace / name).write_text(text, encoding="utf-8")
            charter = dataclasses.replace(base, contract=evaluated, body=_charter(skill))
            asked = EXAM_FORMAT if examiner else REPLY_FORMAT
            result = driver.run(Episode(charter, f"{payload.task}\n\n{asked}", ToolBox(evaluated, workspace),
                                        limits or Limits()))
            exam = _exam_of(workspace) if examiner else None
        attempt = result.attempts[-1]
        if attempt.model is None and attempt.status in ("ok", "blocked"):
            attempt = attempt.model_copy(update={"model": model} if model else {
                "status": "runtime_failure", "error": "no model identity in the reply and none requested"})
        if attempt.status == "blocked":
            return attempt, Reply(blocked=True)
        if attempt.status != "ok":
            return attempt, None
        return (attempt, Reply(exam=exam)) if exam is not None else _read_reply(attempt, result.summary)

    return play


def _exam_of(workspace: Path) -> dict[str, str]:
    """The exam folder the examiner handed in (the payload's own files under exam/ with it, as it left them):
    regular UTF-8 text files only, at most ``EXAM_FILES`` of them and ``EXAM_LIMIT`` bytes in all (sizes are read
    before any file is), found by a walk of at most ``EXAM_FILES * 4`` entries; a link, a binary file (a NUL byte) or
    a file past the limit is left out, never followed."""
    found: dict[str, str] = {}
    folder, total = workspace / "exam", 0
    entries = islice(folder.rglob("*"), EXAM_FILES * 4) if folder.is_dir() and not folder.is_symlink() else iter(())
    for path in sorted(entries):
        if len(found) == EXAM_FILES:
            break
        if not path.is_file() or path.is_symlink() or not path.resolve().is_relative_to(folder.resolve()):
            continue
        size = path.stat().st_size
        if total + size > EXAM_LIMIT:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if "\0" not in text:
            found[path.relative_to(folder).as_posix()] = text
            total += size
    return found


def _charter(skill: Closure) -> str:
    """The closure as one charter, each document under its own label."""
    return "\n\n".join(f"=== {name} ===\n{text}" for name, text in skill.documents)


def _read_reply(attempt: Attempt, summary: str) -> tuple[Attempt, Reply | None]:
    """The reply the role submitted; one that is not the format is malformed output, never graded."""
    try:
        raw = json.loads(summary)
        return attempt, Reply.model_validate({"findings": raw.get("findings", [])} if isinstance(raw, dict) else raw)
    except (ValueError, ValidationError, AttributeError) as exc:
        why = f"the reply is not the findings format ({type(exc).__name__})"
        return attempt.model_copy(update={"status": "malformed_output", "error": why}), None


def fixture_executor(folder: Path) -> Executor:
    """Recorded replies (``<case>.jsonl``: one Reply per line, attempt i reads line i, the last one repeated): a
    simulation, for the suite and the shipped example, never a measure of a role."""
    def play(payload: Payload, _skill: Closure, index: int) -> tuple[Attempt, Reply | None]:
        path = folder / f"{payload.case}.jsonl"
        if not path.is_file():
            raise MalformedInput(f"no recorded reply for case {payload.case}", where=str(path),
                                 hint="record one Reply per line for every case")
        lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        reply = validate(lines[min(index, len(lines) - 1)], f"{path}:{min(index, len(lines) - 1) + 1}", Reply)
        attempt = Attempt(driver="fixture", model="fixture", status="blocked" if reply.blocked else "ok",
                          cost_basis="none: a simulation", seconds=0.0)
        return attempt, reply

    return play
