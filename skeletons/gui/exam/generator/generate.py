"""Deterministic case generator (replace with yours): seed -> cases.jsonl and inputs/<case>/ui.json, one browser
session per case over the empty database, written from SPEC.md only. Each case is triggered through the page and
asserted through the machine channels: the notes table after the case, the page's address and its status and
alert lines after each submit."""

import hashlib
import json
import random
import sys
from pathlib import Path

NOTES = {"name": "notes", "sql": "select id, text from notes order by id"}
AFTER = {"where": "url", "shown": "text:role:status", "problem": "text:role:alert"}


def case_id(seed, name):
    return "c-" + hashlib.sha256(f"{seed}:{name}".encode()).hexdigest()[:12]


def add(step, text):
    return [{"id": f"{step}-text", "do": "fill", "target": "label:Note", "value": text},
            {"id": step, "do": "click", "target": "role:button:Add", "read": AFTER}]


def cases(rng):
    texts = ["".join(rng.choice("abcdefghij") for _ in range(rng.randint(1, 30))) for _ in range(4)]
    opened = {"id": "open", "do": "goto", "path": "/", "read": {"where": "url", "shown": "text:role:status"}}
    yield "add-one", [opened, *add("add", texts[0])]
    yield "several", [opened, *(s for i, t in enumerate(texts) for s in add(f"add-{i}", t))]
    yield "unicode", [opened, *add("add", "Grüße ☃ 😀")]
    yield "bad-notes", [opened, *add("empty", ""), *add("long", "x" * 201), *add("spaces", "   "),
                        *add("then-good", texts[1])]
    yield "at-the-limit", [opened, *add("longest", "y" * 200), *add("one-char", "z")]


def main():
    seed, out = sys.argv[1], Path(sys.argv[2])
    rng = random.Random(f"notes-gui:{seed}")
    written = []
    for name, steps in cases(rng):
        cid = case_id(seed, name)
        (out / "inputs" / cid).mkdir(parents=True)
        plan = {"schema_version": 1, "steps": steps, "queries": [NOTES]}
        (out / "inputs" / cid / "ui.json").write_text(json.dumps(plan, ensure_ascii=False, indent=1))
        written.append({"case": cid, "inputs": f"inputs/{cid}"})
    written.sort(key=lambda c: c["case"])  # the order says nothing about what a case tests
    (out / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in written))


if __name__ == "__main__":
    main()
