"""Deterministic case generator for invoice-pdf: seed -> cases.jsonl and inputs/<case>/invoice.json.

Every invoice becomes two cases, one scored on its PDF and one on its HTML (a case reads one document); the
chaos cases (a PNG named invoice.json, an empty file, nine items, a description of a megabyte) expect a refusal
and no document."""

import hashlib
import json
import random
import sys
import unicodedata
from pathlib import Path

NAMES = ["Zoë Ångström", "José Núñez", "Ana Müller", "Chloé Dubois", "Søren Kierkegård", "Łukasz Nowak",
         "Ines Peña", "Mårten Öberg"]
WORDS = ["oak", "desk", "lamp", "cable", "steel", "frame", "blue", "walnut", "panel", "spare", "kit", "chair",
         "assembly", "delivery", "service", "hours", "screws", "glass", "shelf", "extra-long"]
PDF = {"file": "invoice.pdf", "format": "pdf", "parts": ["pages", "line", "meta:title"],
       "volatile": [{"name": "created", "pattern": "D:\\d{14}Z?", "replace": "D:0"},
                    {"name": "file-id", "pattern": "/ID \\[<[0-9A-F]+><[0-9A-F]+>\\]", "replace": "/ID []"}]}
HTML = {"file": "invoice.html", "format": "html", "parts": ["h1", "block", "table", "script", "meta:title"]}
REFUSED = {"file": "invoice.pdf", "format": "pdf", "failed_output": "none"}


def case_id(seed, name):
    return "c-" + hashlib.sha256(f"{seed}:{name}".encode()).hexdigest()[:12]


def description(rng, long):
    words = rng.randint(9, 16) if long else rng.randint(1, 4)
    text = " ".join(rng.choice(WORDS) for _ in range(words))
    return text[:120].rstrip()


def invoice(rng, n, half=False, long=False):
    items = [{"description": description(rng, long and k == 0), "quantity": rng.randint(1, 12),
              "unit_price": f"{rng.randint(1, 40000) / 100:.2f}"} for k in range(rng.randint(1, 5))]
    rate = "10" if half else rng.choice(["20", "7.5", "19", "5.5"])
    if half:  # a subtotal whose cents end in 25: a tax of 10% ends in a half cent after an even digit
        cents = sum(i["quantity"] * round(float(i["unit_price"]) * 100) for i in items)
        extra = (25 - cents) % 100 + 100 * rng.randint(0, 5)
        items.append({"description": "rounding adjustment", "quantity": 1, "unit_price": f"{extra / 100:.2f}"})
    return {"number": f"INV-{rng.randint(1, 99999):05d}-{n}", "date": f"2026-{rng.randint(1, 12):02d}-"
            f"{rng.randint(1, 28):02d}", "customer": rng.choice(NAMES), "currency": rng.choice(["EUR", "USD"]),
            "tax_rate": rate, "items": items}


def write(out, seed, name, data, extract, argv=()):
    cid = case_id(seed, name)
    folder = out / "inputs" / cid
    folder.mkdir(parents=True)
    (folder / "invoice.json").write_bytes(data if isinstance(data, bytes) else
                                          json.dumps(data, ensure_ascii=False, indent=1).encode("utf-8"))
    return {"case": cid, "inputs": f"inputs/{cid}", "extract": extract, **({"argv": list(argv)} if argv else {})}


def both(out, seed, name, data, cases):
    cases.append(write(out, seed, f"{name}-pdf", data, PDF, ["pdf"]))
    cases.append(write(out, seed, f"{name}-html", data, HTML, ["html"]))


def main():
    seed, out = sys.argv[1], Path(sys.argv[2])
    rng = random.Random(f"invoice-pdf:{seed}")
    cases = []
    for k in range(4):
        both(out, seed, f"plain-{k}", invoice(rng, k, half=k % 2 == 0, long=k < 3), cases)
    decomposed = invoice(rng, 5, long=True)
    decomposed["customer"] = unicodedata.normalize("NFD", decomposed["customer"])
    both(out, seed, "decomposed", decomposed, cases)
    active = invoice(rng, 6)
    active["items"][0]["description"] = "<script>alert('paid')</script>"
    both(out, seed, "active", active, cases)
    bom = invoice(rng, 7, half=True)
    cases.append(write(out, seed, "bom", b"\xef\xbb\xbf" + json.dumps(bom).encode("utf-8"), PDF, ["pdf"]))
    nine = invoice(rng, 8)
    nine["items"] = (nine["items"] * 9)[:9]
    huge = invoice(rng, 9)
    huge["items"][0]["description"] = "x" * (1 << 20)
    for name, data in (("png", b"\x89PNG\r\n\x1a\n" + bytes(rng.randrange(256) for _ in range(256))),
                       ("empty", b""), ("nine", nine), ("huge", huge)):
        cases.append(write(out, seed, name, data, REFUSED))
    cases.sort(key=lambda c: c["case"])  # the order says nothing about what a case tests
    (out / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))


if __name__ == "__main__":
    main()
