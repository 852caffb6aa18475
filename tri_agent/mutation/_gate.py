"""The mutation gate: before a green result counts, the exam must be seen catching known bugs.

1. The menu names bug classes; the operators (``_operators``) make concrete mutants of the code of this
   round for each class, and a sample is chosen (``_rotation``); mutmut adds syntactic volume on request.
2. Clean run: the unmutated target must pass the exam (or, calibrating, its findings are the baseline); a
   traced run records which lines each case executes (Python targets).
3. Side by side, each mutant replays first the cases that reach its lines, and stops at the first case
   whose findings change (Killed) or that runs past the timeout (Timeout). A mutant no case reaches is
   NoCoverage without a run.
4. A survivor's verdict always rests on every case run one after another in the mutant's own tree and on the
   whole exam (drift, relations), never on a coverage-chosen subset or a shared runner; a NoCoverage mutant
   gets that full run too before it counts.
5. A confirmed survivor is hunted (``_hunt``): Ignored (equivalent) only when no input of the class or of the
   generator at fresh seeds tells it from the original; otherwise it stays Survived or NoCoverage, with
   the differing input as evidence.
6. Statuses and the report follow Stryker's mutation-testing-report-schema; the kill rate is killed / judged.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from threading import Lock
from typing import Literal

from .. import _progress as progress
from .._errors import InfrastructureFailure, MalformedInput, UsageError
from ..evidence._manifest import scan
from ..evidence._seal import verify
from ..exam._formats import BuildRecord, Case, read_cases
from ..sandbox._jail import require
from ..sandbox._process import STOPPING
from ..scoring._caliber import Caliber, FieldSpec, load_caliber
from ..scoring._channels import compare_tables
from ..scoring._grading import ScoreInputs, score
from ..scoring._report import ScoreReport
from ..scoring._tables import Table, read_table, table_from_rows
from ..targets._batch import Fingerprint
from ..targets._gateway import CaseResult, Gateway, RunRecord, recorded_results, verified_visible
from ..targets._specs import Cell
from ..targets._target import Target
from . import _mutmut
from ._hunt import SEEDS, Hunt, HuntEvidence, Told, fresh_seeds
from ._hunt import hunt_seeds as hunt_seeds_of
from ._ledger import Ledger
from ._menu import Menu, load_concrete, load_menu
from ._operators import Instance, Scope, concrete, instances, python_files
from ._recall import Recall
from ._report import render_html, stryker_report
from ._rotation import Rotation, Selection, select
from ._verdict import (
    DETECTED,
    EQUIVALENT,
    MutantOutcome,
    MutationSummary,
    Status,
    calibrating,
    changed,
    findings,
    hunted,
    judged_count,
    mutant_timeout,
    summarise,
    whole_change,
)


@dataclass(frozen=True)
class _Exam:
    build: Path
    visible: Path
    cases: list[Case]
    caliber_path: Path
    caliber: Caliber
    answers: Table
    behaviors: Table | None
    baseline: frozenset[str] | None = None  # the clean target's whole findings, when calibrating differentially
    per_case: dict[str, frozenset[str]] = field(default_factory=dict)  # the clean target's findings per case
    clean_timeouts: frozenset[str] = frozenset()  # cases the clean target ran past the timeout: no kill by time there


@dataclass(frozen=True)
class _Plan:
    """One mutant as the gate runs it, whether an operator or mutmut made it."""

    id: str
    bug_class: str
    operator: str
    file: str
    replacement: str
    location: dict[str, dict[str, int]]
    reach: tuple[int, int]  # lines a case must execute to tell the mutant apart
    make: Callable[[Path], Path]  # builds (or names) the mutated tree, given a scratch folder
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class _Clean:
    seconds: dict[str, float]
    lines: dict[str, dict[str, frozenset[int]] | None]  # case -> file -> lines it executed (None: not traced)


@dataclass(frozen=True)
class _Seen:
    """One case's run as the exam scores it, whether the gateway or the fork server ran it."""

    case: str
    rows: list[dict[str, Cell]]
    behavior: str
    timed_out: bool


def _seen(result: CaseResult) -> _Seen:
    p = result.provenance
    return _Seen(p.case, result.rows, p.behavior, p.timed_out)


