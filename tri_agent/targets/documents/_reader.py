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
import math
import operator
import re
import struct
import sys
import unicodedata
import zipfile
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

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
    links, fonts, texts = 0, set(), []
    for number, page in enumerate(reader.pages, start=1):
        contents = page.get_contents()
        if contents is not None:  # pypdf's text extraction reads a stream past its bound as empty, in silence
            contents.get_data()  # here it raises (LimitReachedError): a bomb, never a blank page
        lines = [text(line) for line in (page.extract_text() or "").splitlines()]
        lines = [line for line in lines if line]
        yield "page", str(number), "\n".join(lines)
        texts.append("\n".join(lines))
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
    yield from read_hidden(path, texts)


def read_hidden(path: Path, read: list[str]) -> Iterator[Row]:
    """Per page, the text a parser finds but no one sees (``read``: each page's text as pypdf read it). Such text
    scores for nothing: the expected text written where the eye cannot find it is a renderer's way to pass an
    extract channel with a page that shows something else. Two checks, both by pdfium:

    - *unseen*: every character pdfium lists is weighed on the page's own rendering: its text object is rendered
      again made invisible (in its place among the others, so what covers it still covers it) and the character's
      box must change at least ``INK`` pixels and an ``INK_SHARE`` of its area (white on white, under a shape or an
      image, clipped away, a tenth of a point, off the page: none does);
    - *unlisted*: letters and digits pypdf read that pdfium does not list on the page at all (a zero font size or
      scale: pdfium drops them, pypdf reads them), compared as NFKC multisets."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(path)
    for number in range(len(document)):
        listed, unseen = _weighed(document[number])
        hidden = text(f"{unseen} {_unlisted(read[number] if number < len(read) else '', listed)}")
        if hidden:
            yield "hidden", str(number + 1), hidden[:HIDDEN_SHOWN]


HIDDEN_SHOWN = 300  # characters of a page's hidden text its row keeps: enough to recognise, never the whole page
SCALE = 2  # 144 dots an inch: a 6 pt glyph is a dozen pixels high
INK, INK_SHARE = 4, 0.08  # a seen character changes this many pixels and this share of its box at least
_GRID, _SHIFTED = bytes(v >> 5 for v in range(256)), bytes((v + 16) >> 5 for v in range(256))
Box = tuple[int, int, int, int]  # device pixels: left, top, right, bottom (right and bottom excluded)


class _Char(NamedTuple):
    """A character pdfium lists, in device pixels: its glyph's box (ink is counted there) and its loose box (the
    font's height by the advance: how the run is laid out)."""

    at: int
    box: Box
    loose: Box


def _weighed(page: Any) -> tuple[str, str]:
    """The characters pdfium lists on the page (no white space), and the unseen ones (runs parted by a space)."""
    import pypdfium2.raw as pdfium_c

    textpage = page.get_textpage()
    bitmap = page.render(scale=SCALE, rev_byteorder=True)
    full = _Canvas(bytes(bitmap.buffer), bitmap.width, bitmap.height, bitmap.stride)
    device = _to_device(page, (full.width, full.height))
    objects: dict[int, tuple[Any, list[_Char]]] = {}
    chars = [textpage.get_text_range(i, 1) for i in range(textpage.count_chars())]
    for i, char in enumerate(chars):
        obj = pdfium_c.FPDFText_GetTextObject(textpage.raw, i)
        if char.strip() and obj:  # the breaks pdfium puts between lines have no object: they show nothing
            key = ctypes.cast(obj, ctypes.c_void_p).value or 0
            objects.setdefault(key, (obj, []))[1].append(
                _Char(i, device(textpage.get_charbox(i)), device(textpage.get_charbox(i, loose=True))))
    seen = {i for obj, run in objects.values() for i in _seen_chars(page, full, obj, run)}
    weighed = {c.at for _, run in objects.values() for c in run}
    unseen = "".join(c if i in weighed and i not in seen else " " for i, c in enumerate(chars))
    return "".join(c for c in chars if c.strip()), unseen


