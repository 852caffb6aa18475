"""``gate check``'s verdict, after the policy held: the patch applied to a clean checkout of the base, the pinned
suite and the property corpus run in the OS sandbox, at the base and at the head, and compared.

- **The checkout.** The base's tree (held-out suite, scoring tree and corpus included) is written from git's
  objects into a fresh folder, and the patch (``git diff --binary BASE HEAD``, or the ``--patch`` file) is
  applied with ``git apply --check`` first. Nothing of the agent's working tree or history is used.
- **The suite.** pytest with the gate's pinned arguments only: ``PYTEST_ADDOPTS`` emptied, no cache, no xdist,
  bytecode off, ``PYTHONHASHSEED`` and Hypothesis's seed fixed; the tree is read-only in the jail. Outcomes are
  read from the gate's own plugin (``_witness``), which writes outside the tree, never from a report the run
  could write: a test passes when its setup, call and teardown all passed; a skip, an xfail, a missing record,
  a run cut short, or a test the base collected and the head did not is a failure.
- **The corpus.** Every case under ``corpus/<property>/<YYYY-MM-DD>/`` is replayed through its property by
  ``_replay`` into an outcome ledger of (property, case, input sha256, passed, error), at the base and at the
  head. A case that passed at the base and fails at the head is a regression; one that failed and now passes is
  the only improvement signal.

The patch passes when every test of the pinned run and every corpus case passes at the head.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import Literal

from pydantic import Field

from .._errors import InfrastructureFailure, MalformedInput, UsageError
from .._model import Record
from ..repository import clean_env, git_out, tree_of, write_files
from ..sandbox._jail import Jail
from ..sandbox._process import base_env
from ._gatefile import GateFile
from ._map import printable

_DATED = re.compile(r"\d{4}-\d{2}-\d{2}")
_HERE = Path(__file__).parent
Outcome = Literal["passed", "failed", "skipped", "xfailed", "error", "missing"]


class TestOutcome(Record):
    """One test of the pinned run, as the gate's plugin saw it."""

    __test__ = False

    node_id: str = Field(description="pytest's node id.")
    outcome: Outcome = Field(description="passed only when setup, call and teardown passed; missing: no record.")


class CaseOutcome(Record):
    """One corpus case replayed through its property: a row of the outcome ledger."""

    property: str = Field(description="The property, named by the corpus folder ('<file stem>.<function>').")
    case: str = Field(description="The case's path under the property's folder (a dated folder, then the file).")
    input_sha256: str = Field(description="SHA-256 of the case's bytes.")
    passed: bool = Field(description="The property held on the case.")
    error: str = Field(default="", description="What was raised, when it did not.")


class Side(Record):
    """One side of the comparison: the base, or the base with the patch."""

    tests: list[TestOutcome] = Field(description="Every test of the pinned run, by node id.")
    exit_status: int = Field(description="pytest's exit status (a pass needs 0 as well as every test passed).")
    finished: bool = Field(description="The run reached its end (no os._exit, crash or timeout cut it short).")
    forged: bool = Field(default=False, description="A record file was written to by another hand than the gate's "
                         "plugin or replay (a gap, a repeat, a line after the end): the run is void.")
    cases: list[CaseOutcome] = Field(description="The outcome ledger of the corpus.")


class Verdict(Record):
    """``gate check``'s verdict: both sides, and what changed between them."""

    schema_version: Literal[1] = Field(default=1, description="Version of the verdict format.")
    layers: list[str] = Field(description="The OS sandbox layers the runs had (empty: none, never a pass).")
    base: Side = Field(description="The base alone.")
    head: Side = Field(description="The base with the patch.")
    failures: list[str] = Field(description="Why the patch does not pass, one line each (empty: it passes).")
    regressions: list[str] = Field(description="Tests and cases that passed at the base and fail with the patch.")
    improvements: list[str] = Field(description="Tests and cases that failed at the base and pass with the patch.")

    @property
    def passed(self) -> bool:
        return not self.failures and bool(self.layers)


@dataclass(frozen=True)
class _Case:
    prop: str
    module: str
    function: str
    case: str
    path: str


def materialize(repo: Path, rev: str, dest: Path) -> None:
    """The whole tree of ``rev`` (nothing omitted) into ``dest``, from git's objects."""
    write_files(repo, dest, tree_of(repo, rev))


