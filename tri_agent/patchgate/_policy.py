"""``gate check``'s policy, before any verdict: what a patch may not do, each rule with its own exit code.

Built so far:

- **forbidden paths** (10): a path the patch added, changed or removed that the gate forbids, or that the agent
  never saw (the scoring tree, the held-out suite, the corpus, the fixture schema and lock, the gate file);
- **the scoring surface** (11): the digest of every file of the scoring tree, the ledger, the fixture schema and
  lock and the gate file (with its pinned invocation), and of the run's configuration (what pytest reads before
  any scoring test runs: every ``conftest.py`` and ``__init__.py`` on the way to a scoring or held-out file, the
  pytest and packaging configuration files, ``.gitattributes``, the spec, and anything in a folder that holds a
  scoring file), as git holds them, must be the base's;
- **the flake ledger** (13): it parses as the ledger format (closed flake classes, ``sha256:`` evidence, no field
  that could serve as an expiry); it only grows (an entry gone needs a ``removed`` record with the same evidence);
  and an agent identity is never the last author of the ledger or of the gate file;
- **the fixture lock** (14): the lock holds the fixture schema's ``sha256:``, and every JSON or JSONL scoring
  fixture is valid under that schema.

Every check runs, and the refusal lists every finding; the exit code is the first finding's (in the order above).
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

import jsonschema
from pydantic import ConfigDict, Field, ValidationError

from .. import _yamldoc
from .._errors import ExitCode, UsageError
from .._model import Record, Written
from ..isolation._contract import glob_regex
from ..repository import cat_blobs, clean_env, files_at, git_out
from ..testcode import is_test_file
from ._checkout import omitted
from ._gatefile import FLAKE_CLASSES, GATE_FILE, GateFile
from ._map import gate_at
from ._oracle import introduced, leaning
from ._reach import shadows
from ._skips import marks_added, unledgered

FlakeClass = Literal["timing", "order", "network", "rng", "env"]
assert set(get_args(FlakeClass)) == set(FLAKE_CLASSES)
EVIDENCE = r"^sha256:[0-9a-f]{64}$"


class LedgerEntry(Written):
    """One test moved off the scoring surface, and why."""

    model_config = ConfigDict(frozen=True)

    test_id: str = Field(min_length=1, description="The test's node id where it lives now.")
    flake_class: FlakeClass = Field(description="Why it flakes: timing, order, network, rng or env (a closed set).")
    evidence: str = Field(pattern=EVIDENCE, description="sha256:<hex> of the last failing artifact (a log excerpt, "
                          "the reproduced command, a captured schedule).")
    moved_from: str = Field(default="", description="Where it lived on the scoring surface.")
    moved_at: str = Field(default="", description="When it moved (a date).")
    owner: str = Field(default="", description="Who answers for it.")
    note: str = Field(default="", description="Anything a person should know.")


class Stability(Written):
    """The window of runs that let a test back onto the scoring surface: N passes in a row, one command, one
    surface, and the hash of their log."""

    model_config = ConfigDict(frozen=True)

    runs: int = Field(ge=1, description="Passing runs in a row (the gate's unfreeze_runs at least).")
    command: list[str] = Field(description="The pytest arguments of every run: the gate's pinned invocation.")
    surface_sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="The scoring surface's digest (as gate "
                                "check reports it) every run had.")
    log: str = Field(pattern=EVIDENCE, description="sha256:<hex> of the runs' log.")


class Removal(Written):
    """An entry taken off the ledger: its evidence kept, and the stability window that let it back."""

    model_config = ConfigDict(frozen=True)

    test_id: str = Field(min_length=1, description="The entry's test id.")
    evidence: str = Field(pattern=EVIDENCE, description="The removed entry's evidence, unchanged.")
    removed_at: str = Field(default="", description="When (a date).")
    reason: str = Field(min_length=1, description="Why it may score again.")
    stability: Stability = Field(description="The recorded stability window; without one no test leaves the ledger.")


class Ledger(Written):
    """The flake ledger (JSON). Unknown keys are refused: an ``expires`` field is no control, a replay is."""

    schema_version: Literal[1] = Field(default=1, description="Version of the ledger format.")
    entries: list[LedgerEntry] = Field(default_factory=list, description="Tests off the scoring surface.")
    removed: list[Removal] = Field(default_factory=list, description="Entries taken off, their evidence kept.")


@dataclass(frozen=True)
class Finding:
    """One broken rule: its exit code, and one line naming the file, the line or entry, and the rule."""

    code: ExitCode
    line: str
    detail: str = ""  # the operator's only (the JSON report): where in a hidden file, never shown to the author


class PolicyReport(Record):
    """``gate check --json``: the policy's findings (empty: every rule held)."""

    schema_version: Literal[1] = Field(default=1, description="Version of the policy report format.")
    base: str = Field(description="The base commit.")
    head: str = Field(description="The head commit.")
    surface_sha256: str = Field(description="The scoring surface's digest at the base.")
    findings: list[str] = Field(description="Every broken rule, one line each, its exit code first ('10: ...').")
    hidden: list[str] = Field(default_factory=list, description="The operator's only: each finding that met a "
                              "hidden file, with the file and line in brackets (keep it from the patch author).")


