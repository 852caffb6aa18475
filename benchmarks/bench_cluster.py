"""The engine's overhead: an exam of many cases run through the gateway on the local pool and on a Dask
LocalCluster of worker processes, on this machine, interleaved; and what the same exam would take on 50 workers.

    python benchmarks/bench_cluster.py [--cases 2000] [--repeats 1] [--workers 2]

The exam is the toy-grades example's (its target, its first case's inputs) repeated under ``--cases`` case ids, so
every case does the same work (one jailed Python process reading a CSV and writing a summary). Both sides run the
same cases with the same concurrency (the local pool's two threads; two worker processes of one thread each).
Reported: the median wall time of each side, their ratio (the issue's bound: at most 1.3), the time one case costs
inside its jail (the provenance's own clock), and the cluster's cost per task beyond that (the scheduler, the
transfer of each result, the check on arrival). The projection to 50 workers uses those measured costs; it is
arithmetic, not a measurement, and says so.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tri_agent import fanout  # noqa: E402
from tri_agent.exam._build import build_exam  # noqa: E402
from tri_agent.exam._formats import read_cases  # noqa: E402
from tri_agent.targets import _gateway  # noqa: E402
from tri_agent.targets._target import Target  # noqa: E402

TOY = ROOT / "examples" / "toy-grades"


def exam(folder: Path, n: int) -> tuple[Path, list]:  # type: ignore[type-arg]
    """A visible folder of ``n`` cases, each the toy's first ordinary case under its own id."""
    build = folder / "build"
    build_exam(TOY / "exam", "1", build)
    visible = build / "visible"
    first = next(c for c in read_cases(visible / "cases.jsonl") if not c.argv)
    many = folder / "visible"
    (many / "inputs").mkdir(parents=True)
    lines = []
    for k in range(n):
        case = first.model_copy(update={"case": f"c-{k:012x}", "inputs": f"inputs/c-{k:012x}"})
        shutil.copytree(visible / first.inputs, many / case.inputs)
        lines.append(case.model_dump_json(exclude_defaults=True))
    (many / "cases.jsonl").write_text("\n".join(lines) + "\n")
    return many, read_cases(many / "cases.jsonl")


def run(target: Target, visible: Path, cases: list, out: Path) -> tuple[float, float, list]:  # type: ignore[type-arg]
    """Wall seconds, this process's CPU seconds (the orchestrator's, and a LocalCluster's scheduler, which runs in
    it), the results."""
    start, cpu = time.perf_counter(), time.process_time()
    results = _gateway._run_all(target, visible, cases, out)
    return time.perf_counter() - start, time.process_time() - cpu, results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    target = Target.load(TOY / "target.yaml")
    with tempfile.TemporaryDirectory(dir="/dev/shm") as tmp:
        visible, cases = exam(Path(tmp), args.cases)
        local, cluster, inside, serial = [], [], [], []
        with fanout.local_cluster(args.workers) as dask:
            for r in range(args.repeats):
                seconds, _, results = run(target, visible, cases, Path(tmp) / f"local-{r}")
                local.append(seconds)
                inside.append(statistics.median(x.provenance.seconds for x in results))
                with fanout.using(dask):
                    seconds, cpu, shipped = run(target, visible, cases, Path(tmp) / f"cluster-{r}")
                cluster.append(seconds)
                serial.append(cpu / args.cases)
                same = [(a.rows, a.provenance.outputs) for a in results] == \
                       [(b.rows, b.provenance.outputs) for b in shipped]
                print(f"repeat {r + 1}: local {local[-1]:.1f} s, cluster {cluster[-1]:.1f} s, same results: {same}",
                      flush=True)
        report(args, statistics.median(local), statistics.median(cluster), statistics.median(inside),
               statistics.median(serial))


def report(args: argparse.Namespace, local: float, cluster: float, inside: float, serial: float) -> None:
    n, w = args.cases, args.workers
    per_task_local = local * w / n  # what one case costs a slot of the local pool, all included
    per_task_cluster = cluster * w / n
    extra = per_task_cluster - per_task_local  # the engine's cost per task, beyond the local pool's
    # 50 workers share the cases; the orchestrator (and scheduler) handle every task one after another: the
    # larger of the two bounds the run (shipping the bundles once per worker is left out: loopback measures none)
    projected = max(n * per_task_cluster / 50, n * serial)
    print(json.dumps({
        "cases": n, "workers": w, "repeats": args.repeats,
        "local_pool_s": round(local, 1), "cluster_s": round(cluster, 1), "ratio": round(cluster / local, 3),
        "case_in_jail_s": round(inside, 3), "slot_s_per_case_local": round(per_task_local, 3),
        "slot_s_per_case_cluster": round(per_task_cluster, 3), "engine_s_per_case": round(extra, 3),
        "orchestrator_cpu_s_per_case": round(serial, 4), "projected_50_workers_s": round(projected, 1),
    }, indent=1))


if __name__ == "__main__":
    main()
