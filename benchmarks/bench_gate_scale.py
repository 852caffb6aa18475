"""The patch gate at scale: map and policy on a repository of 1,000 test files and 10,000 corpus cases.

    python benchmarks/bench_gate_scale.py [--repeats 5] [--tests 1000] [--cases 10000]

The repository is generated once: 600 diagnostic test files, 300 scoring properties, 100 held-out files, 200
code modules, 10,000 corpus cases in dated folders, JSON fixtures under a schema lock, a ledger. The patch changes
20 code modules and adds 5 visible tests. Each command runs in a fresh process (interpreter start and imports
included), interleaved, and the median of ``--repeats`` runs is reported beside the floors: ``git diff --stat``
over the same patch, and ``pytest --collect-only`` over the same test tree (what any CI step that looks at the
suite pays before running a test).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GATE = """schema_version: 1
classes:
  scoring_properties: ["tests/scoring/properties/**/*.py"]
  scoring_fixtures: ["tests/scoring/fixtures/**"]
  diagnostic: ["tests/diagnostic/**/*.py"]
  ledger: tests/scoring/flake_ledger.json
held_out: ["tests/held_out/**"]
fixtures: {schema: tests/scoring/fixtures.schema.json, lock: tests/scoring/fixtures.lock}
agents: ["*@agents.example.com"]
invocation: {pytest: ["-q", "tests/scoring/properties", "tests/held_out"], seed: 3}
corpus: tests/scoring/corpus
"""
SCHEMA = '{"type": "object", "required": ["value"]}\n'


def _test_file(k: int, where: str) -> str:
    return (f'"""{where} tests, file {k}."""\n\nfrom app.mod_{k % 200} import value_{k % 200}\n\n\n' +
            "".join(f"def test_{where}_{k}_{i}() -> None:\n    assert value_{k % 200}({i}) == {i} + {k % 200}\n\n\n"
                    for i in range(8)))


def make(root: Path, tests: int, cases: int) -> None:
    files: dict[str, str] = {"tri-agent-gate.yaml": GATE, "pyproject.toml": '[tool.pytest.ini_options]\n'
                             'pythonpath = ["src"]\n', "tests/scoring/fixtures.schema.json": SCHEMA,
                             "tests/scoring/fixtures.lock": "sha256:" + hashlib.sha256(SCHEMA.encode()).hexdigest(),
                             "tests/scoring/flake_ledger.json": '{"schema_version": 1, "entries": []}\n',
                             "src/app/__init__.py": ""}
    for k in range(200):
        files[f"src/app/mod_{k}.py"] = f'"""Module {k}."""\n\n\ndef value_{k}(x: int) -> int:\n    return x + {k}\n'
    split = {"diagnostic": tests * 6 // 10, "properties": tests * 3 // 10, "held_out": tests // 10}
    for where, count in split.items():
        folder = {"diagnostic": "tests/diagnostic", "properties": "tests/scoring/properties",
                  "held_out": "tests/held_out"}[where]
        for k in range(count):
            files[f"{folder}/pkg_{k // 50}/test_{where}_{k}.py"] = _test_file(k, where)
    for k in range(50):
        files[f"tests/scoring/fixtures/f_{k}.json"] = json.dumps({"value": k}) + "\n"
    for n in range(cases):
        prop = f"test_properties_{n % split['properties']}.test_properties_{n % split['properties']}_0"
        files[f"tests/scoring/corpus/{prop}/2026-11-{1 + n % 28:02d}/{n}.json"] = json.dumps({"x": n}) + "\n"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    _git(root, "init", "-q")
    _commit(root, "base")
    _git(root, "tag", "base")
    for k in range(20):
        path = root / f"src/app/mod_{k}.py"
        path.write_text(path.read_text().replace("return x +", "return 0 + x +"))
    for k in range(5):
        (root / f"tests/diagnostic/new/test_new_{k}.py").parent.mkdir(parents=True, exist_ok=True)
        (root / f"tests/diagnostic/new/test_new_{k}.py").write_text(_test_file(k, "new"))
    _commit(root, "patch", "agent-1@agents.example.com")


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "init.defaultBranch=main", *args], cwd=root, check=True, capture_output=True)


def _commit(root: Path, message: str, email: str = "dev@people.example.com") -> None:
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=someone", "-c", f"user.email={email}", "-c", "commit.gpgsign=false", "commit", "-qm",
         message)


def _timed(argv: list[str], cwd: Path, ok: set[int]) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, check=False,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    seconds = time.perf_counter() - started
    if done.returncode not in ok:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.decode()[-400:]}")
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--tests", type=int, default=1000)
    parser.add_argument("--cases", type=int, default=10_000)
    args = parser.parse_args()
    cli = [sys.executable, "-m", "tri_agent"]
    commands = {
        "tri-agent gate map --rev HEAD": ([*cli, "gate", "map", "--rev", "HEAD"], {0}),
        "tri-agent gate check base HEAD --policy-only": ([*cli, "gate", "check", "base", "HEAD", "--policy-only"],
                                                          {9}),
        "floor: git diff --stat base HEAD": (["git", "diff", "--stat", "base", "HEAD"], {0}),
        "floor: pytest --collect-only -q tests": ([sys.executable, "-m", "pytest", "--collect-only", "-q",
                                                   "-p", "no:cacheprovider", "tests"], {0}),
    }
    with tempfile.TemporaryDirectory(prefix="gate-scale-") as tmp:
        root = Path(tmp)
        make(root, args.tests, args.cases)
        files = int(subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True,
                                   check=True).stdout.count("\n"))
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.repeats):
            for name, (argv, ok) in commands.items():
                times[name].append(_timed(argv, root, ok))
    print(f"repository: {files} tracked files ({args.tests} test files, {args.cases} corpus cases); "
          f"median of {args.repeats} fresh-process runs\n")
    print("| command | median s | min s | max s |\n|---|---|---|---|")
    for name, seconds in times.items():
        print(f"| {name} | {statistics.median(seconds):.3f} | {min(seconds):.3f} | {max(seconds):.3f} |")
    policy = statistics.median(times["tri-agent gate check base HEAD --policy-only"])
    collect = statistics.median(times["floor: pytest --collect-only -q tests"])
    print(f"\npolicy / pytest --collect-only = {policy / collect:.2f}x; the target: policy under 5 s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
