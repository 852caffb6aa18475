"""Service targets: a program that answers HTTP requests over a database, run fresh and restored for every case.

A service target file::

    schema_version: 1
    kind: service
    preset: api
    baseline: ../target
    build: [python3, "{target}/migrate.py", "{target}/ledger.db"]   # once; its database is the snapshot
    timeout: 30                                                       # the whole case: start, steps, stop
    service:
      start: [python3, -m, uvicorn, "app:app", --port, "{port}"]
      env: {LEDGER_DB: "{db}"}
      ready: {path: /health, status: 200, deadline: 10}
      database: {kind: sqlite, file: ledger.db}
      clock: {env: LEDGER_NOW}

Each case runs in its own jail (its own loopback network, so parallel cases never share a port): the database
is restored (``DATABASES``: a copy of the built snapshot file for SQLite; a new database cloned from a template
for PostgreSQL), the request driver (``_client``) starts the service, waits for readiness, sends the case's
steps and stops it; then the orchestrator reads the side-effect rows from the database itself.
"""

from __future__ import annotations

import json
import shutil
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...sandbox._jail import Jail, strongest
from ...sandbox._process import Completed
from .._specs import Cell, ServiceSpec, expand
from .._target import TargetConfig, readable_folders
from .._trace import LINES_NAME, SHIM, SHIM_NAME, read_lines, traceable, wrapped
from . import _client
from ._databases import restored
from ._requests import Query, RequestPlan, load_plan, read_answers, step_rows


@dataclass(frozen=True)
class Ran:
    """One case's run as the gateway records it: how it ended, its rows and what went wrong reading them."""

    done: Completed
    layers: list[str]
    rows: list[dict[str, Cell]]
    error: str | None = None
    stray: str | None = None
    logs: tuple[Path, ...] = ()
    shots: tuple[Path, ...] = ()
    lines: dict[str, frozenset[int]] | None = None  # a traced service's executed lines (see ``_trace``)
    steady: dict[str, str] = field(default_factory=dict)  # a document's SHA-256, its volatile parts replaced


@dataclass(frozen=True)
class Driving:
    """How one case of a service-like target is driven: the driver run in the jail and how its lines are read."""

    argv: list[str]
    readable: tuple[Path, ...]
    cap: int
    rows: Callable[[list[dict[str, Any]]], list[dict[str, Cell]]]
    queries: list[Query]
    exits: tuple[int, ...]
    extra: tuple[Path, ...] = ()
    # the screenshots the driver vouched for in its lines (a browser's), kept as evidence beside the outputs
    evidence: Callable[[list[dict[str, Any]]], tuple[Path, ...]] = lambda _answers: ()


FIXED_PORT = 8080
DATA = "data"  # the folder of a case's inputs that holds the data its service starts over ({data})
Prepare = Callable[[Path, "TargetConfig", dict[str, str], dict[str, str]], Driving]


def serve_case(target_file: Path, config: TargetConfig, work: Path, values: dict[str, str],
               env: dict[str, str], prepare: Prepare, trace: bool = False) -> Ran:
    """Restore the database, run the driver ``prepare`` makes (requests, or a browser pilot) in the case's jail,
    then read the rows: the answers the driver reported and the side-effect queries against the database.
    ``trace``: a Python service (``python {target}/app.py``) is started through the line shim (``_trace``)."""
    spec = config.service
    assert spec is not None
    target_dir, input_dir, output_dir = work / "target", work / "input", work / "output"
    tracing = trace and traceable(spec.start)
    if tracing:  # service_wire starts the service through the shim when it finds it
        (work / "shim").mkdir()
        (work / "shim" / SHIM_NAME).write_text(SHIM, encoding="utf-8")
        (work / "trace").mkdir()
    with restored(spec.database, target_dir, target_file) as db:
        values = {**values, "{db}": db.url if db else "", "{data}": str(input_dir / DATA)}
        drive = prepare(work, config, values, env)
        readable = (input_dir, *drive.readable, *(db.readable if db else ()), *readable_folders(target_file, config),
                    *((work / "shim",) if tracing else ()))
        writable = (target_dir, Path(env["HOME"]), work / "tmp", work / "log", *((work / "trace",) if tracing else ()))
        jail = Jail(readable=readable, extra=drive.extra, reserves=config.kind == "browser", writable=writable,
                    first_is_init=True)
        done, layers = jail.run(drive.argv, cwd=target_dir, env=env, timeout=config.timeout, cap=drive.cap,
                                file_cap=config.write_cap, limits=config.limits)
        answers = read_answers(done.stdout)
        error = _driver_error(answers, done, drive.exits)
        # a driver that did not end as it ends (killed, crashed) vouches for none of its lines
        rows = drive.rows(answers) if done.exit_code in drive.exits else []
        shots = drive.evidence(answers) if done.exit_code in drive.exits else ()
        side = db.read(drive.queries) if db is not None and drive.queries else []
    _record(output_dir / "responses.jsonl", answers)
    if isinstance(side, str):
        error = error or side
    else:
        rows += [{**row, "case": values["{case}"]} for row in side]
    # the service's own logs (the browser's console), and nothing else it may have left in their folder
    logs = tuple(p for p in (work / "log" / n for n in ("service.out", "service.err", "console.jsonl", "seed.out",
                                                        "seed.err"))
                 if p.exists() and stat.S_ISREG(p.lstat().st_mode))
    lines = read_lines(work / "trace" / LINES_NAME, target_dir) if tracing else None
    return Ran(done, layers, rows, error, logs=logs, shots=shots, lines=lines)


