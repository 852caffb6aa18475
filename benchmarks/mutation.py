"""The project's own mutation score: who tests the tests.

    python3 dev.py mutation [MODULE ...]     # e.g. scoring._tables evidence._seal; no argument: every module

For each module (dotted, below ``tri_agent``) listed in ``pyproject.toml`` under
``[tool.tri-agent.mutation.modules]`` with the test files that exercise it, this copies the working tree
(git-tracked and untracked-but-not-ignored files) to a scratch folder, tells mutmut to mutate only that
module and to judge its mutants with only those tests (``[tool.mutmut]`` holds the rest: forkserver isolation,
because polars starts threads at import and plain fork deadlocks), runs ``mutmut run`` and reads
``mutmut results``. Hypothesis runs under the ``mutation`` profile of ``tests/conftest.py`` there
(derandomized, no shared example database, no deadline), so a mutant's verdict does not depend on luck or load.
It prints one line per module, exactly ``MODULE: K killed of N (R%)``, and updates that
module's row in ``benchmarks/MUTATION.md``.

Counting: killed, timeout and crash (segfault) are killed; survived, "no tests" and suspicious are not.
A mutant listed in ``benchmarks/mutation-equivalents.toml`` (with the changed line and the reason it cannot be
told apart, or cannot be reached through mutmut's trampoline) is left out of N, but only while it still
survives and its change is still the one recorded: a stale entry is reported, never silently applied.
One rule needs no entry: a codec name whose case alone changed ("utf-8" to "UTF-8") is the same codec.
Survivors' diffs land in ``benchmarks/.data/mutation/<module>.txt`` for the next round of test writing.
"""

from __future__ import annotations

import codecs
import datetime
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REPORT = ROOT / "benchmarks" / "MUTATION.md"
EQUIVALENTS = ROOT / "benchmarks" / "mutation-equivalents.toml"
SURVIVORS = ROOT / "benchmarks" / ".data" / "mutation"
KILLED = {"killed", "timeout", "segfault", "caught by type check"}
NOT_KILLED = {"survived", "no tests", "suspicious"}
LEFT_OUT = {"skipped"}  # `# pragma: no mutate` lines: mutmut never made them


@dataclass
class Score:
    module: str
    killed: int = 0
    judged: int = 0
    excluded: int = 0
    survivors: list[str] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return 100.0 * self.killed / self.judged if self.judged else 100.0

    def line(self) -> str:
        return f"{self.module}: {self.killed} killed of {self.judged} ({self.rate:.1f}%)"


def main(argv: list[str]) -> int:
    modules = _modules()
    chosen = argv or sorted(modules)
    unknown = [m for m in chosen if m not in modules]
    if unknown:
        print(f"mutation: unknown module {unknown[0]!r}; listed in pyproject.toml [tool.tri-agent.mutation.modules]: "
              f"{', '.join(sorted(modules))}", file=sys.stderr)
        return 2
    equivalents = _equivalents()
    failed = 0
    for module in chosen:
        score = _run(module, modules[module], equivalents.get(module, {}))
        if score is None:
            failed = 1
            continue
        print(score.line(), flush=True)
        _record(score)
    return failed


def _modules() -> dict[str, list[str]]:
    table = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["tri-agent"]["mutation"]["modules"]
    return {name: list(tests) for name, tests in table.items()}


def _equivalents() -> dict[str, dict[str, tuple[str, str]]]:
    """module -> mutant name -> (the changed line as mutmut shows it, the reason)."""
    if not EQUIVALENTS.exists():
        return {}
    found: dict[str, dict[str, tuple[str, str]]] = {}
    for entry in tomllib.loads(EQUIVALENTS.read_text()).get("equivalent", []):
        found.setdefault(entry["module"], {})[entry["mutant"]] = (entry["change"], entry["reason"])
    return found


def _run(module: str, tests: list[str], equivalents: dict[str, tuple[str, str]]) -> Score | None:
    scratch = Path(tempfile.mkdtemp(prefix="tri-agent-mutation-"))
    try:
        _copy_tree(scratch)
        _configure(scratch, module, tests)
        log = SURVIVORS / f"{module}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("w") as out:
            done = subprocess.run(_mutmut("run", "--max-children", str(os.cpu_count() or 2)), cwd=scratch,
                                  stdout=out, stderr=subprocess.STDOUT, env=_env())
        if done.returncode != 0:
            print(f"mutation: mutmut run failed for {module} (exit {done.returncode}); see {log}", file=sys.stderr)
            return None
        return _score(scratch, module, equivalents)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _copy_tree(scratch: Path) -> None:
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file() and not source.is_symlink():
            (scratch / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, scratch / name)


