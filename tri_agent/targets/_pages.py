"""The first page of a case's document, as a person sees it: what a report shows beside the golden page.

Rendered only for the cases a report will show (a few failing ones a round), after the round, each in a jail of its
own under the target's limits and deadline; the orchestrator never opens the document.
"""

from __future__ import annotations

from pathlib import Path

from ..exam._formats import read_cases
from ._target import Target, output_file
from .documents._extract import first_page


def first_pages(build: Path, target_file: Path, outputs: Path, cases: list[str]) -> dict[str, bytes]:
    """Case -> its PDF's first page (PNG), for those of ``cases`` whose extract rule reads a PDF that the run
    kept in ``outputs``; a case whose page could not be rendered is left out."""
    target = Target.load(target_file)
    rules = {c.case: c.extract or target.config.extract for c in read_cases(build / "visible" / "cases.jsonl")}
    pages = {}
    for case in cases:
        rule = rules.get(case)
        document = output_file(outputs / case, rule) if rule is not None and rule.format == "pdf" else None
        png = None if document is None else first_page(document, timeout=target.config.timeout,
                                                       limits=target.config.limits)
        if png is not None:
            pages[case] = png
    return pages
