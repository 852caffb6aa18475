"""Placeholder target of the document skeleton: it meets spec/README.md, so the skeleton runs at once.

Replace this folder with your program (only the builder writes here during a run), and target.yaml's `run`
with its command line. usage: extract.py DOC.txt FIELDS.json
"""

import json
import sys
import unicodedata


def fields(text: str) -> list[dict[str, object]]:
    head, _, body = text.partition("\n\n")
    meta: dict[str, str] = {}
    for line in head.split("\n"):
        key, colon, value = line.partition(":")
        if colon:
            meta[key.strip().lower()] = value.strip()
    if "title" not in meta:
        sys.exit("no title")
    tags = [tag.strip() for tag in meta.get("tags", "").split(",") if tag.strip()]
    headings = [line.lstrip("#").strip() for line in body.split("\n") if line.startswith("#")]
    items = [("title", [meta["title"]]), ("tag", tags), ("heading", headings)]
    return [{"kind": kind, "n": n, "text": value} for kind, values in items for n, value in enumerate(values, 1)]


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    try:
        with open(sys.argv[1], encoding="utf-8-sig") as f:
            text = unicodedata.normalize("NFC", f.read())
    except UnicodeDecodeError:
        sys.exit("not UTF-8 text")
    rows = fields(text)
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        f.write(json.dumps(rows, ensure_ascii=False))


if __name__ == "__main__":
    main()
