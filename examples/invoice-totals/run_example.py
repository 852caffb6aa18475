"""Walk through the invoice-totals example with the installed `tri-agent` command.

Each step states the outcome it expects; the script exits non-zero if any step surprises it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TRI = os.environ.get("TRI_AGENT", "tri-agent")
OUT = Path(os.environ.get("TRI_AGENT_EXAMPLE_OUT", HERE / "out"))

STEPS = [
    ("verify the sealed answer key against its pinned digest",
     ["verify", "sealed", "--expect", (HERE / "sealed.digest").read_text().strip()], 0),
    ("score the good run: every channel passes",
     ["score", "--caliber", "caliber.yaml", "--answers", "sealed/answers.jsonl", "--actual", "runs/good/actual.csv",
      "--json", OUT / "good.json", "--md", OUT / "good.md"], 0),
    ("score the buggy run: a dropped customer and half-even rounding (inside tolerance, caught by the drift audit)",
     ["score", "--caliber", "caliber.yaml", "--answers", "sealed/answers.jsonl", "--actual", "runs/buggy/actual.csv",
      "--json", OUT / "buggy.json", "--md", OUT / "buggy.md"], 1),
    ("scan the tester's notes for sealed values (exit 6: a leak)",
     ["leaks", "--answers", "sealed/answers.jsonl", "--key", "customer", "--inputs", "invoices.csv", "runs/leaky"], 6),
]


REPORTS = ("good.json", "good.md", "buggy.json", "buggy.md")  # what this walk-through writes, and only that


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    for name in REPORTS:  # the previous walk-through's reports: tri-agent never overwrites a report it is given
        (OUT / name).unlink(missing_ok=True)
    surprises = 0
    for title, args, expected in STEPS:
        print(f"\n== {title}\n$ tri-agent {' '.join(str(a) for a in args)}", flush=True)
        code = subprocess.run([TRI, *map(str, args)], cwd=HERE).returncode
        verdict = "as expected" if code == expected else f"SURPRISE: expected exit {expected}"
        print(f"-> exit {code} ({verdict})", flush=True)
        surprises += code != expected
    print(f"\ninvoice-totals example: {len(STEPS) - surprises} steps as expected, {surprises} surprises; "
          f"reports in {OUT}")
    return 1 if surprises else 0


if __name__ == "__main__":
    sys.exit(main())
