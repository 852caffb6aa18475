"""Invoice lines: discounts and totals (SPEC.md)."""

from .pricing import discount, line_total

__all__ = ["discount", "line_total"]
