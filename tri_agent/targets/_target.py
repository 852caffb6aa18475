"""The target: how the software under acceptance is driven, and how its results are read.

``kind`` is a closed set: ``command`` (a program over input files: warehouse/report and document pipelines),
``service`` (an HTTP service over a database, see ``service/``) and ``browser`` (a web app over a database,
driven through a real browser, see ``browser/``). A command target file::

    schema_version: 1
    kind: command
    preset: warehouse
    baseline: ../target            # folder copied fresh for every case (relative to this file)
    run: [python3, "{target}/grades.py", "{input}/scores.csv", "{output}/summary.csv"]
    timeout: 10
    extract: {file: summary.csv, format: csv}
    behaviors:                     # first matching rule wins
      - {exit: 0, behavior: accepted}
      - {exit: nonzero, behavior: rejected}
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, cast

from pydantic import ConfigDict, Field, model_validator

from .. import _yamldoc
from .._errors import UsageError
from .._model import Written
from ..exam._formats import DOCUMENT_FORMATS, Extract, FixedField
from ..sandbox._jail import refused
from ..sandbox._limits import Limits
from ..sandbox._process import Completed
from ..scoring._tables import DELIMITED, ROW, JsonNumber, read_table, to_json_text, unique_keys_object
from ._specs import BrowserSpec, Cell, Kind, ServiceSpec


class _Strict(Written):
    model_config = ConfigDict(frozen=True)


class BehaviorRule(_Strict):
    """Maps how a run ended to a behaviour category."""

    exit: int | list[int] | Literal["any", "nonzero", "timeout"] = Field(
        default="any", description="Exit code(s), 'nonzero', 'timeout' (killed) or 'any'.")
    stderr: str | None = Field(default=None, description="Regular expression that must match stderr.")
    behavior: str = Field(min_length=1, description="Behaviour category recorded for a run the rule matches.")

    def matches(self, done: Completed, stderr: str) -> bool:
        if self.exit == "timeout" or done.timed_out:
            return self.exit == "timeout" and done.timed_out
        code_ok = (self.exit == "any" or (self.exit == "nonzero" and done.exit_code != 0)
                   or done.exit_code == self.exit or (isinstance(self.exit, list) and done.exit_code in self.exit))
        return code_ok and (self.stderr is None or re.search(self.stderr, stderr) is not None)


# A run *failed* when it timed out or exited non-zero: exactly the runs the exit matchers 'timeout' and 'nonzero'
# select (the default rules call them timeout and rejected), whatever category a rule then gives them.
FAILED = (BehaviorRule(exit="timeout", behavior="failed"), BehaviorRule(exit="nonzero", behavior="failed"))


def failed(done: Completed) -> bool:
    return any(rule.matches(done, "") for rule in FAILED)


DEFAULT_BEHAVIORS = (
    BehaviorRule(exit="timeout", behavior="timeout"),
    BehaviorRule(exit=0, behavior="accepted"),
    BehaviorRule(exit="nonzero", behavior="rejected"),
)
# a service case is the request driver's run: 0 every step answered, 3 never ready, anything else a crash
SERVICE_BEHAVIORS = (
    BehaviorRule(exit="timeout", behavior="timeout"),
    BehaviorRule(exit=0, behavior="answered"),
    BehaviorRule(exit=3, behavior="unready"),
    BehaviorRule(exit="nonzero", behavior="crashed"),
)
# a browser case is the pilot's run: 0 every step done, 3 never ready, 5 a step found nothing to act on or a wait
# never ended, anything else a crash
BROWSER_BEHAVIORS = (
    BehaviorRule(exit="timeout", behavior="timeout"),
    BehaviorRule(exit=0, behavior="completed"),
    BehaviorRule(exit=3, behavior="unready"),
    BehaviorRule(exit=5, behavior="stuck"),
    BehaviorRule(exit="nonzero", behavior="crashed"),
)


class TargetConfig(_Strict):
    """A target file (see the module docstring)."""

    schema_version: Literal[1] = Field(default=1, description="Version of the target format.")
    kind: Kind = Field(
        default="command", description="How the target is driven: command (run per case), service (started per "
                                       "case, then sent requests) or browser (started per case, then driven "
                                       "through a real browser).")
    preset: str | None = Field(default=None, description="Preset name (`tri-agent presets` lists them).")
    baseline: str = Field(description="Folder holding the target, relative to the target file.")
    build: list[str] | None = Field(default=None, description="argv run once in a copy before the cases.")
    run: list[str] | None = Field(default=None, min_length=1, description="command targets: argv template: "
                                  "{target} {input} {output} {case}.")
    service: ServiceSpec | None = Field(default=None, description="service and browser targets: how the service "
                                        "(the web app) is started, probed, restored and stopped.")
    browser: BrowserSpec | None = Field(default=None, description="browser targets: how the browser is driven.")
    timeout: float = Field(default=30, gt=0, description="Seconds one case may take before its group is killed.")
    jobs: int | None = Field(default=None, ge=1, description="Cases run side by side (default: one per core, "
                             "at most 4); 1 for a target that cannot share the machine (fixed ports, locks).")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment for the target.")
    readable: list[str] = Field(default_factory=list, description="Folders every run of the target may read beyond "
                                "what a jail shows (docs/protocol.md): a virtualenv, a toolchain installed elsewhere; "
                                "absolute, and never one that would show the project, the run's state, the "
                                "temporary folder or HOME.")
    output_cap: int = Field(default=1 << 20, ge=1024, description="Bytes of standard output and of standard error "
                            "kept per case (the rest is read and dropped); the fingerprints hash what is kept.")
    write_cap: int = Field(default=256 << 20, ge=1 << 16, description="Bytes a case may write: no single file may "
                           "grow past it, and a case whose folders hold more (apparent size) fails.")
    limits: Limits = Field(default_factory=Limits, description="Resource limits of every run of the target (its "
                           "cases, its build step): memory, processes, open files, CPU seconds; a case past one ends "
                           "with its behaviour and the limit named, and only that case ends.")
    extract: Extract | None = Field(default=None, description="Default extraction of actual rows.")
    behaviors: list[BehaviorRule] = Field(default_factory=lambda: list(DEFAULT_BEHAVIORS),
                                          description="Rules classifying each run, first match wins (no match: "
                                                      "unclassified); default: timeout, then accepted (exit 0), "
                                                      "then rejected (nonzero); for a service: timeout, "
                                                      "answered (0), unready (3), crashed (other); for a "
                                                      "browser: timeout, completed (0), unready (3), stuck (5), "
                                                      "crashed (other).")

    @model_validator(mode="after")
    def _driven(self) -> TargetConfig:
        if self.kind == "command" and (self.run is None or self.service is not None or self.browser is not None):
            raise ValueError("a command target needs 'run' (and no 'service' or 'browser')")
        if self.kind == "service" and (self.service is None or self.run is not None or self.browser is not None):
            raise ValueError("a service target needs 'service' (and no 'run': the service block says how it starts; "
                             "no 'browser': that is a browser target)")
        if self.kind == "browser" and (self.service is None or self.run is not None):
            raise ValueError("a browser target needs 'service' (how the web app starts; and no 'run')")
        return self

    @property
    def argv(self) -> list[str]:
        """What a case runs, as written: the command, or the service's start line."""
        return self.run if self.run is not None else self.service.start if self.service is not None else []

    def rules(self) -> list[BehaviorRule]:
        if self.kind != "command" and "behaviors" not in self.model_fields_set:
            return list(SERVICE_BEHAVIORS if self.kind == "service" else BROWSER_BEHAVIORS)
        return self.behaviors


