"""The document reader (targets/documents/_reader.py): what it reads out of real PDF, HTML, Markdown and DOCX
files, and how it ends on files that are not what they claim or that attack the parser."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tri_agent.targets.documents import _reader

READER = Path(_reader.__file__)


def _read(fmt: str, path: Path) -> tuple[int, list[dict[str, str]]]:
    done = subprocess.run([sys.executable, "-I", str(READER), fmt, str(path)], capture_output=True, text=True,
                          timeout=60)
    assert "Traceback" not in done.stderr and len(done.stderr) < 2000
    return done.returncode, [json.loads(line) for line in done.stdout.splitlines()]


def _rows(fmt: str, path: Path) -> dict[tuple[str, str], str]:
    code, rows = _read(fmt, path)
    assert code == _reader.READ, rows
    return {(r["part"], r["n"]): r["value"] for r in rows}


def _pdf(path: Path, lines: list[str], js: bool = False) -> Path:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_title("Invoice 42")
    pdf.set_author("ACME Ltd")
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    for line in lines:
        pdf.cell(0, 8, line, new_x="LMARGIN", new_y="NEXT")
    pdf.link(10, 10, 20, 5, "https://pay.example/42")
    pdf.add_page()
    pdf.cell(0, 8, "Page two", new_x="LMARGIN", new_y="NEXT")
    pdf.output(str(path))
    if js:
        from pypdf import PdfWriter
        from pypdf.actions import JavaScript

        writer = PdfWriter(clone_from=str(path))
        writer.add_open_action(JavaScript("app.alert('hello');"))
        writer.write(str(path))
    return path


def test_a_pdf_gives_its_pages_lines_links_fonts_and_metadata(tmp_path: Path) -> None:
    rows = _rows("pdf", _pdf(tmp_path / "i.pdf", ["Invoice 42", "Widget   2  10.00", "Café crème 1 5.50"]))
    assert rows[("pages", "1")] == "2"
    assert rows[("line", "1.2")] == "Widget 2 10.00"  # runs of spaces are one
    assert rows[("line", "1.3")] == "Café crème 1 5.50"
    assert rows[("page", "2")] == "Page two"
    assert rows[("link", "1")] == "https://pay.example/42"
    assert rows[("font", "1")] == "Helvetica"
    assert rows[("meta", "title")] == "Invoice 42" and rows[("meta", "author")] == "ACME Ltd"
    assert not any(part == "script" for part, _ in rows)


def test_a_pdf_that_runs_javascript_says_so(tmp_path: Path) -> None:
    rows = _rows("pdf", _pdf(tmp_path / "i.pdf", ["x"], js=True))
    assert "javascript" in {v for (p, _), v in rows.items() if p == "script"}


HTML = """<!doctype html><html lang="fr"><head><title>Report  Q3</title><meta name="author" content="Ops">
<script>track()</script></head><body onload="go()">
<h1>Report</h1><p>First   paragraph.</p><h2>Items</h2>
<table><tr><th>Item</th><th>Amount</th></tr><tr><td>Widget</td><td>10.00</td></tr>
<tr><td><table><tr><td>inner</td></tr></table></td><td>1</td></tr></table>
<ul><li>one</li><li><a href="https://x.example/a">two</a></li></ul><a href="javascript:steal()">pay</a>
<h2>End</h2></body></html>"""


def test_html_gives_headings_in_order_table_rows_blocks_links_and_active_content(tmp_path: Path) -> None:
    (tmp_path / "r.html").write_text(HTML, encoding="utf-8")
    rows = _rows("html", tmp_path / "r.html")
    assert [(p, n, v) for (p, n), v in rows.items() if p.startswith("h")] == [
        ("h1", "1", "Report"), ("h2", "2", "Items"), ("h2", "3", "End")]
    assert rows[("table", "1.1")] == "Item | Amount" and rows[("table", "1.2")] == "Widget | 10.00"
    assert rows[("table", "1.3")] == "inner | 1"  # a nested table's rows are not the outer table's
    assert rows[("block", "1")] == "First paragraph." and rows[("block", "3")] == "two"
    assert rows[("link", "1")] == "https://x.example/a" and rows[("link", "2")] == "javascript:steal()"
    assert rows[("meta", "title")] == "Report Q3" and rows[("meta", "language")] == "fr"
    assert rows[("meta", "author")] == "Ops"
    assert sorted(v for (p, _), v in rows.items() if p == "script") == ["event:onload", "javascript",
                                                                        "javascript-url"]


def test_markdown_is_read_through_its_rendered_html(tmp_path: Path) -> None:
    (tmp_path / "p.md").write_text("# Title\n\nSome *text*.\n\n## Part\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
                                   "[link](https://x.example/)\n\n<script>raw()</script>\n", encoding="utf-8")
    rows = _rows("markdown", tmp_path / "p.md")
    assert rows[("h1", "1")] == "Title" and rows[("h2", "2")] == "Part"
    assert rows[("table", "1.1")] == "a | b" and rows[("table", "1.2")] == "1 | 2"
    assert rows[("link", "1")] == "https://x.example/" and rows[("block", "1")] == "Some text."
    assert not any(p == "script" for p, _ in rows)  # raw HTML in Markdown is text, never run


def _docx(path: Path, macros: bool = False) -> Path:
    import docx
    from docx.opc.constants import RELATIONSHIP_TYPE

    document = docx.Document()
    document.core_properties.title = "Letter"
    document.add_heading("Dear customer", level=1)
    document.add_paragraph("Thank you.").runs[0].font.name = "Arial"
    table = document.add_table(rows=2, cols=2)
    for (r, c), value in {(0, 0): "Item", (0, 1): "Qty", (1, 0): "Widget", (1, 1): "2"}.items():
        table.cell(r, c).text = value
    document.part.relate_to("https://x.example/terms", RELATIONSHIP_TYPE.HYPERLINK, is_external=True)
    document.save(str(path))
    if macros:
        with zipfile.ZipFile(path, "a") as archive:
            archive.writestr("word/vbaProject.bin", b"\0" * 64)
    return path


def test_a_docx_gives_headings_paragraphs_tables_links_fonts_and_macros(tmp_path: Path) -> None:
    rows = _rows("docx", _docx(tmp_path / "l.docx"))
    assert rows[("h1", "1")] == "Dear customer" and rows[("block", "1")] == "Thank you."
    assert rows[("table", "1.1")] == "Item | Qty" and rows[("table", "1.2")] == "Widget | 2"
    assert rows[("link", "1")] == "https://x.example/terms" and rows[("font", "1")] == "Arial"
    assert rows[("meta", "title")] == "Letter" and not any(p == "script" for p, _ in rows)
    assert _rows("docx", _docx(tmp_path / "m.docx", macros=True))[("script", "1")] == "macros"


@pytest.mark.parametrize("fmt", ["pdf", "docx", "html"])
def test_a_file_that_lies_about_its_format_is_unreadable_in_one_line(tmp_path: Path, fmt: str) -> None:
    fake = tmp_path / f"image.{fmt}"
    fake.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64 if fmt != "html" else b"")
    code, rows = _read(fmt, fake)
    assert code == _reader.UNREADABLE and len(rows) == 1 and rows[0]["error"]


def test_html_nested_ten_thousand_deep_is_refused_not_walked(tmp_path: Path) -> None:
    (tmp_path / "deep.html").write_text("<div>" * 10_000 + "x" + "</div>" * 10_000, encoding="utf-8")
    code, rows = _read("html", tmp_path / "deep.html")
    assert code == _reader.UNREADABLE and "nested deeper than 512" in rows[0]["error"]


def test_a_script_nested_past_the_parsers_own_bound_is_still_seen(tmp_path: Path) -> None:
    # libxml2 alone stops at 256 levels and drops the rest without a word
    (tmp_path / "deep.html").write_text("<div>" * 300 + "<p>deep</p><script>x()</script>" + "</div>" * 300,
                                        encoding="utf-8")
    rows = _rows("html", tmp_path / "deep.html")
    assert rows[("block", "1")] == "deep" and rows[("script", "1")] == "javascript"


def test_a_docx_that_would_inflate_past_its_bound_is_refused_before_inflating(tmp_path: Path) -> None:
    bomb = _docx(tmp_path / "bomb.docx")
    with zipfile.ZipFile(bomb, "a", compression=zipfile.ZIP_DEFLATED) as archive, \
            archive.open("word/media/zeros.bin", "w", force_zip64=True) as member:
        chunk = b"\0" * (1 << 20)
        for _ in range(300):  # 300 MiB of zeros: about 300 KiB compressed
            member.write(chunk)
    assert bomb.stat().st_size < 2 << 20
    code, rows = _read("docx", bomb)
    assert code == _reader.UNREADABLE and "256 MiB" in rows[0]["error"]


def test_bad_usage_is_one_line() -> None:
    done = subprocess.run([sys.executable, "-I", str(READER), "odt", "x"], capture_output=True, text=True)
    assert done.returncode == _reader.USAGE and "usage" in json.loads(done.stdout)["error"]


def test_text_is_never_normalised_a_decomposed_accent_is_another_value(tmp_path: Path) -> None:
    (tmp_path / "n.html").write_text("<p>Cafe\u0301</p><p>Caf\u00e9</p>", encoding="utf-8")
    rows = _rows("html", tmp_path / "n.html")
    assert rows[("block", "1")] == "Cafe\u0301" and rows[("block", "2")] == "Caf\u00e9"


def test_html_is_utf8_unless_it_declares_otherwise(tmp_path: Path) -> None:
    (tmp_path / "l.html").write_bytes('<meta charset="iso-8859-1"><p>Caf\u00e9</p>'.encode("latin-1"))
    (tmp_path / "u.html").write_bytes("\ufeff<p>Caf\u00e9</p>".encode("utf-16"))
    assert _rows("html", tmp_path / "l.html")[("block", "1")] == "Caf\u00e9"
    assert _rows("html", tmp_path / "u.html")[("block", "1")] == "Caf\u00e9"


def _hiding_pdf(path: Path, how: str) -> Path:
    """One seen line, then 'Total: 99.00' written so that no one sees it (or, for 'seen', so that one does)."""
    from fpdf import FPDF
    from fpdf.enums import TextMode

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    pdf.text(20, 20, "Total: 12.00")
    x, y = {"off-page": (250, 40), "half-off": (200, 40)}.get(how, (20, 40))
    if how == "white":
        pdf.set_text_color(255, 255, 255)
    if how in ("covered", "seen"):
        pdf.set_fill_color(*((255, 255, 255) if how == "covered" else (0, 0, 0)))
        pdf.set_text_color(*((0, 0, 0) if how == "covered" else (255, 255, 255)))
    if how == "tiny":
        pdf.set_font_size(0.1)
    if how == "invisible":
        pdf.text_mode = TextMode.INVISIBLE
    if how == "squeezed":  # a hundredth of its width: a sliver of ink where the line should be
        pdf.set_stretching(1)
    if how == "piled":  # every glyph drawn back over the last: a blot
        pdf.set_char_spacing(-6)
    if how == "unlisted":  # at a zero size pdfium lists nothing, while a parser still reads the line
        pdf.set_font_size(0)
    if how == "seen":
        pdf.rect(15, 33, 60, 10, style="F")
    pdf.text(x, y, "Total: 99.00")
    if how == "covered":  # drawn after the text: the shape covers it
        pdf.rect(15, 33, 60, 10, style="F")
    pdf.output(str(path))
    return path


@pytest.mark.parametrize("how", ["white", "covered", "off-page", "tiny", "invisible", "squeezed", "piled"])
def test_text_no_one_sees_is_a_hidden_row_of_its_page(tmp_path: Path, how: str) -> None:
    rows = _rows("pdf", _hiding_pdf(tmp_path / "h.pdf", how))
    hidden = rows[("hidden", "1")]  # piled glyphs come back in the order pdfium finds them on the page
    assert hidden == "Total: 99.00" or (how == "piled" and sorted(hidden.replace(" ", "")) == sorted("Total:99.00"))
    assert "Total: 99.00" in rows[("page", "1")]  # the parser reads it all the same: only the row tells


def test_text_pdfium_never_lists_is_found_by_what_the_parser_read(tmp_path: Path) -> None:
    rows = _rows("pdf", _hiding_pdf(tmp_path / "h.pdf", "unlisted"))
    # the letters and digits read past those the page shows ("Total: 12.00"), in the order read
    assert rows[("hidden", "1")] == "Total9900"


def test_a_box_over_part_of_a_line_hides_that_part_only(tmp_path: Path) -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    pdf.text(20, 40, "Total: 99.00 EUR")
    pdf.set_fill_color(255, 255, 255)
    pdf.rect(32, 34, 13, 8, style="F")  # over the amount
    pdf.output(str(tmp_path / "p.pdf"))
    hidden = _rows("pdf", tmp_path / "p.pdf")[("hidden", "1")]
    assert hidden == "99.00"


def _honest_pdf(path: Path) -> Path:
    """What honest renderers write: small print, light grey, text on coloured cells, white on dark, one text
    object a character, a rotated page."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    for size in (4, 6, 8):
        pdf.set_font("Helvetica", size=size)
        pdf.cell(0, 6, f"Small print {size} pt: iiil.,:; Total 36.47 EUR", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", size=10)
    for grey in (150, 185, 200):
        pdf.set_text_color(grey)
        pdf.cell(0, 6, f"grey {grey}: Page 1 of 2", new_x="LMARGIN", new_y="NEXT")
    for fill, ink in (((230, 230, 230), (0, 0, 0)), ((40, 60, 120), (255, 255, 255)), ((0, 128, 0), (255, 0, 0)),
                      ((255, 255, 255), (255, 220, 0))):
        pdf.set_fill_color(*fill)
        pdf.set_text_color(*ink)
        pdf.cell(0, 8, f"on {fill}: Total 36.47 EUR", fill=True, new_x="LMARGIN", new_y="NEXT")
    pdf.set_text_color(0)
    for k, char in enumerate("i.l:j-1"):
        pdf.text(20 + 3 * k, 120, char)
    pdf.add_page(orientation="L")
    pdf.cell(0, 8, "A landscape page", new_x="LMARGIN", new_y="NEXT")
    pdf.output(str(path))
    return path


def test_honest_pages_have_no_hidden_text(tmp_path: Path) -> None:
    rows = _rows("pdf", _honest_pdf(tmp_path / "o.pdf"))
    assert [(p, n) for p, n in rows if p == "hidden"] == []
    assert rows[("line", "2.1")] == "A landscape page"


@pytest.mark.parametrize("body", [
    '<p style="opacity:0.001">T</p>', '<p style="font-size:0.1px">T</p>', '<p style="display:/**/none">T</p>',
    '<p style="display:n\\6f ne">T</p>', '<p style="color:transparent">T</p>', '<p style="left:-9999px">T</p>',
    '<p style="transform:scale(0)">T</p>', '<div style="height:0;overflow:hidden"><p>T</p></div>',
    "<template><p>T</p></template>", "<dialog><p>T</p></dialog>", "<details><summary>S</summary><p>T</p></details>",
    '<div style="visibility:hidden"><p>T</p></div>', '<div style="font-size:0"><p style="font-size:2em">T</p></div>'])
def test_html_hidden_by_inline_style_or_markup_is_a_hidden_row(tmp_path: Path, body: str) -> None:
    (tmp_path / "h.html").write_text(f"<p>Seen</p>{body}", encoding="utf-8")
    rows = _rows("html", tmp_path / "h.html")
    assert rows == {("block", "1"): "Seen", ("hidden", "1"): "T"}


@pytest.mark.parametrize("body", [
    '<div style="font-size:0"><p style="font-size:14px">T</p></div>',
    '<div style="visibility:hidden"><p style="visibility:visible">T</p></div>', '<p style="stroke-opacity:0">T</p>',
    '<p style="display:none; display:block">T</p>', '<p style="font-size:0.5em">T</p>'])
def test_html_a_browser_shows_is_never_hidden(tmp_path: Path, body: str) -> None:
    (tmp_path / "h.html").write_text(body, encoding="utf-8")
    rows = _rows("html", tmp_path / "h.html")
    assert rows == {("block", "1"): "T"}


def test_hidden_text_inside_a_table_or_a_heading_is_kept_out_of_its_row(tmp_path: Path) -> None:
    (tmp_path / "t.html").write_text('<h1>Total <span style="display:none">99</span></h1><table><tr><td>Total</td>'
                                     '<td><span hidden>99.00</span></td></tr><tr style="display:none"><td>Paid</td>'
                                     '</tr></table><table><tr><td><a href="x">a</a><script>x()</script></td></tr>'
                                     "</table>", encoding="utf-8")
    rows = _rows("html", tmp_path / "t.html")
    assert rows[("h1", "1")] == "Total" and rows[("table", "1.1")] == "Total | " and ("table", "1.2") not in rows
    assert [v for (p, _), v in rows.items() if p == "hidden"] == ["99", "99.00", "Paid"]
    assert rows[("script", "1")] == "javascript" and rows[("link", "1")] == "x"  # a script in a table still counts


def test_seen_text_is_never_hidden_white_on_black_nor_half_off_the_edge(tmp_path: Path) -> None:
    rows = _rows("pdf", _hiding_pdf(tmp_path / "s.pdf", "seen"))
    assert not any(part == "hidden" for part, _ in rows)
    half = _rows("pdf", _hiding_pdf(tmp_path / "e.pdf", "half-off"))
    assert 0 < len(half[("hidden", "1")]) < len("Total: 99.00")  # only the characters past the edge


def test_html_text_its_own_markup_hides_is_hidden_not_a_block_and_its_scripts_still_count(tmp_path: Path) -> None:
    (tmp_path / "h.html").write_text(
        '<p>Seen</p><p hidden>Total: 99.00</p><div style="display: none"><p>Paid</p><script>x()</script></div>'
        '<p style="font-size:0">Zero</p><p style="font-size:0.5em">Small</p><p style="opacity: 0.0;">Clear</p>',
        encoding="utf-8")
    rows = _rows("html", tmp_path / "h.html")
    assert [v for (p, _), v in rows.items() if p == "block"] == ["Seen", "Small"]
    assert [v for (p, _), v in rows.items() if p == "hidden"] == ["Total: 99.00", "Paid", "Zero", "Clear"]
    assert rows[("script", "1")] == "javascript"


def test_png_is_the_first_page_rendered_and_a_non_pdf_is_one_error_line(tmp_path: Path) -> None:
    import base64
    import struct

    done = subprocess.run([sys.executable, "-I", str(READER), "png", str(_pdf(tmp_path / "i.pdf", ["x"]))],
                          capture_output=True, text=True, timeout=60)
    png = base64.b64decode(json.loads(done.stdout)["png"])
    assert done.returncode == _reader.READ and png.startswith(_reader.PNG)
    assert struct.unpack(">II", png[16:24]) == (596, 842)  # A4 at 72 dots an inch, rounded up
    (tmp_path / "n.pdf").write_bytes(b"\x89PNG\r\n\x1a\nnot a pdf")
    code, rows = _read("png", tmp_path / "n.pdf")
    assert code == _reader.UNREADABLE and rows[0]["error"]
