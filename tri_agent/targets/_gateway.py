"""The gateway: the one case runner behind the tester, the judge's re-runs and every mutant replay.

Each case runs in its own scratch folder holding a fresh copy of the (built) baseline, a copy of the
case's inputs and an empty output folder; nothing is run in the original. Provenance records what
ran and the SHA-256 of every input and output file (the fingerprint), so any result can be re-run
and compared by a third party.

A case must not be able to tell the exam from an ordinary run: its folders carry no name of the engine, the
case or the round (random names, as ``mktemp`` makes), and each case can run under either of two differently
built ``HARNESSES``: the second puts the case's folders at another depth, HOME elsewhere, and starts the target
under a shell that waits for it (another parent process, another pid). The second pass of every twice-run uses
the second harness, so a target that senses how it is run gives two fingerprints, and the double-run names it.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Literal

from pydantic import Field

from .. import _progress as progress
from .. import fanout
from .._errors import (
    InfrastructureFailure,
    MalformedInput,
    NotDeterministic,
    PolicyViolation,
    TamperDetected,
    UsageError,
)
from .._model import Record
from ..evidence._manifest import Entry, scan
from ..evidence._seal import diff, verify
from ..exam._canaries import canary_inputs
from ..exam._formats import DOCUMENT_FORMATS, BuildRecord, Case, Extract, read_cases
from ..sandbox._jail import POLICY, Jail, Policy, configure, odd_files, require_plain, written
from ..sandbox._limits import enforcement
from ..sandbox._process import base_env
from ..scoring._grading import ScoreInputs
from ._specs import PLACEHOLDERS, BrowserSpec, Cell, expand
from ._target import Target, extract_rows, failed, output_file, stray_output
from ._trace import COVERAGE, LINES_NAME, SHIM, SHIM_NAME, read_coverage, read_lines, traceable, wrapped, write_coverage
from .browser._drive import prepare_pilot, require_browser
from .browser._pages import PAGE_FILE, UiPlan, load_page_plan
from .documents._extract import Read, reader_argv, reader_rows
from .service._databases import check_snapshot
from .service._requests import PLAN_FILE, RequestPlan, load_plan
from .service._serve import Prepare, Ran, prepare_requests, serve_case

# how each service-like kind of target drives its cases, and where a case's plan is (the loader names the file)
PREPARE: dict[str, Prepare] = {"service": prepare_requests, "browser": prepare_pilot}
PLANS: dict[str, tuple[str, Callable[[Path], RequestPlan | UiPlan]]] = {"service": (PLAN_FILE, load_plan),
                                                                        "browser": (PAGE_FILE, load_page_plan)}
# case runs side by side: one per core this process may use, at most 4 (a target's ``jobs`` can lower it)
JOBS = max(1, min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))


def _drop_bytecode(built: Path) -> None:
    """Compiled Python the target ships is not run: a ``.pyc`` whose header matches its source but whose code is
    other would run in every case while the smells, the operators and every mutant read the source."""
    for cache in sorted(built.rglob("__pycache__"), reverse=True):
        shutil.rmtree(cache, ignore_errors=True)
    for compiled in built.rglob("*.py[co]"):
        compiled.unlink(missing_ok=True)


@dataclass(frozen=True)
class Harness:
    """How a case is laid out and started. ``nest``: random folders between the scratch and the case (the
    case's paths differ in depth and names); ``home``: HOME's folder name; ``waits``: a command target starts
    under a shell that waits for it, so its parent and its pid differ."""

    name: str
    nest: int
    home: str
    waits: bool


HARNESSES = {"first": Harness("first", 0, "home", False), "second": Harness("second", 2, "h", True)}
FIRST, SECOND = HARNESSES["first"], HARNESSES["second"]
# the second harness's parent: a shell that runs the target as its child and ends as it ended (a signal that
# killed the target kills the shell alike, so the behaviour reads the same)
_WAITING = ['/bin/sh', '-c', '"$@"; s=$?; if [ "$s" -gt 128 ]; then kill -$((s - 128)) $$; fi; exit "$s"', 'sh']


def _case_folder(scratch: Path, harness: Harness) -> Path:
    work = Path(tempfile.mkdtemp(dir=scratch))
    for _ in range(harness.nest):
        work = Path(tempfile.mkdtemp(dir=work))
    return work


class Provenance(Record):
    """One line of ``provenance.jsonl``: what ran for a case and what it read and wrote."""

    schema_version: Literal[1] = Field(default=1, description="Version of the provenance format.")
    case: str = Field(description="Case id.")
    argv: list[str] = Field(description="The run template with placeholders, then the case's extra arguments.")
    exit_code: int | None = Field(description="null when the run was killed on timeout.")
    timed_out: bool = Field(description="The run was killed on timeout.")
    seconds: float = Field(description="Wall time of the run (not part of the fingerprint).")
    behavior: str = Field(description="Behaviour category the target's rules gave this run.")
    extract_error: str | None = Field(description="Why no rows could be read from the output, if so.")
    stray_output: str | None = Field(default=None, description="A failed run wrote output its extract rule says it "
                                     "must not (failed_output: none): the finding, which fails the score.")
    oversized_output: bool = Field(default=False, description="The run printed more than the target's output cap: "
                                   "the rest was dropped unread, and the case has no rows.")
    limit: str | None = Field(default=None, description="The resource limit the run hit, if any (memory: its "
                              "largest process was ended; processes: a fork failed; cpu: a process was ended); "
                              "its behaviour is what its exit gave.")
    inputs: dict[str, str] = Field(description="Input file -> SHA-256.")
    outputs: dict[str, str] = Field(description="Output file -> SHA-256 (the fingerprint).")
    steady: dict[str, str] = Field(default_factory=dict, description="Output file -> its SHA-256 with the volatile "
                                   "parts its extract rule declares replaced (a document's creation date): what a "
                                   "second run, the judge's re-runs and the difference hunts compare in its place.")
    stdout_sha256: str = Field(description="SHA-256 of the target's standard output.")
    stderr_sha256: str = Field(description="SHA-256 of the target's standard error.")
    env_sha256: str = Field(description="SHA-256 of the environment the target was given (paths as placeholders).")

    def compared(self) -> dict[str, str]:
        """The outputs as two runs of the case must agree on them: a document's volatile parts replaced."""
        return {**self.outputs, **self.steady}


@dataclass(frozen=True)
class CaseResult:
    rows: list[dict[str, Cell]]
    provenance: Provenance
    output: Path
    isolation: tuple[str, ...] = ()  # the OS layers the run really had
    lines: dict[str, frozenset[int]] | None = None  # traced runs: lines executed per target file (see _trace)
    limits: dict[str, str] | None = None  # how the limits were enforced where it ran (None: on this machine)


class RunRecord(Record):
    """``run.json``: which build and target a run used, and the digests of what it produced."""

    schema_version: Literal[1] = Field(default=1, description="Version of the run record format.")
    build_visible_digest: str = Field(description="Seal digest of the build's visible/ folder the cases came from.")
    target_sha256: str = Field(description="SHA-256 of the target file.")
    cases: int = Field(description="Cases run.")
    twice: bool = Field(description="The run was repeated and found byte-identical.")
    actual_sha256: str = Field(description="SHA-256 of actual.jsonl as written.")
    behaviors_sha256: str = Field(description="SHA-256 of observed_behaviors.jsonl as written.")
    isolation: list[str] = Field(default_factory=list, description="OS isolation layers around every run of the "
                                 "target; empty: none, the target ran with the orchestrator's own access.")
    unread: dict[str, str] = Field(default_factory=dict, description="Case -> why the output its extract rule "
                                   "names could not be read (never written, unreadable); its rows count as missing.")
    stray_output: dict[str, str] = Field(default_factory=dict, description="Case -> what its failed run wrote though "
                                         "its extract rule says failed_output: none (each fails the score).")
    limits: dict[str, str] = Field(default_factory=dict, description="Resource limit -> how it was enforced on every "
                                   "run (cgroup, rlimit, or not enforced and why); see the target file's limits.")
    limits_hit: dict[str, str] = Field(default_factory=dict, description="Case -> the resource limit its run hit.")
    faults: list[str] = Field(default_factory=list, description="What went wrong on a cluster and was retried (a "
                              "lost worker, a task past the orchestrator's clock, a result that failed its hashes), "
                              "in order; every case still counts once, with the result that checked.")


class Gateway:
    """Runs cases of one target; the baseline is built once and copied per case."""

    def __init__(self, target: Target, visible: Path, scratch: Path, built: Path | None = None) -> None:
        """``built``: the baseline already built (a cluster worker gets the orchestrator's build, as a bundle)."""
        self.target, self.visible, self.scratch = target, visible, scratch
        self.readable = target.readable  # refused folders stop here, before anything runs
        self.built = built or self._build()
        self.built_size = written([self.built])
        if target.config.service is not None:
            check_snapshot(target.config.service.database, self.built, target.path)
        if target.config.kind == "browser":
            require_browser(target.config.browser or BrowserSpec())

    def _build(self) -> Path:
        built = self.scratch / "built"
        require_plain(self.target.baseline, "the target's baseline")
        shutil.copytree(self.target.baseline, built, symlinks=True)
        argv, config = self.target.config.build, self.target.config
        if argv:
            home, tmp = self.scratch / "build-home", self.scratch / "build-tmp"
            home.mkdir()
            tmp.mkdir()
            env = {**base_env(home, config.env), "TMPDIR": str(tmp)}
            done, _ = Jail(readable=self.readable, writable=(built, home, tmp)).run(
                argv, cwd=built, env=env, timeout=config.timeout, file_cap=config.write_cap, limits=config.limits)
            if done.exit_code != 0:
                raise InfrastructureFailure(f"the target's build step exited {done.exit_code}",
                                            hint=f"run {' '.join(argv)} in {self.target.baseline} and fix it")
            require_plain(built, "the target's build")
            grown = written([built]) - written([self.target.baseline])
            if grown > config.write_cap:  # every case copies the build: it may not grow past the write cap
                raise InfrastructureFailure(f"the target's build step wrote {grown} bytes, past the write cap "
                                            f"of {config.write_cap}", hint="raise write_cap in the target file")
        _drop_bytecode(built)
        return built

    def run_case(self, case: Case, keep: Path | None = None, *, trace: bool = False,
                 visible: Path | None = None, harness: Harness = FIRST) -> CaseResult:
        """Run one case (inputs under ``visible``, default the gateway's) under ``harness``; ``trace`` (a Python
        command, or a Python service started as ``python {target}/app.py``) also records the lines it executed.
        Inside ``fanout.using`` a cluster, the case runs on one of its workers (a mutant's replays, a hunted input),
        exactly as here."""
        executor = fanout.current()
        if executor.ships:
            return self._on_cluster(executor, case, keep, trace, visible or self.visible, harness)
        return self.run_here(case, keep, trace=trace, visible=visible, harness=harness)

    def _on_cluster(self, executor: fanout.Executor, case: Case, keep: Path | None, trace: bool, visible: Path,
                    harness: Harness) -> CaseResult:
        where = keep or Path(tempfile.mkdtemp(dir=self.scratch)) / "kept"
        task = _CaseTask(self.target, case, trace, harness, replace(POLICY))
        shipped, = executor.map(_case_task, [task], folders={"built": self.built, "visible": visible}, jobs=1,
                                label=_label, deadline=self.target.config.timeout + _STARTING, check=_arrived,
                                keep=partial(_unpacked, lambda _t: where))
        return CaseResult(shipped.rows, shipped.provenance, where, shipped.isolation, shipped.lines, shipped.limits)

    def run_here(self, case: Case, keep: Path | None = None, *, trace: bool = False,
                 visible: Path | None = None, harness: Harness = FIRST) -> CaseResult:
        """``run_case`` in this process, whatever the executor."""
        # opaque folder names: a target that could read its case id or the engine's name from its path could
        # recognise a test
        work = _case_folder(self.scratch, harness)
        target_dir, input_dir, output_dir = work / "target", work / "input", work / "output"
        home = work / harness.home
        (work / "tmp").mkdir()  # cases run side by side: each gets its own temporary folder
        shutil.copytree(self.built, target_dir, symlinks=True)
        shutil.copytree((visible or self.visible) / case.inputs, input_dir, symlinks=False)
        output_dir.mkdir()
        home.mkdir()
        values = dict(zip(PLACEHOLDERS, (str(target_dir), str(input_dir), str(output_dir), case.case), strict=True))
        values["{tmp}"] = str(work / "tmp")
        config = self.target.config
        env = {**base_env(home, config.env), "TMPDIR": values["{tmp}"]}
        if config.service is not None:
            ran = serve_case(self.target.path, config, work, values, env, PREPARE[config.kind], trace)
            lines = ran.lines
        else:
            ran, lines = self._command(case, work, values, env, trace, harness)
        logs = [work / "log"] if (work / "log").is_dir() else []
        size = written([output_dir, home, work / "tmp", *logs]) + max(written([target_dir]) - self.built_size, 0)
        if size > config.write_cap:  # what it wrote does not count: a case may not fill the disk
            ran = replace(ran, rows=[], error=f"the case wrote {size} bytes, past the write cap of {config.write_cap}")
        ran = replace(ran, rows=[_unicode_row(r) for r in ran.rows])
        done = ran.done
        if done.truncated:  # what was cut cannot be fingerprinted or read whole: the case fails
            ran = replace(ran, rows=[], error=f"oversized_output: the case printed more than the output cap of "
                                              f"{config.output_cap} bytes")
        provenance = Provenance(
            case=case.case, argv=[*config.argv, *case.argv], exit_code=done.exit_code, timed_out=done.timed_out,
            seconds=round(done.seconds, 3), behavior=self.target.classify(done), extract_error=ran.error,
            stray_output=ran.stray, oversized_output=done.truncated, limit=done.limit, inputs=_fingerprint(input_dir),
            outputs=_fingerprint(output_dir), steady=ran.steady,
            stdout_sha256=hashlib.sha256(done.stdout).hexdigest(),
            stderr_sha256=hashlib.sha256(done.stderr).hexdigest(), env_sha256=_env_digest(env, values),
        )
        if keep is not None:
            shutil.copytree(output_dir, keep, dirs_exist_ok=True)
            # evidence beside the outputs, apart from them, never part of the fingerprint, never scored
            for folder, paths in (("service-logs", ran.logs), ("screenshots", ran.shots)):
                for path in paths:
                    (keep / folder).mkdir(exist_ok=True)
                    shutil.copyfile(path, keep / folder / path.name)
        shutil.rmtree(work, ignore_errors=True)
        return CaseResult(ran.rows, provenance, keep or output_dir, tuple(ran.layers), lines)

    def _command(self, case: Case, work: Path, values: dict[str, str], env: dict[str, str],
                 trace: bool, harness: Harness) -> tuple[Ran, dict[str, frozenset[int]] | None]:
        config = self.target.config
        target_dir, input_dir, output_dir = work / "target", work / "input", work / "output"
        argv = [expand(a, values) for a in [*config.argv, *case.argv]]
        tracing = trace and traceable(config.argv)
        if tracing:
            (work / "shim").mkdir()
            (work / "shim" / SHIM_NAME).write_text(SHIM, encoding="utf-8")
            (work / "trace").mkdir()
            argv = wrapped(argv, work / "shim" / SHIM_NAME, work / "trace" / LINES_NAME, target_dir)
        if harness.waits:
            argv = [*_WAITING, *argv]
        extra = (work / "trace",) if tracing else ()
        jail = Jail(readable=(input_dir, *self.readable, *((work / "shim",) if tracing else ())),
                    writable=(target_dir, output_dir, Path(env["HOME"]), work / "tmp", *extra))
        done, layers = jail.run(argv, cwd=target_dir, env=env, timeout=config.timeout, cap=config.output_cap,
                                file_cap=config.write_cap, limits=config.limits)
        extract = case.extract or config.extract
        if extract is None:
            raise UsageError(f"{self.target.path}: no 'extract' for case {case.case}", hint="say which output to read")
        odd = odd_files(output_dir)
        for rel in odd:  # a link may point at any file the orchestrator can read: never follow, never keep it
            (output_dir / rel).unlink()
        run_failed = failed(done)
        steady: dict[str, str] = {}
        if extract.format in DOCUMENT_FORMATS:
            read = self._document(work, extract, case.case, run_failed, env)
            rows, error = read.rows, read.error
            steady = {extract.file: read.steady} if read.steady is not None else {}
        else:
            rows, error = extract_rows(output_dir, extract, case.case, run_failed)
        stray = stray_output(output_dir, extract, case.case, run_failed)
        if odd:
            rows, error = [], f"the case left links or special files in its output ({', '.join(odd[:3])})"
        lines = read_lines(work / "trace" / LINES_NAME, target_dir) if tracing else None
        return Ran(done, layers, rows, error, stray, steady=steady), lines

    def _document(self, work: Path, extract: Extract, case: str, run_failed: bool, env: dict[str, str]) -> Read:
        """The rows a real parser reads out of the case's document, run in a jail of its own under the target's
        limits and deadline (the orchestrator never parses it)."""
        output_dir = work / "output"
        if run_failed and extract.failed_output == "none":
            return Read([])
        document = output_file(output_dir, extract)
        if document is None:
            return Read([], f"no output file {extract.file}")
        argv, folder = reader_argv(work, extract, document)
        config = self.target.config
        done, _ = Jail(readable=(output_dir, folder, *self.readable)).run(
            argv, cwd=folder, env=env, timeout=config.timeout, cap=config.output_cap, limits=config.limits)
        return reader_rows(done, extract, case)


def _unicode_row(row: dict[str, Cell]) -> dict[str, Cell]:
    """A row every writer can store: a lone surrogate (JSON's "\\ud800" in what a target wrote or answered)
    becomes U+FFFD, a value no key holds, instead of an encoding error in the orchestrator."""
    return {_unicode(k): None if v is None else _unicode(v) for k, v in row.items()}


def _unicode(text: str) -> str:
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text)


