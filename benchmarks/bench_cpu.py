"""CPU a command really costs: the machine's counters against the process tree's rusage.

    python benchmarks/bench_cpu.py -- COMMAND [ARGS...]   # wall, machine CPU (/proc/stat), the tree's rusage
    python benchmarks/bench_cpu.py --jail                  # why the two differ for jailed runs

A process that bubblewrap runs under a pid namespace of its own (every jail of tri-agent) is reaped by the jail's
init, and its CPU never reaches the parent's ``RUSAGE_CHILDREN``: rusage (and ``/usr/bin/time``) under-counts an
acceptance by more than half. The machine's counters see everything, including what else runs at the same time:
measure on a quiet machine. Linux only.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import time

_BURN = "import time\nt = time.process_time()\nwhile time.process_time() - t < 1: pass\n"
_FIELDS = ("user", "nice", "system", "idle")


def machine() -> dict[str, float]:
    """Seconds of CPU the whole machine spent per state since boot (all cores summed)."""
    with open("/proc/stat", encoding="ascii") as f:
        values = f.readline().split()[1:5]
    tick = os.sysconf("SC_CLK_TCK")
    return {name: int(v) / tick for name, v in zip(_FIELDS, values, strict=True)}


def children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(argv: list[str]) -> dict[str, float]:
    before, tree, start = machine(), children(), time.perf_counter()
    code = subprocess.run(argv, check=False).returncode
    wall, after = time.perf_counter() - start, machine()
    spent = {k: after[k] - before[k] for k in _FIELDS}
    return {"exit": code, "wall": wall, "machine_cpu": spent["user"] + spent["nice"] + spent["system"],
            "machine_system": spent["system"], "idle": spent["idle"], "tree_rusage": children() - tree}


def jail_check() -> list[tuple[str, float]]:
    """One CPU-second burnt plainly, under bwrap as pid 1, and under bwrap with its own init: what rusage sees."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SystemExit("bench_cpu: no bwrap on PATH; the check needs bubblewrap")
    jail = [bwrap, "--die-with-parent", "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--unshare-all"]
    burn = [sys.executable, "-c", _BURN]
    out = []
    for name, argv in (("plain", burn), ("bwrap --as-pid-1", [*jail, "--as-pid-1", *burn]),
                       ("bwrap, its own init (as tri-agent's jails)", [*jail, *burn])):
        seen = children()
        subprocess.run(argv, check=True)
        out.append((name, children() - seen))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jail", action="store_true", help="show what rusage sees of a jailed CPU-second")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    if args.jail:
        for name, seconds in jail_check():
            print(f"{name}: rusage of the child {seconds:.2f} s (it burnt 1.00 s)")
        return 0
    argv = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not argv:
        parser.error("give a command after --, or --jail")
    r = measure(argv)
    cores = os.cpu_count() or 1
    print(f"exit {r['exit']}; wall {r['wall']:.1f} s; machine CPU {r['machine_cpu']:.1f} s (system "
          f"{r['machine_system']:.1f} s), {100 * r['machine_cpu'] / (cores * r['wall']):.0f}% of {cores} cores; "
          f"the tree's rusage {r['tree_rusage']:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
