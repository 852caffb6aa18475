"""Shipping quotes by weight band and zone (see spec.md)."""

from decimal import ROUND_CEILING, ROUND_HALF_UP, Decimal, InvalidOperation

ZONES = {"domestic": (Decimal("4.50"), Decimal("0.40")), "eu": (Decimal("9.00"), Decimal("0.85")),
         "world": (Decimal("15.00"), Decimal("1.75"))}
HALF = Decimal("0.5")


def charged(weight):
    return (weight / HALF).to_integral_value(rounding=ROUND_CEILING) * HALF


def price(weight, zone, express):
    base, rate = ZONES[zone]
    steps = (weight - 2) / HALF
    if weight <= 2:
        cost = base
    elif weight <= 10:
        cost = base + rate * steps
    else:
        cost = base + rate * 16 + 2 * rate * ((weight - 10) / HALF)
    if express:
        cost = cost * Decimal("1.5")
    return cost.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def quote(line):
    parts = line.split()
    if len(parts) not in (2, 3) or (len(parts) == 3 and parts[2] != "express"):
        return None
    try:
        weight = Decimal(parts[0])
    except InvalidOperation:
        return None
    zone = parts[1].lower()
    if weight <= 0 or weight > 30 or zone not in ZONES:
        return None
    weight = charged(weight)
    return weight, zone, price(weight, zone, len(parts) == 3)


def run(text):
    out = []
    total = Decimal(0)
    for line in text.splitlines():
        if not line.strip():
            continue
        quoted = quote(line)
        if quoted is None:
            out.append(f"rejected: {line.strip()}")
            continue
        weight, zone, cost = quoted
        total += cost
        out.append(f"{weight:.1f} {zone} {cost}")
    out.append(f"total: {total:.2f}")
    return "\n".join(out)