def _fingerprint(folder: Path) -> dict[str, str]:
    return {e.path: e.sha256 for e in scan(folder).sorted_entries()}


def _env_digest(env: dict[str, str], values: dict[str, str]) -> str:
    # scratch paths differ between runs; the digest names them by placeholder so it stays stable
    stable = {k: _unexpand(v, values) for k, v in env.items()}
    home = stable.get("HOME", "")
    stable["HOME"] = "{home}" if home else home
    return hashlib.sha256(json.dumps(stable, sort_keys=True).encode()).hexdigest()


def _unexpand(value: str, values: dict[str, str]) -> str:
    for name, concrete in values.items():
        value = value.replace(concrete, name)
    return value


def run_exam(build: Path, target_file: Path, out: Path, *, twice: bool = False) -> RunRecord:
    """Run every case of ``build`` against the target; write the actual table, behaviours and provenance."""
    if out.exists() and any(out.iterdir()):
        raise UsageError(f"{out} already holds a run", hint="runs are evidence: choose a new --out folder")
    visible = verified_visible(build)
    target = Target.load(target_file)
    cases = read_cases(visible / "cases.jsonl")
    _require_extract(target, cases)
    require_plans(target, visible, cases)
    before = scan(target.baseline).sorted_entries()
    out.mkdir(parents=True, exist_ok=True)
    faults = len(fanout.current().faults)
    try:
        results = _run_all(target, visible, cases, out / "outputs")
        if twice:  # the second run is traced: the mutation gate's coverage comes free, and tracing must change nothing
            with tempfile.TemporaryDirectory() as tmp:
                again = _run_all(target, visible, cases, Path(tmp), trace=True, harness=SECOND)
                _compare_runs(results, again, out)
            results = [replace(r, lines=a.lines) for r, a in zip(results, again, strict=True)]
    except InfrastructureFailure:
        if fanout.current().faults[faults:]:  # a run the cluster could not finish: its faults are its evidence
            (out / "faults.json").write_text(json.dumps(fanout.current().faults[faults:], indent=1) + "\n",
                                             encoding="utf-8")
        raise
    _check_untouched(target, before, build)
    return _write_run(out, build, target, results, twice, fanout.current().faults[faults:])


