"""Which lines of a Python target each case executes, so the mutation gate replays first the cases that can
tell a mutant apart.

A Python target run as ``python {target}/entry.py ...`` is started through a small standard-library shim that
records executed lines of files under the target folder (``sys.monitoring`` where the interpreter has it,
``sys.settrace`` otherwise) and then runs the entry point as ``__main__``. The record is written by the target's
own process, so a hostile target could forge it: it only ever decides the *order* of replays and which
mutants are worth a first look. No verdict rests on it: every survivor is confirmed against every case.
A service started as ``python {target}/app.py ...`` is traced the same way; it is stopped by SIGTERM, so the shim
records on SIGTERM too (then dies of it, as the service would have), unless the service handles SIGTERM itself, when
its own way out (``sys.exit``) records.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Literal

from pydantic import Field

from .._model import Record

# what the gateway writes next to the case (read-only for the run) and the file the shim fills (its own folder)
SHIM_NAME, LINES_NAME = "tri_trace.py", "lines.json"
COVERAGE = "coverage.json"  # in a run folder: case -> target file -> lines its traced run executed
_MAX_RECORD = 4 << 20
_PYTHON = re.compile(r"^python(\d(\.\d+)?)?$")

SHIM = r'''
import json, os, runpy, sys
_out, _root = sys.argv[1], os.path.realpath(sys.argv[2])
_script = sys.argv[3]
sys.argv = sys.argv[3:]
sys.path[0] = os.path.dirname(os.path.abspath(_script))
_seen = {}


def _mine(code):
    name = code.co_filename
    return os.path.isabs(name) and os.path.realpath(name).startswith(_root + os.sep)


def _dump():  # merged with what an earlier process of the case recorded (a service restarted to move its clock)
    try:
        with open(_out) as f:
            for name, lines in json.load(f).items():
                _seen.setdefault(name, set()).update(lines)
    except (OSError, ValueError, AttributeError, TypeError):
        pass
    try:
        with open(_out, "w") as f:
            json.dump({k: sorted(v) for k, v in _seen.items()}, f)
    except OSError:
        pass


if hasattr(sys, "monitoring"):
    _mon = sys.monitoring
    _TOOL = _mon.COVERAGE_ID

    def _line(code, line):
        if not _mine(code):
            return _mon.DISABLE
        _seen.setdefault(code.co_filename, set()).add(line)

    _mon.use_tool_id(_TOOL, "tri-agent")
    _mon.register_callback(_TOOL, _mon.events.LINE, _line)
    _mon.set_events(_TOOL, _mon.events.LINE)
else:
    def _trace(frame, event, arg):
        if not _mine(frame.f_code):
            return None
        lines = _seen.setdefault(frame.f_code.co_filename, set())
        lines.add(frame.f_lineno)

        def _local(frame, event, arg):
            if event == "line":
                lines.add(frame.f_lineno)
            return _local
        return _local

    import threading
    threading.settrace(_trace)
    sys.settrace(_trace)
import signal


def _stopped(signum, frame):  # a service is stopped by SIGTERM: record, then die of it as it would have
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _dump()
    os.kill(os.getpid(), signal.SIGTERM)


if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
    signal.signal(signal.SIGTERM, _stopped)
try:
    runpy.run_path(_script, run_name="__main__")
finally:
    if not hasattr(sys, "monitoring"):
        sys.settrace(None)
    _dump()
'''


def traceable(run: list[str]) -> bool:
    """A run template the shim can wrap: a Python interpreter and a script of the target."""
    return len(run) >= 2 and _PYTHON.match(Path(run[0]).name) is not None and run[1].startswith("{target}/") \
        and run[1].endswith(".py")


def wrapped(argv: list[str], shim: Path, lines: Path, target_dir: Path) -> list[str]:
    """``argv`` (already expanded) started through the shim."""
    return [argv[0], str(shim), str(lines), str(target_dir), *argv[1:]]


def read_lines(path: Path, target_dir: Path) -> dict[str, frozenset[int]] | None:
    """File (relative to the target) -> executed lines; None when the run left no readable record."""
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > _MAX_RECORD:
            return None
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):  # the record is the target's writing: never a crash of ours
        return None
    if not isinstance(raw, dict):
        return None
    out: dict[str, frozenset[int]] = {}
    roots = (str(target_dir) + "/", str(target_dir.resolve()) + "/")
    for name, lines in raw.items():
        if not isinstance(name, str) or not isinstance(lines, list):
            return None
        root = next((r for r in roots if name.startswith(r)), None)
        if root is not None:
            out[name[len(root):]] = frozenset(n for n in lines if isinstance(n, int))
    return out


class Coverage(Record):
    """``coverage.json`` in a run folder: the lines each case executed on the run's traced pass."""


    schema_version: Literal[1] = Field(default=1, description="Version of the coverage format.")
    cases: dict[str, dict[str, list[int]] | None] = Field(description="Case id -> target file -> executed lines; "
                                                                      "null when the run left no readable record.")


def write_coverage(path: Path, by_case: dict[str, dict[str, frozenset[int]] | None]) -> None:
    cases = {case: None if files is None else {f: sorted(v) for f, v in sorted(files.items())}
             for case, files in sorted(by_case.items())}
    path.write_text(Coverage(cases=cases).model_dump_json() + "\n", encoding="utf-8")


def read_coverage(path: Path) -> dict[str, dict[str, frozenset[int]] | None]:
    """A run folder's coverage (written by the orchestrator from the traced records); empty when absent."""
    if not path.is_file():
        return {}
    coverage = Coverage.model_validate_json(path.read_text(encoding="utf-8"))
    return {case: None if files is None else {f: frozenset(v) for f, v in files.items()}
            for case, files in coverage.cases.items()}
