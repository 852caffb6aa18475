"""Discounts and line totals, in Decimal cents."""

from decimal import ROUND_HALF_EVEN, Decimal

MAX_QTY = 10_000
CENT = Decimal("0.01")


def discount(price: Decimal, qty: int, rate: Decimal) -> Decimal:
    """The amount taken off ``price * qty`` at ``rate``, rounded half-even to cents."""
    if not 1 <= qty <= MAX_QTY:
        raise ValueError(f"qty {qty} is outside 1..{MAX_QTY}")
    if rate < 0:
        raise ValueError(f"rate {rate} is negative")
    return (price * qty * rate).quantize(CENT, rounding=ROUND_HALF_EVEN)


def line_total(price: Decimal, qty: int, rate: Decimal) -> Decimal:
    """What the line costs after its discount."""
    return price * qty - discount(price, qty, rate)