def _require_extract(target: Target, cases: list[Case]) -> None:
    """Before any case runs: every case must know which output to read (a service case: its request plan)."""
    if target.config.service is not None:
        _no_argv(target, cases)
        return
    blind = [c.case for c in cases if (c.extract or target.config.extract) is None]
    if blind:
        raise MalformedInput(f"the target has no 'extract' rule and {len(blind)} case(s) name none "
                             f"({', '.join(blind[:3])})", where=f"{target.path}: extract",
                             hint="add extract: {file: NAME, format: csv|jsonl|json} to the target file")


def _no_argv(target: Target, cases: list[Case]) -> None:
    visible_cases = [c for c in cases if c.argv]
    if visible_cases:
        raise MalformedInput(f"case {visible_cases[0].case} has argv, which a service target cannot take",
                             where=f"{target.path}: kind", hint="put what the case sends in its requests.json")


def require_plans(target: Target, visible: Path, cases: list[Case]) -> None:
    """Every service case's request plan (a browser case's UI plan) reads, and moves the clock only where the
    target says how."""
    if target.config.service is None:
        return
    name, load = PLANS[target.config.kind]
    for case in cases:
        plan = load(visible / case.inputs)
        if plan.uses_clock() and target.config.service.clock is None:
            raise MalformedInput(f"case {case.case} sets the clock, and the target declares no way to set it",
                                 where=f"{visible / case.inputs / name}: clock",
                                 hint="add service.clock (env or path) to the target file, or drop the clock")


