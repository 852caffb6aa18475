"""Held out: never in the agent's workspace. Every bound comes from SPEC.md, none from the code."""

from decimal import ROUND_HALF_EVEN, Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from invoicing import discount, line_total

CAP = Decimal("0.40")  # SPEC.md: a rate above 0.40 is capped at 0.40
CENT = Decimal("0.01")


@settings(derandomize=True, max_examples=80, database=None)
@given(cents=st.integers(1, 10**6), qty=st.integers(1, 10_000), rate=st.decimals(0, 3, places=2))
def test_a_line_never_costs_less_than_sixty_percent(cents: int, qty: int, rate: Decimal) -> None:
    price = Decimal(cents) / 100
    floor = price * qty - (price * qty * CAP).quantize(CENT, rounding=ROUND_HALF_EVEN)
    total = line_total(price, qty, rate)
    assert type(total) is Decimal and total >= floor  # a value that compares as anything proves nothing


def test_a_capped_rate_takes_exactly_the_cap() -> None:
    assert discount(Decimal("12.34"), 5, Decimal("0.75")) == (Decimal("61.70") * CAP).quantize(CENT)


def test_a_negative_rate_is_refused() -> None:
    with pytest.raises(ValueError):
        discount(Decimal("1.00"), 1, Decimal("-0.01"))
