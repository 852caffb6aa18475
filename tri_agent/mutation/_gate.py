"""The mutation gate: before a green result counts, the exam must be seen catching known bugs.

1. Clean run: the unmutated target must pass the exam (channels 1 to 3).
2. Each menu mutant is a text patch with an anchor (the exact text it replaces, which must occur once
   in the target file) applied to a throwaway copy. Its **witness** (an input on which original and
   mutant must differ) runs first: no difference means the mutant is equivalent, reported as Ignored,
   never as Survived. Then every case is replayed through the gateway and scored; the first failing
   case kills the mutant. A case that runs past the timeout (a multiple of the clean run) is Timeout.
3. Statuses and the report follow Stryker's mutation-testing-report-schema, so its viewers render it.
"""

from __future__ import annotations

import hashlib
import html
import json
import random
import shutil
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .. import _yamldoc
from .._errors import InfrastructureFailure, MalformedInput, UsageError
from .._version import __version__
from ..exam._formats import Case, read_cases
from ..sandbox._jail import require
from ..scoring._caliber import Caliber, FieldSpec, load_caliber
from ..scoring._channels import compare_tables
from ..scoring._grading import ScoreInputs, score
from ..scoring._report import ScoreReport
from ..scoring._tables import Table, read_table, table_from_rows
from ..targets._gateway import CaseResult, Gateway, verified_visible
from ..targets._target import Target
from . import _mutmut

Status = Literal["Killed", "Survived", "Timeout", "NoCoverage", "CompileError", "RuntimeError", "Ignored"]
DETECTED = ("Killed", "Timeout")
UNDETECTED = ("Survived", "NoCoverage")

EQUIVALENT = "equivalent: "  # the reason of an Ignored mutant whose witness shows no difference

class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class MenuMutant(_Strict):
    """One deliberate bug: replace ``anchor`` (found exactly once in ``file``) with ``replace``."""

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", description="Mutant id, unique in the menu.")
    bug_class: str = Field(description="The preset's bug class, e.g. rounding-mode, strip-dropped.")
    file: str = Field(description="File of the target, relative to its baseline folder.")
    anchor: str = Field(min_length=1, description="Exact text the mutant replaces; it must occur exactly once in "
                                                  "the file.")
    replace: str = Field(description="Text put in place of the anchor.")
    witness: dict[str, str] = Field(min_length=1, description="Input files (name -> content) on which the "
                                                               "original and the mutant must differ.")


class Menu(_Strict):
    """``mutations.yaml``."""

    schema_version: Literal[1] = Field(default=1, description="Version of the mutation menu format.")
    mutants: list[MenuMutant] = Field(min_length=1, description="The deliberate bugs; ids must be unique.")


class MutantOutcome(_Strict):
    """What the gate found for one mutant."""

    id: str = Field(description="Menu id, or mutmut:<name> for a syntactic mutant.")
    bug_class: str = Field(description="Bug class from the menu; mutmut for a syntactic mutant.")
    status: Status = Field(description="Stryker status: Killed and Timeout are detected, Survived and NoCoverage "
                                       "undetected, the others not judged.")
    reason: str = Field(description="Why, in words; an equivalent mutant's reason starts with 'equivalent: '.")
    killed_by: list[str] = Field(default_factory=list, description="Case that killed it or ran past the timeout, or "
                                                                   "whole-exam; empty otherwise.")
    cases_run: int = Field(default=0, description="Cases replayed on the mutant before it was decided.")
    seconds: float = Field(default=0, description="Wall time spent judging the mutant (left out of round "
                                                  "evidence); 0 when it was not run.")


class MutationSummary(_Strict):
    """``summary.json`` of a mutation gate run."""

    schema_version: Literal[1] = Field(default=1, description="Version of the mutation summary format.")
    clean_run: Literal["pass"] = Field(default="pass", description="Always pass: a clean run that fails the exam "
                                                                   "stops the gate, unless it runs differential.")
    mutants: list[MutantOutcome] = Field(description="One outcome per mutant: those run in plan order, then menu "
                                                     "mutants whose anchor is not in the target.")
    counts: dict[str, int] = Field(description="Mutants per status.")
    kill_rate: float = Field(description="(Killed + Timeout) / (Killed + Timeout + Survived + NoCoverage).")
    threshold: float = Field(description="Kill rate the gate requires, from 0 to 1.")
    minimum: int = Field(description="Fewest judged mutants the gate accepts.")
    verdict: Literal["pass", "fail"] = Field(description="pass when no reason stands.")
    reasons: list[str] = Field(description="Why the verdict is fail (too few judged mutants, kill rate below the "
                                           "threshold), one line each.")
    isolation: list[str] = Field(default_factory=list, description="OS isolation layers around every clean, "
                                 "mutant and witness run; empty: none.")