def apply_patch(patch: bytes, dest: Path) -> None:
    """``git apply --check``, then ``git apply``, of ``patch`` in ``dest`` (a plain folder, not a repository)."""
    for check in (["--check"], []):
        done = subprocess.run(["git", "apply", *check, "--binary", "-"], cwd=dest, input=patch, capture_output=True,
                              env=clean_env(), check=False)
        if done.returncode != 0:
            why = done.stderr.decode("utf-8", "replace").strip().splitlines()[:1] or ["git apply failed"]
            raise UsageError(f"the patch does not apply to the base: {why[0]}", hint="rebase it on the base")


def cases(tree: Path, gate: GateFile) -> list[_Case]:
    """Every corpus case of ``tree``: ``corpus/<file stem>.<function>/<YYYY-MM-DD>/<file>``."""
    if gate.corpus is None or not (tree / gate.corpus).is_dir():
        return []
    props = _properties(tree, gate)
    out = []
    for path in sorted(p for p in (tree / gate.corpus).rglob("*") if p.is_file()):
        rel = path.relative_to(tree / gate.corpus).parts
        where = f"{gate.corpus}/{'/'.join(rel)}"
        if len(rel) != 3 or not _DATED.fullmatch(rel[1]):
            raise MalformedInput("a corpus case must sit at <property>/<YYYY-MM-DD>/<file> (dated folders: a case "
                                 "is never overwritten)", where=printable(where))
        stem, _, function = rel[0].rpartition(".")
        module = props.get(stem)
        if module is None or not function.isidentifier():
            raise MalformedInput(f"the corpus folder {rel[0]!r} names no scoring property ('<file stem>.<function>' "
                                 "of a file the scoring_properties globs name)", where=printable(where))
        out.append(_Case(rel[0], str(module), function, "/".join(rel[1:]), str(path)))
    return out


def _properties(tree: Path, gate: GateFile) -> dict[str, Path]:
    from ..isolation._contract import glob_regex

    found: dict[str, Path] = {}
    for path in sorted(tree.rglob("*.py")):
        rel = path.relative_to(tree).as_posix()
        if any(glob_regex(g).match(rel) for g in gate.classes.scoring_properties):
            if path.stem in found:
                raise MalformedInput(f"two scoring properties share the file stem {path.stem!r} "
                                     f"({found[path.stem].relative_to(tree)} and {rel}): the corpus cannot name one",
                                     where=rel)
            found[path.stem] = path
    return found


def _env(gate: GateFile, work: Path, witness: Path) -> dict[str, str]:
    home = work / "home"
    path = f"{Path(sys.executable).parent}:{base_env(home)['PATH']}"
    return {**base_env(home), "PATH": path, "PYTEST_ADDOPTS": "", "PYTHONHASHSEED": str(gate.invocation.seed),
            "TRI_AGENT_WITNESS": str(witness), "PYTHONPATH": str(work / "plugin"), "TMPDIR": str(home),
            "HYPOTHESIS_STORAGE_DIRECTORY": str(home / ".hypothesis")}


def _argv(gate: GateFile) -> list[str]:
    seed = [f"--hypothesis-seed={gate.invocation.seed}"] if find_spec("hypothesis") else []
    return [sys.executable, "-m", "pytest", "-p", "tri_agent_witness", "-p", "no:cacheprovider", "-p", "no:xdist",
            "-p", "no:tri_agent",  # the spool plugin: this run is the gate's, not the repository's own
            *seed, *gate.invocation.pytest_args]


def run_side(tree: Path, gate: GateFile, work: Path, timeout: float) -> tuple[Side, list[str]]:
    """The pinned suite and the corpus, in the jail, on one tree."""
    (work / "plugin").mkdir(parents=True)
    (work / "plugin" / "tri_agent_witness.py").write_bytes((_HERE / "_witness.py").read_bytes())
    (work / "home").mkdir()
    (work / "out").mkdir()
    witness = work / "out" / f"{secrets.token_hex(8)}.jsonl"
    jail = Jail(readable=(tree, work / "plugin"), writable=(work / "home", work / "out"))
    done, layers = jail.run(_argv(gate), cwd=tree, env=_env(gate, work, witness), timeout=timeout,
                            file_cap=_FILE_CAP)
    if done.timed_out:
        raise InfrastructureFailure(f"the pinned suite ran past {timeout:.0f} s", hint="raise --timeout")
    tests, finished, forged = read_witness(_read(witness))
    cases_, replay_forged = _replay(tree, gate, work, timeout)
    return Side(tests=tests, exit_status=-1 if done.exit_code is None else done.exit_code, finished=finished,
                forged=forged or replay_forged, cases=cases_), layers


