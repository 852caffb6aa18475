"""Scoring benchmark: tri-agent score against datacompy on the same CSV tables, in the same run.

    python benchmarks/bench_score.py [--rows 100000 1000000] [--repeats 5]
    python benchmarks/bench_score.py --paths --rows 1000000 3000000 10000000 --repeats 3

Tables have key, amount, ratio, count, status, text; 0.1% of rows are perturbed on both sides of
every tolerance boundary (at the boundary: must pass; just past it: must fail), some rows are missing
and some are extra. Each tool runs in its own fresh process (datacompy in its own virtualenv, since
it pins an older polars); we time from reading the files to having the list of failing rows, and read
peak RSS from the kernel (wait4). A boundary error is a row whose verdict differs from the truth.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / ".data"
DATACOMPY_VENV = HERE / ".venv-datacompy"
DATACOMPY_PIN = "datacompy==1.1.0"

CALIBER = """schema_version: 1
key: [key]
fields: {amount: amount, ratio: ratio, count: count, status: status, text: text}
drift: {gate: false}
"""
# (column, change, must fail): at every boundary and just past it, on both sides
PERTURBATIONS = [
    ("amount", "0.01", False), ("amount", "-0.01", False), ("amount", "0.011", True), ("amount", "-0.011", True),
    ("ratio", "0.000001", False), ("ratio", "-0.000001", False),
    ("ratio", "0.0000011", True), ("ratio", "-0.0000011", True),
    ("count", "1", True), ("count", "-1", True), ("status", "swap", True), ("text", "append", True),
]


def make_tables(n: int, out: Path, seed: int = 7) -> None:
    from decimal import Decimal

    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    statuses = ["open", "paid", "void", "late"]
    truth: list[str] = []
    kinds = 0
    perturbed = set(rng.sample(range(n), n // 1000))
    missing = set(rng.sample(sorted(set(range(n)) - perturbed), max(1, n // 5000)))
    with open(out / "answers.csv", "w") as fa, open(out / "actual.csv", "w") as fb:
        fa.write("key,amount,ratio,count,status,text\n")
        fb.write("text,status,count,ratio,amount,key\n")  # another column order on purpose
        for i in range(n):
            key = f"k{i:08d}"
            row = {"amount": f"{rng.randint(-10**7, 10**7) / 100:.2f}", "ratio": f"{rng.random():.6f}",
                   "count": str(rng.randint(0, 10**6)), "status": rng.choice(statuses),
                   "text": f"name-{rng.randint(0, 10**6)}"}
            fa.write(f"{key},{row['amount']},{row['ratio']},{row['count']},{row['status']},{row['text']}\n")
            if i in missing:
                truth.append(key)
                continue
            if i in perturbed:
                column, change, fails = PERTURBATIONS[kinds % len(PERTURBATIONS)]
                kinds += 1
                row[column] = _perturb(row[column], change, statuses, Decimal)
                if fails:
                    truth.append(key)
            fb.write(f"{row['text']},{row['status']},{row['count']},{row['ratio']},{row['amount']},{key}\n")
        for j in range(max(1, n // 5000)):
            key = f"x{j:08d}"
            truth.append(key)
            fb.write(f"extra,open,1,0.5,1.00,{key}\n")
    (out / "caliber.yaml").write_text(CALIBER)
    (out / "truth.json").write_text(json.dumps(sorted(truth)))


def _perturb(value: str, change: str, statuses: list[str], decimal: type) -> str:
    if change == "swap":
        return statuses[(statuses.index(value) + 1) % len(statuses)]
    if change == "append":
        return value + "x"
    return str(decimal(value) + decimal(change))


def shuffled(folder: Path, seed: int = 11) -> Path:
    """The same tables with the actual rows in random order (the hash split's case: no key order to read in)."""
    out = folder / "shuffled"
    if not (out / "actual.csv").exists():
        out.mkdir(exist_ok=True)
        header, *rows = (folder / "actual.csv").read_text().splitlines(keepends=True)
        random.Random(seed).shuffle(rows)
        (out / "actual.csv").write_text(header + "".join(rows))
        for name in ("answers.csv", "caliber.yaml", "truth.json"):
            (out / name).unlink(missing_ok=True)
            (out / name).symlink_to(folder / name)
    return out


def run_ours(folder: Path, how: str = "") -> dict[str, object]:
    """``how``: "" as tri-agent chooses (in parts from 256 MiB of tables), "memory" or "parts" forced."""
    from tri_agent import ScoreInputs, score
    from tri_agent.scoring import _parts

    if how:
        _parts.STREAM_BYTES = 0 if how == "parts" else 1 << 62
    start = time.perf_counter()
    report = score(ScoreInputs(folder / "caliber.yaml", folder / "answers.csv", folder / "actual.csv"))
    (folder / f"report{'-' + how if how else ''}.json").write_text(report.to_json())
    seconds = time.perf_counter() - start
    failing = sorted({f.key["key"] for f in report.answers.failures})
    return {"seconds": seconds, "failing": failing}


def run_datacompy(folder: Path) -> dict[str, object]:
    import datacompy
    import pandas as pd

    start = time.perf_counter()
    a = pd.read_csv(folder / "answers.csv", dtype={"key": str, "status": str, "text": str})
    b = pd.read_csv(folder / "actual.csv", dtype={"key": str, "status": str, "text": str})
    cmp = datacompy.PandasCompare(a, b, join_columns="key", abs_tol={"amount": 0.01, "ratio": 1e-6})
    failing = set(cmp.all_mismatch()["key"]) | set(cmp.df1_unq_rows["key"]) | set(cmp.df2_unq_rows["key"])
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "failing": sorted(failing)}