def verified_visible(build: Path) -> Path:
    visible = build / "visible"
    if not (visible / "cases.jsonl").is_file() or not (build / "build.json").is_file():
        raise UsageError(f"{build} is not an exam build", hint="pass the folder `tri-agent exam build` wrote")
    pinned = BuildRecord.model_validate_json((build / "build.json").read_text(encoding="utf-8")).visible_digest
    report = verify(visible, expect=pinned)  # a consistent rewrite of cases and manifest fails here
    if not report.ok:
        raise TamperDetected(f"{visible} does not match its seal: {report.findings[0].kind} "
                             f"{report.findings[0].path}", hint="rebuild the exam; never edit a build")
    return visible


def _run_all(target: Target, visible: Path, cases: list[Case], keep: Path, trace: bool = False,
             harness: Harness = FIRST) -> list[CaseResult]:
    # cases are independent (a scratch copy each), so they run side by side; results keep the case order
    executor = fanout.current()
    with _scratch() as scratch:
        gateway = Gateway(target, visible, scratch)
        progress.expect("cases", len(cases))
        jobs, deadline = min(JOBS, target.config.jobs or JOBS), target.config.timeout + _STARTING
        if executor.ships:  # the target's own jobs caps its cases in flight on the whole cluster
            tasks = [_CaseTask(target, case, trace, harness, replace(POLICY)) for case in cases]
            shipped = executor.map(_case_task, tasks, folders={"built": gateway.built, "visible": visible},
                                   jobs=target.config.jobs or len(tasks), label=_label, deadline=deadline,
                                   check=_counted, keep=partial(_unpacked, lambda t: keep / t.case.case))
            return [CaseResult(s.rows, s.provenance, keep / t.case.case, s.isolation, s.lines, s.limits)
                    for t, s in zip(tasks, shipped, strict=True)]

        def one(case: Case, _folders: Mapping[str, Path]) -> CaseResult:
            result = gateway.run_case(case, keep / case.case, trace=trace, harness=harness)
            progress.advance("cases")
            return result

        return executor.map(one, cases, folders={}, jobs=jobs, label=lambda c: f"case {c.case}", deadline=deadline,
                            check=lambda _c, _r: None)


