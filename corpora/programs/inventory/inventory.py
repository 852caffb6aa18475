"""Stock on hand and reorder list from movements (see spec.md)."""

import csv
import io

LOW = 5


def rows(text):
    text = text.removeprefix("\ufeff")
    reader = csv.reader(io.StringIO(text))
    header = [name.strip().lower() for name in next(reader)]
    for number, cells in enumerate(reader, start=2):
        if not any(cell.strip() for cell in cells):
            continue
        yield number, dict(zip(header, cells))


def tally(text):
    stock = {}
    moves = 0
    for number, row in rows(text):
        kind = row["kind"].strip().lower()
        sku = row["sku"].strip()
        qty = int(row["qty"])
        if kind == "in":
            stock[sku] = stock.get(sku, 0) + qty
        elif kind == "out":
            stock[sku] = stock.get(sku, 0) - qty
        else:
            raise ValueError(f"bad kind on line {number}")
        moves += 1
    return stock, moves


def run(text):
    try:
        stock, moves = tally(text)
    except ValueError as exc:
        return str(exc)
    skus = sorted(stock)
    out = [f"{sku} {stock[sku]}" for sku in skus]
    low = [sku for sku in skus if stock[sku] <= LOW]
    out.append(" ".join(["reorder:", *low]))
    out.append(f"movements: {moves}")
    return "\n".join(out)