def service_wire(work: Path, spec: ServiceSpec, clock: str | None, values: dict[str, str],
                 env: dict[str, str]) -> dict[str, Any]:
    """What every in-jail driver needs to start, probe, clock and stop the service."""
    start = [expand(a, values) for a in spec.start]
    shim = work / "shim" / SHIM_NAME
    if shim.is_file() and traceable(spec.start):  # serve_case asked for the service's lines
        start = wrapped(start, shim, work / "trace" / LINES_NAME, Path(values["{target}"]))
    return {
        "start": start, "seed": [expand(a, values) for a in spec.seed] if spec.seed else None,
        "env": {**env, **{k: expand(v, values) for k, v in spec.env.items()}},
        "cwd": values["{target}"], "ready": spec.ready.model_dump(), "stop_grace": spec.stop_grace,
        "clock": spec.clock.model_dump() if spec.clock else None, "initial_clock": clock,
        "body_cap": spec.body_cap, "request_timeout": spec.request_timeout, "log": str(work / "log"),
        # each case has a network of its own, so every case's service listens on the same port: nothing in an
        # answer (an absolute URL) differs by run; unsandboxed, cases share the host's network and need free ports
        "port": FIXED_PORT if strongest() is not None else None,
    }


def driver_folder(work: Path, wire: dict[str, Any], modules: tuple[Path, ...]) -> tuple[list[str], Path]:
    """The driver's own folder in the case (the jail does not show this package): the request driver, the
    ``modules`` a driver needs beside it (the last one is run), and its plan. The argv that runs it, the folder."""
    folder = work / "driver"
    folder.mkdir()
    (work / "log").mkdir()
    for module in (Path(_client.__file__), *modules):
        shutil.copyfile(module, folder / module.name.removeprefix("_"))
    (folder / "plan.json").write_text(json.dumps(wire, ensure_ascii=False), encoding="utf-8")
    main = (modules or (Path(_client.__file__),))[-1].name.removeprefix("_")
    return [sys.executable, "-I", str(folder / main), str(folder / "plan.json")], folder


def prepare_requests(work: Path, config: TargetConfig, values: dict[str, str], env: dict[str, str]) -> Driving:
    """The request driver's argv and what it needs to read: its own copy and its plan (the jail does not show
    this package)."""
    spec = config.service
    assert spec is not None
    plan = load_plan(work / "input")
    wire = {**service_wire(work, spec, plan.clock, values, env), "steps": [s.wire() for s in plan.steps],
            "volatile": [v.model_dump(by_alias=True) for v in plan.volatile]}
    argv, folder = driver_folder(work, wire, ())
    case = values["{case}"]
    return Driving(argv=argv, readable=(folder,), cap=_answers_cap(plan, spec, config.output_cap),
                   rows=lambda answers: step_rows(case, plan, answers), queries=plan.queries,
                   exits=(_client.READY, _client.UNREADY, _client.CRASHED))


def _answers_cap(plan: RequestPlan, spec: ServiceSpec, output_cap: int) -> int:
    """What the driver may print: every answer at its body cap, escaped (JSON can double a body), within 256 MiB;
    never less than the target's output cap."""
    answers = sum(step.repeat for step in plan.steps)
    return max(output_cap, min(answers * (2 * spec.body_cap + 4096), 256 << 20))


def _driver_error(answers: list[dict[str, Any]], done: Completed, exits: tuple[int, ...]) -> str | None:
    if done.timed_out:
        return "the case ran out of time"
    if done.exit_code not in exits:
        return f"the driver did not end as it ends (exit {done.exit_code}): no answer of the case is read"
    problems = [a for a in answers if a.get("error")]
    if problems:
        step = problems[0].get("step")
        return f"{'step ' + str(step) + ': ' if step else ''}{problems[0]['error']}"
    return None


def _record(path: Path, answers: list[dict[str, Any]]) -> None:
    """The answers as received (headers left out: dates and server names would make every run differ; and the
    screenshots' digests: evidence, never part of a fingerprint)."""
    kept = [{k: v for k, v in a.items() if k != "headers"} for a in answers if "evidence" not in a]
    path.write_text("".join(json.dumps(a, ensure_ascii=False, sort_keys=True) + "\n" for a in kept),
                    encoding="utf-8")
