"""Examples a person reads: they help, and they never vote on a merge."""

from decimal import Decimal

import pytest
from invoicing import discount, line_total


def test_ten_percent_off_three_items() -> None:
    assert discount(Decimal("10.00"), 3, Decimal("0.10")) == Decimal("3.00")


def test_a_rate_above_the_cap_takes_the_cap() -> None:
    assert discount(Decimal("10.00"), 1, Decimal("0.90")) == Decimal("4.00")


def test_quantity_outside_the_range_is_refused() -> None:
    with pytest.raises(ValueError):
        discount(Decimal("1.00"), 0, Decimal("0.10"))


def test_line_total_subtracts_the_discount() -> None:
    assert line_total(Decimal("2.50"), 4, Decimal("0.20")) == Decimal("8.00")