def _changed(repo: Path, base: str, head: str) -> list[str]:
    out = git_out(repo, "diff", "--name-only", "-z", "--no-renames", base, head)
    return sorted(p for p in out.decode("utf-8", "surrogateescape").split("\0") if p)


def forbidden(changed: list[str], gate: GateFile) -> list[Finding]:
    """The paths a patch touched that it may not: the gate's ``forbidden`` globs, and all the agent never saw, in
    any letter case (on a case-folding file system ``tests/HELD_OUT/x`` lands in ``tests/held_out/``)."""
    folded = _folded(gate)
    out = []
    for path in changed:
        glob = next((g for g in gate.forbidden if _matches(g, path)), None)
        if omitted(path, gate) or omitted(path.lower(), folded):
            out.append(Finding(ExitCode.GATE_FORBIDDEN, f"{_shown(path)}: the patch touched a path forbidden to it "
                                                        "(the agent's checkout never holds it)"))
        elif glob is not None:
            out.append(Finding(ExitCode.GATE_FORBIDDEN, f"{_shown(path)}: the patch touched a path forbidden to it "
                                                        f"({glob!r})"))
    return out


def _matches(glob: str, path: str) -> bool:
    return bool(glob_regex(glob).match(path) or glob_regex(glob.lower()).match(path.lower()))


def _folded(gate: GateFile) -> GateFile:
    """The gate with every path and glob in lower case: what a case-folding file system sees."""
    return GateFile.model_validate(json.loads(gate.model_dump_json(by_alias=True).lower()))


def _shown(path: str) -> str:
    """A path as one line of a report: a newline or a control character in a file name cannot forge a line."""
    return path if path.isprintable() else repr(path)


# what changes the bytes a checkout of the tree holds (encodings, line ends, filters, submodules), at any depth
_ANY_DEPTH = frozenset({".gitattributes", ".gitmodules", ".lfsconfig"})
# what pytest and the packaging read before any test runs, wherever the scoring tree lies
_RUN_CONFIG = frozenset({"pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml", "pyproject.toml", "setup.cfg",
                         "tox.ini", "conftest.py",
                         ".gitattributes", "setup.py", "sitecustomize.py", "usercustomize.py"})


def run_configuration(files: list[str], gate: GateFile) -> set[str]:
    """The files of a revision that steer a scoring run without being scoring files: every ``conftest.py`` and
    ``__init__.py`` in a folder on the way to a scoring or held-out file, pytest and packaging configuration files
    and ``.gitattributes`` in any of those folders or at the root, ``.pth`` files, the spec, and every file in a
    folder that holds a scoring property."""
    tests = [f for f in files if any(_matches(g, f) for g in (*gate.classes.scoring_properties, *gate.held_out))]
    folders = {str(Path(f).parent) for f in tests}
    ancestors = {"."} | {str(p) for f in tests for p in Path(f).parents}
    config = {f for f in files if (Path(f).name in _RUN_CONFIG or Path(f).name == "__init__.py")
              and str(Path(f).parent) in ancestors}
    config |= {f for f in files if f.endswith(".pth") or str(Path(f).parent) in folders
               or Path(f).name in _ANY_DEPTH}
    return config | ({gate.spec} if gate.spec and gate.spec in files else set())