def _forked(case: Case, print_: Fingerprint) -> _Seen:
    return _Seen(case.case, list(print_.rows or ()), print_.behavior, print_.timed_out)


class _ForkCheck:
    """Whether the fork server's runs of the unmutated target score exactly as its real runs (decided once)."""

    def __init__(self) -> None:
        self._lock = Lock()
        self.state: Literal["agrees", "disagrees", "unused"] = "unused"

    def agrees(self, exam: _Exam, original: list[Fingerprint], scratch: Path) -> bool:
        with self._lock:
            if self.state == "unused":
                seen = [_forked(c, p) for c, p in zip(exam.cases, original, strict=True)]
                same = all(_case_findings(exam, c, s) == exam.per_case.get(c.case, frozenset())
                           for c, s in zip(exam.cases, seen, strict=True))
                self.state = "agrees" if same and _whole_verdict(exam, seen, _fresh(scratch)) is None else "disagrees"
            return self.state == "agrees"


@dataclass(frozen=True)
class _Context:
    """What every mutant of one gate run is judged with."""

    target: Target
    exam: _Exam
    clean: _Clean
    timeout: float
    hunt: Hunt
    ledger: Ledger
    fork: _ForkCheck = field(default_factory=_ForkCheck)


@dataclass(frozen=True)
class GateRun:
    summary: MutationSummary
    rotation: Rotation


def mutate(target_file: Path, build: Path, menu_path: Path, out: Path, **options: object) -> MutationSummary:
    """``run_gate`` for the command line: the summary only."""
    return run_gate(target_file, build, menu_path, out, **options).summary  # type: ignore[arg-type]


def run_gate(target_file: Path, build: Path, menu_path: Path, out: Path, *, exam_dir: Path | None = None,
             jobs: int = 2, threshold: float = 1.0, minimum: int = 3, timeout_factor: float = 5.0,
             selection: Selection | None = None, only: list[str] | None = None, mutmut: int = 0, seed: str = "0",
             differential: bool = False, hunt_seeds: int = SEEDS, concrete: Path | None = None,
             clean_run: Path | None = None, round_label: str = "", hunt_secret: str | None = None,
             recall: Recall | None = None, resume: bool = False) -> GateRun:
    """Run the gate; write the Stryker report, an HTML report and ``summary.json`` into ``out``.

    ``selection`` samples the operators' instances (default: every one); ``only`` keeps the named ones.
    ``concrete`` is the judge's file of exact edits: each that applies to this code is judged too.
    ``clean_run`` is a run of this very build and target, run twice (``exam run --twice``): its results and
    the coverage of its traced pass stand in for the gate's own clean run.
    ``differential`` calibrates an exam against a target that does not pass yet: a mutant is killed when the
    exam's findings on it differ from its findings on the clean target. ``exam_dir`` (the exam's folder) lets
    the hunt run the generator at ``hunt_seeds`` fresh seeds: drawn from ``seed``, or, given ``hunt_secret``
    (an acceptance), from it and the digests of the code and the generator, so that ``recall`` (the runs earlier
    gates made) serves a round whose code and generator did not change. ``round_label`` names the acceptance
    round the gate ran in, for the HTML report (empty: a standalone run).
    """
    menu = load_menu(menu_path)
    target = Target.load(target_file)
    exam = _load_exam(build)
    digest = tree_digest(target.baseline)
    visible = BuildRecord.model_validate_json((build / "build.json").read_text(encoding="utf-8")).visible_digest
    ledger = Ledger(out, digest, visible, resume=resume)  # every verdict written as it is reached
    classes = [c.id for c in menu.classes]
    found = [i for i in instances(target.baseline, classes, scope=menu.scope()) if only is None or i.id in only]
    rotation = select(found, classes, selection or Selection(per_class=len(found) or 1), digest)
    plans = [_instance_plan(target, i) for i in found if i.id in set(rotation.chosen)]
    judge, stale = _concrete(target, concrete)
    plans += [_instance_plan(target, i) for i in judge]
    with tempfile.TemporaryDirectory() as tmp:
        if mutmut > 0:
            plans += _mutmut_plans(target, Path(tmp) / "mutmut", mutmut, seed, menu.scope())
        clean, exam = _recorded_clean(clean_run, target, exam, differential) if clean_run else \
            _clean_run(target, exam, differential)
        timeout = mutant_timeout(target.config.timeout, timeout_factor, clean.seconds)
        seeds = fresh_seeds(seed, hunt_seeds) if hunt_secret is None else \
            hunt_seeds_of(hunt_secret, target, exam_dir, hunt_seeds)
        hunt = Hunt(exam_dir, target, _class_inputs(menu), Path(tmp) / "hunt", seeds, jobs, recall or Recall())
        ctx = _Context(target, exam, clean, timeout, hunt, ledger)
        sham = _sham(ctx, sorted({p.file for p in plans}), digest, Path(tmp) / "sham") if plans else "not run"
        outcomes = _judge_all(ctx, plans, jobs)
        spare = [_instance_plan(target, i) for i in _spare(found, rotation, selection)]
        while judged_count(outcomes) < minimum and spare:  # equivalents fell out: judge more, new ones first
            more, spare = spare[:minimum - judged_count(outcomes)], spare[minimum - judged_count(outcomes):]
            plans += more
            outcomes += _judge_all(ctx, more, jobs)
    summary = summarise(outcomes + stale, threshold, minimum, digest, rotation.empty_classes, require(), sham)
    carried = sum(1 for p in plans if p.id in ledger.kept)
    summary = summary.model_copy(update={"fork_server": ctx.fork.state, "carried": carried})
    _write(out, target, plans, outcomes, summary, _about(target, build, digest, round_label, seed))
    return GateRun(summary, rotation)