def readable_folders(path: Path, config: TargetConfig) -> tuple[Path, ...]:
    """The folders the target file ``path`` asks its jails to show read-only, each checked now (a usage error naming
    the folder and why, never a folder dropped in silence)."""
    for folder in config.readable:
        why = refused(Path(folder))
        if why is not None:
            raise UsageError(f"{path}: readable folder {folder!r} is refused: {why}",
                             hint="name the folder that holds only what the target needs (its virtualenv)")
    return tuple(Path(folder).resolve() for folder in config.readable)


@dataclass(frozen=True)
class Target:
    """A loaded target file with its baseline folder resolved."""

    path: Path
    config: TargetConfig
    baseline: Path

    @classmethod
    def load(cls, path: Path) -> Target:
        config = _yamldoc.load(path, TargetConfig)
        if config.preset is not None:
            from ._presets import get_preset

            get_preset(config.preset)  # an unknown preset name is a usage error, named now
        baseline = (path.parent / config.baseline).resolve()
        if not baseline.is_dir():
            raise UsageError(f"{path}: baseline {config.baseline!r} is not a folder ({baseline})")
        return cls(path, config, baseline)

    @property
    def readable(self) -> tuple[Path, ...]:
        return readable_folders(self.path, self.config)

    def with_baseline(self, baseline: Path, timeout: float, env: dict[str, str] | None = None) -> Target:
        """The same target driven from another tree (a mutant), with its own timeout and extra environment."""
        config = self.config.model_copy(update={"timeout": timeout, "env": {**self.config.env, **(env or {})}})
        return Target(self.path, config, baseline)

    def classify(self, done: Completed) -> str:
        stderr = done.stderr.decode("utf-8", "replace")
        return next((r.behavior for r in self.config.rules() if r.matches(done, stderr)), "unclassified")


def extract_rows(output: Path, extract: Extract, case: str,
                 run_failed: bool = False) -> tuple[list[dict[str, Cell]], str | None]:
    """The case's actual rows, each with a leading ``case`` column, and why extraction failed (if it did).

    A target that writes nothing or garbage is not malformed *input*: its rows are simply absent, and
    the scorer fails them as missing. A failed run under ``failed_output: none`` is not read at all (what it
    wrote is ``stray_output``'s business).
    """
    if run_failed and extract.failed_output == "none":
        return [], None
    return _read_rows(output, extract, case)


