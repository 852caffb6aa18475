"""The examiner's mechanical measure: the exam it wrote, built, sealed and run by the engine against the private
target of its case, and against each planted bug of it.

An examiner never sees code, so it cannot point at a line; what it can do is write an exam that fails a program
with the bug. The engine decides, never the examiner's words:

1. the exam is built (generator and oracle twice each, in the jail; the key sealed) at a fixed seed;
2. it runs against the target as the spec describes it: it must pass, else it finds fault with a correct
   program, a false alarm, and nothing it "kills" counts;
3. each root cause's plant becomes a concrete mutant of that target, judged by the mutation gate (every case
   replayed on it, each run in the jail): a killed plant is named, a survivor is not.

The result is graded by what was killed, never by words (two plants at one place are still two): each killed plant
is a *match* of its root cause, at its place; an exam that kills nothing has the verdict clean; an exam the engine
cannot use is that and one *unexpected* finding (it finds fault with the correct program, or with nothing at all).
So the report and its intervals treat every role alike. A failure of the engine itself (no sandbox) is raised,
never graded: it is the evaluation's fault, not the role's.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .._errors import TriAgentError
from ..exam._build import build_exam
from ..mutation._gate import run_gate
from ..mutation._verdict import DETECTED
from ..sandbox._jail import require
from ..scoring._grading import score
from ..targets._gateway import run_exam, run_score_inputs
from ._corpus import Expectation
from ._grading import AttemptGrade, Finding, Graded, finding_key

SEED = "role-eval"  # one fixed seed: every attempt's exam is built the same way, so attempts compare
EXAM_LIMIT = 1 << 20  # bytes of exam text an examiner may hand in (a generator and an oracle are small programs)


@dataclass(frozen=True)
class Examined:
    """What the engine made of one exam: the root causes whose plants it killed, or why it could not be used."""

    killed: list[str] = field(default_factory=list)
    fault: str = ""


def examine(expectation: Expectation, exam: dict[str, str]) -> Examined:
    """What ``exam`` does on the case's private target and on each of its plants."""
    require()  # no sandbox is the evaluation's failure (exit 7), never the role's
    problem = _refused(exam)
    if problem:
        return _fault(problem)
    with tempfile.TemporaryDirectory(prefix="tri-agent-examine-") as tmp:
        scratch = Path(tmp)
        target = _write(scratch / "target", expectation.target)
        try:
            exam_dir = _write(scratch / "exam", exam)
        except (OSError, ValueError) as exc:  # "a" and "a/b" both files, and the like
            return _fault(f"the exam's files cannot be laid out ({type(exc).__name__}: {exc})")
        try:
            build_exam(exam_dir, SEED, scratch / "build")
            run_exam(scratch / "build", target / "target.yaml", scratch / "run")
        except TriAgentError as exc:  # the exam's own fault: it does not build, or its cases do not fit the target
            return _fault(f"the exam cannot be run: {exc.line()}")
        report = score(run_score_inputs(scratch / "build", scratch / "run"))
        if report.verdict != "pass":
            why = report.blockers[0] if report.blockers else "a channel failed"
            return _fault(f"the exam fails the program as its spec describes it ({why})")
        return Examined(killed=_killed(expectation, scratch, target))


def graded(case: str, expectation: Expectation, examined: Examined) -> AttemptGrade:
    """One attempt's grade: each killed plant names its root cause at its place. An exam that kills nothing tells
    no bug apart, so its verdict is clean (a false clean on a planted case); an unusable one is that and a finding
    that names nothing, a false positive: never graded better than a weak exam that works."""
    out = AttemptGrade(case, expectation.verdict, "findings" if examined.killed else "clean",
                       root_causes=[rc.id for rc in expectation.root_causes])
    for rc in expectation.root_causes:
        if rc.id in examined.killed:
            found = Finding(location=_place(rc.surface.path, rc.surface.lines), text=f"the exam kills {rc.id}")
            out.findings.append(Graded(found, finding_key(case, found), "match", rc.id))
    if examined.fault:
        found = Finding(location="exam", text=examined.fault)
        out.findings.append(Graded(found, finding_key(case, found), "unexpected"))
    return out


def _refused(exam: dict[str, str]) -> str:
    """Why the engine will not take this exam at all, or ''."""
    if not exam:
        return "no exam was written"
    if sum(len(text) for text in exam.values()) > EXAM_LIMIT:
        return f"the exam is larger than {EXAM_LIMIT} bytes"
    bad = next((n for n in exam if n.startswith("/") or "\\" in n or ".." in n.split("/") or not n.strip()), None)
    if bad is not None:
        return f"exam file name {bad!r} leaves the exam folder"
    odd = next((n for n in exam if "\0" in n or len(n) > 200 or any(len(p) > 100 for p in n.split("/"))), None)
    return f"exam file name {odd[:60]!r} is no file name" if odd is not None else ""


def _killed(expectation: Expectation, scratch: Path, target: Path) -> list[str]:
    planted = [rc for rc in expectation.root_causes if rc.plant is not None]
    if not planted:
        return []
    mutants = [{"id": rc.id, "bug_class": rc.plant.bug_class, "file": rc.plant.file, "find": rc.plant.find,
                "replace": rc.plant.replace} for rc in planted if rc.plant is not None]
    concrete = scratch / "plants.yaml"
    concrete.write_text(yaml.safe_dump({"schema_version": 1, "mutants": mutants}, sort_keys=False), encoding="utf-8")
    menu = scratch / "menu.yaml"
    classes = sorted({m["bug_class"] for m in mutants})
    menu.write_text(yaml.safe_dump({"schema_version": 2, "classes": [
        {"id": c, "clause": "planted for the evaluation"} for c in classes]}), encoding="utf-8")
    summary = run_gate(target / "target.yaml", scratch / "build", menu, scratch / "gate", only=[], threshold=0.0,
                       minimum=0, hunt_seeds=0, concrete=concrete).summary
    detected = {m.id.removeprefix("judge:") for m in summary.mutants if m.status in DETECTED}
    return [rc.id for rc in planted if rc.id in detected]


def _place(path: str, lines: tuple[int, int] | None) -> str:
    return path if lines is None else f"{path}:{lines[0]}-{lines[1]}"


def _fault(why: str) -> Examined:
    return Examined(fault=why)


def _write(folder: Path, files: dict[str, str]) -> Path:
    """``files`` under ``folder`` (names checked before: by ``_refused``, or the corpus's loader)."""
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder
