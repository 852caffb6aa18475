"""Mutation gate benchmark: its wall time against the ideal, and the judge's share of the toy acceptance.

    python benchmarks/bench_mutation.py [--repeats 3]

The ideal is the work the gate cannot avoid, spread over the cores: for every mutant killed by a case, one
run of that case; for one killed by the whole exam (drift, relations) or one that survives, every case; for
one proven equivalent, its hunted inputs on the fork server; the original's fork-server runs over the
exam's cases and the hunted inputs once. Each unit is priced by a measurement made in the same run (the
median real case run through the gateway, the median fork-server run per input), and the sum divided by
the cores. The gate runs as an acceptance round does: on the fixed toy, from a twice-run of the round
(coverage included), one instance per bug class and then every instance. The judge's share comes from
``TIMINGS.json`` of whole toy acceptances (the project's own acceptance.yaml: 20 hunt seeds).
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
sys.path.insert(0, str(ROOT))

from tri_agent.exam._build import build_exam  # noqa: E402
from tri_agent.exam._formats import read_cases  # noqa: E402
from tri_agent.mutation._gate import run_gate  # noqa: E402
from tri_agent.mutation._rotation import Selection  # noqa: E402
from tri_agent.mutation._verdict import MutationSummary  # noqa: E402
from tri_agent.targets._batch import run_batch  # noqa: E402
from tri_agent.targets._gateway import Gateway, run_exam  # noqa: E402
from tri_agent.targets._target import Target  # noqa: E402

CORES = max(1, min(2, len(os.sched_getaffinity(0))))
GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@invalid"]


def _toy(dest: Path) -> Path:
    shutil.copytree(TOY, dest, ignore=shutil.ignore_patterns("builds", "runs", "mutation", "__pycache__"))
    subprocess.run(["git", "apply", "-p1", str(dest / "fix.patch")], cwd=dest / "target", check=True)
    return dest


def _unit_costs(toy: Path, build: Path, scratch: Path) -> tuple[float, float]:
    """Median seconds of one real case run (gateway) and of one fork-server run, on the exam's cases."""
    target = Target.load(toy / "target.yaml")
    visible = build / "visible"
    cases = read_cases(visible / "cases.jsonl")
    gateway = Gateway(target, visible, scratch / "g")
    real = []
    for case in cases * 2:
        start = time.perf_counter()
        gateway.run_case(case)
        real.append(time.perf_counter() - start)
    start = time.perf_counter()
    run_batch(target, gateway.built, [(visible, c) for c in cases * 8], scratch / "b")
    fork = (time.perf_counter() - start) / (len(cases) * 8)
    return statistics.median(real), fork


def _ideal(summary: MutationSummary, cases: int, real: float, fork: float) -> float:
    work = 0.0
    hunted_original: set[int] = set()
    for m in summary.mutants:
        whole = m.killed_by == ["whole-exam"]
        if m.status in ("Killed", "Timeout") and not whole:
            work += real
        elif m.status in ("Killed", "Survived", "NoCoverage"):
            work += cases * real
        elif m.status == "Ignored" and m.hunt is not None:
            work += (cases + m.hunt.inputs) * fork  # the mutant over the exam's cases and every hunted input
            hunted_original.add(m.hunt.inputs)
    work += (cases + max(hunted_original, default=0)) * fork  # the original, once
    return work / CORES


def _gate(toy: Path, build: Path, run: Path, out: Path, per_class: int | None) -> tuple[float, MutationSummary]:
    selection = Selection(per_class=per_class) if per_class else None
    start = time.perf_counter()
    gate = run_gate(toy / "target.yaml", build, toy / "exam" / "mutations.yaml", out, exam_dir=toy / "exam",
                    selection=selection, clean_run=run, jobs=CORES)
    return time.perf_counter() - start, gate.summary


def _acceptance_share(work: Path) -> tuple[float, float]:
    project = work / "toy"
    shutil.copytree(TOY, project, ignore=shutil.ignore_patterns("builds", "runs", "evidence", "SCOREBOARD.md"))
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "baseline"]):
        subprocess.run([*GIT, *args], cwd=project, check=True, capture_output=True)
    env = {**os.environ, "XDG_STATE_HOME": str(work / "state"), "TRI_AGENT_SEED_SECRET": "bench"}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "tri_agent", "accept", str(project)], capture_output=True, env=env)
    wall = time.perf_counter() - start
    [state] = (work / "state" / "tri-agent" / "runs").iterdir()
    timings = json.loads((state / "TIMINGS.json").read_text())
    return wall, timings["judge"] / sum(timings.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rows = {}
    with tempfile.TemporaryDirectory(prefix="bench-mutation-") as tmp:
        scratch = Path(tmp)
        toy = _toy(scratch / "toy")
        build = scratch / "build"
        build_exam(toy / "exam", "1", build)
        run = scratch / "run"
        run_exam(build, toy / "target.yaml", run, twice=True)
        cases = len(read_cases(build / "visible" / "cases.jsonl"))
        real, fork = _unit_costs(toy, build, scratch)
        print(f"one real case run {real * 1000:.0f} ms, one fork-server run {fork * 1000:.1f} ms, {CORES} cores")
        for label, per_class in (("one instance per class", 1), ("every instance", None)):
            walls, ideals, shown = [], [], ""
            for k in range(args.repeats):
                wall, summary = _gate(toy, build, run, scratch / f"m-{per_class}-{k}", per_class)
                walls.append(wall)
                ideals.append(_ideal(summary, cases, real, fork))
                shown = f"{len(summary.mutants)} mutants, {summary.figure()}"
            rows[label] = (statistics.median(walls), statistics.median(ideals), shown, walls)
            print(f"{label}: wall {rows[label][0]:.1f} s, ideal {rows[label][1]:.1f} s, "
                  f"ratio {rows[label][0] / rows[label][1]:.2f}x ({shown}; walls {[round(w, 1) for w in walls]})")
        shares = [_acceptance_share(scratch / f"acc-{k}") for k in range(args.repeats)]
        wall = statistics.median(w for w, _ in shares)
        share = statistics.median(s for _, s in shares)
        print(f"toy acceptance: wall {wall:.1f} s, judge's share {share:.0%} "
              f"(runs: {[(round(w, 1), f'{s:.0%}') for w, s in shares]})")


if __name__ == "__main__":
    main()
