"""A product listing with search and pages (see spec.md)."""

import json
from urllib.parse import parse_qs

PRODUCTS = [
    ("Kettle", "kitchen", 2999), ("Teapot", "kitchen", 1999), ("Mug", "kitchen", 499),
    ("Lamp", "home", 2999), ("Rug", "home", 8900), ("Clock", "home", 1500),
    ("Pen", "office", 150), ("Stapler", "office", 900), ("Desk lamp", "office", 2999),
    ("Notebook", "office", 350), ("Tea towel", "kitchen", 350), ("Cushion", "home", 1200),
]
SORTS = ("name", "price")


def number(params, key, default, low, high):
    raw = params.get(key, [str(default)])[0]
    if not (raw.isascii() and raw.isdigit()):
        return None
    value = int(raw)
    if value < low or value > high:
        return None
    return value


def listing(query):
    params = parse_qs(query, keep_blank_values=True)
    page = number(params, "page", 1, 1, 10**6)
    if page is None:
        return {"error": "page"}
    size = number(params, "size", 5, 1, 20)
    if size is None:
        return {"error": "size"}
    sort = params.get("sort", ["name"])[0]
    if sort not in SORTS:
        return {"error": "sort"}
    word = params.get("q", [""])[0].strip().lower()
    kept = [p for p in PRODUCTS if word in p[0].lower()]
    if sort == "price":
        kept = sorted(kept, key=lambda p: (p[2], p[0]))
    else:
        kept = sorted(kept, key=lambda p: p[0])
    pages = max(1, -(-len(kept) // size))
    start = (page - 1) * size
    return {"items": [p[0] for p in kept[start:start + size]], "page": page, "pages": pages, "total": len(kept)}


def run(text):
    return "\n".join(json.dumps(listing(line), sort_keys=True) for line in text.splitlines())