def _to_device(page: Any, size: tuple[int, int]) -> Callable[[tuple[float, float, float, float]], Box]:
    """Page space to device pixels of the page's rendering, as pdfium maps them (its rotation and origin): the
    affine map read once from three points far apart, so its rounding to whole pixels does not show."""
    import pypdfium2.raw as pdfium_c

    def device(x: float, y: float) -> tuple[int, int]:
        dx, dy = ctypes.c_int(), ctypes.c_int()
        pdfium_c.FPDF_PageToDevice(page.raw, 0, 0, size[0], size[1], 0, x, y, dx, dy)
        return dx.value, dy.value

    (ox, oy), (ax, ay), (bx, by) = device(0, 0), device(_FAR, 0), device(0, _FAR)
    xx, xy, yx, yy = (ax - ox) / _FAR, (bx - ox) / _FAR, (ay - oy) / _FAR, (by - oy) / _FAR

    def box(corners: tuple[float, float, float, float]) -> Box:
        left, bottom, right, top = corners
        points = [(ox + xx * x + xy * y, oy + yx * x + yy * y) for x, y in ((left, bottom), (right, top))]
        x0, y0 = math.floor(min(p[0] for p in points)), math.floor(min(p[1] for p in points))
        # a glyph thinner than a pixel still has one; one off the rendering has none
        x1, y1 = max(math.ceil(max(p[0] for p in points)), x0 + 1), max(math.ceil(max(p[1] for p in points)), y0 + 1)
        x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, size[0]), min(y1, size[1])
        return (x0, y0, x1, y1) if x0 < x1 and y0 < y1 else (0, 0, 0, 0)

    return box


_FAR = 100_000.0  # points: three points this far apart read pdfium's map to within a millionth


class _Canvas(NamedTuple):
    """A page rendered once, RGB: its pixels, read row by row."""

    pixels: bytes
    width: int
    height: int
    stride: int


def _seen_chars(page: Any, full: _Canvas, obj: Any, run: list[_Char]) -> Iterator[int]:
    """The characters of one text object that a person sees: the rendering around them compared with one where
    the object's text is invisible."""
    import pypdfium2.raw as pdfium_c

    live = [c.box for c in run if c.box[2] > c.box[0]]
    if not live or not _legible([c.loose for c in run if c.loose[2] > c.loose[0]], len(run)):
        return
    x0, y0 = max(min(b[0] for b in live) - 1, 0), max(min(b[1] for b in live) - 1, 0)
    x1, y1 = min(max(b[2] for b in live) + 1, full.width), min(max(b[3] for b in live) + 1, full.height)
    mode = pdfium_c.FPDFTextObj_GetTextRenderMode(obj)
    pdfium_c.FPDFTextObj_SetTextRenderMode(obj, pdfium_c.FPDF_TEXTRENDERMODE_INVISIBLE)
    try:
        crop = (x0 / SCALE, (full.height - y1) / SCALE, (full.width - x1) / SCALE, y0 / SCALE)
        bare = page.render(scale=SCALE, rev_byteorder=True, crop=crop)
    finally:
        pdfium_c.FPDFTextObj_SetTextRenderMode(obj, mode)
    was, now = full.pixels, bytes(bare.buffer)
    changed = [_changed(was[y * full.stride + x0 * 3:y * full.stride + x1 * 3],
                        now[(y - y0) * bare.stride:(y - y0) * bare.stride + (x1 - x0) * 3]) for y in range(y0, y1)]
    for c in run:
        bx0, by0, bx1, by1 = c.box
        area = (bx1 - bx0) * (by1 - by0)
        # a pixel more on every side: a thin glyph's ink falls where its box was rounded away from
        bx0, by0, bx1, by1 = max(bx0 - 1, x0), max(by0 - 1, y0), min(bx1 + 1, x1), min(by1 + 1, y1)
        ink = sum(sum(row[(bx0 - x0) * 3:(bx1 - x0) * 3]) for row in changed[by0 - y0:by1 - y0]) / 3
        if area and ink >= max(INK if area >= INK * INK else 1, INK_SHARE * area):  # a small full stop: one will do
            yield c.at


