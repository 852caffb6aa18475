"""Independent oracle for csvkit-stats: pure Decimal, written from SPEC.md (csvstat's documentation), never from
csvkit's or agate's code.

usage: oracle.py VISIBLE OUT  -> OUT/answers.jsonl, OUT/behaviors.jsonl
"""

import csv
import io
import json
import sys
from decimal import Decimal, InvalidOperation, localcontext
from pathlib import Path

NULLS = {"", "na", "n/a", "none", "null", "."}
STATS = ("min", "max", "sum", "mean", "median", "stdev")


def number(text):
    """A value as a number, or None: a currency sign and grouping commas are read through, as documented."""
    bare = text.replace(",", "").replace("$", "")
    try:
        value = Decimal(bare)
    except InvalidOperation:
        return None
    return value if value.is_finite() else None


def median(values):
    ordered, n = sorted(values), len(values)
    return ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2


def stdev(values):
    if len(values) < 2:
        return None
    with localcontext() as ctx:
        ctx.prec = 40
        mean = sum(values) / len(values)
        return (sum((v - mean) ** 2 for v in values) / (len(values) - 1)).sqrt()


def numeric(values, fmt):
    total = sum(values, Decimal(0))
    stats = {"min": min(values), "max": max(values), "sum": total, "mean": total / len(values),
             "median": median(values), "stdev": stdev(values)}
    shown = {k: None if v is None else fmt % v for k, v in stats.items()}
    # places of the number, not of its spelling: 111.20 has one (csvstat's reading; the documentation is silent)
    places = max(-min(v.normalize().as_tuple().exponent, 0) for v in values)
    return {**shown, "len": None, "maxprecision": str(places)}


def column(case, name, cells, fmt):
    present = [c for c in cells if c.lower() not in NULLS]
    numbers = [number(c) for c in present]
    is_number = all(n is not None for n in numbers)
    distinct = len(set(numbers if is_number else present)) + (len(present) < len(cells))
    row = {"case": case, "column_name": name, "type": "Number" if is_number else "Text",
           "nulls": str(len(present) < len(cells)), "nonnulls": str(len(present)), "unique": str(distinct)}
    if is_number:
        return {**row, **numeric(numbers, fmt)}
    return {**row, **dict.fromkeys(STATS), "len": str(max(len(c) for c in present)), "maxprecision": None}


def answer(case, folder):
    text = (folder / "table.csv").read_bytes().decode("utf-8-sig")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    fmt = (folder / "format.txt").read_text().strip()
    header, body = rows[0], rows[1:]
    return [column(case, name, [r[i] for r in body], fmt) for i, name in enumerate(header)]


def main():
    visible, out = Path(sys.argv[1]), Path(sys.argv[2])
    answers, behaviors = [], []
    for line in (visible / "cases.jsonl").read_text().splitlines():
        case = json.loads(line)
        answers.extend(answer(case["case"], visible / case["inputs"]))
        behaviors.append({"case": case["case"], "behavior": "accepted"})
    (out / "answers.jsonl").write_text("".join(json.dumps(a, ensure_ascii=False) + "\n" for a in answers))
    (out / "behaviors.jsonl").write_text("".join(json.dumps(b) + "\n" for b in behaviors))


if __name__ == "__main__":
    main()