@dataclass(frozen=True)
class _Exam:
    build: Path
    visible: Path
    cases: list[Case]
    caliber_path: Path
    caliber: Caliber
    answers: Table
    behaviors: Table | None
    baseline: frozenset[str] | None = None  # the clean target's findings, when calibrating differentially


def load_menu(path: Path) -> Menu:
    menu = _yamldoc.load(path, Menu)
    ids = [m.id for m in menu.mutants]
    if len(set(ids)) != len(ids):
        raise MalformedInput("mutant ids must be unique", where=str(path))
    return menu


@dataclass(frozen=True)
class _Plan:
    """One mutant as the gate runs it, whether it came from the menu or from mutmut."""

    id: str
    bug_class: str
    file: str
    replacement: str
    location: dict[str, dict[str, int]]
    witness: dict[str, str] | None  # None: a syntactic mutant, which has no witness
    make: Callable[[Path], Path]  # builds (or names) the mutated tree, given a scratch folder
    env: dict[str, str] = field(default_factory=dict)


def mutate(target_file: Path, build: Path, menu_path: Path, out: Path, *, jobs: int = 2, threshold: float = 1.0,
           minimum: int = 3, timeout_factor: float = 5.0, only: list[str] | None = None, mutmut: int = 0,
           seed: str = "0", differential: bool = False, skip_drifted: bool = False) -> MutationSummary:
    """Run the gate; write the Stryker report, an HTML report and ``summary.json`` into ``out``.

    ``differential`` calibrates an exam against a target that does not pass yet: a mutant is killed when
    the exam's findings on it differ from its findings on the clean target. ``skip_drifted`` reports a
    menu mutant whose anchor is not in this version of the target as Ignored instead of refusing the run.
    """
    if out.exists() and any(out.iterdir()):
        raise UsageError(f"{out} already holds a mutation report", hint="reports are evidence: choose a new --out")
    menu = load_menu(menu_path)
    target = Target.load(target_file)
    exam = _load_exam(build)
    chosen = [m for m in menu.mutants if only is None or m.id in only]
    plans, inapplicable = _menu_plans(target, chosen, skip_drifted)  # drifted anchors refused before any run
    with tempfile.TemporaryDirectory(prefix="tri-mutmut-") as tmp:
        if mutmut > 0:
            plans += _mutmut_plans(target, Path(tmp), mutmut, seed)
        clean_seconds, baseline = _clean_run(target, exam, differential)
        exam = replace(exam, baseline=baseline)
        timeout = _mutant_timeout(target.config.timeout, timeout_factor, clean_seconds)
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            outcomes = list(pool.map(lambda p: _judge_mutant(target, exam, p, timeout), plans))
    outcomes += [o for _, o in inapplicable]
    plans += [p for p, _ in inapplicable]
    summary = _summary(outcomes, threshold, minimum)
    out.mkdir(parents=True, exist_ok=True)
    report = stryker_report(target, plans, outcomes)
    (out / "mutation-report.json").write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", "utf-8")
    (out / "mutation-report.html").write_text(render_html(report, summary), "utf-8")
    (out / "summary.json").write_text(summary.model_dump_json(indent=1) + "\n", "utf-8")
    return summary


def _mutant_timeout(limit: float, factor: float, clean_seconds: dict[str, float]) -> float:
    """A multiple of the slowest clean case, at least a second (start-up noise), never above the target's limit."""
    return min(limit, max(1.0, factor * max(clean_seconds.values(), default=1.0)))


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


def _menu_plans(target: Target, mutants: list[MenuMutant],
                skip_drifted: bool) -> tuple[list[_Plan], list[tuple[_Plan, MutantOutcome]]]:
    plans, inapplicable = [], []
    for m in mutants:
        try:
            plans.append(_menu_plan(target, m))
        except MalformedInput as exc:
            if not skip_drifted or "anchor" not in exc.message:
                raise
            placeholder = _Plan(m.id, m.bug_class, m.file, m.replace, _location("", m.anchor), m.witness,
                                _shared(Path()))
            inapplicable.append((placeholder, MutantOutcome(id=m.id, bug_class=m.bug_class, status="Ignored",
                                                            reason="its anchor is not in this version of the target")))
    return plans, inapplicable


