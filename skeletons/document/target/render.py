"""Placeholder target of the document skeleton: it meets spec/README.md, so the skeleton runs at once.

Replace this folder with your program (only the builder writes here during a run), and target.yaml's `run`
with its command line. usage: render.py DOC.txt PAGE.html
"""

import html
import sys
import unicodedata


def page(text: str) -> str:
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
    e = html.escape
    items = "".join(f"<li>{e(tag)}</li>" for tag in tags)
    return (f"<!doctype html><html><head><meta charset=\"utf-8\"><title>{e(meta['title'])}</title></head><body>"
            f"<h1>{e(meta['title'])}</h1>" + (f"<ul>{items}</ul>" if tags else "")
            + "".join(f"<h2>{e(h)}</h2>" for h in headings) + "</body></html>\n")


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    try:
        with open(sys.argv[1], encoding="utf-8-sig") as f:
            text = unicodedata.normalize("NFC", f.read())
    except UnicodeDecodeError:
        sys.exit("not UTF-8 text")
    written = page(text)
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        f.write(written)


if __name__ == "__main__":
    main()
