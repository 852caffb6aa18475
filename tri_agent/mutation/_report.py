"""The gate's reports: Stryker's mutation-testing-report-schema (so its viewers render it) and a plain page."""

from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING

from .._version import __version__
from ..targets._target import Target

if TYPE_CHECKING:
    from ._verdict import MutantOutcome, MutationSummary

# id, file, bug class, replacement, Stryker location
Planned = tuple[str, str, str, str, dict[str, dict[str, int]]]


def stryker_report(target: Target, plans: list[Planned], outcomes: list[MutantOutcome]) -> dict[str, object]:
    """The run in Stryker's mutation-testing-report-schema (version 2)."""
    files: dict[str, dict[str, object]] = {}
    by_id = {o.id: o for o in outcomes}
    for mutant_id, file, bug_class, replacement, location in plans:
        source = (target.baseline / file).read_text(encoding="utf-8", errors="replace")
        entry = files.setdefault(file, {"language": _language(file), "source": source, "mutants": []})
        o = by_id[mutant_id]
        result: dict[str, object] = {
            "id": mutant_id, "mutatorName": f"{bug_class}/{o.operator}", "replacement": replacement,
            "location": location,
            "status": o.status, "statusReason": o.reason, "testsCompleted": o.cases_run,
            "duration": round(o.seconds * 1000),
        }
        if o.killed_by:
            result["killedBy"] = o.killed_by
        entry["mutants"].append(result)  # type: ignore[attr-defined]
    return {"schemaVersion": "2", "thresholds": {"high": 100, "low": 80}, "projectRoot": str(target.baseline),
            "files": files, "framework": {"name": "tri-agent", "version": __version__}}


def _language(path: str) -> str:
    return {".py": "python", ".js": "javascript", ".ts": "typescript", ".sql": "sql"}.get(Path(path).suffix, "text")


def render_html(report: dict[str, object], summary: MutationSummary, about: dict[str, str] | None = None) -> str:
    """A self-contained page (no script, no external asset): what it is about (target, round, seed, exam digest),
    the verdict, and every mutant with its status."""
    rows = []
    files = report["files"]
    assert isinstance(files, dict)
    for name, entry in files.items():
        for m in entry["mutants"]:
            loc = m["location"]["start"]
            rows.append(f"<tr class='{m['status']}'><td>{html.escape(m['id'])}</td><td>{html.escape(m['mutatorName'])}"
                        f"</td><td>{html.escape(name)}:{loc['line']}</td><td>{m['status']}</td>"
                        f"<td>{html.escape(m.get('statusReason', ''))}</td></tr>")
    counts = ", ".join(f"{k} {v}" for k, v in summary.counts.items())
    verdict = html.escape(summary.verdict.upper())
    head = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in (about or {}).items())
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>tri-agent mutation report</title>
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;
padding:4px 8px;text-align:left}}.Killed,.Timeout{{background:#e6f4ea}}.Survived,.NoCoverage{{background:#fce8e6}}
.Ignored,.CompileError,.RuntimeError{{background:#f1f3f4}}</style></head><body>
<h1>Mutation gate: {verdict}</h1>
<table class="about">{head}</table>
<p>Kill rate <b>{html.escape(summary.figure())}</b> (threshold {summary.threshold:.0%}); {html.escape(counts)}.</p>
<ul>{''.join(f'<li>{html.escape(r)}</li>' for r in summary.reasons)}</ul>
<table><tr><th>mutant</th><th>bug class</th><th>where</th><th>status</th><th>why</th></tr>
{chr(10).join(rows)}
</table></body></html>
"""
