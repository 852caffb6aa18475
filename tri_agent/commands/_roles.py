"""``tri-agent eval-roles``: the project's own LLM roles measured on a result-blind corpus (docs/evaluation.md)."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from ._table import UNSANDBOXED, arg, command, say, unsandboxed, write

if TYPE_CHECKING:
    from ..drivers._llm import LLMDriver
    from ..roleeval._run import Executor


def _refuses(args: argparse.Namespace) -> None:
    from .._errors import UsageError

    if args.out.exists() and any(args.out.iterdir()) and not args.force:
        raise UsageError(f"--out {args.out} is not empty", hint="choose a new folder, or pass --force to replace it")
    if args.baseline_report is not None and args.driver == "fixture":
        raise UsageError("a fixture run is a simulation and can never be a baseline",
                         hint="run a real driver to write --baseline-report")


@command(
    "eval-roles",
    "measure a role on a result-blind corpus: the audit of every case before any attempt, K fresh attempts per "
    "case, each graded against expectations the role never sees; every rate with its denominator and a 95%% "
    "interval clustered by program (no threshold)",
    arg("--allow-unsandboxed", action="store_true", help=UNSANDBOXED + " (an examiner's exams run in the jail)"),
    arg("corpus", type=Path, metavar="CORPUS", help="the corpus folder (corpus.yaml, visible/, private/, provenance/)"),
    arg("--role", required=True, choices=("examiner", "tester", "judge"), help="the role (the corpus's own)"),
    arg("--driver", required=True, choices=("fixture", "command", "anthropic", "openai"),
        help="who plays it: recorded replies (fixture, a simulation), a CLI agent speaking the executor protocol "
             "(command), or a model behind its SDK"),
    arg("--attempts", type=int, default=3, metavar="K", help="attempts per case, each a fresh episode (default 3)"),
    arg("--fixtures", type=Path, metavar="DIR", help="the recorded replies of the fixture driver (<case>.jsonl)"),
    arg("--command", dest="agent_command", metavar="CMD", help="the command driver's program and its arguments"),
    arg("--model", help="the model (the SDK drivers need it; recorded when an agent reports no model)"),
    arg("--base-url", metavar="URL", help="a compatible server for the SDK (OpenAI's: Chat Completions)"),
    arg("--key-env", metavar="VAR", help="the variable holding the API key"),
    arg("--out", type=Path, required=True, metavar="DIR", help="where attempts.jsonl, report.json, report.md, "
        "report.html and adjudication-queue.jsonl go"),
    arg("--baseline-report", type=Path, metavar="PATH", help="also write the report as a baseline (refused for a "
        "simulation)"),
    arg("--against", type=Path, metavar="BASELINE", help="compare with a baseline report"),
    arg("--force", action="store_true", help="write into a --out folder that is not empty"),
    refuses=_refuses,
)
def _eval_roles(args: argparse.Namespace) -> int:
    from .._errors import UsageError
    from ..roleeval import load_corpus
    from ..roleeval._report import RoleEvalReport, compare, markdown, page
    from ..roleeval._run import evaluate
    from ..sandbox._jail import configure

    configure(allow_unsandboxed=unsandboxed(args))
    corpus = load_corpus(args.corpus)
    if corpus.manifest.role != args.role:
        raise UsageError(f"--role {args.role}, but the corpus evaluates the {corpus.manifest.role}",
                         hint=f"give --role {corpus.manifest.role}")
    report = evaluate(corpus, _executor(args), attempts=args.attempts, driver=args.driver,
                      simulated=args.driver == "fixture", out=args.out)
    write(args.out / "report.json", report.model_dump_json(indent=1) + "\n")
    write(args.out / "report.md", markdown(report))
    write(args.out / "report.html", page(report))
    write(args.out / "adjudication-queue.jsonl", "".join(p.model_dump_json() + "\n" for p in report.pending))
    if args.baseline_report is not None:
        write(args.baseline_report, report.model_dump_json(indent=1) + "\n")
    for line in markdown(report).split("\n\n| status", 1)[0].splitlines():  # the head and the measures
        say(args, line)
    if args.against is not None:
        before = RoleEvalReport.model_validate_json(args.against.read_text(encoding="utf-8"))
        try:
            for line in compare(report, before):
                say(args, line)
        except ValueError as exc:
            raise UsageError(f"--against {args.against}: {exc}", hint="compare runs of one corpus version and grader") \
                from None
    return 0


def _executor(args: argparse.Namespace) -> Executor:
    from .._errors import UsageError
    from ..drivers._command import CommandDriver
    from ..roleeval._run import driver_executor, fixture_executor

    if args.driver == "fixture":
        if args.fixtures is None:
            raise UsageError("--driver fixture needs --fixtures DIR", hint="give the folder of recorded replies")
        return fixture_executor(args.fixtures)
    if args.driver == "command":
        if not args.agent_command:
            raise UsageError("--driver command needs --command", hint="give the agent's program, e.g. --command 'x'")
        return driver_executor(CommandDriver(shlex.split(args.agent_command)), args.role, model=args.model)
    return driver_executor(_api(args), args.role, model=args.model)


def _api(args: argparse.Namespace) -> LLMDriver:
    import os

    from .._errors import UsageError
    from ..drivers._llm import anthropic_driver, openai_driver

    env = args.key_env or ("ANTHROPIC_API_KEY" if args.driver == "anthropic" else "OPENAI_API_KEY")
    if not args.model:
        raise UsageError(f"--driver {args.driver} needs --model", hint="name the model")
    key = os.environ.get(env)
    if not key:
        raise UsageError(f"the {args.driver} driver needs {env}", hint=f"export {env}, or name it with --key-env")
    if args.driver == "anthropic":
        return anthropic_driver(args.model, api_key=key, base_url=args.base_url)
    return openai_driver(args.model, api_key=key, base_url=args.base_url, api="chat" if args.base_url else "responses")


COMMANDS = (_eval_roles,)