def stray_output(output: Path, extract: Extract, case: str, run_failed: bool) -> str | None:
    """The finding when a failed run wrote rows (or an unreadable, non-empty file) though its extract rule says
    ``failed_output: none``; an empty file, such as a shell redirect leaves, is no output."""
    if not run_failed or extract.failed_output != "none":
        return None
    rows, error = _read_rows(output, extract, case)
    path = output / extract.file
    written = rows or (error is not None and path.is_file() and path.stat().st_size > 0)
    if not written:
        return None
    what = f"{len(rows)} row(s) to {extract.file}" if rows else f"an unreadable {extract.file}"
    return f"the run failed but wrote {what}; the target file expects no output from a failed run (failed_output: none)"


def output_file(output: Path, extract: Extract) -> Path | None:
    """The file ``extract`` names, resolved inside ``output``; None when it is not a file there."""
    path = (output / extract.file).resolve()
    return path if path.is_relative_to(output.resolve()) and path.is_file() else None


def _read_rows(output: Path, extract: Extract, case: str) -> tuple[list[dict[str, Cell]], str | None]:
    path = output_file(output, extract)
    if path is None:
        return [], f"no output file {extract.file}"
    if extract.format in DOCUMENT_FORMATS:  # never parsed here: the gateway runs the document reader in a jail
        return [], f"{extract.file} is a document: only the gateway reads it (in a jail)"
    try:
        columns, rows = (_json_rows(path) if extract.format == "json" else _fixed_rows(path, extract)
                         if extract.format == "fixed" else _table_rows(path, cast(TableFormat, extract.format)))
    except Exception as exc:  # any unreadable output is an absent output
        return [], f"unreadable {extract.file}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
    if extract.rename:
        problem = _rename_problem(columns, extract.rename)
        if problem:
            return [], f"{extract.file}: {problem}"
        rows = [{extract.rename.get(k, k): v for k, v in r.items()} for r in rows]
    return [{"case": case, **{k: v for k, v in r.items() if k != "case"}} for r in rows], None


def _rename_problem(columns: list[str], rename: dict[str, str]) -> str | None:
    """Why ``rename`` cannot apply to these columns: a column to rename is not there, or a new name is taken."""
    absent = [old for old in rename if old not in columns]
    if absent:
        return f"rename: column {absent[0]!r} is not in the output (columns: {', '.join(columns) or 'none'})"
    renamed = [rename.get(c, c) for c in columns]
    taken = sorted({n for n in renamed if renamed.count(n) > 1})
    if taken:
        return f"rename: {taken[0]!r} would name two columns (the output already has one)"
    return None


TableFormat = Literal["csv", "tsv", "jsonl"]


def _table_rows(path: Path, fmt: TableFormat) -> tuple[list[str], list[dict[str, Cell]]]:
    table = read_table(path, fmt=fmt)  # the declared format, whatever the file is called (out.txt, report)
    frame = table.frame.drop(ROW).collect()
    if table.format in DELIMITED:  # CSV and TSV have no null: an empty cell is "" (a blank key may be a value)
        frame = frame.fill_null("")
    return table.columns, [{k: v for k, v in row.items()} for row in frame.iter_rows(named=True)]


def _fixed_rows(path: Path, extract: Extract) -> tuple[list[str], list[dict[str, Cell]]]:
    """A fixed-width table: each line cut at the fields' widths, each value stripped of its padding."""
    fields = extract.fields or []
    names = [f.name for f in fields]
    total = sum(f.width or 0 for f in fields)
    rows = []
    # records end at a line feed only: a form feed or U+2028 inside a field is a character of it, not a new record
    lines = [line.removesuffix("\r") for line in path.read_text(encoding="utf-8").split("\n")]
    for number, line in enumerate(lines[extract.skip:], start=extract.skip + 1):
        if not line.strip():
            continue
        if "\t" in line:
            raise ValueError(f"line {number} holds a tab: a fixed-width field is padded with spaces")
        if fields[-1].width is not None and len(line.rstrip()) > total:
            raise ValueError(f"line {number} is {len(line.rstrip())} characters, past the fields' {total}")
        rows.append(dict(zip(names, _cut(line, fields), strict=True)))
    return names, rows


def _cut(line: str, fields: list[FixedField]) -> list[Cell]:
    cells: list[Cell] = []
    start = 0
    for field in fields:
        end = len(line) if field.width is None else start + field.width
        cells.append(line[start:end].strip(" "))
        start = end
    return cells


def _json_rows(path: Path) -> tuple[list[str], list[dict[str, Cell]]]:
    data = json.loads(path.read_text(encoding="utf-8"), parse_float=JsonNumber, parse_int=JsonNumber,
                      object_pairs_hook=unique_keys_object)
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise ValueError("expected a JSON list of objects")
    rows = [{k: None if v is None else v if isinstance(v, str) else to_json_text(v) for k, v in r.items()}
            for r in data]
    return list(dict.fromkeys(k for r in rows for k in r)), rows