def surface(repo: Path, rev: str, gate: GateFile, config: set[str]) -> dict[str, str]:
    """Path -> mode and blob id of every file of the scoring surface at ``rev``: the scoring tree (held-out files
    and the corpus included), the ledger, the fixture schema and lock, the gate file, and the run's configuration
    (``config``: its paths at the base and at the head, so one added or removed counts too)."""
    out = git_out(repo, "ls-tree", "-r", "-z", "--full-tree", rev).decode("utf-8", "surrogateescape")
    blobs = {}
    for line in (x for x in out.split("\0") if x):
        meta, _, path = line.partition("\t")
        if omitted(path, gate) or path in config:
            mode, _, blob = meta.split(" ")
            blobs[path] = f"{mode} {blob}"  # a file turned into a link is a change
    return blobs


def surface_digest(blobs: dict[str, str]) -> str:
    return hashlib.sha256("".join(f"{p}\0{b}\n" for p, b in sorted(blobs.items())).encode()).hexdigest()


def surface_changes(before: dict[str, str], after: dict[str, str]) -> list[Finding]:
    return [Finding(ExitCode.GATE_SURFACE, f"{_shown(path)}: the scoring surface " + (
        "lost it" if path not in after else "gained it" if path not in before else "changed it"))
        for path in sorted(before.keys() | after.keys()) if before.get(path) != after.get(path)]


def parse_ledger(text: str, where: str) -> Ledger | Finding:
    """The ledger, or the finding that says why it is none."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        return Finding(ExitCode.GATE_LEDGER, f"{where}: not JSON ({exc})")
    try:
        return Ledger.model_validate(data)
    except ValidationError as exc:
        return Finding(ExitCode.GATE_LEDGER, _yamldoc.explained(exc, Ledger, where).line())


def ledger_growth(before: Ledger, after: Ledger, where: str) -> list[Finding]:
    """Entries of ``before`` gone from ``after`` with no ``removed`` record that keeps their evidence."""
    kept = {(e.test_id, e.evidence) for e in after.entries} | {(r.test_id, r.evidence) for r in after.removed}
    return [Finding(ExitCode.GATE_LEDGER, f"{where}: entry {e.test_id!r} was removed without a 'removed' record "
                    "that keeps its evidence") for e in before.entries if (e.test_id, e.evidence) not in kept]


def unfreezes(ledger: Ledger, gate: GateFile, where: str) -> list[Finding]:
    """Removals whose stability window is shorter than the gate asks, or ran another command than the pinned one."""
    out = []
    for r in ledger.removed:
        if r.stability.runs < gate.unfreeze_runs:
            out.append(Finding(ExitCode.GATE_LEDGER, f"{where}: removal of {r.test_id!r} has a stability window of "
                               f"{r.stability.runs} runs; the gate asks for {gate.unfreeze_runs}"))
        elif r.stability.command != gate.invocation.pytest_args:
            out.append(Finding(ExitCode.GATE_LEDGER, f"{where}: removal of {r.test_id!r} was replayed with "
                               f"{r.stability.command}, not the pinned invocation {gate.invocation.pytest_args}"))
    return out


def agent_authors(repo: Path, rev: str, paths: list[str], agents: list[str]) -> list[Finding]:
    """The ``paths`` whose last commit at ``rev`` has an agent identity as its author or its committer. Read at the
    base (the patch's own history is the agent's to write), without replace refs or a mailmap."""
    out = []
    for path in paths:
        who = git_out(repo, "log", "-1", "--no-mailmap", "--format=%ae%x00%ce", rev, "--", path).decode(
            "utf-8", "replace").strip().split("\0")
        agent = next((w for w in who if w and any(fnmatch.fnmatch(w.lower(), a.lower()) for a in agents)), None)
        if agent:
            out.append(Finding(ExitCode.GATE_LEDGER, f"{path}: last written by {agent}, an agent identity; only a "
                                                     "person writes it"))
    return out


def check_policy(repo: Path, base: str, head: str) -> tuple[PolicyReport, list[Finding]]:
    """Every policy rule built so far, on the patch from ``base`` to ``head`` of ``repo``, under the base's gate."""
    base, head = (git_out(repo, "rev-parse", "--verify", f"{r}^{{commit}}").decode().strip() for r in (base, head))
    gate = gate_at(repo, base)
    ancestry = subprocess.run(["git", "-C", str(repo), "merge-base", "--is-ancestor", base, head], env=clean_env(),
                              capture_output=True, check=False)
    if ancestry.returncode != 0:
        raise UsageError(f"{head[:12]} does not descend from {base[:12]}",
                         hint="gate the patch as commits on top of the base (rebase it)")
    changed = _changed(repo, base, head)
    found = forbidden(changed, gate)
    config = run_configuration(files_at(repo, base), gate) | run_configuration(files_at(repo, head), gate)
    before, after = surface(repo, base, gate, config), surface(repo, head, gate, config)
    found += surface_changes(before, after)
    found += _marks(repo, (base, head), [p for p in changed if p.endswith(".py")], before.keys() | after.keys())
    base_files, head_files = set(files_at(repo, base)), set(files_at(repo, head))
    found += [Finding(ExitCode.GATE_MARKS, f"{why}") for _, why in
              shadows(sorted(p for p in changed if p in head_files and p not in base_files), head_files)]
    ledger_found, ledger = _ledger_rules(repo, base, head, gate)
    found += ledger_found + _visible_skips(repo, (base, head), gate, ledger)
    found += fixture_lock(repo, head, gate)
    found += _independence(repo, (base, head), gate, [p for p in changed if p.endswith(".py")])
    report = PolicyReport(base=base, head=head, surface_sha256=surface_digest(before),
                          findings=[f"{int(f.code)}: {f.line}" for f in found],
                          hidden=[f"{int(f.code)}: {f.line} [{f.detail}]" for f in found if f.detail])
    return report, found