_READ_CAP = 32 << 20  # a record file larger than this was not written by the gate's plugin alone
_FILE_CAP = 256 << 20  # RLIMIT_FSIZE of every run: no file the run writes grows past it


def _read(path: Path) -> str:
    if not path.is_file() or path.is_symlink():
        return ""
    with path.open("rb") as f:
        return f.read(_READ_CAP).decode("utf-8", "replace")


def records(text: str) -> tuple[list[dict[str, object]], bool, bool]:
    """The numbered records of a file the gate's plugin or replay wrote: (records, finished, forged). A torn last
    line is a run cut short; a gap, a repeat, a line that is no record, or anything after the end is a file
    someone else wrote to."""
    lines = text.splitlines()
    out: list[dict[str, object]] = []
    for i, line in enumerate(lines):
        try:
            record = json.loads(line)
        except ValueError:
            if i == len(lines) - 1:
                break  # torn: the process died mid-write
            return out, False, True
        if not isinstance(record, dict) or record.get("n") != len(out) or (out and "finished" in out[-1]):
            return out, False, True
        out.append(record)
    finished = bool(out) and "finished" in out[-1]
    return out, finished, finished and out[-1].get("records") != len(out) - 1


def read_witness(text: str) -> tuple[list[TestOutcome], bool, bool]:
    """Each collected test's outcome from the plugin's records, whether the run finished, whether it was forged
    (a record the plugin would never write twice, written twice)."""
    found, finished, forged = records(text)
    collected: list[str] = []
    phases: dict[str, dict[str, tuple[str, bool]]] = {}
    for record in found:
        ids = record.get("collected")
        if isinstance(ids, list):
            forged = forged or bool(collected)
            collected += [str(x) for x in ids]
        elif "id" in record:
            seen = phases.setdefault(str(record["id"]), {})
            forged = forged or str(record.get("when")) in seen
            seen[str(record.get("when"))] = (str(record.get("outcome")), bool(record.get("xfail")))
    tests = [TestOutcome(node_id=n, outcome=_outcome(phases.get(n, {}))) for n in dict.fromkeys(collected)]
    return tests, finished, forged


def _outcome(phases: dict[str, tuple[str, bool]]) -> Outcome:
    if set(phases) != {"setup", "call", "teardown"}:
        skipped = phases.get("setup", ("", False))[0] == "skipped"
        return "skipped" if skipped else "error" if phases else "missing"
    if any(x for _, x in phases.values()):
        return "xfailed"
    outcomes = [o for o, _ in phases.values()]
    if all(o == "passed" for o in outcomes):
        return "passed"
    return "skipped" if "skipped" in outcomes else "failed" if phases["call"][0] == "failed" else "error"


def _replay(tree: Path, gate: GateFile, work: Path, timeout: float) -> tuple[list[CaseOutcome], bool]:
    plan = cases(tree, gate)
    if not plan:
        return [], False
    runner, plan_file, out = work / "plugin" / "replay.py", work / "plugin" / "plan.json", work / "out" / "cases.jsonl"
    runner.write_bytes((_HERE / "_replay.py").read_bytes())
    plan_file.write_text(json.dumps([[c.prop, c.module, c.function, c.case, c.path] for c in plan]))
    jail = Jail(readable=(tree, work / "plugin"), writable=(work / "home", work / "out"))
    env = {k: v for k, v in _env(gate, work, out).items() if k != "TRI_AGENT_WITNESS"} | {"PYTHONPATH": ""}
    done, _ = jail.run([sys.executable, str(runner), str(tree), str(plan_file), str(out)], cwd=tree, env=env,
                       timeout=timeout, file_cap=_FILE_CAP)
    if done.timed_out:
        raise InfrastructureFailure(f"the corpus replay ran past {timeout:.0f} s", hint="raise --timeout")
    return _ledger(plan, _read(out))


