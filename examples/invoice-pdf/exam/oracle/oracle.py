"""Independent oracle for invoice-pdf: the spec's rows of each case's document, computed from the invoice alone.

usage: oracle.py VISIBLE OUT  -> OUT/answers.jsonl, OUT/behaviors.jsonl

It never renders a document: it states what a reader must find in one that keeps the spec (the lines of the PDF,
the headings, paragraphs and table rows of the HTML), with amounts in exact decimals.
"""

import json
import re
import sys
import textwrap
import unicodedata
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path


def valid(raw):
    """The invoice, or None where the spec refuses it."""
    try:
        data = json.loads(raw.decode("utf-8").removeprefix("\ufeff"))
    except (UnicodeDecodeError, ValueError):
        return None
    fields = ("number", "date", "customer", "currency", "tax_rate", "items")
    if not isinstance(data, dict) or not all(k in data for k in fields):
        return None
    items = data["items"]
    ok = (re.fullmatch(r"[A-Za-z0-9-]{1,20}", str(data["number"])) and re.fullmatch(r"\d{4}-\d{2}-\d{2}",
          str(data["date"])) and re.fullmatch(r"[A-Z]{3}", str(data["currency"]))
          and isinstance(data["tax_rate"], str) and re.fullmatch(r"\d{1,2}(\.\d{1,2})?", data["tax_rate"])
          and _name(data["customer"], 60) and isinstance(items, list) and 1 <= len(items) <= 8
          and all(isinstance(i, dict) and _name(i.get("description"), 120) and type(i.get("quantity")) is int
                  and 1 <= i["quantity"] <= 999 and isinstance(i.get("unit_price"), str)
                  and re.fullmatch(r"\d{1,7}\.\d{2}", i["unit_price"]) for i in items))
    return data if ok else None


def _name(value, longest):
    if not isinstance(value, str) or not 1 <= len(value) <= longest:
        return False
    return all(ord(c) < 256 for c in unicodedata.normalize("NFC", value))


def money(value):
    return f"{value:.2f}"


def figures(inv):
    amounts = [Decimal(i["quantity"]) * Decimal(i["unit_price"]) for i in inv["items"]]
    subtotal = sum(amounts, Decimal(0))
    tax = (subtotal * Decimal(inv["tax_rate"]) / Decimal(100)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    return amounts, subtotal, tax, subtotal + tax


def pdf_rows(inv):
    amounts, subtotal, tax, total = figures(inv)
    lines = [f"INVOICE {inv['number']}", f"Date: {inv['date']}", f"Bill to: {nfc(inv['customer'])}"]
    for k, (item, amount) in enumerate(zip(inv["items"], amounts, strict=True), start=1):
        first, *rest = textwrap.wrap(nfc(item["description"]), 40)
        lines += [f"{k}. {first}", *rest, f"{item['quantity']} x {item['unit_price']} = {money(amount)}"]
    lines += [f"Subtotal: {money(subtotal)}", f"Tax {inv['tax_rate']}%: {money(tax)}",
              f"Total: {money(total)} {inv['currency']}"]
    # the creation date is in the metadata read (once); the file's id only in its bytes (never among the values)
    rows = [("pages", "1", "1"), ("meta", "title", f"Invoice {inv['number']}"), ("volatile", "created", "1"),
            ("volatile", "file-id", "0")]
    return rows + [("line", f"1.{n}", " ".join(text.split())) for n, text in enumerate(lines, start=1)]


def html_rows(inv):
    amounts, subtotal, tax, total = figures(inv)
    rows = [("meta", "title", f"Invoice {inv['number']}"), ("h1", "1", f"Invoice {inv['number']}"),
            ("block", "1", f"Date: {inv['date']}"), ("block", "2", f"Bill to: {nfc(inv['customer'])}"),
            ("table", "1.1", "Description | Quantity | Unit price | Amount")]
    for r, (item, amount) in enumerate(zip(inv["items"], amounts, strict=True), start=2):
        cells = [" ".join(nfc(item["description"]).split()), str(item["quantity"]), item["unit_price"], money(amount)]
        rows.append(("table", f"1.{r}", " | ".join(cells)))
    rows += [("table", "2.1", f"Subtotal | {money(subtotal)}"), ("table", "2.2", f"Tax {inv['tax_rate']}% | "
             f"{money(tax)}"), ("table", "2.3", f"Total | {money(total)} {inv['currency']}")]
    return rows


def nfc(text):
    return unicodedata.normalize("NFC", text)


def main():
    visible, out = Path(sys.argv[1]), Path(sys.argv[2])
    answers, behaviors = [], []
    for line in (visible / "cases.jsonl").read_text().splitlines():
        case = json.loads(line)
        inv = valid((visible / case["inputs"] / "invoice.json").read_bytes())
        behaviors.append({"case": case["case"], "behavior": "accepted" if inv else "rejected"})
        if inv is None:
            continue
        rows = pdf_rows(inv) if case["extract"]["format"] == "pdf" else html_rows(inv)
        answers += [{"case": case["case"], "part": p, "n": n, "value": v} for p, n, v in rows]
    (out / "answers.jsonl").write_text("".join(json.dumps(a, ensure_ascii=False) + "\n" for a in answers))
    (out / "behaviors.jsonl").write_text("".join(json.dumps(b) + "\n" for b in behaviors))


if __name__ == "__main__":
    main()
