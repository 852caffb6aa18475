"""The document reader of a case whose output is a document: it runs *inside* a jail of its own, after the case's
run, over the one file the extract rule names, and prints what it read as rows.

It is copied into the case's folder and run by its path with the interpreter's own environment (the jail does not
show this package): ``python -I reader.py FORMAT FILE [VOLATILE]``, VOLATILE a JSON list of ``[name, pattern,
replace]``. Each row is one JSON line ``{"part", "n", "value"}``:

- ``pages`` (n ``1``): the page count (PDF);
- ``page`` (n the page number): the page's text, each line stripped, blank lines dropped (PDF);
- ``line`` (n ``page.line``): each such line on its own (PDF);
- ``h1`` .. ``h6`` (n the heading's place among all headings): a heading's text (HTML, Markdown, DOCX);
- ``block`` (n its place): a paragraph or list item outside tables, in reading order (HTML, Markdown, DOCX);
- ``table`` (n ``table.row``): a table row, its cells' texts joined by `` | `` (HTML, Markdown, DOCX);
- ``link`` (n its place): a link's target (PDF, HTML, Markdown, DOCX);
- ``meta`` (n the field: title, author, subject, language...): a metadata field;
- ``font`` (n its place, sorted by name): a font the document names (PDF, DOCX);
- ``sha256`` (n ``1``): the file's SHA-256, its volatile parts replaced first (format ``sha256``: the only row);
- ``volatile`` (n the name): how many matches of that volatile pattern were replaced (every format);
- ``hidden`` (n the page): the text on that page that a parser reads but that draws nothing a person could see
  (white on white, under a shape, an invisible render mode, a size too small to show, off the page), the first 300
  characters (PDF; a page with none has no row); in HTML and Markdown (n its place), the text of an element its own
  markup hides (the ``hidden`` attribute, an inline style with ``display: none``, ``visibility: hidden``, a zero
  font size or opacity). Kept whatever ``parts`` the rule keeps;
- ``script`` (n its place): active content: ``javascript`` (PDF actions, HTML script elements), ``event:<name>``
  (an HTML on* attribute), ``javascript-url`` (a javascript: link), ``macros`` (a DOCX with a VBA project),
  ``open-action`` (a PDF action run on opening).

``reader.py png FILE`` prints one line ``{"png": ...}``: the PDF's first page rendered (base64), for a report.

With volatile parts declared, a last line ``{"steady_sha256": ...}`` gives the file's SHA-256 with them replaced in
its bytes: what a second run of the case must give.

Text has every run of white space as one space, and is otherwise as read (never Unicode-normalised). HTML is
UTF-8 unless a byte order mark or a ``<meta charset>`` in its first 1,024 bytes says otherwise. Exit codes: 0
read, 4 not a readable document of that format (one JSON line ``{"error": ...}``), 2 bad usage. A bomb ends
here, under the jail's limits, never in the orchestrator.
"""

from __future__ import annotations

import base64
import codecs
import ctypes
import hashlib
import json
import logging
import re
import struct
import sys
import zipfile
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

READ, UNREADABLE, USAGE = 0, 4, 2
Row = tuple[str, str, str]
_SPACE = re.compile(r"\s+")
_BLOCKS = {"p", "li", "dt", "dd", "blockquote", "pre", "figcaption", "caption"}
MAX_DEPTH = 512  # deeper HTML is refused, not walked (a page nested 10,000 deep is an attack, not a layout)


def text(value: str) -> str:
    # never normalised otherwise: a name whose accent was decomposed is another text, as a search would find
    return _SPACE.sub(" ", value).strip()


def read_pdf(path: Path) -> Iterator[Row]:
    from pypdf import PdfReader

    reader = PdfReader(path, strict=False)
    yield "pages", "1", str(len(reader.pages))
    links, fonts = 0, set()
    for number, page in enumerate(reader.pages, start=1):
        contents = page.get_contents()
        if contents is not None:  # pypdf's text extraction reads a stream past its bound as empty, in silence
            contents.get_data()  # here it raises (LimitReachedError): a bomb, never a blank page
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
    yield from read_hidden(path)


