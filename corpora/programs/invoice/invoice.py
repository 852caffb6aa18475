"""Plain-text invoices from orders (see spec.md)."""

import json
from decimal import ROUND_HALF_UP, Decimal

TWO = Decimal("0.01")


def money(value):
    return value.quantize(TWO, rounding=ROUND_HALF_UP)


def check(order):
    lines = order.get("lines") or []
    if len(lines) < 1:
        return "no lines"
    for line in lines:
        qty = line["qty"]
        if not isinstance(qty, int) or qty < 1:
            return "quantity"
        if Decimal(line["price"]) < 0:
            return "price"
    return None


def render(order):
    out = [f"Invoice for {order['customer'].strip()}"]
    net = Decimal(0)
    for line in order["lines"]:
        amount = money(Decimal(line["price"]) * line["qty"])
        net += amount
        out.append(f"{line['item']} x {line['qty']} @ {line['price']} = {amount}")
    rate = Decimal(order["vat"])
    vat = money(net * rate / 100)
    out.append(f"Net: {money(net)}")
    out.append(f"VAT {order['vat']}%: {vat}")
    out.append(f"Total: {money(net + vat)}")
    return out


def run(text):
    order = json.loads(text)
    problem = check(order)
    if problem is not None:
        return f"refused: {problem}"
    return "\n".join(render(order))
