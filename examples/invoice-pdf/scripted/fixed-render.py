"""Render an invoice (JSON) as invoice.pdf and invoice.html: see spec/README.md."""

import html
import json
import re
import sys
import textwrap
import unicodedata
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

from fpdf import FPDF

WIDTH = 40
LINE = 6
MONEY = re.compile(r"\d{1,7}\.\d{2}")
RATE = re.compile(r"\d{1,2}(\.\d{1,2})?")


class Invalid(Exception):
    pass


def load(path):
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise Invalid(f"not UTF-8 JSON ({exc})") from None
    if not isinstance(data, dict):
        raise Invalid("not an object")
    for field in ("number", "date", "customer", "currency", "tax_rate", "items"):
        if field not in data:
            raise Invalid(f"missing {field}")
    if not re.fullmatch(r"[A-Za-z0-9-]{1,20}", str(data["number"])):
        raise Invalid("bad number")
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(data["date"])):
        raise Invalid("bad date")
    if not re.fullmatch(r"[A-Z]{3}", str(data["currency"])):
        raise Invalid("bad currency")
    if not isinstance(data["tax_rate"], str) or not RATE.fullmatch(data["tax_rate"]):
        raise Invalid("bad tax_rate")
    data["customer"] = text(data["customer"], 60, "customer")
    items = data["items"]
    if not isinstance(items, list) or not 1 <= len(items) <= 8:
        raise Invalid("1 to 8 items")
    data["items"] = [item_of(i) for i in items]
    return data


def text(value, longest, what):
    if not isinstance(value, str) or not 1 <= len(value) <= longest:
        raise Invalid(f"bad {what}")
    value = unicodedata.normalize("NFC", value)
    try:
        value.encode("latin-1")
    except UnicodeEncodeError:
        raise Invalid(f"{what} is not Latin-1") from None
    return value


def item_of(item):
    if not isinstance(item, dict):
        raise Invalid("an item is not an object")
    quantity, price = item.get("quantity"), item.get("unit_price")
    if not isinstance(quantity, int) or isinstance(quantity, bool) or not 1 <= quantity <= 999:
        raise Invalid("bad quantity")
    if not isinstance(price, str) or not MONEY.fullmatch(price):
        raise Invalid("bad unit_price")
    description = text(item.get("description"), 120, "description")
    return {"description": description, "quantity": quantity, "unit_price": Decimal(price)}


def totals(invoice):
    amounts = [i["quantity"] * i["unit_price"] for i in invoice["items"]]
    subtotal = sum(amounts, Decimal("0.00"))
    tax = (subtotal * Decimal(invoice["tax_rate"]) / 100).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    return amounts, subtotal, tax, subtotal + tax


def write_pdf(invoice, out):
    amounts, subtotal, tax, total = totals(invoice)
    pdf = FPDF(format="A4")
    pdf.set_title(f"Invoice {invoice['number']}")
    pdf.set_creator("invoice-pdf")
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)

    def line(value):
        pdf.cell(0, LINE, value, new_x="LMARGIN", new_y="NEXT")

    line(f"INVOICE {invoice['number']}")
    line(f"Date: {invoice['date']}")
    line(f"Bill to: {invoice['customer']}")
    for k, (item, amount) in enumerate(zip(invoice["items"], amounts, strict=True), start=1):
        parts = textwrap.wrap(item["description"], WIDTH)
        line(f"{k}. {parts[0]}")
        for part in parts[1:]:  # the rest of a long description
            line(part)
        line(f"{item['quantity']} x {item['unit_price']} = {amount}")
    line(f"Subtotal: {subtotal}")
    line(f"Tax {invoice['tax_rate']}%: {tax}")
    line(f"Total: {total} {invoice['currency']}")
    pdf.output(str(out / "invoice.pdf"))


def write_html(invoice, out):
    amounts, subtotal, tax, total = totals(invoice)
    e = html.escape
    name = unicodedata.normalize("NFC", invoice["customer"])  # the spec's form C
    rows = "".join(f"<tr><td>{e(i['description'])}</td><td>{i['quantity']}</td><td>{i['unit_price']}</td>"
                   f"<td>{a}</td></tr>" for i, a in zip(invoice["items"], amounts, strict=True))
    page = (f"<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Invoice {e(invoice['number'])}"
            f"</title></head><body><h1>Invoice {e(invoice['number'])}</h1><p>Date: {e(invoice['date'])}</p>"
            f"<p>Bill to: {e(name)}</p><table><tr><th>Description</th><th>Quantity</th><th>Unit price</th>"
            f"<th>Amount</th></tr>{rows}</table><table><tr><td>Subtotal</td><td>{subtotal}</td></tr>"
            f"<tr><td>Tax {e(invoice['tax_rate'])}%</td><td>{tax}</td></tr><tr><td>Total</td>"
            f"<td>{total} {e(invoice['currency'])}</td></tr></table></body></html>\n")
    (out / "invoice.html").write_text(page, encoding="utf-8")


def main():
    if len(sys.argv) not in (3, 4) or sys.argv[3:] not in ([], ["pdf"], ["html"]):
        print("usage: render.py INVOICE OUTDIR [pdf|html]", file=sys.stderr)
        return 2
    try:
        invoice = load(sys.argv[1])
    except Invalid as exc:
        print(f"invalid invoice: {exc}", file=sys.stderr)
        return 2
    out, which = Path(sys.argv[2]), sys.argv[3:] or ["pdf", "html"]
    if "pdf" in which:
        write_pdf(invoice, out)
    if "html" in which:
        write_html(invoice, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