# a case's deadline on a cluster: the target's own timeout, and time to copy its build and start its jail
_STARTING = 60.0


@dataclass(frozen=True)
class _CaseTask:
    """One case to run on a cluster worker: the target (its file's settings), the case, how to run it."""

    target: Target
    case: Case
    trace: bool
    harness: Harness
    policy: Policy  # the orchestrator's: whether unsandboxed runs are allowed, and the paths no jail may show


@dataclass(frozen=True)
class _Shipped:
    """What a worker sends back: the case's result and its kept folder (outputs and evidence) as a bundle."""

    rows: list[dict[str, Cell]]
    provenance: Provenance
    isolation: tuple[str, ...]
    lines: dict[str, frozenset[int]] | None
    limits: dict[str, str]  # how the worker enforced the limits (cgroups, rlimits, or not and why)
    kept: fanout.Bundle | None  # None once unpacked on the orchestrator


def _label(task: _CaseTask) -> str:
    return f"case {task.case.case}"


def _case_task(task: _CaseTask, folders: Mapping[str, Path]) -> _Shipped:
    """On a worker: the case run as the local pool runs it, from the shipped build and visible folder."""
    # a worker serves one orchestrator at a time (docs/scale.md): its policy is the one the task carries
    configure(allow_unsandboxed=task.policy.allow_unsandboxed, protected=task.policy.protected)
    with tempfile.TemporaryDirectory() as tmp:
        gateway = Gateway(task.target, folders["visible"], Path(tmp), built=folders["built"])
        keep = Path(tmp) / "kept"
        result = gateway.run_here(task.case, keep, trace=task.trace, harness=task.harness)
        keep.mkdir(exist_ok=True)
        return _Shipped(result.rows, result.provenance, result.isolation, result.lines, _limits(task.target),
                        fanout.pack(keep))