def _measure(python: str, tool: str, folder: Path, one_core: bool = False) -> dict[str, float]:
    prefix = ["taskset", "-c", "0"] if one_core else []
    env = dict(os.environ, POLARS_MAX_THREADS="1") if one_core else None
    wall = time.perf_counter()
    proc = subprocess.Popen([*prefix, python, __file__, "--worker", tool, str(folder)], stdout=subprocess.PIPE,
                            text=True, env=env)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        raise SystemExit(f"{tool} worker failed with status {status}")
    result = json.loads(out)
    truth = set(json.loads((folder / "truth.json").read_text()))
    errors = len(truth ^ set(result["failing"]))
    return {"seconds": result["seconds"], "wall": time.perf_counter() - wall, "rss_mb": usage.ru_maxrss / 1024,
            "errors": errors}


def _datacompy_python() -> str:
    python = DATACOMPY_VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(DATACOMPY_VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", DATACOMPY_PIN], check=True)
    return str(python)


def _paths(sizes: list[int], repeats: int) -> list[str]:
    """tri-agent's two scoring paths side by side, interleaved; datacompy beside them while it fits in memory."""
    lines = ["| rows | path | rows/s (median) | median s | peak RSS MiB | boundary errors | report |",
             "|---|---|---|---|---|---|---|"]
    for n in sizes:
        folder = DATA / f"score-{n}"
        if not (folder / "truth.json").exists():
            make_tables(n, folder)
        # in a process of its own: the parent's memory would count in every worker's peak (forked, then run)
        subprocess.run([sys.executable, __file__, "--worker", "shuffle", str(folder)], check=True)
        mixed = folder / "shuffled"
        tools = {"in memory": (sys.executable, "ours-memory", folder),
                 "in parts (key order: windows)": (sys.executable, "ours-parts", folder),
                 "in parts (rows shuffled: hash split)": (sys.executable, "ours-parts", mixed)}
        if n <= 3_000_000:
            tools["datacompy"] = (_datacompy_python(), "datacompy", folder)
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in tools}
        for _ in range(repeats):
            for name, (python, tool, where) in tools.items():
                runs[name].append(_measure(python, tool, where))
        same = (folder / "report-memory.json").read_bytes() == (folder / "report-parts.json").read_bytes()
        # the shuffled table has other bytes (its digest differs): its channel is compared
        alike = _channel(folder / "report-memory.json") == _channel(mixed / "report-parts.json")
        for name, rs in runs.items():
            m = {k: statistics.median(r[k] for r in rs) for k in rs[0]}
            verdict = ("identical to in memory" if same else "DIFFERS") if "windows" in name else \
                ("channel identical to in memory" if alike else "DIFFERS") if "hash" in name else ""
            lines.append(f"| {n:,} | {name} | {n / m['seconds']:,.0f} | {m['seconds']:.2f} | {m['rss_mb']:.0f} | "
                         f"{int(max(r['errors'] for r in rs))} | {verdict} |")
    return lines


def _channel(report: Path) -> object:
    return json.loads(report.read_text())["answers"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--worker", nargs=2, metavar=("TOOL", "DIR"))
    parser.add_argument("--paths", action="store_true", help="tri-agent scored in memory against in parts (and "
                        "datacompy up to 3M rows), with the two reports compared byte for byte")
    args = parser.parse_args()
    if args.worker:
        tool, folder = args.worker
        if tool == "shuffle":
            shuffled(Path(folder))
            return
        how = tool.removeprefix("ours").removeprefix("-")
        print(json.dumps(run_ours(Path(folder), how) if tool.startswith("ours") else run_datacompy(Path(folder))))
        return
    if args.paths:
        print("\n".join(_paths(args.rows, args.repeats)))
        return
    other = _datacompy_python()
    lines = ["| rows | tool | rows/s (median) | median s | wall s incl. startup | peak RSS MiB | boundary errors |",
             "|---|---|---|---|---|---|---|"]
    for n in args.rows:
        folder = DATA / f"score-{n}"
        if not (folder / "truth.json").exists():
            make_tables(n, folder)
        runs: dict[str, list[dict[str, float]]] = {"tri-agent": [], "datacompy": [], "tri-agent, one core": []}
        for _ in range(args.repeats):  # interleaved, so machine noise hits both tools alike
            runs["tri-agent"].append(_measure(sys.executable, "ours", folder))
            runs["datacompy"].append(_measure(other, "datacompy", folder))
            runs["tri-agent, one core"].append(_measure(sys.executable, "ours", folder, one_core=True))
        med = {t: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for t, rs in runs.items()}
        for tool, m in med.items():
            lines.append(f"| {n:,} | {tool} | {n / m['seconds']:,.0f} | {m['seconds']:.3f} | {m['wall']:.3f} | "
                         f"{m['rss_mb']:.0f} | {int(max(r['errors'] for r in runs[tool]))} |")
        ratio = med["datacompy"]["seconds"] / med["tri-agent"]["seconds"]
        single = med["datacompy"]["seconds"] / med["tri-agent, one core"]["seconds"]
        lines.append(f"| {n:,} | ratio | datacompy time / tri-agent time = **{ratio:.1f}x** "
                     f"({single:.1f}x with tri-agent on one core) | | | | |")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
