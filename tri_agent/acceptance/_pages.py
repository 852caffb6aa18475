"""A document target's failing pages, for people: the first page of a failing case's PDF as rendered, beside the
golden page (the answer key's lines of that page).

After a round, up to four failing cases whose extract rule reads a PDF have their first page rendered (in a jail,
``targets._pages``) and kept in the round's record, sealed with it, with the page's lines as the answer key and
the reader have them (``PageRecord``). ``REPORT.html`` shows the picture always, and the golden page only once the
run is accepted: while the builder is at work the report sits in its project, and the golden lines are the answer
key; an escalated or stopped run may be started afresh with the same builder, so its report keeps them out too
(they stay in the sealed record, for the person who decides).
"""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path
from typing import Literal, NamedTuple

from pydantic import Field

from .._model import Record
from ..evidence._trail import RECORDS, EvidenceStore
from ..scoring._report import ScoreReport
from ..targets._pages import first_pages
from ..targets.documents._reader import PNG

PAGES = "pages"  # the folder of a round's record that holds them
SHOWN = 4  # failing cases a round's record keeps a picture of
PAGE_BYTES = 8 << 20  # all pictures one round's record keeps (a hostile page may render to megabytes of noise)
_MISSED = ' style="color:#b00"'  # a golden line the reader did not find on the target's page


class PageRecord(Record):
    """``pages/CASE.json`` in a round's record: the first page's lines, as the answer key and the reader have them
    (the rows of part ``line`` whose n is ``1.*``, in order)."""

    schema_version: Literal[1] = Field(default=1, description="Version of the page record format.")
    case: str = Field(description="The case whose document this is.")
    golden: list[str] = Field(description="The answer key's lines of the first page, in order.")
    seen: list[str] = Field(description="The lines the reader read on the target's first page, in order.")


class Page(NamedTuple):
    """A failing case's first page in a round: its picture and its record."""

    round: int
    png: bytes
    record: PageRecord


def failing_cases(report: ScoreReport) -> list[str]:
    failures = [*report.answers.failures, *(report.behaviors.failures if report.behaviors else [])]
    return sorted({f.key["case"] for f in failures if "case" in f.key})


def keep_pages(build: Path, target_file: Path, run_dir: Path, report: ScoreReport | None, folder: Path) -> None:
    """Into a round's record: the first page of up to four failing cases whose document is a PDF, with its
    lines. Nothing for a round without failures or a target without PDF documents."""
    cases = failing_cases(report)[:SHOWN] if report is not None else []
    pages = first_pages(build, target_file, run_dir / "outputs", cases) if cases else {}
    if not pages:
        return
    golden = _first_page_lines(build / "sealed" / "answers.jsonl", set(pages))
    seen = _first_page_lines(run_dir / "actual.jsonl", set(pages))
    (folder / PAGES).mkdir()
    budget = PAGE_BYTES
    for case, png in pages.items():
        if len(png) > budget:
            continue
        budget -= len(png)
        (folder / PAGES / f"{case}.png").write_bytes(png)
        record = PageRecord(case=case, golden=golden.get(case, []), seen=seen.get(case, []))
        (folder / PAGES / f"{case}.json").write_text(record.model_dump_json(indent=1) + "\n", encoding="utf-8")


def _first_page_lines(path: Path, cases: set[str]) -> dict[str, list[str]]:
    """Case -> the values of its rows of part ``line`` on page 1, by line number."""
    found: dict[str, list[tuple[int, str]]] = {}
    if not path.is_file():
        return {}
    with path.open(encoding="utf-8") as rows:
        for line in rows:
            if not any(f'"{case}"' in line for case in cases):  # the other cases' rows are never parsed
                continue
            row = json.loads(line)
            page, _, number = str(row.get("n", "")).partition(".") if isinstance(row, dict) else ("", "", "")
            case = row.get("case") if isinstance(row, dict) else None
            if page == "1" and number.isdigit() and isinstance(case, str) and case in cases and row["part"] == "line":
                value = row.get("value")
                found.setdefault(case, []).append((int(number), "" if value is None else str(value)))
    return {case: [value for _, value in sorted(lines)] for case, lines in found.items()}


def pages(store: EvidenceStore) -> list[Page]:
    """Every page the rounds' records keep, round by round."""
    found = []
    for entry in (e for e in store.entries() if e.kind == "round"):
        folder = store.root / RECORDS / entry.name / PAGES
        for path in sorted(folder.glob("*.png")) if folder.is_dir() else []:
            data, record = path.read_bytes(), path.with_suffix(".json")
            if data.startswith(PNG) and not path.is_symlink() and record.is_file():
                summary = json.loads((folder.parent / "round.json").read_text(encoding="utf-8"))
                found.append(Page(int(summary["round"]), data,
                                  PageRecord.model_validate_json(record.read_text(encoding="utf-8"))))
    return found


def pages_html(found: list[Page], accepted: bool) -> str:
    """The pictures, each beside its golden page once the run is accepted (before: the picture alone, and why)."""
    if not found:
        return ""
    note = ("Beside each, the golden page: the answer key's lines of that page, those the reader did not find on "
            "the target's page in red." if accepted else "The golden pages are the answer key: they are shown once "
            "the run is accepted (until then, in the round records of the trail).")
    return ("\n<h2>First pages of failing cases (evidence, never scored)</h2>\n<p>The target's first page as "
            f"rendered. {note}</p>" + "".join(_page_html(p, accepted) for p in found))


def _page_html(page: Page, accepted: bool) -> str:
    record, png = page.record, base64.b64encode(page.png).decode()
    caption = f"round {page.round}, case <code>{html.escape(record.case)}</code>"
    picture = (f'<figure><img alt="case {html.escape(record.case)}, round {page.round}: first page" width="420" '
               f'style="border:1px solid #999" src="data:image/png;base64,{png}"><figcaption>the target\'s page, '
               f"{caption}</figcaption></figure>")
    if not accepted:
        return picture
    seen = set(record.seen)
    lines = "".join(f"<div{'' if line in seen else _MISSED}>{html.escape(line)}</div>" for line in record.golden)
    golden = (f'<figure><div style="width:420px;min-height:160px;border:1px solid #999;padding:24px;'
              f'font:12px sans-serif;box-sizing:border-box">{lines}</div><figcaption>the golden page, {caption}'
              "</figcaption></figure>")
    return f'<div style="display:flex;gap:24px;align-items:flex-start">{picture}{golden}</div>'