def _arrived(task: _CaseTask, shipped: _Shipped) -> str | None:
    """Why a worker's result cannot be recorded: its bundle's bytes, or an output file missing or not the bytes its
    provenance fingerprints (None: every one is there). Other files are the evidence kept beside the outputs and
    names no fingerprint holds (as in a kept folder of the local pool)."""
    if shipped.kept is None:
        return "sent no kept folder"
    if shipped.provenance.case != task.case.case:
        return f"is the result of case {shipped.provenance.case}"
    problem = fanout.problem(shipped.kept)
    if problem is not None:
        return problem
    odd = fanout.odd(shipped.kept)
    if odd:  # a case's links and special files are removed before its folder is kept: none can come back
        return f"holds {odd[0]}, which is not a plain file inside its folder"
    files = fanout.digests(shipped.kept)
    wrong = sorted(n for n, sha in shipped.provenance.outputs.items() if files.get(n) != sha)
    return f"does not match its fingerprint at {wrong[0]}" if wrong else None


def _counted(task: _CaseTask, shipped: _Shipped) -> str | None:
    """``_arrived``, and a case that passed it counted done as it comes (the progress a run shows)."""
    problem = _arrived(task, shipped)
    if problem is None:
        progress.advance("cases")
    return problem


def _unpacked(where: Callable[[_CaseTask], Path], task: _CaseTask, shipped: _Shipped) -> _Shipped:
    """A result that checked, its kept folder unpacked (into ``where(task)``) as it comes; its bytes are let go."""
    assert shipped.kept is not None  # a result fresh from a worker carries its folder
    fanout.unpack(shipped.kept, where(task), f"the outputs of case {task.case.case}")
    return replace(shipped, kept=None)


@contextmanager
def _scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as tmp:  # no prefix: a case's path names nothing of the engine
        yield Path(tmp)


def _compare_runs(first: list[CaseResult], second: list[CaseResult], out: Path) -> None:
    """Both runs agree, or both are kept in ``out`` (``outputs/`` and ``second/``, the differences in
    ``not-deterministic.json``) and NotDeterministic names the first difference: case, file, line, step, bytes."""
    pairs = [(a, b) for a, b in zip(first, second, strict=True)
             if (a.rows, a.provenance.compared(), a.provenance.behavior)
             != (b.rows, b.provenance.compared(), b.provenance.behavior)]
    if not pairs:
        return
    differences = {a.provenance.case: first_difference(a, b) for a, b in pairs}
    for _, b in pairs:
        shutil.copytree(b.output, out / "second" / b.provenance.case, dirs_exist_ok=True)
    (out / "not-deterministic.json").write_text(json.dumps(differences, indent=1, ensure_ascii=False) + "\n",
                                                encoding="utf-8")
    case, where = next(iter(differences.items()))
    raise NotDeterministic(f"the target is not deterministic: {len(pairs)} case(s) differ between two runs, the "
                           f"second under another harness (other folders, another parent process, another pid); "
                           f"first: case {case}, {where}; both runs are kept in {out}", cases=list(differences),
                           hint="make the target depend only on its inputs, never on how or where it is run (a "
                                "service's timing fields and generated ids: the plan's volatile rules)")