def read_hidden(path: Path) -> Iterator[Row]:
    """Per page, the text a parser finds but no one sees: a text object whose drawing changes no pixel (white on
    white, under a filled shape, invisible render mode, a size too small to show, clipped away) or a character
    wholly outside the page. Such text scores for nothing: the expected text written where the eye cannot find it
    is the renderer's way to pass an extract channel with a page that shows something else."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(path)
    for number in range(len(document)):
        unseen = text("".join(_unseen(document[number])))
        if unseen:
            yield "hidden", str(number + 1), unseen[:HIDDEN_SHOWN]


HIDDEN_SHOWN = 300  # characters of a page's hidden text its row keeps: enough to recognise, never the whole page


def _unseen(page: Any) -> Iterator[str]:
    import pypdfium2.raw as pdfium_c

    textpage = page.get_textpage()
    x0, y0, x1, y1 = page.get_bbox()
    chars = [(textpage.get_text_range(i, 1), pdfium_c.FPDFText_GetTextObject(textpage.raw, i), i)
             for i in range(textpage.count_chars())]
    # white space and the breaks pdfium puts between lines show nothing: only the others are weighed
    shown = [(char, ctypes.cast(obj, ctypes.c_void_p).value, obj, i) for char, obj, i in chars if char.strip() and obj]
    sizes = Counter(key for _, key, _, _ in shown)
    drawn = {key: _draws(page, obj, sizes[key]) for _, key, obj, _ in shown}
    seen = {i for _, key, _, i in shown if drawn[key]}
    for char, _, i in chars:
        left, bottom, right, top = textpage.get_charbox(i)
        off = right < x0 or top < y0 or left > x1 or bottom > y1
        yield char if char.strip() and (off or i not in seen) else " "  # a seen character parts two hidden runs


def _draws(page: Any, obj: Any, chars: int) -> bool:
    """Whether the text object makes a mark a person could see: rendered around its bounds as it is, then with its
    text made invisible (the object stays in its place among the others, so what covers it still covers it), at
    least ``INK`` pixels a character must change by a quarter of the scale (a smudge of a 0.1 pt font does not)."""
    import pypdfium2.raw as pdfium_c

    crop = _crop(page, obj)
    if crop is None:
        return False
    mode = pdfium_c.FPDFTextObj_GetTextRenderMode(obj)
    seen = bytes(page.render(scale=2, grayscale=True, crop=crop).buffer)
    pdfium_c.FPDFTextObj_SetTextRenderMode(obj, pdfium_c.FPDF_TEXTRENDERMODE_INVISIBLE)
    unseen = bytes(page.render(scale=2, grayscale=True, crop=crop).buffer)
    pdfium_c.FPDFTextObj_SetTextRenderMode(obj, mode)
    return sum(1 for a, b in zip(seen, unseen, strict=True) if abs(a - b) >= 64) >= INK * chars


INK = 4  # pixels (at 144 dots an inch) a seen character changes at least: a 4 pt glyph changes dozens


def first_page_png(path: Path) -> bytes:
    """The PDF's first page as a person sees it (72 dots an inch, RGB), as a PNG: what a report shows beside the
    golden page. Written here, so no imaging library is needed."""
    import pypdfium2 as pdfium

    bitmap = pdfium.PdfDocument(path)[0].render(scale=1, rev_byteorder=True)
    width, height, stride = bitmap.width, bitmap.height, bitmap.stride
    raw, row = bytes(bitmap.buffer), width * 3
    lines = b"".join(b"\0" + raw[y * stride:y * stride + row] for y in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return PNG + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(lines, 9)) + chunk(b"IEND", b"")


PNG = b"\x89PNG\r\n\x1a\n"


def _crop(page: Any, obj: Any) -> tuple[float, float, float, float] | None:
    """How much to cut from each side of the rendered page to keep the object's bounds (plus a point), or None
    when they lie outside it; a rotated page, or one whose box does not start at 0, is rendered whole."""
    import pypdfium2.raw as pdfium_c

    box = [ctypes.c_float() for _ in range(4)]
    if not pdfium_c.FPDFPageObj_GetBounds(obj, *(ctypes.byref(b) for b in box)):
        return None
    left, bottom, right, top = (b.value for b in box)
    x0, y0, x1, y1 = page.get_bbox()
    if right < x0 or top < y0 or left > x1 or bottom > y1:
        return None
    if page.get_rotation() or (x0, y0) != (0, 0):
        return 0, 0, 0, 0
    return max(left - 1, 0), max(bottom - 1, 0), max(x1 - right - 1, 0), max(y1 - top - 1, 0)


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
    page = data.decode(_encoding(data), errors="replace").removeprefix("\ufeff")
    return _html_rows(lxml.html.document_fromstring(page, parser=_html_parser()))


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


_CHARSET = re.compile(rb"""<meta[^>]*charset\s*=\s*["']?([A-Za-z0-9._:-]+)""", re.IGNORECASE)
_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def _encoding(data: bytes) -> str:
    """The page's encoding: its byte order mark, else its declared charset, else UTF-8 (libxml2 alone would guess
    Latin-1 for a page that says nothing, and read every accent as two characters)."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return name
    declared = _CHARSET.search(data[:1024])
    if declared:
        try:
            return codecs.lookup(declared.group(1).decode("ascii")).name
        except LookupError:
            pass
    return "utf-8"


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
    if _hides(node):  # its text is no one's to read; its active content still counts
        if text(node.text_content()):
            rows.append(("hidden", _next(counts, "hidden"), text(node.text_content())[:HIDDEN_SHOWN]))
        for child in node:
            _walk(child, depth + 1, [], {}, scripts)
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


_HIDING = re.compile(r"display\s*:\s*none|visibility\s*:\s*(hidden|collapse)|(font-size|opacity)\s*:\s*0*\.?0+"
                     r"\s*(px|em|rem|pt|%)?\s*(;|!|$)", re.IGNORECASE)


def _hides(node: Any) -> bool:
    """An element a browser never shows by its own markup: the ``hidden`` attribute or an inline style that hides
    it. A stylesheet's rules are not evaluated (docs/documents.md)."""
    return node.get("hidden") is not None or bool(_HIDING.search(node.get("style") or ""))


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


