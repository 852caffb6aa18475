"""A document target's failing first pages: rendered in a jail into the round's record, shown in REPORT.html, the
golden page beside each only once the run is accepted (before, it is the answer key in the builder's project)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_scoreboard import RED, _report

from tri_agent.acceptance._pages import PAGES, keep_pages, pages, pages_html
from tri_agent.acceptance._scoreboard import report_html
from tri_agent.evidence._trail import EvidenceStore

GOLDEN = ["INVOICE A-7", "1. A description that wraps over", "two lines", "Total: 10.00 EUR"]
SEEN = ["INVOICE A-7", "1. A description that wraps over", "Total: 10.00 EUR"]


def _pdf(path: Path, lines: list[str]) -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    for line in lines:
        pdf.cell(0, 8, line, new_x="LMARGIN", new_y="NEXT")
    path.parent.mkdir(parents=True, exist_ok=True)
    pdf.output(str(path))


def _round(tmp_path: Path, documents: dict[str, bytes | list[str]]) -> tuple[Path, Path, Path]:
    """A build, a target file and a run: each case's document (lines to render, or raw bytes), the key's and the
    reader's rows of case c-0000000a (the second line of its description lost)."""
    build, run = tmp_path / "build", tmp_path / "run"
    (build / "visible").mkdir(parents=True)
    (build / "sealed").mkdir()
    (build / "visible" / "cases.jsonl").write_text("".join(
        json.dumps({"case": c, "inputs": f"inputs/{c}"}) + "\n" for c in documents))
    rows = [{"case": "c-0000000a", "part": "pages", "n": "1", "value": "1"}]
    key = rows + [{"case": "c-0000000a", "part": "line", "n": f"1.{k}", "value": v} for k, v in enumerate(GOLDEN, 1)]
    (build / "sealed" / "answers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in reversed(key)))
    seen = rows + [{"case": "c-0000000a", "part": "line", "n": f"1.{k}", "value": v} for k, v in enumerate(SEEN, 1)]
    run.mkdir()
    (run / "actual.jsonl").write_text("".join(json.dumps(r) + "\n" for r in seen))
    for case, document in documents.items():
        path = run / "outputs" / case / "invoice.pdf"
        if isinstance(document, bytes):
            path.parent.mkdir(parents=True)
            path.write_bytes(document)
        else:
            _pdf(path, document)
    target = tmp_path / "target.yaml"
    (tmp_path / "target").mkdir()
    target.write_text("schema_version: 1\nkind: command\nbaseline: target\nrun: [python3, render.py]\n"
                      "extract: {file: invoice.pdf, format: pdf}\n")
    return build, target, run


def test_a_failing_case_keeps_its_rendered_first_page_and_the_golden_lines_beside_it(tmp_path: Path) -> None:
    build, target, run = _round(tmp_path, {"c-0000000a": SEEN, "c-0000000b": SEEN, "c-0000000c": b"%PDF-1.4 not a pdf"})
    record = tmp_path / "record"
    record.mkdir()
    keep_pages(build, target, run, _report(["c-0000000a", "c-0000000c"]), record)  # c-2 passed; c-3's file is no PDF
    assert sorted(p.name for p in (record / PAGES).iterdir()) == ["c-0000000a.json", "c-0000000a.png"]
    kept = json.loads((record / PAGES / "c-0000000a.json").read_text())
    assert kept["golden"] == GOLDEN and kept["seen"] == SEEN  # in line order, whatever the files' order
    keep_pages(build, target, run, _report([]), tmp_path / "green")  # a green round keeps none
    assert not (tmp_path / "green").exists()
    store = EvidenceStore(tmp_path / "store")

    def fill(folder: Path) -> None:
        (folder / "round.json").write_text(RED.model_dump_json())
        (folder / "episodes.json").write_text("[]")
        shutil.copytree(record / PAGES, folder / PAGES)

    store.append("round-0001", "round", fill)
    [page] = pages(store)
    assert page.round == 1 and page.png.startswith(b"\x89PNG") and page.record.golden == GOLDEN
    ended = pages_html([page], accepted=True)
    assert 'src="data:image/png;base64,' in ended and 'style="color:#b00">two lines<' in ended
    assert ended.count('style="color:#b00"') == 1  # the one golden line the target's page lacks
    running = pages_html([page], accepted=False)
    assert 'src="data:image/png;base64,' in running and "two lines" not in running and "INVOICE" not in running
    assert "two lines" not in report_html(store)  # no verdict yet: the key stays out of the builder's project


def test_a_document_the_renderer_cannot_survive_costs_only_its_picture(tmp_path: Path) -> None:
    build, target, run = _round(tmp_path, {"c-0000000a": b"%PDF-1.7\n" + b"\0" * 4096})
    record = tmp_path / "record"
    record.mkdir()
    keep_pages(build, target, run, _report(["c-0000000a"]), record)
    assert not (record / PAGES).exists()


def test_a_round_keeps_pictures_up_to_its_byte_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tri_agent.acceptance import _pages

    build, target, run = _round(tmp_path, {"c-0000000a": SEEN, "c-0000000b": SEEN})
    record = tmp_path / "record"
    record.mkdir()
    one = len(next(iter(_pages.first_pages(build, target, run / "outputs", ["c-0000000a"]).values())))
    monkeypatch.setattr(_pages, "PAGE_BYTES", one + 10)
    keep_pages(build, target, run, _report(["c-0000000a", "c-0000000b"]), record)
    assert sorted(p.name for p in (record / PAGES).glob("*.png")) == ["c-0000000a.png"]


def test_lines_are_read_whatever_odd_rows_the_files_hold(tmp_path: Path) -> None:
    from tri_agent.acceptance._pages import _first_page_lines

    rows = [[1], {"case": ["c-0000000a"], "part": "line", "n": "1.1"}, {"case": "c-0000000a", "part": "line",
            "n": "1.2", "value": None}, {"case": "c-0000000a", "part": "line", "n": "2.1", "value": "page two"},
            {"case": "c-0000000a", "part": "line", "n": "1.x", "value": "odd"}]
    (tmp_path / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert _first_page_lines(tmp_path / "a.jsonl", {"c-0000000a"}) == {"c-0000000a": [""]}
    assert _first_page_lines(tmp_path / "missing.jsonl", {"c-0000000a"}) == {}
