"""The ``tri-agent`` command: parse, call the library, print. No logic lives here: the commands are a table
(``commands/``, each handler with its arguments beside it) and the parser is one loop over it."""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence
from typing import NoReturn

from ._errors import MEANING, ExitCode, NotReady, TriAgentError
from ._version import __version__
from .commands import _evidence, _exams, _gates, _projects, _roles, _signals
from .commands._table import GROUPS, Command, refuse_existing, unsandboxed

COMMANDS: tuple[Command, ...] = (*_evidence.COMMANDS, *_exams.COMMANDS, *_projects.COMMANDS, *_gates.COMMANDS,
                                  *_signals.COMMANDS, *_roles.COMMANDS)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # one line, the documented usage code, and where to look next
        self.exit(ExitCode.USAGE, f"tri-agent: usage error: {message}; see: {self.prog} --help\n")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="tri-agent", description="Hard acceptance: sealed answers, mechanical scoring, mutation gates.",
                epilog="exit codes: " + ", ".join(f"{int(c)} {w}" for c, w in MEANING.items()))
    p.add_argument("--version", action="version", version=f"tri-agent {__version__}")
    top = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    groups: dict[str, argparse._SubParsersAction[_Parser]] = {}
    for cmd in COMMANDS:
        group, _, name = cmd.name.rpartition(" ")
        if group and group not in groups:
            groups[group] = top.add_parser(group, help=GROUPS[group]).add_subparsers(
                dest=f"{group}_command", required=True, parser_class=_Parser)
        sub = (groups[group] if group else top).add_parser(name, help=cmd.help)
        for a in cmd.args:
            sub.add_argument(*a.names, **a.options)
        sub.set_defaults(command_entry=cmd)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    cmd: Command = args.command_entry
    try:
        from .sandbox._jail import configure
        from .sandbox._scratch import session

        configure(allow_unsandboxed=unsandboxed(args))
        with session():  # every scratch folder of the command, gone however it ends (SIGTERM: interrupted)
            refuse_existing(args)
            cmd.refuses(args)
            return cmd.handler(args)
    except TriAgentError as exc:
        for line in exc.lines() if isinstance(exc, NotReady) else [exc.line()]:
            print(f"tri-agent: error: {line}", file=sys.stderr)
        return int(exc.exit_code)
    except BrokenPipeError:  # the reader (e.g. `| head`) left: not an error of ours
        sys.stderr.close()
        return int(ExitCode.PASS)
    except OSError as exc:
        print(f"tri-agent: error: {exc.strerror or exc}: {exc.filename or ''}; check the path and permissions",
              file=sys.stderr)
        return int(ExitCode.INFRASTRUCTURE)
    except KeyboardInterrupt:
        print("tri-agent: interrupted", file=sys.stderr)
        return int(ExitCode.INFRASTRUCTURE)
    except Exception as exc:  # a bug of ours: one line, exit 7, traceback only on request
        if os.environ.get("TRI_AGENT_DEBUG"):
            traceback.print_exc()
        first = str(exc).strip().splitlines()[:1] or [""]
        print(f"tri-agent: internal error: {type(exc).__name__}: {first[0]}; rerun with TRI_AGENT_DEBUG=1 and "
              "report it", file=sys.stderr)
        return int(ExitCode.INFRASTRUCTURE)