def _menu_plan(target: Target, mutant: MenuMutant) -> _Plan:
    source = (target.baseline / mutant.file).read_text(encoding="utf-8") if (target.baseline / mutant.file).is_file() \
        else ""
    text = _patched_text(target, mutant)

    def make(scratch: Path) -> Path:
        baseline = scratch / "baseline"
        shutil.copytree(target.baseline, baseline, symlinks=True)
        (baseline / mutant.file).write_text(text, encoding="utf-8")
        return baseline

    return _Plan(mutant.id, mutant.bug_class, mutant.file, mutant.replace, _location(source, mutant.anchor),
                 mutant.witness, make)


def _mutmut_plans(target: Target, work: Path, n: int, seed: str) -> list[_Plan]:
    tree, mutants = _mutmut.generate(target.baseline, work)
    entry = {a.split("{target}/", 1)[1][:-3].replace("/", ".") for a in target.config.run
             if a.startswith("{target}/") and a.endswith(".py")}
    env = _mutmut.mutmut_env()
    return [_Plan(f"mutmut:{m.name}", "mutmut", m.file, m.replacement,
                  {"start": {"line": m.line, "column": m.column}, "end": {"line": m.end_line, "column": m.end_column}},
                  None, _shared(tree), {**env, _mutmut.ENV: m.selector(entry)})
            for m in _mutmut.sample(mutants, n, seed)]


def _shared(tree: Path) -> Callable[[Path], Path]:
    # every syntactic mutant runs from the one mutated tree: the environment selects the mutant
    return lambda _scratch: tree


def _patched_text(target: Target, mutant: MenuMutant) -> str:
    path = (target.baseline / mutant.file).resolve()
    if not path.is_relative_to(target.baseline) or not path.is_file():
        raise MalformedInput(f"mutant {mutant.id}: file {mutant.file!r} is not in the target", where=str(target.path))
    text = path.read_text(encoding="utf-8")
    found = text.count(mutant.anchor)
    if found != 1:
        raise MalformedInput(f"mutant {mutant.id}: anchor {mutant.anchor!r} occurs {found} times in {mutant.file} "
                             "(must be exactly once)", where=str(path),
                             hint="the target drifted: update the anchor or retire the mutant")
    return text.replace(mutant.anchor, mutant.replace)


def _clean_run(target: Target, exam: _Exam, differential: bool) -> tuple[dict[str, float], frozenset[str] | None]:
    with tempfile.TemporaryDirectory(prefix="tri-clean-") as tmp:
        gateway = Gateway(target, exam.visible, Path(tmp))
        results = [gateway.run_case(c) for c in exam.cases]
        report = _whole_exam(exam, results, Path(tmp))
    seconds = {r.provenance.case: r.provenance.seconds for r in results}
    if report.verdict == "pass":
        return seconds, None
    if not differential:
        raise InfrastructureFailure("the clean run does not pass the exam, so no mutant can be judged: "
                                    + "; ".join(report.blockers), hint="fix the target first, or calibrate with "
                                    "--differential")
    return seconds, findings(report)


def findings(report: ScoreReport) -> frozenset[str]:
    """Everything the exam found wrong, as comparable lines: cells, drift flags, failed relations."""
    cells = [f"{c.key}|{c.field}|{c.reason}|{c.actual}" for c in report.answers.failures]
    if report.behaviors is not None:
        cells += [f"behavior|{c.key}|{c.actual}" for c in report.behaviors.failures]
    cells += [f"drift|{d.field}|{d.positive}|{d.negative}" for d in report.answers.drift if d.systematic]
    if report.relations is not None:
        cells += [f"relation|{r.name}|{f.where}" for r in report.relations.relations for f in r.failures]
    return frozenset(cells)


