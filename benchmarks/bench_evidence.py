"""Test evidence benchmark: harvesting *passed* against re-running the suite.

    python benchmarks/bench_evidence.py [--files 10000] [--tests 5000] [--repeats 5]

Builds a repository of ``--files`` files (one commit), a suite of ``--tests`` trivial tests, a pytest run's
spool entry and a JUnit XML report of the same tests. Then it times, medians of ``--repeats``:

- the harvest: the working tree's hash plus reading the spool entry and the JUnit report into the signal;
- ``git status --porcelain`` on the same tree (the cheapest look at a tree git offers);
- a re-run of the same suite (``pytest -q -p no:tri_agent``), the alternative to harvesting.

The headline is the re-run's time divided by the harvest's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tri_agent.testsignals._passed import harvest
from tri_agent.testsignals._tree import working_tree

GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@invalid", "-c", "commit.gpgsign=false"]


def _repo(root: Path, files: int, tests: int) -> list[str]:
    per = 50
    ids = []
    for n in range(tests // per):
        body = "".join(f"def test_{k}():\n    assert {k} == {k}\n\n\n" for k in range(per))
        (root / "tests").mkdir(exist_ok=True)
        (root / "tests" / f"test_m{n}.py").write_text(body)
        ids += [f"tests/test_m{n}.py::test_{k}" for k in range(per)]
    for n in range(files - tests // per):
        folder = root / "src" / f"pkg{n // 500}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod{n}.py").write_text(f"VALUE = {n}\n" * 20)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "bench"]):
        subprocess.run([*GIT, *args], cwd=root, check=True, capture_output=True)
    return ids


def _spool(root: Path, ids: list[str]) -> Path:
    folder = root / ".git" / "tri-agent" / "spool"
    folder.mkdir(parents=True)
    tree = working_tree(root)
    entry = {"schema_version": 1, "tree_sha256": tree.sha256, "tree_sha256_end": tree.sha256, "files": tree.files,
             "rootdir": ".", "invocation": ["-q"], "started": time.time(), "finished": time.time(), "collected": ids,
             "outcomes": dict.fromkeys(ids, "passed"), "collect_errors": [], "exit_status": 0, "plugin": "bench"}
    (folder / "0000000000001-1-bench.json").write_text(json.dumps(entry))
    return folder


def _junit(root: Path, ids: list[str]) -> Path:
    cases = "".join(f'<testcase classname="{i.split("::")[0][:-3].replace("/", ".")}" name="{i.split("::")[1]}"/>'
                    for i in ids)
    path = root.parent / "report.xml"
    path.write_text(f'<?xml version="1.0"?><testsuites><testsuite tests="{len(ids)}">{cases}</testsuite></testsuites>')
    return path


def _timed(fn: object, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--tests", type=int, default=5_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-evidence-") as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        ids = _repo(root, args.files, args.tests)
        spool, report = _spool(root, ids), _junit(root, ids)

        def harvested() -> None:
            tree = working_tree(root)
            found = harvest(tree.sha256, tree.newest, spool, [report], None, [])
            assert found.state == "passed" and found.collected == len(ids)
            assert harvest("other", tree.newest, None, [report], None, []).collected == len(ids)  # the JUnit path

        harvest_s = _timed(harvested, args.repeats)
        status_s = _timed(lambda: subprocess.run(["git", "status", "--porcelain"], cwd=root, check=True,
                                                 capture_output=True), args.repeats)
        rerun_s = _timed(lambda: subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:tri_agent", "-p",
                                                 "no:cacheprovider", "tests"], cwd=root, check=True,
                                                capture_output=True), max(1, args.repeats // 2))
    print(f"{args.files} files, {args.tests} tests; medians of {args.repeats}")
    print(f"  harvest (tree hash + spool entry + JUnit report): {harvest_s:.3f} s")
    print(f"  git status --porcelain:                          {status_s:.3f} s")
    print(f"  re-run of the suite (pytest -q):                 {rerun_s:.3f} s")
    print(f"  re-run / harvest: {rerun_s / harvest_s:.1f}x; harvest / git status: {harvest_s / status_s:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
