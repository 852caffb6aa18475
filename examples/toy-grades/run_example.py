"""Walk through toy-grades in a scratch copy: build, catch both bugs, fix, go green, prove the exam bites.

Each step states the exit code it expects; the script exits non-zero if any step surprises it.
The example folder itself is never modified (the fix is applied to the copy).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TRI = os.environ.get("TRI_AGENT", "tri-agent")


def main() -> int:
    work = Path(os.environ.get("TRI_AGENT_EXAMPLE_OUT") or tempfile.mkdtemp(prefix="toy-grades-"))
    toy = work / "toy-grades"
    shutil.copytree(HERE, toy, ignore=shutil.ignore_patterns("builds", "runs", "mutation", "__pycache__"))
    steps = [
        ("build the exam for seed 1: generator and oracle run twice, the key is sealed",
         ["exam", "build", "exam", "--seed", "1", "--out", "builds/seed-1"], 0),
        ("run every case against the buggy target, twice, through the gateway",
         ["exam", "run", "builds/seed-1", "--target", "target.yaml", "--out", "runs/buggy", "--twice"], 0),
        ("score it: untrimmed groups fail channel 1, banker's rounding trips the drift audit",
         ["exam", "score", "builds/seed-1", "runs/buggy", "--md", "runs/buggy-score.md"], 1),
        ("apply the builder's fix", ["!git", "apply", "-p1", "../fix.patch"], 0),
        ("run the fixed target", ["exam", "run", "builds/seed-1", "--target", "target.yaml", "--out", "runs/fixed",
                                  "--twice"], 0),
        ("score it: every channel passes", ["exam", "score", "builds/seed-1", "runs/fixed"], 0),
        ("re-run a sample of cases: fingerprints reproduce",
         ["rerun", "runs/fixed", "--build", "builds/seed-1", "--target", "target.yaml", "--sample", "4"], 0),
        ("mutation gate: one mutant of every bug class, made from the fixed code; equivalents proven by hunting",
         ["mutate", "--target", "target.yaml", "--exam", "builds/seed-1", "--menu", "exam/mutations.yaml",
          "--exam-dir", "exam", "--per-class", "1", "--out", "mutation"], 0),
    ]
    surprises = 0
    for title, args, expected in steps:
        shell = args[0].startswith("!")
        argv = [args[0][1:], *args[1:]] if shell else [TRI, *args]
        print(f"\n== {title}\n$ {' '.join(argv if shell else ['tri-agent', *args])}", flush=True)
        code = subprocess.run(argv, cwd=toy / "target" if shell else toy).returncode
        surprises += code != expected
        print(f"-> exit {code} ({'as expected' if code == expected else f'SURPRISE: expected {expected}'})", flush=True)
    print(f"\ntoy-grades example: {len(steps) - surprises} steps as expected, {surprises} surprises; work in {toy}")
    return 1 if surprises else 0


if __name__ == "__main__":
    sys.exit(main())