def _whole_exam(exam: _Exam, results: list[CaseResult], tmp: Path) -> ScoreReport:
    """Score every case together: the drift audit and the relations only see across cases."""
    actual = tmp / "actual.jsonl"
    actual.write_text("".join(json.dumps(r) + "\n" for res in results for r in res.rows), "utf-8")
    observed = tmp / "observed.jsonl"
    observed.write_text("".join(json.dumps({"case": r.provenance.case, "behavior": r.provenance.behavior}) + "\n"
                                for r in results), "utf-8")
    b = exam.build / "sealed" / "behaviors.jsonl" if exam.behaviors is not None else None
    return score(ScoreInputs(exam.caliber_path, exam.build / "sealed" / "answers.jsonl", actual, b,
                             observed if b else None, actual))


def _judge_mutant(target: Target, exam: _Exam, plan: _Plan, timeout: float) -> MutantOutcome:
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="tri-mutant-") as tmp:
        scratch = Path(tmp)
        mutated = target.with_baseline(plan.make(scratch), timeout, plan.env)
        try:
            outcome = _replay(target, mutated, exam, plan, scratch)
        except InfrastructureFailure as exc:
            outcome = MutantOutcome(id=plan.id, bug_class=plan.bug_class, status="CompileError", reason=exc.line())
    return outcome.model_copy(update={"seconds": round(time.monotonic() - start, 3)})


def _replay(original: Target, mutated: Target, exam: _Exam, plan: _Plan, scratch: Path) -> MutantOutcome:
    def done(status: Status, reason: str, killed_by: list[str] | None = None, n: int = 0) -> MutantOutcome:
        return MutantOutcome(id=plan.id, bug_class=plan.bug_class, status=status, reason=reason,
                             killed_by=killed_by or [], cases_run=n)

    if plan.witness is not None and not _witness_differs(original, mutated, plan, scratch):
        return done("Ignored", EQUIVALENT + "the witness input gives identical results on original and mutant")
    if exam.baseline is not None:
        return _differential(mutated, exam, scratch, done)
    gateway = Gateway(mutated, exam.visible, _fresh(scratch / "cases"))
    results: list[CaseResult] = []
    for n, case in enumerate(exam.cases, start=1):
        result = gateway.run_case(case)
        results.append(result)
        if result.provenance.timed_out:
            return done("Timeout", f"case {case.case} ran past the timeout", [case.case], n)
        reason = _case_failure(exam, case, result)
        if reason:
            return done("Killed", reason, [case.case], n)
    try:
        report = _whole_exam(exam, results, scratch)
    except MalformedInput as exc:
        return done("Killed", f"unreadable output: {exc.message}", ["whole-exam"], len(results))
    if report.verdict == "fail":
        return done("Killed", "whole exam: " + "; ".join(report.blockers), ["whole-exam"], len(results))
    unproven = "" if plan.witness is not None else " (a syntactic mutant without witness: it may be equivalent)"
    return done("Survived", f"all {len(results)} cases, the drift audit and every relation passed{unproven}", [],
                len(results))


def _differential(mutated: Target, exam: _Exam, scratch: Path,
                  done: Callable[[Status, str, list[str] | None, int], MutantOutcome]) -> MutantOutcome:
    """Killed when the exam's findings on the mutant differ from its findings on the clean target."""
    assert exam.baseline is not None
    gateway = Gateway(mutated, exam.visible, _fresh(scratch / "cases"))
    results = []
    for n, case in enumerate(exam.cases, start=1):
        results.append(gateway.run_case(case))
        if results[-1].provenance.timed_out:
            return done("Timeout", f"case {case.case} ran past the timeout", [case.case], n)
    try:
        now = findings(_whole_exam(exam, results, scratch))
    except MalformedInput as exc:
        return done("Killed", f"unreadable output: {exc.message}", ["whole-exam"], len(results))
    new, gone = len(now - exam.baseline), len(exam.baseline - now)
    if new or gone:
        return done("Killed", f"the exam's findings changed: {new} new, {gone} gone", ["whole-exam"], len(results))
    return done("Survived", f"the exam found exactly what it found on the clean target ({len(now)} findings)", [],
                len(results))