def _ledger_rules(repo: Path, base: str, head: str, gate: GateFile) -> tuple[list[Finding], Ledger | None]:
    """Rule 13 on the ledger itself, and the ledger at the head (None when it is missing or does not parse)."""
    path = gate.classes.ledger
    found = agent_authors(repo, base, [path, GATE_FILE], gate.agents)
    ledgers = []
    for rev in (base, head):
        if path not in files_at(repo, rev):
            return [Finding(ExitCode.GATE_LEDGER, f"{path}: no flake ledger at {rev[:12]}; commit one (it may be "
                                                  "empty) on the base branch"), *found], None
        parsed = parse_ledger(_blob(repo, rev, path).decode("utf-8", "replace"), f"{rev[:12]}:{path}")
        if isinstance(parsed, Finding):
            return [parsed, *found], None
        ledgers.append(parsed)
    return ledger_growth(ledgers[0], ledgers[1], path) + unfreezes(ledgers[1], gate, path) + found, ledgers[1]


def _texts(repo: Path, rev: str, paths: list[str]) -> list[str | None]:
    return [None if b is None else b.decode("utf-8", "replace") for b in cat_blobs(repo, [f"{rev}:{p}" for p in paths])]


def _marks(repo: Path, revs: tuple[str, str], paths: list[str], on_surface: set[str]) -> list[Finding]:
    """Rule 12 over every Python file the patch changed and still holds."""
    olds, news = (_texts(repo, rev, paths) for rev in revs)
    return [Finding(code, line) for path, old, new in zip(paths, olds, news, strict=True) if new is not None
            for code, line in marks_added(path, old or "", new, path in on_surface)]


def _visible_skips(repo: Path, revs: tuple[str, str], gate: GateFile, ledger: Ledger | None) -> list[Finding]:
    """Rule 13's claim on the visible suite: every skip at the head names a test with a ledger row."""
    if ledger is None:
        return []  # the ledger's own finding says why; its rows cannot be read
    visible = [p for p in files_at(repo, revs[1]) if is_test_file(p) and not omitted(p, gate)]
    rows = [e.test_id for e in ledger.entries]
    olds, news = (_texts(repo, rev, visible) for rev in revs)
    return [Finding(code, line) for path, old, new in zip(visible, olds, news, strict=True) if new is not None
            for code, line in unledgered(path, new, old, rows)]


