"""Deterministic case generator for csvkit-stats: seed -> cases.jsonl, inputs/<case>/{table.csv,format.txt},
pairs.jsonl, canaries.jsonl.

Every table has the same four columns (an id, an amount, a quantity, a city); what varies is the values, the null
spellings, the number spellings csvstat documents it reads, the line endings and the decimal format asked for."""

import csv
import hashlib
import io
import json
import random
import sys
from pathlib import Path

CITIES = ["Oslo", "Bergen", "Tromsø", "Ålesund", "Bodø"]
NULLS = ["", "n/a", "NA", ".", "null", "None"]  # the values --blanks lists as read as null, in several cases
FORMATS = ["%.3f", "%.2f", "%.1f", "%.0f"]


def case_id(seed, name):
    return "c-" + hashlib.sha256(f"{seed}:{name}".encode()).hexdigest()[:12]


def amount(rng, spelled):
    cents = rng.randint(-5000, 250000)
    text = f"{'-' if cents < 0 else ''}{abs(cents) // 100}.{abs(cents) % 100:02d}"
    if spelled and cents >= 100000 and rng.random() < 0.5:
        whole = abs(cents) // 100
        text = f"{whole // 1000},{whole % 1000:03d}.{abs(cents) % 100:02d}"  # a grouping separator
    elif spelled and cents > 0 and rng.random() < 0.2:
        text = "$" + text  # a currency symbol
    return text


def quantity(rng, spelled):
    q = rng.choice([0, 10, 20, 30, rng.randint(2, 60)])  # round values: a format must keep their zeros
    return f"{q:03d}" if spelled and rng.random() < 0.2 else str(q)


def table(rng, *, spelled=False, nulls=False):
    rows = []
    for k in range(rng.randint(3, 9)):
        row = [f"r{k:03d}", amount(rng, spelled), quantity(rng, spelled), rng.choice(CITIES)]
        if k == 0:  # the row every table keeps whole: a quantity that is no boolean, so the column reads as numbers
            row[2] = str(rng.randint(2, 60))
        if nulls and k:  # the first row keeps every value: no column is null throughout
            for col in rng.sample([1, 2, 3], rng.randint(0, 2)):
                row[col] = rng.choice(NULLS)
        rows.append(row)
    return rows


def write(out, seed, name, rows, fmt, *, crlf=False, bom=False):
    cid = case_id(seed, name)
    folder = out / "inputs" / cid
    folder.mkdir(parents=True)
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n" if crlf else "\n").writerows([["id", "amount", "qty", "city"], *rows])
    (folder / "table.csv").write_bytes((b"\xef\xbb\xbf" if bom else b"") + buffer.getvalue().encode("utf-8"))
    (folder / "format.txt").write_text(fmt + "\n")
    return {"case": cid, "inputs": f"inputs/{cid}"}


def main():
    seed, out = sys.argv[1], Path(sys.argv[2])
    rng = random.Random(f"csvkit-stats:{seed}")
    cases, pairs = [], []
    for k in range(8):
        rows, fmt = table(rng), FORMATS[k % len(FORMATS)]
        cases.append(write(out, seed, f"plain-{k}", rows, fmt))
        if k < 2:
            shuffled = rows[:]
            rng.shuffle(shuffled)
            cases.append(write(out, seed, f"shuffled-{k}", shuffled, fmt))
            pairs.append({"relation": "row-order-changes-nothing", "a": cases[-2]["case"], "b": cases[-1]["case"]})
    for k in range(4):
        cases.append(write(out, seed, f"spelled-{k}", table(rng, spelled=True), FORMATS[k]))
        cases.append(write(out, seed, f"nulls-{k}", table(rng, nulls=True), FORMATS[k]))
    cases.append(write(out, seed, "crlf-bom", table(rng), "%.2f", crlf=True, bom=True))
    canary = write(out, seed, "plain-more", table(rng), "%.3f")
    cases.append(canary)
    cases.sort(key=lambda c: c["case"])  # the order says nothing about what a case tests
    (out / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (out / "pairs.jsonl").write_text("".join(json.dumps(p) + "\n" for p in pairs))
    (out / "canaries.jsonl").write_text(json.dumps({"case": canary["case"], "kind": "impossible"}) + "\n")


if __name__ == "__main__":
    main()
