"""The score report: one canonical JSON document, and its Markdown rendering.

The JSON holds no clock and no path, its lists are sorted, and it is written with sorted keys, so the
same inputs give the same bytes on any machine. Digests of every input are echoed so that a reader can
check which answer key, actual table and caliber a verdict was computed from.
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import Field

from .._model import Record

Verdict = Literal["pass", "fail"]
Attribution = Literal["engine", "exam"]


class InputDigest(Record):
    """One input file the score was computed from."""

    role: str = Field(description="answers, actual, caliber, expected_behaviors, observed_behaviors or replay.")
    name: str = Field(description="File name (no directory, so reports do not depend on where files live).")
    format: str = Field(description="csv, jsonl or yaml.")
    sha256: str = Field(description="SHA-256 of the file's bytes.")
    rows: int | None = Field(default=None, description="Data rows, for tables.")


class CellFailure(Record):
    """A cell (or a whole row) that did not match its sealed value."""

    key: dict[str, str] = Field(description="Key column -> value of the row concerned.")
    field: str | None = Field(description="Scored field; null for an unexpected row.")
    cls: str | None = Field(description="Tolerance class of the field.")
    expected: str | None = Field(description="Sealed value as written in the answer key.")
    actual: str | None = Field(description="Actual value as written by the target; null when absent.")
    reason: str = Field(description="out_of_tolerance, not_equal, not_in_enum, missing_field, unexpected_value "
                                    "(a value where a nullable field expects none), wrong_places, missing_row or "
                                    "unexpected_row; for a defect of the target's own table: "
                                    "unreadable_value, duplicate_key (every row of a repeated key) or blank_key.")


class FieldTally(Record):
    """Per-field counts over the expected rows."""

    cls: str = Field(description="Tolerance class.")
    passed: int = Field(description="Expected rows whose cell in this field passed.")
    failed: int = Field(description="Expected rows whose cell in this field failed, missing rows included.")
    within_tolerance_nonzero: int = Field(description="Passing cells whose exact difference is not zero.")


class DeltaCount(Record):
    """One in-tolerance difference and how often it occurs."""

    delta: str = Field(description="actual - expected, exact.")
    count: int = Field(description="Passing cells with this difference.")


class DriftAudit(Record):
    """Differences inside tolerance for one decimal field: how many, which way, how large."""

    field: str = Field(description="Scored field audited.")
    cls: str = Field(description="Its tolerance class: amount or ratio.")
    tolerance: str = Field(description="The field's tolerance: a decimal literal (the class's 0.01 or 0.000001, "
                           "or the field's own absolute bound), 'relative R', 'A or relative R', or 'D significant "
                           "digits'.")
    nonzero: int = Field(description="Passing cells with a non-zero difference.")
    positive: int = Field(description="Of those, actual above expected.")
    negative: int = Field(description="Of those, actual below expected.")
    top_deltas: list[DeltaCount] = Field(description="Most frequent differences, most frequent first (at most 10).")
    systematic: bool = Field(description="At least min_cases differences, and direction_share of them one way.")


class AnswersChannel(Record):
    """Channel 1 (sealed answers) or channel 2 (behaviours, one status field)."""

    verdict: Verdict = Field(description="pass when the channel lists no failure.")
    passed: int = Field(description="Expected rows whose every field passed.")
    total: int = Field(description="Denominator: expected rows plus unexpected actual rows.")
    rows_expected: int = Field(description="Rows of the sealed table.")
    rows_actual: int = Field(description="Rows of the actual table.")
    rows_missing: int = Field(description="Expected rows with no actual row of the same key.")
    rows_unexpected: int = Field(description="Actual rows with no expected row of the same key.")
    fields: dict[str, FieldTally] = Field(description="Scored field -> its tally, in caliber order.")
    failures: list[CellFailure] = Field(description="Every failing cell, sorted by key then field order.")
    drift: list[DriftAudit] = Field(default_factory=list,
                                    description="One audit per amount or ratio field; empty for channel 2.")
    actual_defects: list[str] = Field(default_factory=list, description="What made the actual table unusable "
                                      "as a whole (unreadable file, a key column absent), one line each: its rows "
                                      "then count as missing. What the target writes is its answer, scored red, "
                                      "never refused as malformed input.")


class RelationFailure(Record):
    """One checked instance of a relation that did not hold."""

    where: str = Field(description="The group, pair or row the check was about.")
    detail: str = Field(description="What did not hold, in words.")
    attribution: Attribution = Field(description="exam when the sealed answers agree with the target on every "
                                                 "row involved (the caliber is wrong), else engine.")


class RelationOutcome(Record):
    """What one relation of the caliber found."""

    name: str = Field(description="Relation name from the caliber.")
    kind: str = Field(description="sum_of_parts, equal_pair, idempotent or monotone.")
    checked: int = Field(description="Instances checked (groups, pairs or rows).")
    failed: int = Field(description="Instances that did not hold.")
    failures: list[RelationFailure] = Field(description="One per failed instance, in the order checked.")


class RelationsChannel(Record):
    """Channel 3: the metamorphic relations the caliber declares."""

    verdict: Verdict = Field(description="pass when every checked instance holds.")
    passed: int = Field(description="Instances that hold, over all relations.")
    total: int = Field(description="Instances checked, over all relations.")
    relations: list[RelationOutcome] = Field(description="One outcome per relation, in caliber order.")


class ScoreReport(Record):
    """The canonical result of ``tri-agent score``."""

    schema_version: Literal[1] = Field(default=1, description="Version of the score report format.")
    verdict: Verdict = Field(description="pass only when every channel passes and no blocker stands.")
    blockers: list[str] = Field(description="Why the verdict is fail, one line each.")
    caliber_sha256: str = Field(description="SHA-256 of the caliber file's bytes.")
    answers_sha256: str = Field(description="SHA-256 of the answer key file's bytes.")
    actual_sha256: str = Field(description="SHA-256 of the actual table file's bytes.")
    inputs: list[InputDigest] = Field(description="Every input file, in the order read: caliber, answers, actual, "
                                                  "then behaviour files and replay when given.")
    answers: AnswersChannel = Field(description="Channel 1: the actual table against the sealed answers.")
    behaviors: AnswersChannel | None = Field(default=None,
                                             description="Channel 2; null when no behaviour files were scored.")
    relations: RelationsChannel | None = Field(default=None,
                                               description="Channel 3; null when the caliber declares no relations.")

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), sort_keys=True, indent=1, ensure_ascii=False) + "\n"


def render_markdown(report: ScoreReport, max_failures: int = 50) -> str:
    """A human summary; the JSON stays the complete record."""
    out = [f"# Score report: {report.verdict.upper()}", ""]
    out += [f"- blocker: {b}" for b in report.blockers] or ["- no blockers"]
    out += ["", "| channel | passed | total | verdict |", "|---|---|---|---|"]
    out += _channel_rows(report)
    out += _field_table(report.answers)
    out += _drift_table(report.answers.drift)
    for title, channel in (("answers", report.answers), ("behaviours", report.behaviors)):
        if channel is not None and channel.failures:
            out += _failure_table(title, channel.failures, max_failures)
    if report.relations is not None:
        out += _relation_lines(report.relations)
    out += ["", "## Inputs", "", "| role | file | sha256 |", "|---|---|---|"]
    out += [f"| {i.role} | {_md(i.name)} | `{i.sha256}` |" for i in report.inputs]
    return "\n".join(out) + "\n"


def _channel_rows(report: ScoreReport) -> list[str]:
    rows = [("1 answers", report.answers.passed, report.answers.total, report.answers.verdict)]
    if report.behaviors is not None:
        rows.append(("2 behaviours", report.behaviors.passed, report.behaviors.total, report.behaviors.verdict))
    if report.relations is not None:
        rows.append(("3 relations", report.relations.passed, report.relations.total, report.relations.verdict))
    return [f"| {n} | {p} | {t} | {v} |" for n, p, t, v in rows]


def _field_table(ch: AnswersChannel) -> list[str]:
    out = ["", "## Fields", "", "| field | class | passed | failed | in-tolerance non-zero |", "|---|---|---|---|---|"]
    out += [f"| {_md(n)} | {t.cls} | {t.passed} | {t.failed} | {t.within_tolerance_nonzero} |"
            for n, t in ch.fields.items()]
    out.append(f"\nRows: {ch.rows_expected} expected, {ch.rows_actual} actual, {ch.rows_missing} missing, "
               f"{ch.rows_unexpected} unexpected.")
    return out


def _drift_table(drift: list[DriftAudit]) -> list[str]:
    if not drift:
        return []
    out = ["", "## Drift audit", "", "| field | non-zero | up | down | most frequent | systematic |",
           "|---|---|---|---|---|---|"]
    for d in drift:
        top = ", ".join(f"{t.delta} x{t.count}" for t in d.top_deltas[:3]) or "-"
        out.append(f"| {_md(d.field)} | {d.nonzero} | {d.positive} | {d.negative} | {top} | "
                   f"{'**yes**' if d.systematic else 'no'} |")
    return out


def _failure_table(title: str, failures: list[CellFailure], limit: int) -> list[str]:
    shown = failures[:limit]
    note = f" (first {limit} of {len(failures)}; the JSON report lists all)" if len(failures) > limit else ""
    out = ["", f"## Failing cells: {title}{note}", "", "| key | field | class | expected | actual | reason |",
           "|---|---|---|---|---|---|"]
    for f in shown:
        key = ", ".join(f"{k}={v}" for k, v in f.key.items())
        out.append(f"| {_md(key)} | {_md(f.field or '-')} | {f.cls or '-'} | {_md(f.expected)} | {_md(f.actual)} "
                   f"| {f.reason} |")
    return out


def _relation_lines(ch: RelationsChannel) -> list[str]:
    out = ["", "## Relations", "", "| relation | kind | checked | failed |", "|---|---|---|---|"]
    out += [f"| {_md(r.name)} | {r.kind} | {r.checked} | {r.failed} |" for r in ch.relations]
    for r in ch.relations:
        out += [f"- {_md(r.name)} at {_md(f.where)}: {_md(f.detail)} (attributed to {f.attribution})"
                for f in r.failures]
    return out


def _md(text: str | None) -> str:
    if text is None:
        return "(absent)"
    return text.replace("|", "\\|").replace("\n", "\\n")