def _witness_differs(original: Target, mutated: Target, plan: _Plan, scratch: Path) -> bool:
    visible = scratch / "witness"
    case = Case(case="c-" + hashlib.sha256(plan.id.encode()).hexdigest()[:12], inputs="inputs")
    for name, content in (plan.witness or {}).items():
        path = (visible / "inputs" / name).resolve()
        if not path.is_relative_to(visible.resolve()):
            raise MalformedInput(f"mutant {plan.id}: witness file {name!r} escapes its folder")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    a = Gateway(original, visible, _fresh(scratch / "w-original")).run_case(case).provenance
    b = Gateway(mutated, visible, _fresh(scratch / "w-mutant")).run_case(case).provenance
    return (a.outputs, a.behavior, a.exit_code, a.stdout_sha256) != (b.outputs, b.behavior, b.exit_code,
                                                                      b.stdout_sha256)


def _fresh(path: Path) -> Path:
    path.mkdir(parents=True)
    return path


def _case_failure(exam: _Exam, case: Case, result: CaseResult) -> str:
    columns = (*exam.caliber.key, *exam.caliber.fields)
    expected = exam.answers.subset("case", case.case)
    actual = table_from_rows(f"<{case.case}>", result.rows, columns)
    try:
        channel, _ = compare_tables(exam.caliber.key, dict(exam.caliber.fields), expected, actual,
                                    exam.caliber.drift, allow_empty=True)
    except MalformedInput as exc:
        return f"case {case.case}: unreadable output ({exc.message})"
    if channel.verdict == "fail":
        first = channel.failures[0]
        return f"case {case.case}: {first.reason} on {first.field or 'a row'} ({channel.passed}/{channel.total} rows)"
    return _behavior_failure(exam, case, result)


def _behavior_failure(exam: _Exam, case: Case, result: CaseResult) -> str:
    if exam.behaviors is None or exam.caliber.behaviors is None:
        return ""
    b = exam.caliber.behaviors
    spec = {b.field: FieldSpec.model_validate({"class": "status", "values": b.values})}
    observed = table_from_rows(f"<{case.case} behaviour>", [{"case": case.case, b.field: result.provenance.behavior}])
    channel, _ = compare_tables(b.key, spec, exam.behaviors.subset("case", case.case), observed)
    return "" if channel.verdict == "pass" else f"case {case.case}: behaviour {result.provenance.behavior!r}"


def _summary(outcomes: list[MutantOutcome], threshold: float, minimum: int) -> MutationSummary:
    statuses = sorted({o.status for o in outcomes})
    counts: dict[str, int] = {s: sum(1 for o in outcomes if o.status == s) for s in statuses}
    detected = sum(counts.get(s, 0) for s in DETECTED)
    judged = detected + sum(counts.get(s, 0) for s in UNDETECTED)
    rate = detected / judged if judged else 0.0
    reasons = []
    if judged < minimum:
        reasons.append(f"only {judged} judged mutant(s); the gate needs at least {minimum}")
    if rate < threshold:
        survivors = [o.id for o in outcomes if o.status in UNDETECTED]
        reasons.append(f"kill rate {rate:.0%} is below {threshold:.0%}; blind spots: {', '.join(survivors)}")
    return MutationSummary(mutants=outcomes, counts=counts, kill_rate=round(rate, 4), threshold=threshold,
                           minimum=minimum, verdict="fail" if reasons else "pass", reasons=reasons,
                           isolation=require())  # every run went through the same jail


def stryker_report(target: Target, plans: list[_Plan], outcomes: list[MutantOutcome]) -> dict[str, object]:
    """The run in Stryker's mutation-testing-report-schema (version 2)."""
    files: dict[str, dict[str, object]] = {}
    by_id = {o.id: o for o in outcomes}
    for m in plans:
        source = (target.baseline / m.file).read_text(encoding="utf-8")
        entry = files.setdefault(m.file, {"language": _language(m.file), "source": source, "mutants": []})
        o = by_id[m.id]
        result: dict[str, object] = {
            "id": m.id, "mutatorName": m.bug_class, "replacement": m.replacement, "location": m.location,
            "status": o.status, "statusReason": o.reason, "testsCompleted": o.cases_run,
            "duration": round(o.seconds * 1000),
        }
        if o.killed_by:
            result["killedBy"] = o.killed_by
        entry["mutants"].append(result)  # type: ignore[attr-defined]
    return {"schemaVersion": "2", "thresholds": {"high": 100, "low": 80}, "projectRoot": str(target.baseline),
            "files": files, "framework": {"name": "tri-agent", "version": __version__}}


def _location(source: str, anchor: str) -> dict[str, dict[str, int]]:
    start = max(source.find(anchor), 0)
    end = start + len(anchor)
    return {"start": _position(source, start), "end": _position(source, end)}


