"""A project's acceptance: ``new``, ``init``, ``check``, ``accept``, ``install-skill``; the roles' contracts and
workspaces; ``doctor``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .._errors import ExitCode, UsageError
from ._table import CLUSTER, UNSANDBOXED, arg, command, shipped_names, unsandboxed


@command(
    "new",
    "write a complete, working acceptance project for a preset into a new folder",
    arg("project", type=Path, help="the new (or empty) folder"),
    arg("--preset", required=True, help=f"a preset with a skeleton: {', '.join(shipped_names('skeletons'))}"),
)
def _new(args: argparse.Namespace) -> int:
    from ..acceptance._scaffold import scaffold

    made = scaffold(args.project, args.preset)
    print(
        f"wrote {made.project}: the {made.preset} skeleton, {len(made.files)} files (spec/, target/, target.yaml, "
        "exam/, scripted/roles.yaml, acceptance.yaml); each says what to replace"
    )
    print(made.cost_note)
    print(f"git: {made.git}")
    print(
        f"next: tri-agent check {made.project}; tri-agent accept {made.project} runs the dry run (every role "
        "scripted: exit 9, passed but not certified); docs/authoring.md says what to replace, in which order"
    )
    return ExitCode.PASS


@command(
    "init",
    "the startup survey: writes PROJECT/acceptance.yaml (answering is consent)",
    arg("project", type=Path, nargs="?", default=Path(".")),
    arg("--scope", help="what is being accepted"),
    arg("--spec", help="spec file(s), comma-separated, relative to the project"),
    arg("--depth", choices=["quick", "standard", "deep"]),
    arg("--gate-n", help="consecutive green rounds required"),
    arg("--target-kind", help=f"preset: {', '.join(shipped_names('presets'))}"),
    arg(
        "--driver",
        action="append",
        default=[],
        metavar="ROLE=DRIVER",
        help="scripted, in-session, command, anthropic or openai (default scripted)",
    ),
    arg("--target", metavar="FILE", help="the target file, relative to the project (target.yaml)"),
    arg("--exam", metavar="DIR", help="the exam folder, relative to the project (exam)"),
    arg("--evidence", metavar="DIR", help="the run's state folder (default under $XDG_STATE_HOME)"),
    arg("--script", metavar="FILE", help="recorded role actions, for scripted drivers"),
    arg("--budget-usd", metavar="X", help="cap on the whole run's model spend (20)"),
    arg("--model", action="append", default=[], metavar="ROLE=MODEL", help="model of an API-driven role"),
    arg(
        "--model-option",
        action="append",
        default=[],
        metavar="ROLE.KEY=VALUE",
        help="base_url, api (responses or chat), api_key_env or temperature ('none': not sent)",
    ),
    arg(
        "--command",
        action="append",
        default=[],
        metavar="ROLE=COMMAND LINE",
        dest="commands",
        help="argv of a command-driven role, split like a shell line",
    ),
    arg(
        "--limit",
        action="append",
        default=[],
        metavar="ROLE.KEY=VALUE",
        help="what one episode may spend: turns, seconds, budget_usd, output_bytes, write_bytes",
    ),
    arg("--mutmut", metavar="N", help="mutmut's syntactic mutants per round (0)"),
    arg("--hunt-seeds", metavar="N", help="fresh generator seeds a survivor is hunted over (20)"),
    arg("--jobs", metavar="J", help="mutants the gate judges side by side (2)"),
    arg("--samples", metavar="K", help="times the judge is asked about the builder's test changes (5)"),
    arg("--floor", metavar="F", help="share of the samples a weakened flag needs (0.8)"),
    arg("--non-interactive", action="store_true", help="never ask; every answer comes from a flag"),
)
def _init(args: argparse.Namespace) -> int:
    from ..acceptance._config import check_spec, flag_settings, survey, write_config
    from ..targets._presets import get_preset

    drivers = dict.fromkeys(("examiner", "builder", "tester", "judge"), "scripted")
    for item in args.driver:
        role, _, name = item.partition("=")
        if role not in drivers or not name:
            raise UsageError(f"--driver {item!r} is not ROLE=DRIVER", hint="roles: examiner, builder, tester, judge")
        drivers[role] = name
    answers = {
        "scope": args.scope,
        "spec": args.spec,
        "depth": args.depth,
        "gate_n": args.gate_n,
        "target_kind": args.target_kind,
    }
    ask = input if sys.stdin.isatty() and not args.non_interactive else None
    config = survey(
        answers,
        ask,
        lambda kind: get_preset(kind).relative_cost,
        drivers,  # type: ignore[arg-type]
        settings=flag_settings(vars(args)),
    )
    get_preset(config.target_kind)
    spec = check_spec(args.project, config)
    if not spec.ok:
        raise UsageError(f"spec: {spec.detail}")
    path = write_config(args.project, config)
    print(config.consent.cost_note)
    print(f"wrote {path} (consent recorded at {config.consent.given_at})")
    if config.drivers.get("builder") == "in-session":
        from ..acceptance._session import PROJECT, fenced, session_settings, write_settings

        fence = write_settings(args.project / PROJECT, session_settings(fenced(args.project.resolve(), config)))
        print(f"wrote {fence}: Claude Code's sandbox on, the run's state folder denied to the session")
    return ExitCode.PASS


@command(
    "check",
    "check everything a run of the project needs, before it writes evidence; every problem at once",
    arg("project", type=Path, nargs="?", default=Path(".")),
    arg("--allow-unsandboxed", action="store_true", help=UNSANDBOXED),
)
def _check(args: argparse.Namespace) -> int:
    from ..acceptance._check import ready
    from ..sandbox._jail import configure

    configure(allow_unsandboxed=unsandboxed(args))
    ready(args.project)
    print(f"READY {args.project}: configuration, spec, git, target, exam, script, drivers and sandbox check out")
    return ExitCode.PASS


@command(
    "accept",
    "run the hard acceptance of a project to a decision",
    arg("--allow-unsandboxed", action="store_true", help=UNSANDBOXED),
    arg("project", type=Path, nargs="?", default=Path(".")),
    arg("--resume", action="store_true", help="continue a trail after an interruption"),
    arg("--fresh", metavar="REASON", help="abandon a stopped run on the record (REASON is sealed in its trail; its "
        "evidence is kept) and start a new one"),
    arg(
        "--watch",
        action="store_true",
        help="when the builder (the agent session) must fix tickets, "
        "wait for its next commit and go on, instead of stopping (run this outside the session)",
    ),
    arg("--cluster", metavar="SPEC", help=CLUSTER),
)
def _accept(args: argparse.Namespace) -> int:
    from .._api import accept
    from ..acceptance._config import load_config
    from ..acceptance._scoreboard import verdict_line
    from ..acceptance._state import locate

    said = (lambda line: print(line, file=sys.stderr, flush=True)) if args.watch else None
    try:  # the reports are written by accept, also after a stop: the trail so far is worth reading
        verdict = accept(args.project, resume=args.resume, allow_unsandboxed=unsandboxed(args), watch=said,
                         fresh=args.fresh, cluster=args.cluster)
    finally:
        store = locate(args.project.resolve(), load_config(args.project.resolve())).store
        if store.trail.exists():
            print(f"evidence store {store.root}; trail head pinned: {store.digest()}", file=sys.stderr)
    print(f"{verdict_line(store)}; see {args.project / 'SCOREBOARD.md'}")
    return ExitCode.PASS if verdict.certified else ExitCode.NOT_CERTIFIED


@command(
    "install-skill",
    "install SKILL.md and a /hard-acceptance command for Claude Code",
    arg("--home", type=Path, help="home folder to install into (default: yours)"),
    arg("--force", action="store_true", help="replace an installed skill"),
)
def _install_skill(args: argparse.Namespace) -> int:
    from ..acceptance._skill import install_skill

    for path in install_skill(args.home or Path.home(), force=args.force):
        print(f"wrote {path}")
    return ExitCode.PASS


@command(
    "contract show",
    "show a role's contract and check the iron rules",
    arg("role"),
    arg("--roles", type=Path, help="folder of charters (default: the shipped roles/)"),
    arg("--unsafe-contract", action="store_true", help="show a contract that breaks an iron rule"),
)
def _contract_show(args: argparse.Namespace) -> int:
    from ..isolation._contract import load_charter, violations

    charter = load_charter(args.role, args.roles, unsafe=args.unsafe_contract)
    c = charter.contract
    print(f"role {c.role} ({charter.path})")
    for name in ("readable", "hidden", "writable", "protected", "tools"):
        print(f"  {name:<9} {', '.join(getattr(c, name)) or '-'}")
    print(f"  memory    {c.memory}")
    broken = violations(c)
    for v in broken:
        print(f"  BREAKS    {v}")
    print("  iron rules: " + ("BROKEN (--unsafe-contract): this role can never certify" if broken else "all hold"))
    return ExitCode.PASS


@command(
    "workspace",
    "assemble exactly what a role would see",
    arg("role"),
    arg("--project", type=Path, required=True),
    arg("--out", type=Path, required=True),
    arg("--roles", type=Path, help="folder of charters (default: the shipped roles/)"),
    arg("--unsafe-contract", action="store_true"),
)
def _workspace(args: argparse.Namespace) -> int:
    from ..isolation._contract import load_charter
    from ..isolation._workspace import assemble

    charter = load_charter(args.role, args.roles, unsafe=args.unsafe_contract)
    record = assemble(charter.contract, args.project, args.out)
    print(
        f"{args.role} workspace in {args.out}: {record.files} files copied, {record.omitted} kept out, "
        f"{len(record.stripped)} agent-config or history files stripped, {len(record.symlinks_skipped)} symlinks "
        "not copied"
    )
    return ExitCode.PASS


@command("doctor", "isolation layers, drivers and credentials on this machine")
def _doctor(args: argparse.Namespace) -> int:
    from .._doctor import diagnose

    for line in diagnose():
        print(line)
    return ExitCode.PASS


COMMANDS = (
    _new,
    _init,
    _check,
    _accept,
    _install_skill,
    _contract_show,
    _workspace,
    _doctor,
)