def _legible(boxes: list[Box], chars: int) -> bool:
    """Whether a text object's characters (their loose boxes) are laid out to be read: the run at least ``THICK``
    pixels across and ``ADVANCE`` pixels long a character, its characters side by side, not piled (the run at least
    ``SPREAD`` of their advances added up). A squashed line, a 1 % width or glyphs stacked on one spot are ink, not
    text. A run goes the way its characters spread; one character, the way its box is shorter (its advance)."""
    if not boxes:
        return False
    width = max(b[2] for b in boxes) - min(b[0] for b in boxes)
    height = max(b[3] for b in boxes) - min(b[1] for b in boxes)
    centres = [(b[0] + b[2], b[1] + b[3]) for b in boxes]
    spread = [max(c[k] for c in centres) - min(c[k] for c in centres) for k in (0, 1)]
    along = (0 if width <= height else 1) if len(boxes) == 1 else (0 if spread[0] >= spread[1] else 1)
    length, across = (width, height) if along == 0 else (height, width)
    advances = sum(b[2 + along] - b[along] for b in boxes)
    return across >= THICK and length >= max(ADVANCE * chars, SPREAD * advances)


THICK, ADVANCE, SPREAD = 5, 2, 0.6  # device pixels: 2.5 pt across, 1 pt a character; kerning overlaps far less


def _changed(was: bytes, now: bytes) -> bytes:
    """1 where a channel moved by 32 levels or more, 0 where by less than 16 (between: either): it moved to
    another cell on two grids of 32 levels offset by 16, so no colour near a cell's edge lets a faint smudge count."""
    return bytes(map(operator.and_, map(operator.ne, was.translate(_GRID), now.translate(_GRID)),
                     map(operator.ne, was.translate(_SHIFTED), now.translate(_SHIFTED))))


def _unlisted(read: str, listed: str) -> str:
    """The letters and digits of ``read`` past what ``listed`` holds of each, in the order read."""
    spare = Counter(c for c in unicodedata.normalize("NFKC", listed) if c.isalnum())
    out = []
    for c in unicodedata.normalize("NFKC", read):
        if c.isalnum():
            out.append(" " if spare[c] > 0 else c)
            spare[c] -= 1
    return "".join(out)


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
    page = _Html(_hidden_elements(root))
    _walk(root, 0, page)
    yield from page.rows
    yield from _numbered("hidden", [t for t in (_texts(e, page.hidden, True)[:HIDDEN_SHOWN] for e in root.iter()
                                                if e in page.hidden and e.getparent() not in page.hidden) if t])
    title = root.findtext(".//title")
    meta = {"title": title} if title else {}
    if root.get("lang"):
        meta["language"] = root.get("lang")
    for tag in root.iter("meta"):
        if tag.get("name") and tag.get("content") is not None:
            meta[tag.get("name").lower()] = tag.get("content")
    yield from _meta(meta)
    yield from _numbered("script", page.scripts)


@dataclass
class _Html:
    """What a walk over a page gathers: its rows, how many of each kind so far, its active content; and the
    elements whose own text no one sees."""

    hidden: set[Any]
    rows: list[Row] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    scripts: list[str] = field(default_factory=list)


