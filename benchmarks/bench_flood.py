"""Flood benchmark: what a child that prints 300 MiB costs the orchestrator, in peak memory and time.

    python benchmarks/bench_flood.py [--mib 300] [--repeats 3]

Side by side, each in a fresh interpreter (peak RSS is per process): ``subprocess.run(capture_output=True)``
(what a harness would write by hand: the whole output is held, then cut) and tri-agent's ``run`` (read as it
comes, at most the cap kept), both around the same flooding child, both with the same 1 MiB cap applied.
The target: the orchestrator's peak RSS under 150 MiB whatever the child prints.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

CHILD = "import sys\nblock = b'x' * (1 << 20)\nfor _ in range({mib}):\n    sys.stdout.buffer.write(block)\n"
PROBE = """
import json, resource, subprocess, sys, time
from pathlib import Path
argv = [sys.executable, "-c", {child!r}]
start = time.perf_counter()
if {ours}:
    from tri_agent.sandbox._process import base_env, run
    done = run(argv, cwd=Path("."), env=base_env(Path(".")), timeout=600, cap=1 << 20)
    kept = len(done.stdout)
else:
    done = subprocess.run(argv, capture_output=True, timeout=600)
    kept = len(done.stdout[: 1 << 20])
print(json.dumps({{"seconds": time.perf_counter() - start, "kept": kept,
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""


def _measure(ours: bool, mib: int) -> dict[str, float]:
    code = PROBE.format(child=CHILD.format(mib=mib), ours=ours)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    results: dict[str, list[dict[str, float]]] = {"subprocess.run(capture_output=True)": [], "tri-agent run": []}
    for _ in range(args.repeats):
        for name, ours in (("subprocess.run(capture_output=True)", False), ("tri-agent run", True)):
            results[name].append(_measure(ours, args.mib))
            time.sleep(0.2)
    print(f"a child printing {args.mib} MiB, cap 1 MiB kept; medians of {args.repeats} (fresh interpreter each):")
    peaks = {}
    for name, runs in results.items():
        peaks[name] = statistics.median(r["peak_mib"] for r in runs)
        secs = statistics.median(r["seconds"] for r in runs)
        print(f"  {name:<38} peak RSS {peaks[name]:7.1f} MiB   {secs:5.2f} s   kept {int(runs[0]['kept'])} bytes")
    ratio = peaks["subprocess.run(capture_output=True)"] / peaks["tri-agent run"]
    print(f"peak RSS ratio (capture_output / tri-agent): {ratio:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