def _independence(repo: Path, revs: tuple[str, str], gate: GateFile, changed: list[str]) -> list[Finding]:
    """Rule 15: no oracle (held-out test, scoring property) uses a name or value the patch's code introduced."""
    base, head = revs
    code = [p for p in changed if not is_test_file(p) and not omitted(p, gate)]
    patch = {p: t for p, t in zip(code, _texts(repo, head, code), strict=True) if t is not None}
    if not patch:
        return []
    files = files_at(repo, base)
    base_code = [p for p in files if p.endswith(".py") and not is_test_file(p) and not omitted(p, gate)]
    spec = _texts(repo, base, [gate.spec])[0] or "" if gate.spec else ""
    intro = introduced([t for t in _texts(repo, base, base_code) if t is not None], patch, spec)
    oracles = [p for p in files if p.endswith(".py") and any(_matches(g, p) for g in
                                                             (*gate.held_out, *gate.classes.scoring_properties))]
    return [Finding(ExitCode.GATE_ORACLE, line, detail) for path, text in
            zip(oracles, _texts(repo, base, oracles), strict=True) if text is not None
            for line, detail in leaning(path, text, intro)]


def _blob(repo: Path, rev: str, path: str) -> bytes:
    return git_out(repo, "show", f"{rev}:{path}")


def fixture_lock(repo: Path, rev: str, gate: GateFile) -> list[Finding]:
    """The fixture lock at ``rev``: the lock names the schema's SHA-256, and every scoring fixture that is JSON
    (or JSONL, line by line) is valid under the schema."""
    if gate.fixtures is None:
        return []
    files = set(files_at(repo, rev))
    schema_path, lock = gate.fixtures.schema_path, gate.fixtures.lock
    missing = [p for p in (schema_path, lock) if p not in files]
    if missing:
        return [Finding(ExitCode.GATE_FIXTURES, f"{p}: missing at {rev[:12]}; the gate file names it") for p in missing]
    raw = _blob(repo, rev, schema_path)
    want = "sha256:" + hashlib.sha256(raw).hexdigest()
    if _blob(repo, rev, lock).decode("utf-8", "replace").strip() != want:
        return [Finding(ExitCode.GATE_FIXTURES, f"{lock}: does not hold the SHA-256 of {schema_path} ({want[:19]}...)")]
    try:
        schema = json.loads(raw)
        jsonschema.Draft202012Validator.check_schema(schema)
        validator = jsonschema.Draft202012Validator(schema)
    except (ValueError, jsonschema.SchemaError) as exc:
        return [Finding(ExitCode.GATE_FIXTURES, f"{schema_path}: not a JSON Schema ({str(exc).splitlines()[0]})")]
    fixtures = sorted(p for p in files if any(glob_regex(g).match(p) for g in gate.classes.scoring_fixtures)
                      and p.endswith((".json", ".jsonl")) and p not in (schema_path, lock))
    return [f for path in fixtures for f in _samples(validator, path, _blob(repo, rev, path))]


def _samples(validator: jsonschema.protocols.Validator, path: str, data: bytes) -> list[Finding]:
    text = data.decode("utf-8", "replace")
    lines = text.split("\n") if path.endswith(".jsonl") else [text]  # JSON allows U+2028 in a string: no splitlines
    for n, text in enumerate(lines, start=1):
        if not text.strip() and path.endswith(".jsonl"):
            continue
        where = f"{path}:{n}" if path.endswith(".jsonl") else path
        try:
            errors = sorted(validator.iter_errors(json.loads(text)), key=lambda e: list(e.path))
        except ValueError as exc:
            return [Finding(ExitCode.GATE_FIXTURES, f"{where}: not JSON ({exc})")]
        if errors:
            at = "/".join(str(x) for x in errors[0].path) or "the document"
            return [Finding(ExitCode.GATE_FIXTURES, f"{where}: {at}: {errors[0].message} (under the fixture schema)")]
    return []