def _position(source: str, offset: int) -> dict[str, int]:
    line = source.count("\n", 0, offset) + 1
    column = offset - (source.rfind("\n", 0, offset) + 1) + 1
    return {"line": line, "column": column}


def _language(path: str) -> str:
    return {".py": "python", ".js": "javascript", ".ts": "typescript", ".sql": "sql"}.get(Path(path).suffix, "text")


def render_html(report: dict[str, object], summary: MutationSummary) -> str:
    """A self-contained page (no script, no external asset) listing every mutant and its status."""
    rows = []
    files = report["files"]
    assert isinstance(files, dict)
    for name, entry in files.items():
        for m in entry["mutants"]:
            loc = m["location"]["start"]
            rows.append(f"<tr class='{m['status']}'><td>{html.escape(m['id'])}</td><td>{html.escape(m['mutatorName'])}"
                        f"</td><td>{html.escape(name)}:{loc['line']}</td><td>{m['status']}</td>"
                        f"<td>{html.escape(m.get('statusReason', ''))}</td></tr>")
    counts = ", ".join(f"{k} {v}" for k, v in summary.counts.items())
    verdict = html.escape(summary.verdict.upper())
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>tri-agent mutation report</title>
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;
padding:4px 8px;text-align:left}}.Killed,.Timeout{{background:#e6f4ea}}.Survived,.NoCoverage{{background:#fce8e6}}
.Ignored,.CompileError,.RuntimeError{{background:#f1f3f4}}</style></head><body>
<h1>Mutation gate: {verdict}</h1>
<p>Kill rate <b>{summary.kill_rate:.0%}</b> (threshold {summary.threshold:.0%}); {html.escape(counts)}.</p>
<ul>{''.join(f'<li>{html.escape(r)}</li>' for r in summary.reasons)}</ul>
<table><tr><th>mutant</th><th>bug class</th><th>where</th><th>status</th><th>why</th></tr>
{chr(10).join(rows)}
</table></body></html>
"""


@dataclass(frozen=True)
class Rotation:
    """This round's sample of the menu, and whether it holds enough mutants no earlier round judged."""

    chosen: list[str]
    new: list[str]
    need: int
    size: int  # as asked for: a menu too small to fill it is short too

    @property
    def short(self) -> bool:
        return len(self.new) < self.need or len(self.chosen) < self.size


def rotation(menu_ids: list[str], used: list[str], *, red: bool, size: int, seed: str) -> Rotation:
    """A deterministic sample of up to ``size`` mutants, new ones first up to at least 30% (50% after red)."""
    asked, size = size, min(size, len(menu_ids))
    fresh = sorted(set(menu_ids) - set(used))
    seen = sorted(set(menu_ids) & set(used))
    need = -(-size // 2) if red else -(-3 * size // 10)  # ceil(50%) or ceil(30%), in integers
    rng = random.Random(seed)
    new = rng.sample(fresh, min(len(fresh), max(need, size - len(seen))))
    return Rotation(sorted(new + rng.sample(seen, min(len(seen), size - len(new)))), sorted(new), need, asked)


def rotate(menu_ids: list[str], used: list[str], *, red: bool, size: int, seed: str) -> list[str]:
    """``rotation``, refusing a menu too small or too stale for the round."""
    if size > len(menu_ids):
        raise UsageError(f"asked for {size} mutants but the menu has {len(menu_ids)}")
    sample = rotation(menu_ids, used, red=red, size=size, seed=seed)
    if len(sample.new) < sample.need:
        raise UsageError(f"the menu has {len(sample.new)} unused mutants; this round needs {sample.need} new ones",
                         hint="add mutants to the menu")
    return sample.chosen


def rotation_sample(menu_path: Path, previous: list[Path], size: int, seed: str) -> list[str]:
    """The ids to judge this round, rotated against the mutants of earlier rounds' summaries."""
    menu = load_menu(menu_path)
    used: list[str] = []
    red = False
    for path in previous:
        try:
            summary = MutationSummary.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise UsageError(f"{path} is not a mutation summary ({type(exc).__name__})") from None
        used += [m.id for m in summary.mutants]
        red = summary.verdict == "fail"  # the latest round decides the share of new mutants
    return rotate([m.id for m in menu.mutants], used, red=red, size=size, seed=seed)