def first_difference(a: CaseResult, b: CaseResult) -> str:
    """Where two runs of one case first differ, in one line: the behaviour, else the first output file that
    differs (its line, the plan step a JSON line names, the bytes either side), else the rows."""
    if a.provenance.behavior != b.provenance.behavior:
        return f"behaviour {a.provenance.behavior} then {b.provenance.behavior}"
    for name in sorted(set(a.provenance.outputs) | set(b.provenance.outputs)):
        if a.provenance.compared().get(name) != b.provenance.compared().get(name):
            return _file_difference(name, a.output / name, b.output / name)
    return "the rows read from the same outputs"


def _file_difference(name: str, first: Path, second: Path) -> str:
    if not (first.is_file() and second.is_file()):
        return f"{name} written by {'the first' if first.is_file() else 'the second'} run only"
    at, line, near_x, near_y, text = _first_split(first, second)
    step = _step_of(text)
    return f"{name} line {line}{f' (step {step})' if step else ''}, byte {at}: {near_x!r} then {near_y!r}"


_CHUNK, _LINE = 1 << 20, 1 << 16


def _first_split(first: Path, second: Path) -> tuple[int, int, bytes, bytes, bytes]:
    """Where two files first differ, read a chunk at a time (a target decides how big they are): the byte offset,
    its line, the bytes around it in each file, and the first file's line there (at most 64 KiB of it)."""
    line, offset, tail = 1, 0, b""
    with first.open("rb") as a, second.open("rb") as b:
        while True:
            x, y = a.read(_CHUNK), b.read(_CHUNK)
            if x == y and x:  # equal so far: only the lines and the tail (the start of the line to come) are kept
                line, offset, tail = line + x.count(b"\n"), offset + len(x), (tail + x)[-_LINE:]
                continue
            i = next((n for n, (p, q) in enumerate(zip(x, y, strict=False)) if p != q), min(len(x), len(y)))
            jx, jy, k = tail + x, tail + y, i + len(tail)
            start, end = jx.rfind(b"\n", 0, k) + 1, jx.find(b"\n", k)
            text = jx[start:end if end >= 0 else len(jx)][:_LINE]
            return offset + i, line + x.count(b"\n", 0, i), jx[max(k - 32, 0):k + 24], jy[max(k - 32, 0):k + 24], text


def _step_of(line: bytes) -> str | None:
    try:
        document = json.loads(line)
    except (ValueError, RecursionError):
        return None
    step = document.get("step") if isinstance(document, dict) else None
    return step if isinstance(step, str) else None


def _check_untouched(target: Target, before: list[Entry], build: Path) -> None:
    changes = diff(before, scan(target.baseline).sorted_entries())
    if changes:
        raise PolicyViolation(f"the target changed its own baseline during the run: {changes[0].kind} "
                              f"{changes[0].path}", hint="targets may write only to their output folder")
    sealed = build / "sealed"
    if sealed.is_dir() and not verify(sealed).ok:
        raise TamperDetected(f"{sealed} changed during the run", hint="the answer key was touched; rebuild the exam")


def _write_run(out: Path, build: Path, target: Target, results: list[CaseResult], twice: bool,
               faults: list[str]) -> RunRecord:
    actual = "".join(json.dumps(r, ensure_ascii=False) + "\n" for res in results for r in res.rows)
    behaviors = "".join(json.dumps({"case": r.provenance.case, "behavior": r.provenance.behavior}) + "\n"
                        for r in results)
    (out / "actual.jsonl").write_text(actual, encoding="utf-8")
    (out / "observed_behaviors.jsonl").write_text(behaviors, encoding="utf-8")
    (out / "provenance.jsonl").write_text("".join(r.provenance.model_dump_json() + "\n" for r in results),
                                          encoding="utf-8")
    if any(r.lines is not None for r in results):
        write_coverage(out / COVERAGE, {r.provenance.case: r.lines for r in results})
    record = RunRecord(
        build_visible_digest=verify(build / "visible").digest,
        target_sha256=hashlib.sha256(target.path.read_bytes()).hexdigest(), cases=len(results), twice=twice,
        actual_sha256=hashlib.sha256(actual.encode()).hexdigest(),
        behaviors_sha256=hashlib.sha256(behaviors.encode()).hexdigest(),
        isolation=sorted(set.intersection(*(set(r.isolation) for r in results))) if results else [],
        unread={r.provenance.case: r.provenance.extract_error for r in results if r.provenance.extract_error},
        stray_output={r.provenance.case: r.provenance.stray_output for r in results if r.provenance.stray_output},
        limits=_enforced(target, results),
        limits_hit={r.provenance.case: r.provenance.limit for r in results if r.provenance.limit}, faults=faults,
    )
    (out / "run.json").write_text(record.model_dump_json(indent=1) + "\n", encoding="utf-8")
    return record


