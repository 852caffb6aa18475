"""What a case of the document kind costs beside one of the command kind, on this machine, interleaved.

    python benchmarks/bench_documents.py [--cases 20] [--repeats 5]

Command kind: the toy-grades example's target on its first case that writes a summary (one jailed Python
process reading a CSV and writing a summary, read back by the orchestrator). Document kind: the invoice-pdf
example's fixed renderer on its first PDF case and its first HTML case (one jailed Python process rendering the
document with fpdf2, then the document reader in a jail of its own: pypdf or lxml). Each case runs through the
gateway one at a time (no two side by side), the three kinds interleaved; a repeat runs ``--cases`` of each.
Reported: the median seconds per case of each kind over the repeats, and the ratio to the command kind; with the
time the target's own run takes (its provenance's clock).
The target runs ``python3`` from ``PATH``: run it with the project's virtualenv first on ``PATH`` (fpdf2).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tri_agent.exam._build import build_exam  # noqa: E402
from tri_agent.exam._formats import Case, read_cases  # noqa: E402
from tri_agent.targets._gateway import Gateway  # noqa: E402
from tri_agent.targets._target import Target  # noqa: E402

EXAMPLES = ROOT / "examples"


def _fixed_invoice(folder: Path) -> Path:
    copy = folder / "invoice-pdf"
    shutil.copytree(EXAMPLES / "invoice-pdf", copy, ignore=shutil.ignore_patterns("out", "__pycache__"))
    shutil.copyfile(copy / "scripted" / "fixed-render.py", copy / "target" / "render.py")
    return copy


def _reads(case: Case, fmt: str) -> bool:
    """Whether the case is scored on a document of that format (each invoice case names its own)."""
    return case.extract is not None and case.extract.format == fmt


def kinds(folder: Path) -> dict[str, tuple[Gateway, Case]]:
    """Each kind's gateway and the one case it runs."""
    chosen = {}
    for name, example, pick in (("command (toy-grades, CSV)", EXAMPLES / "toy-grades", lambda c: not c.argv),
                                ("document (invoice PDF)", _fixed_invoice(folder), lambda c: _reads(c, "pdf")),
                                ("document (invoice HTML)", folder / "invoice-pdf", lambda c: _reads(c, "html"))):
        build = folder / f"build-{len(chosen)}"
        build_exam(example / "exam", "1", build)
        gateway = Gateway(Target.load(example / "target.yaml"), build / "visible", folder / f"g-{len(chosen)}")
        case = next(c for c in read_cases(build / "visible" / "cases.jsonl")  # the first one read without a fault
                    if pick(c) and not gateway.run_case(c).provenance.extract_error)
        chosen[name] = (gateway, case)
    return chosen


def per_case(gateway: Gateway, case: Case, n: int) -> tuple[float, float]:
    """Wall seconds per case over ``n`` runs, and the seconds the target's own run took (its provenance)."""
    start, inside = time.perf_counter(), 0.0
    for _ in range(n):
        result = gateway.run_case(case)
        assert not result.provenance.extract_error, result.provenance.extract_error
        inside += result.provenance.seconds
    return (time.perf_counter() - start) / n, inside / n


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir="/dev/shm") as tmp:
        chosen = kinds(Path(tmp))
        walls: dict[str, list[float]] = {k: [] for k in chosen}
        runs: dict[str, list[float]] = {k: [] for k in chosen}
        for _ in range(args.repeats):
            for name, (gateway, case) in chosen.items():
                wall, run = per_case(gateway, case, args.cases)
                walls[name].append(wall)
                runs[name].append(run)
    base = statistics.median(walls[next(iter(walls))])
    print("| kind | seconds per case (median) | the target's run | the rest (jails, reader, checks) | ratio |")
    print("|---|---|---|---|---|")
    for name in walls:
        wall, run = statistics.median(walls[name]), statistics.median(runs[name])
        print(f"| {name} | {wall:.3f} | {run:.3f} | {wall - run:.3f} | **{wall / base:.2f}x** |")


if __name__ == "__main__":
    main()
