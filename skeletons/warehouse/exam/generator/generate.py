"""Case generator of the warehouse skeleton: SEED OUT -> OUT/cases.jsonl, OUT/inputs/<case>/sales.csv, OUT/pairs.jsonl.

Replace the sheets with inputs for your own spec. Keep it deterministic (every value drawn from the seed, so
two runs are byte-identical) and make every seed a new exam; keep one case per chaos kind of the preset.
"""

import hashlib
import json
import random
import sys
from pathlib import Path

REGIONS = ["North", "South", "East", "Zürich", "Malmö"]
HEADER = ["region", "amount"]
Row = list[str]


def case_id(seed: str, name: str) -> str:
    """Opaque: the id never says what the case tests."""
    return "c-" + hashlib.sha256(f"{seed}:{name}".encode()).hexdigest()[:12]


def money(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d}"


def sheet(rng: random.Random) -> list[Row]:
    rows = [[r, money(rng.randint(100, 99999))] for r in rng.sample(REGIONS, 3) for _ in range(rng.randint(1, 4))]
    rows.append(list(rng.choice(rows)))  # a repeated sale: both count
    half = 2 * rng.randint(500, 40000)  # two amounts a cent apart: the average ends on an (even) half cent
    rows += [["Half", money(half)], ["Half", money(half + 1)]]
    rows += [["Whole", str(rng.randint(1, 999))] for _ in range(2)]  # whole amounts: totals still have 2 places
    for row in rng.sample(rows, len(rows) // 4):
        row[0] = f" {row[0]}  "  # padded region names: the spec trims them
    return rows


def csv_text(header: Row, rows: list[Row], end: str = "\n") -> str:
    return "".join(",".join(row) + end for row in [header, *rows])


def write(out: Path, seed: str, name: str, text: str, bom: bool = False) -> dict[str, str]:
    case = case_id(seed, name)
    folder = out / "inputs" / case
    folder.mkdir(parents=True)
    (folder / "sales.csv").write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    return {"case": case, "inputs": f"inputs/{case}"}


def main() -> None:
    seed, out = sys.argv[1], Path(sys.argv[2])
    rng = random.Random(f"warehouse-skeleton:{seed}")
    cases, pairs = [], []
    for k in range(3):  # ordinary sheets, each with a shuffled twin for the row-order relation
        rows = sheet(rng)
        cases += [write(out, seed, f"plain-{k}", csv_text(HEADER, rows)),
                  write(out, seed, f"shuffled-{k}", csv_text(HEADER, rng.sample(rows, len(rows))))]
        pairs.append({"relation": "row-order-changes-nothing", "a": cases[-2]["case"], "b": cases[-1]["case"]})
    cases.append(write(out, seed, "bom", csv_text(HEADER, sheet(rng)), bom=True))
    cases.append(write(out, seed, "crlf", csv_text(HEADER, sheet(rng), "\r\n")))
    cases.append(write(out, seed, "header", csv_text([" AMOUNT", "Region "], [r[::-1] for r in sheet(rng)])))
    cases.append(write(out, seed, "blank-lines", csv_text(HEADER, sheet(rng)).replace("\n", "\n\n")))
    for name, unreadable in (("bad-number", ["n/a", "1.2.3", "--", "12a"]), ("not-finite", ["NaN", "Infinity"])):
        bad = sheet(rng)
        bad[rng.randrange(len(bad))][1] = rng.choice(unreadable)
        cases.append(write(out, seed, name, csv_text(HEADER, bad)))
    cases.sort(key=lambda c: c["case"])  # the order says nothing about what a case tests
    (out / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (out / "pairs.jsonl").write_text("".join(json.dumps(p) + "\n" for p in pairs))


if __name__ == "__main__":
    main()