def _limits(target: Target) -> dict[str, str]:
    return enforcement(address_space=target.config.kind != "browser")


def _enforced(target: Target, results: list[CaseResult]) -> dict[str, str]:
    """How the limits were enforced on every run: this machine's, or, for runs on a cluster, the workers' (a limit
    enforced differently on two workers names every way, so none is claimed that a run did not have)."""
    seen = [r.limits for r in results if r.limits is not None]
    if not seen:
        return _limits(target)
    names = dict.fromkeys(k for s in seen for k in s)  # in the order the machines report them
    return {k: " | ".join(sorted({s.get(k, "not reported") for s in seen})) for k in names}


def recorded_results(run_dir: Path) -> list[CaseResult]:
    """A recorded run's results as the gateway returned them (rows, provenance, and lines when traced)."""
    provenance = _read_provenance(run_dir / "provenance.jsonl")
    rows: dict[str, list[dict[str, Cell]]] = {}
    for line in (run_dir / "actual.jsonl").read_text(encoding="utf-8").splitlines():
        if line:
            row = json.loads(line)
            rows.setdefault(str(row.get("case")), []).append(row)
    lines = read_coverage(run_dir / COVERAGE)
    return [CaseResult(rows.get(p.case, []), p, run_dir / "outputs" / p.case, (), lines.get(p.case))
            for p in provenance]


def rerun(run_dir: Path, build: Path, target_file: Path, sample: int, seed: int = 0) -> list[str]:
    """Re-run a sample of a recorded run's cases; the ids whose fingerprints differ from the record."""
    visible = verified_visible(build)
    recorded = {p.case: p for p in _read_provenance(run_dir / "provenance.jsonl")}
    cases = [c for c in read_cases(visible / "cases.jsonl") if c.case in recorded]
    chosen = sorted(random.Random(seed).sample(cases, min(sample, len(cases))), key=lambda c: c.case)
    target = Target.load(target_file)
    with _scratch() as scratch, ThreadPoolExecutor(max_workers=min(JOBS, target.config.jobs or JOBS)) as pool:
        gateway = Gateway(target, visible, scratch)  # each case in its own copy and jail: side by side, as a run
        fresh = list(pool.map(lambda c: gateway.run_case(c).provenance, chosen))
    return [p.case for p in fresh
            if (p.compared(), p.behavior, p.exit_code) != (recorded[p.case].compared(), recorded[p.case].behavior,
                                                            recorded[p.case].exit_code)]


def _read_provenance(path: Path) -> list[Provenance]:
    if not path.is_file():
        raise UsageError(f"{path} does not exist", hint="pass the folder `tri-agent exam run` wrote")
    return [Provenance.model_validate_json(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def run_score_inputs(build: Path, run_dir: Path) -> ScoreInputs:
    """Where a build keeps its key and a run its results, as score inputs."""
    if not (run_dir / "actual.jsonl").is_file():
        raise UsageError(f"{run_dir} is not a run folder", hint="pass the folder `tri-agent exam run` wrote")
    verified_visible(build)
    behaviors = build / "sealed" / "behaviors.jsonl"
    observed = run_dir / "observed_behaviors.jsonl"
    has_behaviors = behaviors.is_file() and observed.is_file()
    provenance = run_dir / "provenance.jsonl"
    runs = _read_provenance(provenance) if provenance.is_file() else []
    strays = [p for p in runs if p.stray_output]
    return ScoreInputs(build / "caliber.yaml", build / "sealed" / "answers.jsonl", run_dir / "actual.jsonl",
                       behaviors if has_behaviors else None, observed if has_behaviors else None,
                       findings=tuple(f"case {p.case}: {p.stray_output}" for p in strays), actual_text=True,
                       timed_out=tuple(p.case for p in runs if p.timed_out))


def canary_score_inputs(build: Path, run_dir: Path) -> ScoreInputs | None:
    """A run's score inputs against the build's canary key, its canary cases alone (None: the build has none)."""
    observed = run_dir / "observed_behaviors.jsonl"
    inputs = canary_inputs(build, run_dir / "actual.jsonl", observed if observed.is_file() else None)
    if inputs is None:
        return None
    runs = _read_provenance(run_dir / "provenance.jsonl") if (run_dir / "provenance.jsonl").is_file() else []
    return replace(inputs, timed_out=tuple(p.case for p in runs if p.timed_out))