def _walk(node: Any, depth: int, page: _Html) -> None:
    if depth > MAX_DEPTH:
        raise ValueError(f"elements nested deeper than {MAX_DEPTH}")
    tag = node.tag if isinstance(node.tag, str) else ""
    page.scripts += [f"event:{name}" for name in sorted(node.attrib) if name.lower().startswith("on")]
    if tag == "script":
        page.scripts.append("javascript")
        return
    if tag == "a" and node.get("href") is not None:
        href = node.get("href").strip()
        if href.lower().startswith("javascript:"):
            page.scripts.append("javascript-url")
        page.rows.append(("link", _next(page.counts, "link"), href))
    if tag in _WHOLE - {"table"}:
        value = _texts(node, page.hidden, False)
        if value or node not in page.hidden:
            page.rows.append((tag, _next(page.counts, "heading"), value))
    elif tag == "table":
        table = _next(page.counts, "table")
        shown = (tr for tr in node.iter("tr") if _owner(tr) is node and tr not in page.hidden)
        for r, tr in enumerate(shown, start=1):
            cells = [_texts(c, page.hidden, False) for c in tr if isinstance(c.tag, str) and c.tag in ("td", "th")
                     and c not in page.hidden]
            page.rows.append(("table", f"{table}.{r}", " | ".join(cells)))
    elif tag in _BLOCKS and not any(isinstance(c.tag, str) and c.tag in _BLOCKS for c in node.iter()
                                    if c is not node):
        value = _texts(node, page.hidden, False)
        if value:
            page.rows.append(("block", _next(page.counts, "block"), value))
    below = _active if tag in _WHOLE else _walk  # below a heading or a table, a script or a link still counts
    for child in node:
        below(child, depth + 1, page)


_WHOLE = {"h1", "h2", "h3", "h4", "h5", "h6", "table"}  # read as one row (or a row a tr): no blocks below


def _active(node: Any, depth: int, page: _Html) -> None:
    """The active content and links below a node whose text is already read (a heading, a table)."""
    inner = _Html(page.hidden, [], {}, page.scripts)
    _walk(node, depth, inner)
    page.rows += [("link", _next(page.counts, "link"), value) for part, _, value in inner.rows if part == "link"]


def _texts(node: Any, hidden: set[Any], unseen: bool) -> str:
    """The text below ``node`` a person sees (``unseen``: the text no one does), a script's or a style's never."""
    parts = []
    for element in node.iter():
        if isinstance(element.tag, str) and element.tag not in ("script", "style") and element.text and (
                (element in hidden) == unseen):
            parts.append(element.text)
        if element is not node and element.tail and ((element.getparent() in hidden) == unseen):
            parts.append(element.tail)
    return text("".join(parts))


class _Seen(NamedTuple):
    """What an element's inline style and markup pass down to what it holds."""

    gone: bool  # display none, no opacity, scaled or clipped to nothing, off the screen: nothing below shows
    veiled: bool  # visibility hidden: a descendant may show itself again (visibility: visible)
    tiny: bool  # a font too small to read: a descendant with an absolute size of its own reads again
    clear: bool  # a transparent colour: a descendant with a colour of its own shows again


def _hidden_elements(root: Any) -> set[Any]:
    """The elements whose own text (and tails' owners) no person sees, by the page's markup and inline styles;
    a stylesheet's rules are not evaluated (docs/documents.md)."""
    hidden, stack = set(), [(root, _Seen(False, False, False, False), 0)]
    while stack:
        node, above, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ValueError(f"elements nested deeper than {MAX_DEPTH}")
        seen = _seen(node, above)
        if any(seen):
            hidden.add(node)
        closed = node.tag == "details" and node.get("open") is None  # only its summary shows
        for child in node:
            if isinstance(child.tag, str):
                gone = seen.gone or (closed and child.tag != "summary")
                stack.append((child, seen._replace(gone=gone), depth + 1))
    return hidden


