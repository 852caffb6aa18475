"""Sealing, scoring and checking: ``seal``, ``verify``, ``score``, ``leaks``, ``verify-trail``, ``schema``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .._errors import ExitCode, UsageError

if TYPE_CHECKING:
    from ..scoring._report import ScoreReport

from ._table import arg, command, say, write


@command(
    "seal",
    "write DIR/MANIFEST.sha256 and print the seal digest",
    arg("dir", type=Path),
    arg("--dry-run", action="store_true", help="print the digest sealing would produce; write nothing"),
    arg("--reseal", action="store_true", help="replace an existing seal (needs --expect and --reason)"),
    arg("--expect", metavar="DIGEST", help="with --reseal: the new digest you declare"),
    arg("--reason", metavar="TEXT", help="with --reseal: why the sealed content changed"),
    arg(
        "--keep-crlf",
        action="store_true",
        help="admit CRLF text files (chaos inputs that must keep them; never for answer keys)",
    ),
)
def _seal(args: argparse.Namespace) -> int:
    from ..evidence._seal import digest_of, preview, seal

    if args.dry_run:
        print(digest_of(preview(args.dir, args.keep_crlf), args.keep_crlf))
        return ExitCode.PASS
    print(seal(args.dir, reseal=args.reseal, expect=args.expect, reason=args.reason, crlf_kept=args.keep_crlf))
    return ExitCode.PASS


@command(
    "verify",
    "check DIR against its manifest; exit 4 on any difference",
    arg("dir", type=Path),
    arg("--expect", metavar="DIGEST", help="the seal digest recorded when DIR was sealed"),
    arg("--json", type=Path, metavar="OUT", help="write the verify report as JSON"),
    arg("--force", action="store_true", help="replace output files that exist"),
)
def _verify(args: argparse.Namespace) -> int:
    from ..evidence._seal import verify

    report = verify(args.dir, expect=args.expect)
    write(args.json, json.dumps(report.model_dump(mode="json"), indent=1, sort_keys=True) + "\n")
    for f in report.findings:
        say(args, f"{f.kind}: {f.path or '(seal)'}: {f.detail}")
    if report.ok:
        say(args, f"OK {report.files} files, digest {report.digest}")
        return ExitCode.PASS
    print(f"TAMPER {len(report.findings)} finding(s), digest {report.digest}", file=sys.stderr)
    return ExitCode.TAMPER


@command(
    "score",
    "three-channel mechanical score of an actual table against sealed answers",
    arg("--caliber", type=Path, required=True, metavar="CAL.yaml"),
    arg("--answers", type=Path, required=True, metavar="TABLE", help=".csv or .jsonl answer key"),
    arg("--actual", type=Path, required=True, metavar="TABLE", help=".csv or .jsonl actual table"),
    arg("--expected-behaviors", type=Path, metavar="TABLE"),
    arg("--observed-behaviors", type=Path, metavar="TABLE"),
    arg("--replay", type=Path, metavar="TABLE", help="a second run's actual table, for idempotence"),
    arg("--json", type=Path, metavar="OUT", help="write the canonical JSON report ('-' for stdout)"),
    arg("--md", type=Path, metavar="OUT", help="write the Markdown report"),
    arg("--force", action="store_true", help="replace output files that exist"),
)
def _score(args: argparse.Namespace) -> int:
    from ..scoring._grading import ScoreInputs, score

    return print_score(
        args,
        score(
            ScoreInputs(
                args.caliber, args.answers, args.actual, args.expected_behaviors, args.observed_behaviors, args.replay
            )
        ),
    )


@command(
    "leaks",
    "find sealed answer values where they must not be; exit 6 on hits",
    arg("--answers", type=Path, required=True, action="append", metavar="TABLE"),
    arg(
        "--inputs",
        type=Path,
        action="append",
        default=[],
        metavar="PATH",
        help="inputs of the cases: values found here are not distinctive",
    ),
    arg(
        "--actual",
        type=Path,
        action="append",
        default=[],
        metavar="TABLE",
        help="an actual table: checked for mirroring the answers, not for values",
    ),
    arg("--min-length", type=int, default=4, help="shortest value treated as distinctive"),
    arg(
        "--key",
        action="append",
        default=[],
        metavar="COLUMN",
        help="a key column of the answer table: it names rows and is not searched",
    ),
    arg("--json", type=Path, metavar="OUT"),
    arg("paths", type=Path, nargs="*", metavar="PATH"),
    arg("--force", action="store_true", help="replace output files that exist"),
)
def _leaks(args: argparse.Namespace) -> int:
    from ..scoring._leaks import scan_leaks

    report = scan_leaks(
        args.answers, args.paths, inputs=args.inputs, actual=args.actual, min_length=args.min_length, key=args.key
    )
    write(args.json, report.to_json())
    for hit in report.hits:
        say(args, f"{hit.where}: {hit.kind}: {hit.detail}")
    if report.hits:
        print(f"LEAK {len(report.hits)} hit(s) for {report.distinctive_values} distinctive values", file=sys.stderr)
        return ExitCode.LEAK
    say(args, f"OK no leaks ({report.distinctive_values} distinctive values, {report.files_scanned} files)")
    return ExitCode.PASS


@command(
    "verify-trail",
    "check a run: every sealed record, the chain, the pinned head and what the records claim",
    arg("store", type=Path, help="the evidence store, or the project folder of the run"),
    arg("--expect", metavar="DIGEST", help="the trail digest recorded earlier"),
)
def _verify_trail(args: argparse.Namespace) -> int:
    from .._api import verify_trail

    report = verify_trail(args.store, expect=args.expect)
    for f in report.findings:
        print(f"{f.where}: {f.detail}")
    if not report.ok:
        print(f"TAMPER {len(report.findings)} finding(s) in the trail at {report.store}", file=sys.stderr)
        return ExitCode.TAMPER
    print(f"OK {report.records} records in {report.store}, trail digest {report.digest}")
    return ExitCode.PASS


def _schema_refuses(args: argparse.Namespace) -> None:
    """The schema files ``--out`` would get must not exist yet (unless --force)."""
    if args.docs is None and not args.force:
        from .._schemas import schema_files

        existing = [p for p in schema_files(args.out) if p.exists()]
        if existing:
            raise UsageError(f"{existing[0]} already exists", hint="choose a new --out folder, or pass --force")


@command(
    "schema",
    "export the JSON Schemas of every on-disk format, or their Markdown reference",
    arg("--out", type=Path, default=Path("schemas")),
    arg("--docs", type=Path, help="write the Markdown reference of every format to this file instead"),
    arg("--force", action="store_true", help="replace output files that exist"),
    refuses=_schema_refuses,
)
def _schema(args: argparse.Namespace) -> int:
    from .._formatdoc import formats_markdown
    from .._schemas import export_schemas

    if args.docs is not None:
        write(args.docs, formats_markdown())
        print(args.docs)
        return ExitCode.PASS
    for path in export_schemas(args.out):
        print(path)
    return ExitCode.PASS


def print_score(args: argparse.Namespace, report: ScoreReport) -> int:
    from ..scoring._report import render_markdown

    write(args.json, report.to_json())
    write(args.md, render_markdown(report))
    a = report.answers
    say(
        args,
        f"{report.verdict.upper()} answers {a.passed}/{a.total}"
        + (f", behaviors {report.behaviors.passed}/{report.behaviors.total}" if report.behaviors else "")
        + (f", relations {report.relations.passed}/{report.relations.total}" if report.relations else "")
        + f"; caliber {report.caliber_sha256[:12]}, answers {report.answers_sha256[:12]}",
    )
    for blocker in report.blockers:
        say(args, f"  blocker: {blocker}")
    return ExitCode.PASS if report.verdict == "pass" else ExitCode.FAIL


COMMANDS = (
    _seal,
    _verify,
    _score,
    _leaks,
    _verify_trail,
    _schema,
)
