"""``tri-agent evidence``: a change's own test evidence, three signals (docs/evidence.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ._table import arg, command, say, write

if TYPE_CHECKING:
    from ..testsignals import Judge


@command(
    "evidence",
    "what a change's own tests say, never re-run: passed (harvested from a run of this very tree, a report bound to "
    "the head commit, or one found on disk), reduced (test ids collected at BASE and gone at HEAD, unless on "
    "record with a reason), weakened (a judge that can only flag)",
    arg("base", metavar="BASE", help="the base revision"),
    arg("head", metavar="HEAD", nargs="?", help="the head revision (default: the working tree, as it is now)"),
    arg("--repo", type=Path, default=Path("."), help="the repository (default: the current folder)"),
    arg("--report", type=Path, action="append", default=[], metavar="XML",
        help="a JUnit XML report to harvest (repeatable): bound when it names the head commit, else taken only when "
             "no older than the tree's last edit"),
    arg("--reports", action="append", default=[], metavar="GLOB",
        help="a glob of JUnit XML reports under the repository (repeatable)"),
    arg("--judge", choices=("anthropic", "openai", "claude", "codex"), help="who rules on weakened tests: a model "
        "behind its SDK (anthropic, openai) or a CLI agent through its profile (claude, codex); default none, and "
        "weakened is not judged"),
    arg("--model", help="the judge's model (needed for anthropic and openai; a CLI agent's own default otherwise)"),
    arg("--agent-bin", metavar="PATH", help="the CLI agent's program (default: claude or codex on PATH)"),
    arg("--base-url", metavar="URL", help="a compatible server for the judge's SDK (OpenAI's: Chat Completions)"),
    arg("--key-env", metavar="VAR", help="the variable holding the judge's API key (default: ANTHROPIC_API_KEY or "
        "OPENAI_API_KEY)"),
    arg("--samples", type=int, default=5, metavar="K", help="samples the judge is asked (default 5)"),
    arg("--floor", type=float, default=0.8, help="share of the samples a flag needs (default 0.8: 4 of 5)"),
    arg("--json", type=Path, metavar="OUT", help="write the evidence report as JSON ('-' for stdout)"),
    arg("--markdown", type=Path, metavar="OUT", help="write it as Markdown (a pull-request comment)"),
    arg("--junit", type=Path, metavar="OUT", help="write it as JUnit XML (one case per signal)"),
    arg("--timeout", type=float, default=600.0, help="seconds each collection may take (default 600)"),
    arg("--force", action="store_true", help="replace output files that exist"),
)
def _evidence(args: argparse.Namespace) -> int:
    from .._errors import UsageError
    from ..testsignals import evidence, junit, lines, markdown

    if args.samples < 1 or not 0 < args.floor <= 1:
        raise UsageError(f"--samples {args.samples} --floor {args.floor}: K must be at least 1 and the floor in (0, 1]",
                         hint="the defaults are --samples 5 --floor 0.8")
    judge = _judge(args)
    found = sorted({p for g in args.reports for p in _globbed(args.repo, g)})
    report = evidence(args.repo, args.base, args.head, reports=[*args.report, *found], judge=judge, k=args.samples,
                      floor=args.floor, timeout=args.timeout)
    write(args.json, report.model_dump_json(indent=1) + "\n")
    write(args.markdown, markdown(report))
    write(args.junit, junit(report))
    to_stdout = "-" in (str(args.markdown), str(args.junit))
    for line in lines(report):
        print(line, file=sys.stderr) if to_stdout else say(args, line)
    return report.exit_code


def _judge(args: argparse.Namespace) -> Judge | None:
    from .._errors import UsageError
    from ..testsignals import agent_judge, api_judge

    if args.judge in ("claude", "codex"):
        return agent_judge(args.judge, args.model, binary=args.agent_bin)
    if args.judge and not args.model:
        raise UsageError(f"--judge {args.judge} needs --model", hint="name the judge's model, e.g. --model NAME")
    return api_judge(args.judge, args.model, base_url=args.base_url, key_env=args.key_env) if args.judge else None


def _globbed(repo: Path, pattern: str) -> list[Path]:
    from .._errors import UsageError

    try:
        return [p for p in repo.glob(pattern) if p.is_file()]
    except (NotImplementedError, ValueError):
        raise UsageError(f"--reports {pattern!r} is not a glob under the repository",
                         hint="give a relative pattern such as 'reports/*.xml', or an absolute file with --report") \
            from None


COMMANDS = (_evidence,)
