"""Acceptance benchmark: the toy-grades hard acceptance end to end, against its floor.

    python benchmarks/bench_accept.py [--repeats 3] [--against REV] [--modes bubblewrap,landlock]

``--against REV`` runs the same acceptance with the code of commit REV (a git worktree of it, imported through
``PYTHONPATH``), alternated run by run with this tree's, so the machine's drift stays out of the ratio.
``--modes`` lists the sandbox layers to measure: ``bubblewrap`` as the machine is, ``landlock`` with bubblewrap
hidden as on a bare machine (``unshare -m`` and a bind mount of /dev/null over it; needs root); either with
``+memory`` puts the run's temporary folder (``TMPDIR``) on the memory file system /dev/shm.

What a user would do instead of ``tri-agent accept`` is run the target on the cases by hand; the honest
floor of any acceptance is therefore the target's own run time, times the runs the protocol needs (every
case twice per round, the baseline twice, every mutant replay). In the same run this measures the median
time of one target invocation on one case (the same ``python3 grades.py`` the gateway runs) and reports
the acceptance's wall time as a multiple of that floor, plus the share of wall time per role (from
``TIMINGS.json`` in the run's state folder, which is kept out of the evidence). Seeds are fixed so every
repeat plays the same rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOY = ROOT / "examples" / "toy-grades"
GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@invalid"]
NOT_CERTIFIED = 9


def _project(dest: Path) -> Path:
    shutil.copytree(TOY, dest, ignore=shutil.ignore_patterns("builds", "runs", "evidence", "out", "SCOREBOARD.md",
                                                             "__pycache__", "TIMINGS.json"))
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "baseline"]):
        subprocess.run([*GIT, *args], cwd=dest, check=True, capture_output=True)
    return dest


def _accept(work: Path, code: Path = ROOT, mode: str = "bubblewrap") -> tuple[float, dict[str, float], int]:
    project = _project(work / "toy")
    env = {**os.environ, "XDG_STATE_HOME": str(work / "state"), "TRI_AGENT_SEED_SECRET": "bench",
           "PYTHONPATH": str(code)}
    argv = [sys.executable, "-m", "tri_agent", "accept", str(project)]
    layer, _, memory = mode.partition("+")
    with tempfile.TemporaryDirectory(prefix="bench-accept-", dir="/dev/shm" if memory else None) as temp:
        start = time.perf_counter()
        done = subprocess.run(_in_mode(argv, layer), capture_output=True, env={**env, "TMPDIR": temp})
        wall = time.perf_counter() - start
    if done.returncode != NOT_CERTIFIED:  # a scripted run passes, and never certifies
        raise SystemExit(f"accept exited {done.returncode}: {done.stderr.decode()[-500:]}")
    [state] = (work / "state" / "tri-agent" / "runs").iterdir()
    return wall, json.loads((state / "TIMINGS.json").read_text()), _target_runs(state)


def _in_mode(argv: list[str], mode: str) -> list[str]:
    """``argv`` as it runs under ``mode``: as is, or with bubblewrap hidden (a bare machine's Landlock layer)."""
    if mode == "bubblewrap":
        return argv
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return argv
    hide = f"mount --bind /dev/null {bwrap} && exec \"$@\""
    return ["unshare", "-m", "--propagation", "private", "sh", "-c", hide, "sh", *argv]


def _worktree(rev: str, dest: Path) -> Path:
    subprocess.run(["git", "worktree", "add", "--detach", "-q", str(dest), rev], cwd=ROOT, check=True)
    return dest


def _target_runs(evidence: Path) -> int:
    """Target invocations the trail accounts for: every case twice per round and for the baseline, and every
    mutant replay (its cases run, plus the clean run and the witness pair per menu mutant)."""
    runs = 0
    for record in sorted((evidence / "records").iterdir()):
        provenance = record / "provenance.jsonl"
        if provenance.exists():
            runs += 2 * len(provenance.read_text().splitlines())
        summary = record / "mutation-summary.json"
        if summary.exists():
            mutants = json.loads(summary.read_text())["mutants"]
            runs += sum(m["cases_run"] for m in mutants) + 2 * len(mutants)
            runs += len(provenance.read_text().splitlines())  # the clean run before any mutant
    return runs


def _one_target_run(work: Path, repeats: int = 20) -> float:
    sheet = work / "scores.csv"
    sheet.write_text("student,group,score\ns1,A,80.00\ns2,A,80.01\ns3, B ,70\n")
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(["python3", str(TOY / "target" / "grades.py"), str(sheet), str(work / "out.csv")], check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--against", help="a commit to measure beside this tree, alternated run by run")
    parser.add_argument("--modes", default="bubblewrap",
                        help="comma-separated: bubblewrap, landlock, each optionally with +memory")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-accept-") as tmp:
        single = _one_target_run(Path(tmp))
        codes = {"this tree": ROOT}
        if args.against:
            codes = {f"{args.against}": _worktree(args.against, Path(tmp) / "against"), **codes}
        try:
            for mode in args.modes.split(","):
                _measure(Path(tmp) / mode, codes, mode, args.repeats, single)
        finally:
            if args.against:
                subprocess.run(["git", "worktree", "remove", "--force", str(codes[args.against])], cwd=ROOT)
    return 0


def _measure(work: Path, codes: dict[str, Path], mode: str, repeats: int, single: float) -> None:
    walls: dict[str, list[float]] = {name: [] for name in codes}
    shares: dict[str, list[dict[str, float]]] = {name: [] for name in codes}
    runs = 0
    for i in range(repeats):
        for name, code in codes.items():  # alternated: each pair of runs sees the same machine
            wall, timings, runs = _accept(work / f"{name.replace(' ', '-')}-{i}", code, mode)
            walls[name].append(wall)
            total = sum(timings.values())
            shares[name].append({role: secs / total for role, secs in timings.items()})
    medians = {name: statistics.median(w) for name, w in walls.items()}
    for name in codes:
        each = ", ".join(f"{w:.1f}" for w in walls[name])
        print(f"[{mode}] {name}: toy-grades acceptance, median wall {medians[name]:.1f} s over {repeats} ({each})")
        for role in sorted(shares[name][0]):
            print(f"  {role}: {statistics.median(s[role] for s in shares[name]):.0%} of wall time (median)")
    if len(codes) == 2:
        before, after = medians.values()
        print(f"[{mode}] ratio: {before / after:.2f}x faster than {next(iter(codes))}")
    floor = runs * single
    print(f"[{mode}] target invocations in the trail: {runs}; one invocation: {single * 1000:.0f} ms (median of 20)")
    print(f"[{mode}] floor (invocations x one invocation): {floor:.1f} s; acceptance / floor = "
          f"{medians['this tree'] / floor:.2f}x")


if __name__ == "__main__":
    raise SystemExit(main())