def _ledger(plan: list[_Case], text: str) -> tuple[list[CaseOutcome], bool]:
    """One row per planned case: the runner's, when it wrote one for that case's bytes, else a failure; and
    whether the file was forged (a case's row twice, or the runner's numbering broken)."""
    found, _finished, forged = records(text)
    rows: dict[tuple[str, str], CaseOutcome] = {}
    for record in found:
        if "finished" in record:
            continue
        try:
            row = CaseOutcome.model_validate({k: v for k, v in record.items() if k != "n"})
        except ValueError:
            forged = True
            continue
        forged = forged or (row.property, row.case) in rows
        rows[(row.property, row.case)] = row
    out = []
    for c in plan:
        sha = hashlib.sha256(Path(c.path).read_bytes()).hexdigest()
        got = rows.get((c.prop, c.case))
        out.append(got if got is not None and got.input_sha256 == sha and not forged else
                   CaseOutcome(property=c.prop, case=c.case, input_sha256=sha, passed=False,
                               error="the outcome file was written by another hand" if forged else
                               "no outcome recorded (the replay was cut short)"))
    return out, forged


def compare(base: Side, head: Side, layers: list[str]) -> Verdict:
    """What the patch did: every failure at the head, and the changes from the base."""
    failures = [f"{t.node_id}: {t.outcome}" for t in head.tests if t.outcome != "passed"]
    was = {t.node_id: t.outcome for t in base.tests}
    now = {t.node_id for t in head.tests}
    failures += [f"{n}: collected at the base, not with the patch" for n in was if n not in now]
    if head.forged:
        failures.append("the run's outcome files were written by another hand than the gate's: the run is void")
    if not head.finished:
        failures.append("the pinned run was cut short (no end of session recorded)")
    elif head.exit_status != 0:
        failures.append(f"pytest exited {head.exit_status}")
    if not head.tests:
        failures.append("the pinned run collected no test")
    failures += [f"{c.property}/{c.case}: {c.error}" for c in head.cases if not c.passed]
    before = {(c.property, c.case): c.passed for c in base.cases}
    outcome = {t.node_id: t.outcome for t in head.tests}
    regressions = [n for n, o in was.items() if o == "passed" and outcome.get(n) != "passed"]
    regressions += [f"{c.property}/{c.case}" for c in head.cases if before.get((c.property, c.case)) and not c.passed]
    improvements = [n for n, o in outcome.items() if o == "passed" and was.get(n, "passed") != "passed"]
    improvements += [f"{c.property}/{c.case}" for c in head.cases
                     if before.get((c.property, c.case)) is False and c.passed]
    if not layers:
        failures.append("the runs had no OS sandbox (--allow-unsandboxed): such a verdict never passes")
    return Verdict(layers=layers, base=base, head=head, failures=failures, regressions=sorted(regressions),
                   improvements=sorted(improvements))


_BASES: dict[tuple[str, str, str, float], tuple[Side, list[str]]] = {}  # one run per base in a process


def verdict(repo: Path, base: str, patch: bytes, gate: GateFile, timeout: float = 600.0) -> Verdict:
    """Run both sides and compare them. The base side of a commit under one gate is run once per process (a
    batch of patches on one base, as the tampering benchmark judges, pays for it once)."""
    with tempfile.TemporaryDirectory() as tmp:  # no telling name: code under test may read its own paths
        root = Path(tmp)
        key = (str(repo.resolve()), base, gate.model_dump_json(), timeout)
        if key not in _BASES:
            materialize(repo, base, root / "base" / "tree")
            _BASES[key] = run_side(root / "base" / "tree", gate, root / "base" / "work", timeout)
        tree = root / "head" / "tree"
        materialize(repo, base, tree)
        apply_patch(patch, tree)
        head, layers = run_side(tree, gate, root / "head" / "work", timeout)
        return compare(_BASES[key][0], head, layers)


def diff(repo: Path, base: str, head: str) -> bytes:
    """The patch from ``base`` to ``head``, binary files included, renames as delete and add."""
    return git_out(repo, "diff", "--binary", "--no-renames", "--no-ext-diff", "--no-textconv", base, head)