def _seen(node: Any, above: _Seen) -> _Seen:
    style = _declarations(node.get("style") or "")
    gone = (above.gone or node.tag in ("template", "noscript") or node.get("hidden") is not None
            or (node.tag == "dialog" and node.get("open") is None) or any(_GONE[p](style.get(p, "")) for p in _GONE)
            or (style.get("overflow") in ("hidden", "clip") and 0 in (_number(style.get("height", "")),
                                                                      _number(style.get("width", "")))))
    veiled = style["visibility"] in ("hidden", "collapse") if "visibility" in style else above.veiled
    size = style.get("font-size")
    tiny = above.tiny if size is None else _tiny(size) or (above.tiny and _relative(size))
    clear = _transparent(style["color"]) if "color" in style else above.clear
    return _Seen(gone, veiled, tiny, clear)


def _declarations(style: str) -> dict[str, str]:
    """An inline style's declarations, property -> value, as a browser reads them: comments out, escapes decoded,
    ``!important`` dropped, the last of a property winning."""
    style = re.sub(r"/\*.*?(\*/|$)", "", style, flags=re.DOTALL)
    style = re.sub(r"\\([0-9a-fA-F]{1,6})\s?", lambda m: chr(min(int(m.group(1), 16), 0x10FFFF) or 0xFFFD), style)
    style = re.sub(r"\\(.)", r"\1", style)
    found = {}
    for declaration in style.split(";"):
        name, colon, value = declaration.partition(":")
        if colon:
            found[name.strip().lower()] = re.sub(r"!\s*important\s*$", "", value.strip().lower()).strip()
    return found


def _number(value: str) -> float | None:
    match = re.fullmatch(r"(-?\d*\.?\d+)\s*([a-z%]*)", value)
    return None if match is None else float(match.group(1)) * _PX.get(match.group(2), 1.0)


_PX = {"": 1.0, "px": 1.0, "pt": 4 / 3, "pc": 16.0, "in": 96.0, "cm": 37.8, "mm": 3.78, "q": 0.945, "em": 16.0,
       "rem": 16.0, "ex": 8.0, "ch": 8.0, "%": 0.16, "vw": 12.8, "vh": 8.0, "vmin": 8.0, "vmax": 12.8}


def _tiny(size: str) -> bool:
    """A font size under 4 CSS pixels (a relative one taken of 16), or one whose every figure is 0 (calc(0px))."""
    px = _number(size)
    return (px is not None and px < 4) or (bool(re.search(r"\d", size)) and not re.search(r"[1-9]", size))


def _relative(size: str) -> bool:
    return bool(re.fullmatch(r"[\d.\s]*(em|ex|ch|%)", size)) or size in ("smaller", "inherit")


def _transparent(colour: str) -> bool:
    return colour == "transparent" or bool(re.fullmatch(r"(rgba|hsla)\(.*[,/]\s*0*\.?0+%?\s*\)", colour))


def _fraction(value: str) -> float | None:
    number = _number(value.removesuffix("%")) if value.endswith("%") else _number(value)
    return None if number is None else number / 100 if value.endswith("%") else number


# inline style properties that take an element and all it holds off the page (value -> whether it does)
_GONE: dict[str, Callable[[str], bool]] = {
    "display": lambda v: v == "none",
    "opacity": lambda v: (_fraction(v) or 0.0) < 0.05 if v else False,
    "filter": lambda v: bool(re.search(r"opacity\(\s*0*\.?0+%?\s*\)", v)),
    "transform": lambda v: bool(re.search(r"scale[xy]?\(\s*0*\.?0+\s*[,)]", v)),
    "clip-path": lambda v: bool(re.search(r"inset\(\s*(5\d|[6-9]\d|100)(\.\d+)?%", v)),
    "clip": lambda v: bool(re.fullmatch(r"rect\((\s*[01](px)?\s*,?){4}\)", v)),
    "left": lambda v: (_number(v) or 0.0) <= -1000,
    "top": lambda v: (_number(v) or 0.0) <= -1000,
    "text-indent": lambda v: (_number(v) or 0.0) <= -1000,
    "margin-left": lambda v: (_number(v) or 0.0) <= -1000,
    "max-height": lambda v: _number(v) == 0,
    "max-width": lambda v: _number(v) == 0,
}


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
