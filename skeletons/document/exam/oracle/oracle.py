"""Oracle of the document skeleton: written from the spec, never from the target's code.

usage: oracle.py CASES OUT -> OUT/answers.jsonl (every value a string), OUT/behaviors.jsonl.
Replace `parse` with your spec's rules; keep it deterministic.
"""

import json
import re
import sys
import unicodedata
from pathlib import Path

HEADING = re.compile(r"^#+(.*)$", re.MULTILINE)


def parse(raw: bytes) -> dict[str, list[str]] | None:
    """The document's items by kind, or None: the spec says reject it."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    text = unicodedata.normalize("NFC", text.removeprefix("\ufeff").replace("\r\n", "\n"))
    head, _, body = text.partition("\n\n")
    pairs = (line.split(":", 1) for line in head.split("\n") if ":" in line)
    meta = {key.strip().lower(): value.strip() for key, value in pairs}
    if "title" not in meta:
        return None
    tags = [t.strip() for t in meta.get("tags", "").split(",")]
    headings = [h.strip() for h in HEADING.findall(body)]
    return {"title": [meta["title"]], "tag": [t for t in tags if t], "heading": headings}


def answers_of(case: str, found: dict[str, list[str]]) -> list[dict[str, str]]:
    """What an HTML reader must find in the page: its title (the page's and its first heading), a list item per
    tag, a second-level heading per heading (headings are numbered together, in order), each text with its runs
    of white space as one space."""
    title = " ".join(found["title"][0].split())
    rows = [("meta", "title", title), ("h1", "1", title)]
    rows += [("block", str(n), " ".join(tag.split())) for n, tag in enumerate(found["tag"], 1)]
    rows += [("h2", str(n), " ".join(h.split())) for n, h in enumerate(found["heading"], 2)]
    return [{"case": case, "part": part, "n": n, "value": value} for part, n, value in rows]


def main() -> None:
    cases, out = Path(sys.argv[1]), Path(sys.argv[2])
    answers, behaviors = [], []
    for line in (cases / "cases.jsonl").read_text().splitlines():
        case = json.loads(line)
        found = parse((cases / case["inputs"] / "doc.txt").read_bytes())
        behaviors.append({"case": case["case"], "behavior": "rejected" if found is None else "accepted"})
        answers += [] if found is None else answers_of(case["case"], found)
    (out / "answers.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers), encoding="utf-8")
    (out / "behaviors.jsonl").write_text("".join(json.dumps(b) + "\n" for b in behaviors))


if __name__ == "__main__":
    main()
