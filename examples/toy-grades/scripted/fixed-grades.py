"""grades: per-group score summary.

usage: grades.py SCORES.csv SUMMARY.csv

SCORES.csv has the columns student, group and score (any order, header names case-insensitive).
SUMMARY.csv gets one row per group (sorted by name) and a last row for the group *ALL*:
group, count, total (exact sum) and average (total / count, rounded HALF_UP to 2 places).
"""

import csv
import sys
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

CENT = Decimal("0.01")


def read_scores(path):
    with open(path, encoding="utf-8-sig", newline="") as f:
        rows = [r for r in csv.reader(f) if any(cell.strip() for cell in r)]
    header = [h.strip().lower() for h in rows[0]]
    col = {name: header.index(name) for name in ("student", "group", "score")}
    scores = []
    for lineno, row in enumerate(rows[1:], start=2):
        group = row[col["group"]].strip()
        try:
            score = Decimal(row[col["score"]].strip())
        except InvalidOperation:
            sys.exit(f"error: row {lineno}: bad score {row[col['score']]!r}")
        scores.append((group, score))
    return scores


def summarize(scores):
    groups = {}
    for group, score in scores:
        groups.setdefault(group, []).append(score)
    out = []
    for group in sorted(groups):
        out.append(line(group, groups[group]))
    out.append(line("*ALL*", [s for _, s in scores]))
    return out


def line(group, values):
    total = sum(values, Decimal(0))
    average = (total / len(values)).quantize(CENT, rounding=ROUND_HALF_UP)
    return [group, len(values), total.quantize(CENT), average]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    scores = read_scores(sys.argv[1])
    with open(sys.argv[2], "w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(["group", "count", "total", "average"])
        writer.writerows(summarize(scores))


if __name__ == "__main__":
    main()