SHAM_CASES = 3  # real runs of a sham where the fork server cannot run the target (services, browsers)


def _sham(ctx: _Context, files: list[str], digest: str, scratch: Path) -> str:
    """Run an edit that changes nothing (a statement appended to every file the mutants are made of) through the
    exam first: "passed", or why it was told apart. A target that checks its own code (or prints something of
    it) would have every mutant "killed" by that check alone: such kills say nothing of the exam."""
    name = "_" + hashlib.sha256(f"sham:{digest}".encode()).hexdigest()[:12]  # unknown to the code before the gate
    tree = scratch / "baseline"
    shutil.copytree(ctx.target.baseline, tree, symlinks=True)
    for file in files:
        if (tree / file).is_symlink() or not (tree / file).resolve().is_relative_to(tree.resolve()):
            continue  # never written through a link: it could lead out of the scratch copy
        try:
            text = (tree / file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # a file the operators could not have read either
        (tree / file).write_text(text + ("" if text.endswith("\n") else "\n") + f"{name} = None\n", encoding="utf-8")
        shutil.copystat(ctx.target.baseline / file, tree / file)
    sham, exam = ctx.target.with_baseline(tree, ctx.timeout), ctx.exam
    told = ctx.hunt.told_apart(sham, exam.visible, exam.cases, scratch / "told")
    if told is not None:  # every case, on the fork server: findings of the original's runs there against the sham's
        for case, before, after in zip(exam.cases, told.original, told.mutant, strict=True):
            change = changed(_case_findings(exam, case, _forked(case, before)),
                             _case_findings(exam, case, _forked(case, after)))
            if change:
                return f"case {case.case}: {change}"
        return "passed"
    gateway = Gateway(sham, exam.visible, _fresh(scratch / "cases"))
    for case in exam.cases[:SHAM_CASES]:
        verdict = _case_verdict(exam, case, _seen(_real(gateway, case, ctx.target.config.timeout)))
        if verdict is not None:
            return verdict[1]
    return "passed"


def _concrete(target: Target, path: Path | None) -> tuple[list[Instance], list[MutantOutcome]]:
    """The judge's exact edits that apply to this code (always judged: they were written for it), and outcomes
    for those that do not (not judged)."""
    if path is None or not path.is_file():
        return [], []
    made, stale = [], []
    for m in load_concrete(path).mutants:
        got = concrete(target.baseline, m.file, m.id, m.bug_class, m.find, m.replace)
        if isinstance(got, Instance):
            made.append(got)
        else:
            stale.append(MutantOutcome(id=f"judge:{m.id}", bug_class=m.bug_class, operator="judge", status="Ignored",
                                       reason=f"not applicable: {got}"))
    return made, stale


def _spare(found: list[Instance], rotation: Rotation, selection: Selection | None) -> list[Instance]:
    """Instances the sample left out, never-judged ones first (in a fixed order)."""
    used = selection.used if selection else frozenset()
    rest = [i for i in found if i.id not in set(rotation.chosen)]
    return sorted(rest, key=lambda i: (i.id in used, i.id))


def used_in(summaries: list[Path]) -> tuple[list[str], bool]:
    """The mutants earlier rounds' summaries judged, and whether the latest of them was red."""
    used: list[str] = []
    red = False
    for path in summaries:
        try:
            summary = MutationSummary.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise UsageError(f"{path} is not a mutation summary ({type(exc).__name__})",
                             hint="pass the summary.json an earlier `tri-agent mutate` wrote") from None
        used += [m.id for m in summary.mutants]
        red = summary.verdict == "fail"  # the latest round decides the share of new mutants
    return used, red


def tree_digest(folder: Path) -> str:
    """Digest of a target tree: a proof of equivalence is about this code and no other."""
    entries = scan(folder).sorted_entries()
    return hashlib.sha256("".join(f"{e.path}\0{e.sha256}\n" for e in entries).encode()).hexdigest()[:16]


def _class_inputs(menu: Menu) -> dict[str, list[dict[str, str]]]:
    return {c.id: c.inputs for c in menu.classes}


def _about(target: Target, build: Path, digest: str, round_label: str, seed: str) -> dict[str, str]:
    """What a report is about, so a page found on its own says it: the target, the round, the seed, the exam."""
    record = BuildRecord.model_validate_json((build / "build.json").read_text(encoding="utf-8"))
    exam = (f"{record.exam}, built at seed {record.seed}: visible digest {record.visible_digest}, sealed digest "
            f"{record.sealed_digest}")
    return {"target": f"{target.baseline} (tree digest {digest})", "round": round_label or "none (a standalone run)",
            "seed": seed, "exam": exam}


def _write(out: Path, target: Target, plans: list[_Plan], outcomes: list[MutantOutcome],
           summary: MutationSummary, about: dict[str, str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    report = stryker_report(target, [(p.id, p.file, p.bug_class, p.replacement, p.location) for p in plans],
                            outcomes)
    (out / "mutation-report.json").write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", "utf-8")
    (out / "mutation-report.html").write_text(render_html(report, summary, about), "utf-8")
    (out / "summary.json").write_text(summary.model_dump_json(indent=1) + "\n", "utf-8")


def _load_exam(build: Path) -> _Exam:
    visible = verified_visible(build)
    caliber_path = build / "caliber.yaml"
    caliber, _ = load_caliber(caliber_path)
    columns = (*caliber.key, *caliber.fields)
    json_columns = frozenset(n for n, f in caliber.fields.items() if f.cls in ("json", "set"))
    answers = read_table(build / "sealed" / "answers.jsonl", json_columns, columns)
    b_path = build / "sealed" / "behaviors.jsonl"
    behaviors = read_table(b_path) if b_path.exists() and caliber.behaviors is not None else None
    return _Exam(build, visible, read_cases(visible / "cases.jsonl"), caliber_path, caliber, answers, behaviors)


def _instance_plan(target: Target, instance: Instance) -> _Plan:
    def make(scratch: Path) -> Path:
        baseline = scratch / "baseline"
        shutil.copytree(target.baseline, baseline, symlinks=True)
        (baseline / instance.file).write_text(instance.mutated, encoding="utf-8")
        # the original file's times: the mutant differs in its text alone, and each gate makes the same tree (the
        # hunt recalls its runs by the tree's digest, times included)
        shutil.copystat(target.baseline / instance.file, baseline / instance.file)
        return baseline

    location = {"start": {"line": instance.start[0], "column": instance.start[1]},
                "end": {"line": instance.end[0], "column": instance.end[1]}}
    return _Plan(instance.id, instance.bug_class, instance.operator, instance.file, instance.replacement, location,
                 instance.reach, make)


def _mutmut_plans(target: Target, work: Path, n: int, seed: str, scope: Scope) -> list[_Plan]:
    work.mkdir(parents=True)
    tree, mutants = _mutmut.generate(target.baseline, work)
    inside = set(python_files(target.baseline, scope))
    mutants = [m for m in mutants if m.file in inside]  # the menu's include and exclude hold for mutmut's too
    entry = {a.split("{target}/", 1)[1][:-3].replace("/", ".") for a in target.config.argv
             if a.startswith("{target}/") and a.endswith(".py")}
    env = _mutmut.mutmut_env()
    return [_Plan(f"mutmut:{m.name}", "mutmut", "mutmut", m.file, m.replacement,
                  {"start": {"line": m.line, "column": m.column}, "end": {"line": m.end_line, "column": m.end_column}},
                  (m.line, m.end_line), _shared(tree), {**env, _mutmut.ENV: m.selector(entry)})
            for m in _mutmut.sample(mutants, n, seed)]


def _shared(tree: Path) -> Callable[[Path], Path]:
    # every syntactic mutant runs from the one mutated tree: the environment selects the mutant
    return lambda _scratch: tree


# --- the clean run ------------------------------------------------------------------------------------------------

def _clean_run(target: Target, exam: _Exam, differential: bool) -> tuple[_Clean, _Exam]:
    """The clean target's findings (whole and per case), its timings, and the lines each case executes.

    One traced run serves when the clean target passes (a target that fails only when traced fails the gate,
    which cannot help it). When it does not pass yet, its findings are the baseline every mutant is compared
    with, so they come from a plain run, as the mutants' do."""
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(max_workers=2) as pool:
        gateway = Gateway(target, exam.visible, Path(tmp))
        traced = list(pool.map(lambda c: gateway.run_case(c, trace=True), exam.cases))
        report = _whole_exam(exam, [_seen(r) for r in traced], Path(tmp))
        results = traced if report.verdict == "pass" else list(pool.map(gateway.run_case, exam.cases))
        if results is not traced:
            report = _whole_exam(exam, [_seen(r) for r in results], Path(tmp))
    return _cleaned(exam, results, traced, report, differential)


def _recorded_clean(run_dir: Path, target: Target, exam: _Exam, differential: bool) -> tuple[_Clean, _Exam]:
    """The clean run from a recorded run of the same build and target (its second pass was traced)."""
    record = RunRecord.model_validate_json((run_dir / "run.json").read_text(encoding="utf-8"))
    target_sha = hashlib.sha256(target.path.read_bytes()).hexdigest()
    if record.build_visible_digest != verify(exam.visible).digest or record.target_sha256 != target_sha \
            or not record.twice:
        raise UsageError(f"{run_dir} is not a twice-run of this build and target",
                         hint="pass the folder `tri-agent exam run BUILD --target T.yaml --twice` wrote")
    by_case = {r.provenance.case: r for r in recorded_results(run_dir)}
    if set(by_case) != {c.case for c in exam.cases}:
        raise UsageError(f"{run_dir} does not hold every case of the build", hint="run the whole build, twice")
    results = [by_case[c.case] for c in exam.cases]
    with tempfile.TemporaryDirectory() as tmp:
        report = _whole_exam(exam, [_seen(r) for r in results], Path(tmp))
    return _cleaned(exam, results, results, report, differential)


def _cleaned(exam: _Exam, results: list[CaseResult], traced: list[CaseResult], report: ScoreReport,
             differential: bool) -> tuple[_Clean, _Exam]:
    lines = {r.provenance.case: r.lines for r in traced}
    per_case = {r.provenance.case: _case_findings(exam, c, _seen(r)) for c, r in zip(exam.cases, results, strict=True)}
    clean = _Clean({r.provenance.case: r.provenance.seconds for r in results}, lines)
    exam = replace(exam, clean_timeouts=frozenset(r.provenance.case for r in results if r.provenance.timed_out))
    if report.verdict == "pass":
        return clean, replace(exam, per_case=per_case)
    if not differential:
        raise InfrastructureFailure("the clean run does not pass the exam, so no mutant can be judged: "
                                    + "; ".join(report.blockers), hint="fix the target first, or calibrate with "
                                    "--differential")
    return clean, replace(exam, baseline=findings(report), per_case=per_case)


def _whole_exam(exam: _Exam, results: list[_Seen], tmp: Path) -> ScoreReport:
    """Score every case together: the drift audit and the relations only see across cases."""
    actual = tmp / "actual.jsonl"
    actual.write_text("".join(json.dumps(r) + "\n" for res in results for r in res.rows), "utf-8")
    observed = tmp / "observed.jsonl"
    observed.write_text("".join(json.dumps({"case": r.case, "behavior": r.behavior}) + "\n" for r in results),
                        "utf-8")
    b = exam.build / "sealed" / "behaviors.jsonl" if exam.behaviors is not None else None
    return score(ScoreInputs(exam.caliber_path, exam.build / "sealed" / "answers.jsonl", actual, b,
                             observed if b else None, actual, actual_text=True,
                             timed_out=tuple(r.case for r in results if r.timed_out)))


def _case_findings(exam: _Exam, case: Case, result: _Seen) -> frozenset[str]:
    """What the exam finds wrong in one case alone (cells and behaviour): a change here changes the whole."""
    columns = (*exam.caliber.key, *exam.caliber.fields)
    expected = exam.answers.subset("case", case.case)
    actual = table_from_rows(f"<{case.case}>", result.rows, columns)
    try:
        channel, _ = compare_tables(exam.caliber.key, dict(exam.caliber.fields), expected, actual,
                                    exam.caliber.drift, allow_empty=True,
                                    blank_keys=frozenset(exam.caliber.blank_keys or ()))
    except MalformedInput as exc:
        return frozenset({f"unreadable|{exc.message}"})
    found = {f"{f.key}|{f.field}|{f.reason}|{f.actual}" for f in channel.failures}
    if exam.behaviors is not None and exam.caliber.behaviors is not None:
        b = exam.caliber.behaviors
        spec = {b.field: FieldSpec.model_validate({"class": "status", "values": b.values})}
        observed = table_from_rows(f"<{case.case} behaviour>", [{"case": case.case, b.field: result.behavior}])
        behaviour, _ = compare_tables(b.key, spec, exam.behaviors.subset("case", case.case), observed)
        found |= {f"behavior|{f.key}|{f.actual}" for f in behaviour.failures}
    return frozenset(found)


# --- judging ------------------------------------------------------------------------------------------------------

def _judge_all(ctx: _Context, plans: list[_Plan], jobs: int) -> list[MutantOutcome]:
    progress.expect("mutants", len(plans))

    def one(plan: _Plan) -> MutantOutcome:
        kept = ctx.ledger.kept.get(plan.id)
        outcome = kept or _timed(plan, partial(_judge, ctx, plan))
        if kept is None and not STOPPING.is_set():  # a run the interruption cut short is no verdict to keep
            ctx.ledger.write(outcome)
        progress.advance("mutants")
        progress.advance("killed", int(outcome.status in DETECTED))
        return outcome

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(one, plans))


def _timed(plan: _Plan, judge: Callable[[Path], MutantOutcome]) -> MutantOutcome:
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        try:
            outcome = judge(Path(tmp))
        except InfrastructureFailure as exc:
            outcome = _outcome(plan, "CompileError", exc.line())
    return outcome.model_copy(update={"seconds": round(time.monotonic() - start, 3)})


def _outcome(plan: _Plan, status: Status, reason: str, killed_by: list[str] | None = None, n: int = 0,
             **more: object) -> MutantOutcome:
    return MutantOutcome(id=plan.id, bug_class=plan.bug_class, operator=plan.operator, status=status, reason=reason,
                         killed_by=killed_by or [], cases_run=n, **more)


def _reaching(plan: _Plan, exam: _Exam, clean: _Clean) -> list[Case]:
    """The cases whose clean run executed the mutant's lines, in the exam's order (untraced cases count as
    reaching). Never by speed: timings differ between runs, and a replayed round must seal the same record."""
    lines = set(range(plan.reach[0], plan.reach[1] + 1))
    return [c for c in exam.cases if (clean.lines.get(c.case) is None)
            or lines & set((clean.lines[c.case] or {}).get(plan.file, frozenset()))]


def _judge(ctx: _Context, plan: _Plan, scratch: Path) -> MutantOutcome:
    """One mutant, start to end. The first case that executes its lines runs for real; then the fork server
    runs the whole exam on it, which orders the real runs (and, once shown to score the original as its real
    runs do, decides a kill only the whole exam sees)."""
    exam = ctx.exam
    mutated = ctx.target.with_baseline(plan.make(scratch), ctx.timeout, plan.env)
    reaching = _reaching(plan, exam, ctx.clean)
    gateway = Gateway(mutated, exam.visible, _fresh(scratch / "cases"))
    probe: dict[str, CaseResult] = {}
    if reaching:  # most mutants fall to the first case that executes them: try it before anything else
        probe[reaching[0].case] = _real(gateway, reaching[0], ctx.target.config.timeout)
        verdict = _case_verdict(exam, reaching[0], _seen(probe[reaching[0].case]))
        if verdict is not None:
            return _outcome(plan, verdict[0], verdict[1], [reaching[0].case], 1)
    told = ctx.hunt.told_apart(mutated, exam.visible, exam.cases, scratch / "told")
    if told is not None and not told.differs:
        return _untold(ctx, mutated, plan, reaching, gateway, probe, scratch, told)
    first = reaching if told is None else _shown(ctx, told, scratch)
    if isinstance(first, str):
        return _outcome(plan, "Killed", first, ["whole-exam"], len(probe))
    order = [*first, *(c for c in exam.cases if c not in first)]
    decided = _every_case(gateway, exam, plan, order, probe, scratch, ctx.target.config.timeout)
    if decided.status != "Survived" or exam.baseline is not None:
        return calibrating(decided) if exam.baseline is not None and decided.status == "Survived" else decided
    if told:  # the exam's own case shows the bug; the exam lets it pass
        evidence = HuntEvidence(seeds=[], inputs=len(exam.cases), class_inputs=0,
                                difference=f"exam case {told.differs[0]}: outputs differ, and the exam accepts them")
        return decided.model_copy(update={"reason": decided.reason + f"; live: {evidence.difference}",
                                          "hunt": evidence})
    return hunted(decided, ctx.hunt.prove(mutated, plan.bug_class, scratch / "hunt"), bool(reaching))


def _shown(ctx: _Context, told: Told, scratch: Path) -> list[Case] | str:
    """The cases to run for real first: those whose fork-server findings change (else those whose outputs
    differ); or, when only the whole exam sees the change and the fork server scores the original as its real
    runs do, the whole-exam kill itself, in words."""
    exam = ctx.exam
    differing = [c for c in exam.cases if c.case in told.differs]
    if not ctx.fork.agrees(exam, told.original, scratch / "agree"):
        return differing
    forked = [_forked(c, p) for c, p in zip(exam.cases, told.mutant, strict=True)]
    # a case whose run is the original's scores as the original's did (the fork server was just shown to score it
    # as its real runs): only the others can change a verdict, and scoring one costs a table join
    maybe = {c.case for c in differing} | {s.case for s in forked if s.timed_out}
    changed = [c for c, seen in zip(exam.cases, forked, strict=True)
               if c.case in maybe and _case_verdict(exam, c, seen) is not None]
    if changed:
        return changed
    whole = _whole_verdict(exam, forked, _fresh(scratch / "forked"))
    return differing if whole is None else f"{whole} (every case of the exam, run on the fork server)"


def _untold(ctx: _Context, mutated: Target, plan: _Plan, reaching: list[Case], gateway: Gateway,
            probe: dict[str, CaseResult], scratch: Path, told: Told) -> MutantOutcome:
    """No case of the exam gives other outputs on the mutant: equivalent, or a blind spot. The hunt decides
    which; a blind spot counts only after every case ran for real, one after another."""
    exam = ctx.exam
    if exam.baseline is None:
        evidence = ctx.hunt.prove(mutated, plan.bug_class, scratch / "hunt")
        if evidence.difference is None and evidence.inputs > 0:
            evidence = _trusted(ctx, told, mutated, plan.bug_class, evidence, scratch / "trusted")
        if evidence.difference is None and evidence.inputs > 0:
            return _equivalent(plan, evidence, len(exam.cases))
    decided = _every_case(gateway, exam, plan, exam.cases, probe, scratch, ctx.target.config.timeout)
    if decided.status != "Survived":
        return decided
    if exam.baseline is not None:
        return calibrating(decided)
    return hunted(decided, evidence, bool(reaching))


def _trusted(ctx: _Context, told: Told, mutated: Target, bug_class: str, evidence: HuntEvidence,
             scratch: Path) -> HuntEvidence:
    """A proof the fork server made counts only when that harness is shown honest for this target: it scores the
    unmutated target's exam as its real runs did, and a sample of the hunted inputs run for real on both sides
    gives what the fork server gave (a target that senses the fork server and answers alike there would
    otherwise make every mutant equivalent). Else the proof is void, in words."""
    if not ctx.fork.agrees(ctx.exam, told.original, scratch / "agree"):
        return evidence.model_copy(update={"difference": "the fork server does not score the unmutated target's "
                                                         "exam as its real runs do: no proof made there counts"})
    found = ctx.hunt.checked(mutated, bug_class, scratch / "sample")
    return evidence if found is None else evidence.model_copy(update={"difference": found})


def _equivalent(plan: _Plan, evidence: HuntEvidence, exam_cases: int) -> MutantOutcome:
    return _outcome(plan, "Ignored", EQUIVALENT + f"no difference over the exam's {exam_cases} cases and "
                    f"{evidence.inputs} hunted inputs ({evidence.class_inputs} of the class, the generator at "
                    f"{len(evidence.seeds)} fresh seeds)", hunt=evidence)


def _real(gateway: Gateway, case: Case, generous: float | None) -> CaseResult:
    """One real run of ``case`` on the mutant; one that ran past the mutant's tight timeout runs once more under the
    target's own (``generous``): a busy machine must not turn a slow run into a Timeout, nor a replayed round into
    another verdict. Only a run past both is a Timeout."""
    result = gateway.run_case(case)
    if not result.provenance.timed_out or generous is None or generous <= gateway.target.config.timeout:
        return result
    again = Path(tempfile.mkdtemp(dir=gateway.scratch))
    return Gateway(gateway.target.with_baseline(gateway.target.baseline, generous), gateway.visible,
                   again).run_case(case)


def _every_case(gateway: Gateway, exam: _Exam, plan: _Plan, order: list[Case], probe: dict[str, CaseResult],
                scratch: Path, generous: float | None = None) -> MutantOutcome:
    """Every case for real, in ``order`` (``probe`` already ran), one after another in the mutant's own tree,
    stopping at the first whose findings change; then the exam as a whole (drift and relations see only
    across cases)."""
    results = dict(probe)
    for case in (c for c in order if c.case not in probe):
        results[case.case] = _real(gateway, case, generous)
        verdict = _case_verdict(exam, case, _seen(results[case.case]))
        if verdict is not None:
            return _outcome(plan, verdict[0], verdict[1], [case.case], len(results))
    whole = _whole_verdict(exam, [_seen(results[c.case]) for c in exam.cases], scratch)
    if whole is not None:
        return _outcome(plan, "Killed", whole, ["whole-exam"], len(results))
    return _outcome(plan, "Survived", f"all {len(results)} cases and the whole exam passed", n=len(results),
                    confirmed=True)


def _case_verdict(exam: _Exam, case: Case, result: _Seen) -> tuple[Status, str] | None:
    if result.timed_out and case.case not in exam.clean_timeouts:  # a hang the original shares tells nothing
        return "Timeout", f"case {case.case} ran past the timeout"
    change = changed(exam.per_case.get(case.case, frozenset()), _case_findings(exam, case, result))
    return ("Killed", f"case {case.case}: {change}") if change else None


def _whole_verdict(exam: _Exam, results: list[_Seen], scratch: Path) -> str | None:
    """Killed by the exam as a whole (drift, relations), or None."""
    try:
        report = _whole_exam(exam, results, scratch)
    except MalformedInput as exc:
        return f"unreadable output: {exc.message}"
    return whole_change(report, exam.baseline)


def _fresh(path: Path) -> Path:
    path.mkdir(parents=True)
    return path
