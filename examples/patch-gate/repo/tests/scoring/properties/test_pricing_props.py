"""Scoring properties: universal checks over a pinned corpus and pinned fixtures. A failure blocks the merge."""

import json
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from invoicing import discount, line_total

CAP = Decimal("0.40")  # SPEC.md
CENT = Decimal("0.01")
FIXTURES = Path(__file__).parents[1] / "fixtures" / "prices.json"


@settings(derandomize=True, max_examples=60, database=None)
@given(cents=st.integers(1, 10**6), qty=st.integers(1, 10_000), rate=st.decimals(0, 1, places=2))
def test_discount_within_cap(cents: int, qty: int, rate: object) -> None:
    price = Decimal(cents) / 100
    off = discount(price, qty, Decimal(str(rate)))
    assert type(off) is Decimal  # a value that compares as anything proves nothing
    assert Decimal(0) <= off <= (price * qty * CAP).quantize(CENT, rounding=ROUND_HALF_EVEN)


def test_line_totals_match_the_fixtures() -> None:
    for row in json.loads(FIXTURES.read_text()):
        got = line_total(Decimal(row["price"]), row["qty"], Decimal(row["rate"]))
        assert type(got) is Decimal and got == Decimal(row["total"]), row
