"""``gate map``, ``gate workspace``, ``gate check``: the patch gate's commands (docs/gate.md)."""

from __future__ import annotations

import argparse
from pathlib import Path

from .._errors import ExitCode
from ._table import arg, command, say, write


@command(
    "gate map",
    "list every test file of a repository with its ownership class (one class per file; unnamed: diagnostic)",
    arg("repo", type=Path, nargs="?", default=Path("."), help="the repository (default: the current folder)"),
    arg("--rev", metavar="REV", help="a revision to map (default: the working tree)"),
    arg("--base", metavar="REV", help="refuse (exit 5) a scoring file added since REV without a change of the map"),
    arg("--json", type=Path, metavar="OUT", help="write the map as JSON ('-' for stdout)"),
    arg("--force", action="store_true", help="replace output files that exist"),
)
def _gate_map(args: argparse.Namespace) -> int:
    from ..patchgate import map_against, map_of

    found = map_against(args.repo, args.base, args.rev) if args.base else map_of(args.repo, args.rev)
    write(args.json, found.model_dump_json(indent=1) + "\n")
    for e in found.entries:
        named = e.glob or ("the ledger" if e.cls == "ledger" else "unclassified")
        say(args, f"{e.cls:<18} {e.path}  ({named}{', held out' if e.held_out else ''})")
    counts = {k: sum(1 for e in found.entries if e.cls == k) for k in dict.fromkeys(e.cls for e in found.entries)}
    say(args, f"MAPPED {len(found.entries)} test files of {found.revision}: "
              + (", ".join(f"{n} {k}" for k, n in counts.items()) or "none"))
    return ExitCode.PASS


@command(
    "gate workspace",
    "write the agent's checkout of BASE into DEST: a fresh repository without the scoring tree, the held-out suite, "
    "the ledger, the fixture schema or the gate file, and without history",
    arg("base", metavar="BASE", help="the base revision"),
    arg("dest", type=Path, metavar="DEST", help="a new or empty folder"),
    arg("--repo", type=Path, default=Path("."), help="the repository (default: the current folder)"),
    arg("--json", type=Path, metavar="OUT", help="write the checkout's record as JSON ('-' for stdout)"),
    arg("--force", action="store_true", help="replace output files that exist"),
)
def _gate_workspace(args: argparse.Namespace) -> int:
    from ..patchgate import checkout

    made = checkout(args.repo, args.base, args.dest)
    write(args.json, made.model_dump_json(indent=1) + "\n")
    links = f"; not written: {', '.join(made.not_written)}" if made.not_written else ""
    say(args, f"WROTE {made.files} files of {made.base[:12]} into {args.dest} (one commit, {made.commit[:12]}); "
              f"{made.omitted} left out{links}")
    return ExitCode.PASS


@command(
    "gate check",
    "the patch from BASE to HEAD (or --patch FILE on BASE) held to its repository's gate: policy first, each rule its "
    "own exit code, then the verdict in a clean checkout in the OS sandbox",
    arg("base", metavar="BASE", help="the base revision (its gate file is the one that holds)"),
    arg("head", metavar="HEAD", nargs="?", help="the revision with the patch"),
    arg("--patch", type=Path, metavar="FILE", help="a patch file (git diff --binary) to judge on BASE instead of HEAD"),
    arg("--repo", type=Path, default=Path("."), help="the repository (default: the current folder)"),
    arg("--json", type=Path, metavar="OUT", help="write the gate report as JSON ('-' for stdout)"),
    arg("--markdown", type=Path, metavar="OUT", help="write the gate report as Markdown"),
    arg("--junit", type=Path, metavar="OUT", help="write the gate report as JUnit XML"),
    arg("--timeout", type=float, default=600.0, help="seconds each run may take (default 600)"),
    arg("--policy-only", action="store_true", help="the policy alone, no runs (a pre-push hook): exit 9 when it held"),
    arg("--force", action="store_true", help="replace output files that exist"),
)
def _gate_check(args: argparse.Namespace) -> int:
    from .._errors import GateRefusal, UsageError
    from ..patchgate import check, junit, markdown

    patch = None
    if args.patch is not None:
        if not args.patch.is_file():
            raise UsageError(f"--patch {args.patch}: no such file", hint="pass a file written by git diff --binary")
        patch = args.patch.read_bytes()
    report, found = check(args.repo, args.base, args.head, patch, args.timeout, run=not args.policy_only)
    write(args.json, report.model_dump_json(indent=1) + "\n")
    write(args.markdown, markdown(report))
    write(args.junit, junit(report))
    for line in report.policy.findings:
        say(args, f"  refused {line}")
    if found:
        raise GateRefusal(found[0].code, f"the patch broke {len(found)} rule(s) of the gate, first: {found[0].line}",
                          hint="see every finding above; the patch, not the gate, must change")
    verdict = report.verdict
    if verdict is None:
        say(args, f"POLICY HELD: {report.head[:12]} on {report.base[:12]}; the verdict was not run (--policy-only), so "
                  "the patch is not passed: exit 9")
        return ExitCode.NOT_CERTIFIED
    for line in verdict.failures:
        say(args, f"  failed {line}")
    passed = sum(t.outcome == "passed" for t in verdict.head.tests)
    cases = f", corpus {sum(c.passed for c in verdict.head.cases)}/{len(verdict.head.cases)}"
    shown = f"{report.head[:12]} on {report.base[:12]}: policy held; tests {passed}/{len(verdict.head.tests)}{cases}" \
            f"; {len(verdict.regressions)} regression(s), {len(verdict.improvements)} improvement(s)"
    say(args, ("PASSED " if report.exit_code == ExitCode.PASS else "FAILED ") + shown)
    return report.exit_code


COMMANDS = (_gate_map, _gate_workspace, _gate_check)
