"""Deterministic case generator (replace with yours): seed -> cases.jsonl and inputs/<case>/requests.json, one
request sequence per case, written from SPEC.md only."""

import hashlib
import json
import random
import sys
from pathlib import Path

NOTES = {"name": "notes", "sql": "select id, text from notes order by id"}
NOTE = "{" * 2 + "note" + "}" * 2  # in a later step: the id the first answer gave (captured as "note")


def case_id(seed, name):
    return "c-" + hashlib.sha256(f"{seed}:{name}".encode()).hexdigest()[:12]


def add(step, text):
    body = {"text": text} if text is not None else {}
    return {"id": step, "method": "POST", "path": "/notes", "json": body, "capture": {"note": "$.id"},
            "select": {"error": "$.error", "id": "$.id"}}


def read(step, path):
    return {"id": step, "path": path, "select": {"error": "$.error", "id": "$.id", "text": "$.text",
                                                "count": "$.count"}}


def cases(rng):
    texts = ["".join(rng.choice("abcdefghij ") for _ in range(rng.randint(1, 30))).strip() or "x" for _ in range(4)]
    yield "add-and-read", [add("add", texts[0]), read("read", f"/notes/{NOTE}"), read("count", "/notes")]
    yield "several", [add(f"add-{i}", t) for i, t in enumerate(texts)] + [read("count", "/notes")]
    yield "unicode", [add("add", "Grüße ☃ 😀"), read("read", "/notes/1")]
    yield "bad-notes", [add("empty", ""), add("missing", None), add("long", "x" * 201),
                        {"id": "malformed", "method": "POST", "path": "/notes", "text": "{not json",
                         "select": {"error": "$.error"}}, read("count", "/notes")]
    yield "not-found", [read("missing", f"/notes/{rng.randint(2, 99)}"), add("add", texts[1]),
                        read("still-missing", "/notes/2")]
    yield "at-the-limits", [add("longest", "y" * 200), add("one-char", "z"), read("count", "/notes")]


def main():
    seed, out = sys.argv[1], Path(sys.argv[2])
    rng = random.Random(f"notes:{seed}")
    written = []
    for name, steps in cases(rng):
        cid = case_id(seed, name)
        (out / "inputs" / cid).mkdir(parents=True)
        plan = {"schema_version": 1, "steps": steps, "queries": [NOTES]}
        (out / "inputs" / cid / "requests.json").write_text(json.dumps(plan, ensure_ascii=False, indent=1))
        written.append({"case": cid, "inputs": f"inputs/{cid}"})
    written.sort(key=lambda c: c["case"])  # the order says nothing about what a case tests
    (out / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in written))


if __name__ == "__main__":
    main()