def _configure(scratch: Path, module: str, tests: list[str]) -> None:
    """Point the copy's ``[tool.mutmut]`` at one module and its tests; everything else the tests read is copied."""
    path = "tri_agent/" + module.replace(".", "/") + ".py"
    also = sorted(p.name for p in scratch.iterdir() if p.name not in {"tri_agent", "tests", "pyproject.toml"})
    pyproject = scratch / "pyproject.toml"
    text = pyproject.read_text()
    extra = (f"only_mutate = [{path!r}]\npytest_add_cli_args_test_selection = {tests!r}\n"
             f"also_copy = {also!r}\n")
    if "\n[tool.mutmut]\n" not in text:
        raise SystemExit("mutation: pyproject.toml has no [tool.mutmut] table")
    pyproject.write_text(text.replace("\n[tool.mutmut]\n", "\n[tool.mutmut]\n" + extra, 1))


def _score(scratch: Path, module: str, equivalents: dict[str, tuple[str, str]]) -> Score:
    listed = subprocess.run(_mutmut("results", "--all", "true"), cwd=scratch, capture_output=True, text=True,
                            env=_env(), check=True).stdout
    score = Score(module)
    diffs: list[str] = []
    seen_equivalent: set[str] = set()
    outcomes = re.findall(r"^\s+(\S+): (.+)$", listed, flags=re.MULTILINE)
    unknown = next(((n, s) for n, s in outcomes if s not in KILLED | NOT_KILLED | LEFT_OUT), None)
    if unknown is not None:
        raise SystemExit(f"mutation: {module}: mutant {unknown[0]} ended {unknown[1]!r}; rerun, or report a mutmut bug")
    score.excluded = sum(s in LEFT_OUT for _, s in outcomes)
    score.killed = sum(s in KILLED for _, s in outcomes)
    score.judged = score.killed
    alive = [(n, s) for n, s in outcomes if s in NOT_KILLED]
    with ThreadPoolExecutor(max_workers=4) as pool:  # one `mutmut show` is a second of start-up, mostly waiting
        shown = list(pool.map(lambda ns: _show(scratch, ns[0]), alive))
    for (name, status), diff in zip(alive, shown, strict=True):
        if _same_codec(diff) or (name in equivalents and equivalents[name][0] in diff):
            score.excluded += 1
            seen_equivalent.add(name)
            continue
        score.judged += 1
        score.survivors.append(name)
        diffs.append(f"## {name}: {status}\n{diff}\n")
    for stale in sorted(set(equivalents) - seen_equivalent):
        print(f"mutation: {module}: equivalent entry {stale} no longer matches a surviving mutant with the recorded "
              f"change; update or drop it in {EQUIVALENTS.relative_to(ROOT)}", file=sys.stderr)
    (SURVIVORS / f"{module}.txt").write_text("".join(diffs) or "no survivors\n")
    return score


def _same_codec(diff: str) -> bool:
    """The one rule applied without an entry: a codec name whose case alone changed ("utf-8" -> "UTF-8")
    names the same codec, so no input can tell the mutant apart."""
    minus = [line[1:] for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    plus = [line[1:] for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    if len(minus) != 1 or len(plus) != 1 or minus == plus or minus[0].lower() != plus[0].lower():
        return False
    changed = [(a, b) for a, b in zip(re.findall(r'"([^"]*)"', minus[0]), re.findall(r'"([^"]*)"', plus[0]),
                                      strict=False) if a != b]
    try:
        return bool(changed) and all(codecs.lookup(a).name == codecs.lookup(b).name for a, b in changed)
    except LookupError:
        return False


def _show(scratch: Path, name: str) -> str:
    return subprocess.run(_mutmut("show", name), cwd=scratch, capture_output=True, text=True, env=_env()).stdout


def _mutmut(*args: str) -> list[str]:
    return [sys.executable, "-m", "mutmut", *args]


def _env() -> dict[str, str]:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", TRI_AGENT_HYPOTHESIS_PROFILE="mutation")
    env.pop("PYTHONPATH", None)
    return env


def _record(score: Score) -> None:
    rows = _rows()
    rows[score.module] = (f"| `{score.module}` | {score.killed} | {score.judged} | {score.rate:.1f}% | "
                          f"{score.excluded} | {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC |")
    head = ("# The project's own mutation score\n\n"
            "Written by `python3 dev.py mutation [MODULE ...]` (see `benchmarks/mutation.py`): mutmut with\n"
            "forkserver isolation, each module judged by the test files listed for it in `pyproject.toml`\n"
            "(`[tool.tri-agent.mutation.modules]`). Timeouts count as killed (a mutant's tests past 10x the CPU\n"
            "time of the clean run's; 30x before 2026-12-07); *left out* are mutants listed with\n"
            "a reason in `benchmarks/mutation-equivalents.toml` and lines marked `# pragma: no mutate`. A row's\n"
            "date is when that module was last measured: a test added later is not in it.\n\n"
            "| module | killed | of N | rate | left out | date |\n|---|---:|---:|---:|---:|---|\n")
    REPORT.write_text(head + "\n".join(rows[m] for m in sorted(rows)) + "\n")


def _rows() -> dict[str, str]:
    if not REPORT.exists():
        return {}
    return {m.group(1): m.group(0) for m in re.finditer(r"^\| `([\w.]+)` \|.*$", REPORT.read_text(), re.MULTILINE)}


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
