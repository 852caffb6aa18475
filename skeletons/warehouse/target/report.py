"""Placeholder target of the warehouse skeleton: it meets spec/README.md, so the skeleton runs at once.

Replace this folder with your program (only the builder writes here during a run), and target.yaml's `run`
with its command line. usage: report.py SALES.csv REPORT.csv
"""

import csv
import sys
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

CENT = Decimal("0.01")
Sale = tuple[str, Decimal]


def read_sales(path: str) -> list[Sale]:
    with open(path, encoding="utf-8-sig", newline="") as f:
        rows = [row for row in csv.reader(f) if any(cell.strip() for cell in row)]
    header = [name.strip().lower() for name in rows[0]]
    region, amount = header.index("region"), header.index("amount")
    sales = []
    for row in rows[1:]:
        try:
            value = Decimal(row[amount].strip())
        except InvalidOperation:
            sys.exit(f"bad amount {row[amount]!r}")
        if not value.is_finite():
            sys.exit(f"bad amount {row[amount]!r}")
        sales.append((row[region].strip(), value))
    return sales


def line(region: str, amounts: list[Decimal]) -> list[str]:
    total = sum(amounts, Decimal(0))
    average = (total / len(amounts)).quantize(CENT, rounding=ROUND_HALF_UP)
    return [region, str(len(amounts)), str(total.quantize(CENT)), str(average)]


def report(sales: list[Sale]) -> list[list[str]]:
    by_region: dict[str, list[Decimal]] = {}
    for region, amount in sales:
        by_region.setdefault(region, []).append(amount)
    rows = [line(region, by_region[region]) for region in sorted(by_region)]
    rows.append(line("*ALL*", [amount for _, amount in sales]))
    return rows


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    rows = report(read_sales(sys.argv[1]))
    with open(sys.argv[2], "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(["region", "count", "total", "average"])
        writer.writerows(rows)


if __name__ == "__main__":
    main()
