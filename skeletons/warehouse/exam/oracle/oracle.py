"""Oracle of the warehouse skeleton: pure Decimal, written from the spec, never from the target's code.

usage: oracle.py CASES OUT -> OUT/answers.jsonl (every value a string), OUT/behaviors.jsonl.
Replace `parse` and `summary` with your spec's rules; keep it deterministic and exact (no float anywhere).
"""

import json
import sys
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from pathlib import Path

CENT = Decimal("0.01")
Sale = tuple[str, Decimal]


def parse(raw: bytes) -> list[Sale] | None:
    """The sales of one sheet, or None: the spec says reject it."""
    text = raw.decode("utf-8").removeprefix("\ufeff").replace("\r\n", "\n")
    lines = [line.split(",") for line in text.split("\n") if line.strip()]
    header = [name.strip().lower() for name in lines[0]]
    at_region, at_amount = header.index("region"), header.index("amount")
    sales = []
    for cells in lines[1:]:
        try:
            amount = Decimal(cells[at_amount].strip())
        except InvalidOperation:
            return None
        if not amount.is_finite():
            return None
        sales.append((cells[at_region].strip(), amount))
    return sales


def row(case: str, region: str, amounts: list[Decimal]) -> dict[str, str]:
    total = sum(amounts, Decimal(0))
    average = (total / Decimal(len(amounts))).quantize(CENT, rounding=ROUND_HALF_UP)
    return {"case": case, "region": region, "count": str(len(amounts)), "total": str(total.quantize(CENT)),
            "average": str(average)}


def summary(case: str, sales: list[Sale]) -> list[dict[str, str]]:
    regions = sorted({region for region, _ in sales})
    rows = [row(case, r, [a for region, a in sales if region == r]) for r in regions]
    return [*rows, row(case, "*ALL*", [a for _, a in sales])]


def main() -> None:
    cases, out = Path(sys.argv[1]), Path(sys.argv[2])
    answers, behaviors = [], []
    for line in (cases / "cases.jsonl").read_text().splitlines():
        case = json.loads(line)
        sales = parse((cases / case["inputs"] / "sales.csv").read_bytes())
        behaviors.append({"case": case["case"], "behavior": "rejected" if sales is None else "accepted"})
        answers += [] if sales is None else summary(case["case"], sales)
    (out / "answers.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers), encoding="utf-8")
    (out / "behaviors.jsonl").write_text("".join(json.dumps(b) + "\n" for b in behaviors))


if __name__ == "__main__":
    main()
