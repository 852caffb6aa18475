"""Grading: read the inputs, run the three channels, and compose the verdict.

This is the one place that knows which channels exist and what makes a score red; the channels
themselves (``_channels``, ``_relations``) are pure over their tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .._errors import MalformedInput, UsageError
from ._caliber import Caliber, FieldSpec, load_caliber
from ._channels import blank_as_value, compare_tables, validate_keys
from ._parts import Parted, score_in_parts, streamable
from ._relations import Observed, evaluate
from ._report import AnswersChannel, CellFailure, InputDigest, ScoreReport
from ._tables import Table, read_actual, read_table

CASE = "case"  # the column a run's tables name their case in (the gateway writes it)


@dataclass(frozen=True)
class ScoreInputs:
    """Paths of everything a score is computed from."""

    caliber: Path
    answers: Path
    actual: Path
    expected_behaviors: Path | None = None
    observed_behaviors: Path | None = None
    replay: Path | None = None
    findings: tuple[str, ...] = ()  # what the run itself showed wrong (a failed run's stray output): each a blocker
    # the gateway's own actual table: every cell already text (a JSON value as its JSON text), so a json or set
    # field's cell is parsed as JSON text, never taken for a JSON string and quoted again
    actual_text: bool = False
    # cases whose run was killed on its timeout: without a behaviour channel (which may expect a timeout) each is a
    # blocker, so rows a hanging target wrote before it was killed never pass as an answer
    timed_out: tuple[str, ...] = ()
    # the cases scored (None: every case): a build's canaries are scored alone against their planted key
    only: frozenset[str] | None = None
    relations: bool = True  # False: no relation channel (it reads across cases, and a part of them is no exam)

    def scores(self, case: str) -> bool:
        """Whether this score covers ``case``."""
        return self.only is None or case in self.only

    def chosen(self, table: Table) -> Table:
        """``table`` with the rows of the cases this score leaves out dropped (a table without a case column is
        left whole: it names no case)."""
        if self.only is None or CASE not in table.columns:
            return table
        return table.among(CASE, self.only)


def score(inputs: ScoreInputs) -> ScoreReport:
    """Score ``inputs`` mechanically; raises MalformedInput or UsageError, never returns a partial report."""
    caliber, caliber_sha = load_caliber(inputs.caliber)
    columns = (*caliber.key, *caliber.fields)
    json_columns = frozenset(n for n, f in caliber.fields.items() if f.cls in ("json", "set"))
    blank = frozenset(caliber.blank_keys or ())  # key columns where a blank string is a value
    as_values = frozenset() if inputs.actual_text else json_columns
    parted = _in_parts(caliber, inputs, blank)
    if parted is not None:
        answers, actual, channel1, failing = parted.answers, parted.actual, parted.channel, parted.failing
    else:
        answers = inputs.chosen(blank_as_value(read_table(inputs.answers, json_columns, columns), blank))
        actual = inputs.chosen(blank_as_value(read_actual(inputs.actual, as_values, columns), blank))  # never refused
        channel1, failing = compare_tables(caliber.key, dict(caliber.fields), answers, actual, caliber.drift,
                                           blank_keys=blank)
    digests = [_digest("caliber", inputs.caliber, caliber_sha),
               _table_digest("answers", answers, channel1.rows_expected),
               _table_digest("actual", actual, channel1.rows_actual)]
    behaviors = _behaviors(caliber, inputs, digests)
    replay = inputs.chosen(blank_as_value(read_actual(inputs.replay, as_values, columns), blank)) \
        if inputs.replay else None
    replay_defects = _replay_defects(caliber.key, replay, blank)
    if replay is not None:
        digests.append(_table_digest("replay", replay, None))
    observed = _observed(caliber, inputs) if any(r.scope for r in caliber.relations) else None
    relations = evaluate(caliber, actual, replay, failing, observed) if caliber.relations and inputs.relations \
        else None
    report = ScoreReport(verdict="pass", blockers=[], caliber_sha256=caliber_sha, answers_sha256=answers.sha256,
                         actual_sha256=actual.sha256, inputs=digests, answers=channel1, behaviors=behaviors,
                         relations=relations)
    blockers = _blockers(report, caliber) + [f"replay: {d}" for d in replay_defects]
    blockers += [f"run: {f}" for f in inputs.findings]
    if caliber.behaviors is None:
        blockers += [f"run: case {c} ran past its timeout" for c in inputs.timed_out if inputs.scores(c)]
    return report.model_copy(update={"blockers": blockers, "verdict": "fail" if blockers else "pass"})


def _in_parts(caliber: Caliber, inputs: ScoreInputs, blank: frozenset[str]) -> Parted | None:
    """The answers channel scored in parts, when the tables are large delimited files and nothing else needs the
    whole actual table in memory (a replay, the relations, a choice of cases); else None."""
    whole = inputs.replay is not None or inputs.only is not None or bool(caliber.relations and inputs.relations)
    if whole or not streamable(inputs.answers, inputs.actual):
        return None
    return score_in_parts(caliber.key, dict(caliber.fields), inputs.answers, inputs.actual, caliber.drift, blank)


def _replay_defects(key: list[str], replay: Table | None, blank_keys: frozenset[str]) -> list[str]:
    """What makes the target's second run unusable as a table (it is the target's answer: a red score)."""
    if replay is None:
        return []
    if replay.defect is not None:
        return [replay.defect]
    try:
        validate_keys(key, replay, blank_keys)
    except MalformedInput as exc:
        return [exc.line()]
    return []


def _behaviors(caliber: Caliber, inputs: ScoreInputs, digests: list[InputDigest]) -> AnswersChannel | None:
    expected_path, observed_path, b = inputs.expected_behaviors, inputs.observed_behaviors, caliber.behaviors
    if expected_path is None and observed_path is None:
        if b is not None:
            raise UsageError("the caliber declares behaviors but no behaviour files were given",
                             hint="pass --expected-behaviors F --observed-behaviors F")
        return None
    if expected_path is None or observed_path is None or b is None:
        raise UsageError("behaviour scoring needs both --expected-behaviors and --observed-behaviors, "
                         "and a 'behaviors' section in the caliber")
    spec = {b.field: FieldSpec.model_validate({"class": "status", "values": b.values})}
    columns = (*b.key, b.field)
    expected = inputs.chosen(read_table(expected_path, columns=columns))
    observed = inputs.chosen(read_table(observed_path, columns=columns))
    channel, _ = compare_tables(b.key, spec, expected, observed)
    digests += [_table_digest("expected_behaviors", expected, channel.rows_expected),
                _table_digest("observed_behaviors", observed, channel.rows_actual)]
    return channel


def _observed(caliber: Caliber, inputs: ScoreInputs) -> Observed | None:
    """Case (its behaviour key) -> the behaviours its run was observed to end in, for scoped relations."""
    b, path = caliber.behaviors, inputs.observed_behaviors
    if path is None or b is None:
        return None
    frame = inputs.chosen(read_table(path, columns=(*b.key, b.field))).frame.collect()
    observed: Observed = {}
    for row in frame.iter_rows(named=True):
        if row[b.field] is not None:
            observed.setdefault(tuple(str(row[c]) for c in b.key), set()).add(row[b.field])
    return observed


# a defect of the target's own table -> how the blocker counts it (one, many): the user must not read "missing" and
# look for a dropped row where the target wrote the row twice, without its key, or with a value that is no value
DEFECTS = {"duplicate_key": ("repeated key", "repeated keys"), "blank_key": ("row without its key",
                                                                           "rows without their key"),
           "unreadable_value": ("unreadable value", "unreadable values")}


def _defects(failures: list[CellFailure]) -> str:
    """'; 1 repeated key (first: case=c-1, group=a)' and the like, for each defect of the target's table (a repeated
    key fails once, a row without its key once a row)."""
    parts = []
    for reason, (one, many) in DEFECTS.items():
        found = [f for f in failures if f.reason == reason]
        if found:
            first = ", ".join(f"{c}={v}" for c, v in found[0].key.items())
            parts.append(f"{len(found)} {one if len(found) == 1 else many}" + (f" (first: {first})" if first else ""))
    return "".join(f"; {p}" for p in parts)


def _blockers(report: ScoreReport, caliber: Caliber) -> list[str]:
    a = report.answers
    out = [f"answers: {d}" for d in a.actual_defects]
    if a.verdict == "fail":
        out.append(f"answers: {a.passed}/{a.total} rows pass ({a.rows_missing} missing, {a.rows_unexpected} "
                   f"unexpected, {len(a.failures)} failing cells{_defects(a.failures)})")
    if caliber.drift.gate:
        out += [f"drift: {d.field} has {d.nonzero} in-tolerance differences, {max(d.positive, d.negative)} the "
                f"same way (systematic)" for d in a.drift if d.systematic]
    if report.behaviors is not None and report.behaviors.verdict == "fail":
        out.append(f"behaviors: {report.behaviors.passed}/{report.behaviors.total} cases pass")
    if report.relations is not None and report.relations.verdict == "fail":
        failed = [r.name for r in report.relations.relations if r.failed]
        out.append(f"relations: {', '.join(failed)} failed")
    return out


def _table_digest(role: str, table: Table, rows: int | None) -> InputDigest:
    return InputDigest(role=role, name=table.path.name, format=table.format, sha256=table.sha256, rows=rows)


def _digest(role: str, path: Path, sha: str) -> InputDigest:
    return InputDigest(role=role, name=path.name, format="yaml", sha256=sha)