def read_sha256(path: Path, volatile: list[Volatile]) -> Iterator[Row]:
    digest, counts = steady_bytes(path, volatile)
    yield "sha256", "1", digest
    for (name, _, _), n in zip(volatile, counts, strict=True):
        yield "volatile", name, str(n)


def steady_bytes(path: Path, volatile: list[Volatile]) -> tuple[str, list[int]]:
    """The SHA-256 of the file's bytes with every volatile pattern replaced (in order), and each one's matches."""
    data, counts = path.read_bytes(), []
    for _, pattern, replace in volatile:
        data, n = re.subn(pattern.encode("utf-8"), replace.encode("utf-8"), data)
        counts.append(n)
    return hashlib.sha256(data).hexdigest(), counts


def _steady(rows: Iterator[Row], volatile: list[Volatile]) -> Iterator[Row]:
    """Every value with the volatile parts replaced, then how many of each were."""
    compiled = [(name, re.compile(pattern), replace) for name, pattern, replace in volatile]
    counts = dict.fromkeys((name for name, _, _ in volatile), 0)
    for part, n, value in rows:
        for name, pattern, replace in compiled:
            value, found = pattern.subn(replace, value)
            counts[name] += found
        yield part, n, value
    for name, found in counts.items():
        yield "volatile", name, str(found)


READERS: dict[str, Callable[[Path], Iterator[Row]]] = {
    "pdf": read_pdf, "html": read_html, "markdown": read_markdown, "docx": read_docx,
}
Volatile = tuple[str, str, str]


def _volatile(argv: list[str]) -> list[Volatile]:
    given = json.loads(argv[2]) if len(argv) == 3 else []
    if not isinstance(given, list) or not all(isinstance(v, list) and len(v) == 3 and all(isinstance(x, str)
                                                                                          for x in v) for v in given):
        raise ValueError("VOLATILE must be a JSON list of [name, pattern, replace]")
    return [(v[0], v[1], v[2]) for v in given]


def main(argv: list[str]) -> int:
    try:
        if len(argv) not in (2, 3) or argv[0] not in (*READERS, "sha256", "png"):
            raise ValueError(f"usage: reader.py {{{','.join((*READERS, 'sha256', 'png'))}}} FILE [VOLATILE]")
        volatile = _volatile(argv)
    except ValueError as exc:
        print(json.dumps({"error": str(exc)}))
        return USAGE
    sys.setrecursionlimit(MAX_DEPTH * 4 + 200)
    logging.disable(logging.CRITICAL)  # the parsers' complaints about a broken file: its error line says enough
    path = Path(argv[1])
    try:
        if argv[0] == "png":
            sys.stdout.write(json.dumps({"png": base64.b64encode(first_page_png(path)).decode()}) + "\n")
            return READ
        rows = list(read_sha256(path, volatile) if argv[0] == "sha256" else
                    _steady(READERS[argv[0]](path), volatile))
    except Exception as exc:  # whatever the file does to the parser is the file's fault: one line, no traceback
        print(json.dumps({"error": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:300]}))
        return UNREADABLE
    out = sys.stdout
    for part, n, value in rows:
        out.write(json.dumps({"part": part, "n": n, "value": value}, ensure_ascii=False) + "\n")
    if volatile:  # what a second run must give: the file's bytes, its volatile parts replaced
        out.write(json.dumps({"steady_sha256": steady_bytes(path, volatile)[0]}) + "\n")
    return READ


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
