"""The document reader of a case whose output is a document: it runs *inside* a jail of its own, after the case's
run, over the one file the extract rule names, and prints what it read as rows.

It is copied into the case's folder and run by its path with the interpreter's own environment (the jail does not
show this package): ``python -I reader.py FORMAT FILE``. Each row is one JSON line ``{"part", "n", "value"}``:

- ``pages`` (n ``1``): the page count (PDF);
- ``page`` (n the page number): the page's text, each line stripped, blank lines dropped (PDF);
- ``line`` (n ``page.line``): each such line on its own (PDF);
- ``h1`` .. ``h6`` (n the heading's place among all headings): a heading's text (HTML, Markdown, DOCX);
- ``block`` (n its place): a paragraph or list item outside tables, in reading order (HTML, Markdown, DOCX);
- ``table`` (n ``table.row``): a table row, its cells' texts joined by `` | `` (HTML, Markdown, DOCX);
- ``link`` (n its place): a link's target (PDF, HTML, Markdown, DOCX);
- ``meta`` (n the field: title, author, subject, language...): a metadata field;
- ``font`` (n its place, sorted by name): a font the document names (PDF, DOCX);
- ``script`` (n its place): active content: ``javascript`` (PDF actions, HTML script elements), ``event:<name>``
  (an HTML on* attribute), ``javascript-url`` (a javascript: link), ``macros`` (a DOCX with a VBA project),
  ``open-action`` (a PDF action run on opening).

Text is Unicode NFC with runs of white space as one space. Exit codes: 0 read, 4 not a readable document of that
format (one JSON line ``{"error": ...}``), 2 bad usage. A bomb ends here, under the jail's limits, never in the
orchestrator.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import unicodedata
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

READ, UNREADABLE, USAGE = 0, 4, 2
Row = tuple[str, str, str]
_SPACE = re.compile(r"\s+")
_BLOCKS = {"p", "li", "dt", "dd", "blockquote", "pre", "figcaption", "caption"}
MAX_DEPTH = 512  # deeper HTML is refused, not walked (a page nested 10,000 deep is an attack, not a layout)


def text(value: str) -> str:
    return _SPACE.sub(" ", unicodedata.normalize("NFC", value)).strip()


def read_pdf(path: Path) -> Iterator[Row]:
    from pypdf import PdfReader

    reader = PdfReader(path, strict=False)
    yield "pages", "1", str(len(reader.pages))
    links, fonts = 0, set()
    for number, page in enumerate(reader.pages, start=1):
        lines = [text(line) for line in (page.extract_text() or "").splitlines()]
        lines = [line for line in lines if line]
        yield "page", str(number), "\n".join(lines)
        for i, line in enumerate(lines, start=1):
            yield "line", f"{number}.{i}", line
        for annot in page.get("/Annots") or []:
            action = annot.get_object().get("/A") or {}
            if action.get("/URI") is not None:
                links += 1
                yield "link", str(links), str(action["/URI"])
        fonts |= _pdf_fonts(page)
    yield from _numbered("font", sorted(fonts))
    yield from _meta({str(k).lstrip("/").lower(): v for k, v in (reader.metadata or {}).items()})
    yield from _numbered("script", _pdf_scripts(reader))


def _pdf_fonts(page: Any) -> set[str]:
    resources = page.get("/Resources") or {}
    fonts = resources.get_object().get("/Font") if hasattr(resources, "get_object") else None
    return {str(f.get_object().get("/BaseFont", "")).lstrip("/") for f in (fonts or {}).values()} - {""}


def _pdf_scripts(reader: Any) -> list[str]:
    root = reader.trailer["/Root"]
    found = []
    names = root.get("/Names")
    if names is not None and "/JavaScript" in names.get_object():
        found.append("javascript")
    action = root.get("/OpenAction")
    if action is not None and hasattr(action.get_object(), "get") and action.get_object().get("/S") is not None:
        found.append("open-action")
    if "/AA" in root:
        found.append("open-action")
    return sorted(set(found))


def read_html(path: Path) -> Iterator[Row]:
    import lxml.html

    data = path.read_bytes()
    if not data.strip():
        raise ValueError("empty file")
    return _html_rows(lxml.html.document_fromstring(data, parser=_html_parser()))


def read_markdown(path: Path) -> Iterator[Row]:
    import lxml.html
    from markdown_it import MarkdownIt

    html = MarkdownIt("commonmark", {"html": False}).enable("table").render(path.read_text(encoding="utf-8"))
    return _html_rows(lxml.html.document_fromstring(f"<html><body>{html}</body></html>", parser=_html_parser()))


def _html_parser() -> Any:
    """libxml2 stops reading past 256 levels and keeps what it read, in silence: a script nested deeper would never
    be seen. Without that bound it reads on, and ``_walk`` refuses what is deeper than ``MAX_DEPTH``."""
    import lxml.html

    return lxml.html.HTMLParser(huge_tree=True)


def _html_rows(root: Any) -> Iterator[Row]:
    counts: dict[str, int] = {}
    scripts: list[str] = []
    rows: list[Row] = []
    _walk(root, 0, rows, counts, scripts)
    yield from rows
    title = root.findtext(".//title")
    meta = {"title": title} if title else {}
    if root.get("lang"):
        meta["language"] = root.get("lang")
    for tag in root.iter("meta"):
        if tag.get("name") and tag.get("content") is not None:
            meta[tag.get("name").lower()] = tag.get("content")
    yield from _meta(meta)
    yield from _numbered("script", scripts)


def _walk(node: Any, depth: int, rows: list[Row], counts: dict[str, int], scripts: list[str]) -> None:
    if depth > MAX_DEPTH:
        raise ValueError(f"elements nested deeper than {MAX_DEPTH}")
    tag = node.tag if isinstance(node.tag, str) else ""
    scripts += [f"event:{name}" for name in sorted(node.attrib) if name.lower().startswith("on")]
    if tag == "script":
        scripts.append("javascript")
        return
    if tag == "a" and node.get("href") is not None:
        href = node.get("href").strip()
        if href.lower().startswith("javascript:"):
            scripts.append("javascript-url")
        rows.append(("link", _next(counts, "link"), href))
    if tag in {"h1", "h2", "h3", "h4", "h5", "h6"}:
        rows.append((tag, _next(counts, "heading"), text(node.text_content())))
        return
    if tag == "table":
        table = _next(counts, "table")
        for r, tr in enumerate((tr for tr in node.iter("tr") if _owner(tr) is node), start=1):
            cells = [text(c.text_content()) for c in tr if isinstance(c.tag, str) and c.tag in ("td", "th")]
            rows.append(("table", f"{table}.{r}", " | ".join(cells)))
        return
    if tag in _BLOCKS and not any(isinstance(c.tag, str) and c.tag in _BLOCKS for c in node.iter()
                                  if c is not node):
        value = text(node.text_content())
        if value:
            rows.append(("block", _next(counts, "block"), value))
    for child in node:
        _walk(child, depth + 1, rows, counts, scripts)


def _owner(tr: Any) -> Any:
    parent = tr.getparent()
    while parent is not None and parent.tag != "table":
        parent = parent.getparent()
    return parent


def read_docx(path: Path) -> Iterator[Row]:
    import docx

    with zipfile.ZipFile(path) as archive:  # a zip bomb is refused by its declared sizes before it is inflated
        names = archive.namelist()
        if sum(i.file_size for i in archive.infolist()) > 256 << 20:
            raise ValueError("the archive's files would inflate past 256 MiB")
    document = docx.Document(str(path))
    counts: dict[str, int] = {}
    fonts: set[str] = set()
    for paragraph in document.paragraphs:
        style = paragraph.style.name if paragraph.style is not None else ""
        value = text(paragraph.text)
        fonts |= {run.font.name for run in paragraph.runs if run.font.name}
        level = re.fullmatch(r"Heading ([1-6])", style or "")
        if level:
            yield f"h{level.group(1)}", _next(counts, "heading"), value
        elif value:
            yield "block", _next(counts, "block"), value
    for t, table in enumerate(document.tables, start=1):
        for r, row in enumerate(table.rows, start=1):
            yield "table", f"{t}.{r}", " | ".join(text(cell.text) for cell in row.cells)
    links = [rel.target_ref for rel in document.part.rels.values() if rel.reltype.endswith("/hyperlink")]
    yield from _numbered("link", sorted(links))
    yield from _numbered("font", sorted(fonts))
    core = document.core_properties
    yield from _meta({"title": core.title, "author": core.author, "subject": core.subject,
                      "language": core.language})
    yield from _numbered("script", ["macros"] if any(n.lower().endswith("vbaproject.bin") for n in names) else [])


def _next(counts: dict[str, int], kind: str) -> str:
    counts[kind] = counts.get(kind, 0) + 1
    return str(counts[kind])


def _numbered(part: str, values: list[str]) -> Iterator[Row]:
    for i, value in enumerate(values, start=1):
        yield part, str(i), value


def _meta(fields: dict[str, Any]) -> Iterator[Row]:
    for name in sorted(fields):
        if fields[name] not in (None, ""):
            yield "meta", name, text(str(fields[name]))


READERS: dict[str, Callable[[Path], Iterator[Row]]] = {
    "pdf": read_pdf, "html": read_html, "markdown": read_markdown, "docx": read_docx,
}


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in READERS:
        print(json.dumps({"error": f"usage: reader.py {{{','.join(READERS)}}} FILE"}))
        return USAGE
    sys.setrecursionlimit(MAX_DEPTH * 4 + 200)
    logging.disable(logging.CRITICAL)  # the parsers' complaints about a broken file: its error line says enough
    try:
        rows = list(READERS[argv[0]](Path(argv[1])))
    except Exception as exc:  # whatever the file does to the parser is the file's fault: one line, no traceback
        print(json.dumps({"error": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:300]}))
        return UNREADABLE
    out = sys.stdout
    for part, n, value in rows:
        out.write(json.dumps({"part": part, "n": n, "value": value}, ensure_ascii=False) + "\n")
    return READ


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
