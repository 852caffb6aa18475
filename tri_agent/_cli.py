"""The ``tri-agent`` command: parse, call the library, print. No logic lives here."""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from ._errors import MEANING, ExitCode, NotReady, TriAgentError, UsageError
from ._resources import shipped
from ._version import __version__

if TYPE_CHECKING:
    from .scoring._report import ScoreReport

Handler = Callable[[argparse.Namespace], int]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # one line, the documented usage code, and where to look next
        self.exit(ExitCode.USAGE, f"tri-agent: usage error: {message}; see: {self.prog} --help\n")


def _seal(args: argparse.Namespace) -> int:
    from .evidence._seal import digest_of, preview, seal

    if args.dry_run:
        print(digest_of(preview(args.dir, args.keep_crlf), args.keep_crlf))
        return ExitCode.PASS
    print(seal(args.dir, reseal=args.reseal, expect=args.expect, reason=args.reason, crlf_kept=args.keep_crlf))
    return ExitCode.PASS


def _verify(args: argparse.Namespace) -> int:
    from .evidence._seal import verify

    report = verify(args.dir, expect=args.expect)
    _write(args.json, json.dumps(report.model_dump(mode="json"), indent=1, sort_keys=True) + "\n")
    for f in report.findings:
        _say(args, f"{f.kind}: {f.path or '(seal)'}: {f.detail}")
    if report.ok:
        _say(args, f"OK {report.files} files, digest {report.digest}")
        return ExitCode.PASS
    print(f"TAMPER {len(report.findings)} finding(s), digest {report.digest}", file=sys.stderr)
    return ExitCode.TAMPER


def _score(args: argparse.Namespace) -> int:
    from .scoring._grading import ScoreInputs, score

    return _print_score(args, score(ScoreInputs(args.caliber, args.answers, args.actual, args.expected_behaviors,
                                                args.observed_behaviors, args.replay)))


def _exam_score(args: argparse.Namespace) -> int:
    from ._api import score_run

    return _print_score(args, score_run(args.build, args.run))


def _print_score(args: argparse.Namespace, report: ScoreReport) -> int:
    from .scoring._report import render_markdown

    _write(args.json, report.to_json())
    _write(args.md, render_markdown(report))
    a = report.answers
    _say(args, f"{report.verdict.upper()} answers {a.passed}/{a.total}"
         + (f", behaviors {report.behaviors.passed}/{report.behaviors.total}" if report.behaviors else "")
         + (f", relations {report.relations.passed}/{report.relations.total}" if report.relations else "")
         + f"; caliber {report.caliber_sha256[:12]}, answers {report.answers_sha256[:12]}")
    for blocker in report.blockers:
        _say(args, f"  blocker: {blocker}")
    return ExitCode.PASS if report.verdict == "pass" else ExitCode.FAIL


def _leaks(args: argparse.Namespace) -> int:
    from .scoring._leaks import scan_leaks

    report = scan_leaks(args.answers, args.paths, inputs=args.inputs, actual=args.actual,
                        min_length=args.min_length, key=args.key)
    _write(args.json, report.to_json())
    for hit in report.hits:
        _say(args, f"{hit.where}: {hit.kind}: {hit.detail}")
    if report.hits:
        print(f"LEAK {len(report.hits)} hit(s) for {report.distinctive_values} distinctive values", file=sys.stderr)
        return ExitCode.LEAK
    _say(args, f"OK no leaks ({report.distinctive_values} distinctive values, {report.files_scanned} files)")
    return ExitCode.PASS


def _exam_build(args: argparse.Namespace) -> int:
    from ._api import build_exam

    out = args.out or args.exam / "builds" / f"seed-{args.seed}"
    record = build_exam(args.exam, args.seed, out, allow_unsandboxed=_unsandboxed(args))
    print(f"BUILT {record.exam} seed {record.seed}: {record.cases} cases in {out}")
    print(f"  visible {record.visible_digest}\n  sealed  {record.sealed_digest}")
    return ExitCode.PASS


def _exam_run(args: argparse.Namespace) -> int:
    from ._api import run_exam

    record = run_exam(args.build, args.target, args.out, twice=args.twice, allow_unsandboxed=_unsandboxed(args))
    print(f"RAN {record.cases} cases{' twice, byte-identical' if record.twice else ''}; actual table "
          f"{args.out / 'actual.jsonl'} (sha256 {record.actual_sha256[:12]})")
    for case, why in list(record.unread.items())[:10]:  # the score will count their rows missing: say why now
        print(f"  case {case}: {why}; its rows count as missing")
    if len(record.unread) > 10:
        print(f"  ... and {len(record.unread) - 10} more cases whose output could not be read (see run.json)")
    return ExitCode.PASS


def _rerun(args: argparse.Namespace) -> int:
    from .targets._gateway import rerun

    differing = rerun(args.run, args.build, args.target, args.sample, args.seed)
    if differing:
        print(f"MISMATCH {len(differing)} case(s) no longer reproduce their fingerprint: {', '.join(differing)}")
        return ExitCode.FAIL
    print(f"OK {args.sample} sampled case(s) reproduce their recorded fingerprints")
    return ExitCode.PASS


def _mutate(args: argparse.Namespace) -> int:
    from ._api import mutate
    from .mutation._gate import used_in
    from .mutation._rotation import Selection

    selection = None
    if args.per_class is not None:
        used, red = used_in(args.previous)
        selection = Selection(per_class=args.per_class, total=args.sample, used=frozenset(used), red=red,
                              seed=args.rotation_seed)
    summary = mutate(args.target, args.exam, args.menu, args.out, exam_dir=args.exam_dir, jobs=args.jobs,
                     threshold=args.threshold / 100, minimum=args.min_mutants, timeout_factor=args.timeout_factor,
                     selection=selection, only=args.only, mutmut=args.mutmut, seed=args.rotation_seed,
                     differential=args.differential, hunt_seeds=args.hunt_seeds, concrete=args.concrete,
                     allow_unsandboxed=_unsandboxed(args))
    for m in summary.mutants:
        print(f"{m.status:<12} {m.id} ({m.bug_class}): {m.reason}")
    if summary.unexpressed:
        print(f"no mutant of: {', '.join(summary.unexpressed)} (no operator applies to this code)")
    print(f"{summary.verdict.upper()} {summary.figure()}; report in {args.out}")
    for reason in summary.reasons:
        print(f"  blocker: {reason}")
    return ExitCode.PASS if summary.verdict == "pass" else ExitCode.FAIL


def _presets(args: argparse.Namespace) -> int:
    from .targets._presets import get_preset, load_presets

    if args.name is None:
        for p in load_presets().values():
            print(f"{p.name:<12} {p.title}: {p.driven_by} (classes {', '.join(p.tolerance_classes)}; "
                  f"cost {p.relative_cost:g}x)")
        return ExitCode.PASS
    preset = get_preset(args.name)
    print(json.dumps(preset.model_dump(mode="json"), indent=1, ensure_ascii=False))
    return ExitCode.PASS


def _contract_show(args: argparse.Namespace) -> int:
    from .isolation._contract import load_charter, violations

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


def _workspace(args: argparse.Namespace) -> int:
    from .isolation._contract import load_charter
    from .isolation._workspace import assemble

    charter = load_charter(args.role, args.roles, unsafe=args.unsafe_contract)
    record = assemble(charter.contract, args.project, args.out)
    print(f"{args.role} workspace in {args.out}: {record.files} files copied, {record.omitted} kept out, "
          f"{len(record.stripped)} agent-config or history files stripped, {len(record.symlinks_skipped)} symlinks "
          "not copied")
    return ExitCode.PASS


def _doctor(args: argparse.Namespace) -> int:
    from ._doctor import diagnose

    for line in diagnose():
        print(line)
    return ExitCode.PASS


def _verify_trail(args: argparse.Namespace) -> int:
    from ._api import verify_trail

    report = verify_trail(args.store, expect=args.expect)
    for f in report.findings:
        print(f"{f.where}: {f.detail}")
    if not report.ok:
        print(f"TAMPER {len(report.findings)} finding(s) in the trail at {report.store}", file=sys.stderr)
        return ExitCode.TAMPER
    print(f"OK {report.records} records in {report.store}, trail digest {report.digest}")
    return ExitCode.PASS


def _init(args: argparse.Namespace) -> int:
    from .acceptance._config import check_spec, flag_settings, survey, write_config
    from .targets._presets import get_preset

    drivers = dict.fromkeys(("examiner", "builder", "tester", "judge"), "scripted")
    for item in args.driver:
        role, _, name = item.partition("=")
        if role not in drivers or not name:
            raise UsageError(f"--driver {item!r} is not ROLE=DRIVER", hint="roles: examiner, builder, tester, judge")
        drivers[role] = name
    answers = {"scope": args.scope, "spec": args.spec, "depth": args.depth, "gate_n": args.gate_n,
               "target_kind": args.target_kind}
    ask = input if sys.stdin.isatty() and not args.non_interactive else None
    config = survey(answers, ask, lambda kind: get_preset(kind).relative_cost, drivers,  # type: ignore[arg-type]
                    settings=flag_settings(vars(args)))
    get_preset(config.target_kind)
    spec = check_spec(args.project, config)
    if not spec.ok:
        raise UsageError(f"spec: {spec.detail}")
    path = write_config(args.project, config)
    print(config.consent.cost_note)
    print(f"wrote {path} (consent recorded at {config.consent.given_at})")
    if config.drivers.get("builder") == "in-session":
        from .acceptance._session import PROJECT, fenced, session_settings, write_settings

        fence = write_settings(args.project / PROJECT, session_settings(fenced(args.project.resolve(), config)))
        print(f"wrote {fence}: Claude Code's sandbox on, the run's state folder denied to the session")
    return ExitCode.PASS


def _new(args: argparse.Namespace) -> int:
    from .acceptance._scaffold import scaffold

    made = scaffold(args.project, args.preset)
    print(f"wrote {made.project}: the {made.preset} skeleton, {len(made.files)} files (spec/, target/, target.yaml, "
          "exam/, scripted/roles.yaml, acceptance.yaml); each says what to replace")
    print(made.cost_note)
    print(f"git: {made.git}")
    print(f"next: tri-agent check {made.project}; tri-agent accept {made.project} runs the dry run (every role "
          "scripted: exit 9, passed but not certified); docs/authoring.md says what to replace, in which order")
    return ExitCode.PASS


def _check(args: argparse.Namespace) -> int:
    from .acceptance._check import ready
    from .sandbox._jail import configure

    configure(allow_unsandboxed=_unsandboxed(args))
    ready(args.project)
    print(f"READY {args.project}: configuration, spec, git, target, exam, script, drivers and sandbox check out")
    return ExitCode.PASS


def _accept(args: argparse.Namespace) -> int:
    from ._api import accept
    from .acceptance._rounds import watch
    from .acceptance._scoreboard import verdict_line, write_reports

    try:
        verdict = (watch(args.project, resume=args.resume, say=lambda line: print(line, file=sys.stderr, flush=True))
                   if args.watch else accept(args.project, resume=args.resume,
                                             allow_unsandboxed=_unsandboxed(args)))
    finally:
        store = write_reports(args.project)  # also after a stop: the trail so far is worth reading
        if store.trail.exists():
            print(f"evidence store {store.root}; trail head pinned: {store.digest()}", file=sys.stderr)
    print(f"{verdict_line(store)}; see {args.project / 'SCOREBOARD.md'}")
    return ExitCode.PASS if verdict.certified else ExitCode.NOT_CERTIFIED


def _install_skill(args: argparse.Namespace) -> int:
    from .acceptance._skill import install_skill

    for path in install_skill(args.home or Path.home(), force=args.force):
        print(f"wrote {path}")
    return ExitCode.PASS


def _schema(args: argparse.Namespace) -> int:
    from ._formatdoc import formats_markdown
    from ._schemas import export_schemas

    if args.docs is not None:
        _write(args.docs, formats_markdown())
        print(args.docs)
        return ExitCode.PASS
    for path in export_schemas(args.out):
        print(path)
    return ExitCode.PASS


def _unsandboxed(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "allow_unsandboxed", False))


def _say(args: argparse.Namespace, line: str) -> None:
    """A summary line: to stdout, unless stdout carries the JSON report (--json -)."""
    print(line, file=sys.stderr if str(getattr(args, "json", None)) == "-" else sys.stdout)


_OUTPUT_FILES = ("json", "md", "docs")  # options naming one file a command writes


def _refuse_existing(args: argparse.Namespace) -> None:
    """Before any work: a file a command would write must not exist yet, unless --force (evidence is never
    replaced by accident)."""
    if getattr(args, "force", False):
        return
    for option in _OUTPUT_FILES:
        path = getattr(args, option, None)
        if path is not None and str(path) != "-" and (path.exists() or path.is_symlink()):
            raise UsageError(f"--{option} {path} already exists",
                             hint="choose a new file name, or pass --force to replace it")
    if getattr(args, "handler", None) is _schema and getattr(args, "docs", None) is None:
        from ._schemas import schema_files

        existing = [p for p in schema_files(args.out) if p.exists()]
        if existing:
            raise UsageError(f"{existing[0]} already exists", hint="choose a new --out folder, or pass --force")


def _write(path: Path | None, text: str) -> None:
    if path is None:
        return
    if str(path) == "-":
        sys.stdout.write(text)
        return
    if path.is_dir():
        raise UsageError(f"{path} is a folder", hint="give a file name for the report")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.partial")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _shipped(folder: str) -> list[str]:
    """The names of the presets or skeletons shipped (file or folder names), read without parsing any."""
    return sorted(p.stem for p in shipped(folder).iterdir() if p.suffix == ".yaml" or (p / "exam").is_dir())


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="tri-agent", description="Hard acceptance: sealed answers, mechanical scoring, mutation gates.",
                epilog="exit codes: " + ", ".join(f"{int(c)} {w}" for c, w in MEANING.items()))
    p.add_argument("--version", action="version", version=f"tri-agent {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    s = sub.add_parser("seal", help="write DIR/MANIFEST.sha256 and print the seal digest")
    s.add_argument("dir", type=Path)
    s.add_argument("--dry-run", action="store_true", help="print the digest sealing would produce; write nothing")
    s.add_argument("--reseal", action="store_true", help="replace an existing seal (needs --expect and --reason)")
    s.add_argument("--expect", metavar="DIGEST", help="with --reseal: the new digest you declare")
    s.add_argument("--reason", metavar="TEXT", help="with --reseal: why the sealed content changed")
    s.add_argument("--keep-crlf", action="store_true",
                   help="admit CRLF text files (chaos inputs that must keep them; never for answer keys)")
    s.set_defaults(handler=_seal)

    v = sub.add_parser("verify", help="check DIR against its manifest; exit 4 on any difference")
    v.add_argument("dir", type=Path)
    v.add_argument("--expect", metavar="DIGEST", help="the seal digest recorded when DIR was sealed")
    v.add_argument("--json", type=Path, metavar="OUT", help="write the verify report as JSON")
    v.add_argument("--force", action="store_true", help="replace output files that exist")
    v.set_defaults(handler=_verify)

    c = sub.add_parser("score", help="three-channel mechanical score of an actual table against sealed answers")
    c.add_argument("--caliber", type=Path, required=True, metavar="CAL.yaml")
    c.add_argument("--answers", type=Path, required=True, metavar="TABLE", help=".csv or .jsonl answer key")
    c.add_argument("--actual", type=Path, required=True, metavar="TABLE", help=".csv or .jsonl actual table")
    c.add_argument("--expected-behaviors", type=Path, metavar="TABLE")
    c.add_argument("--observed-behaviors", type=Path, metavar="TABLE")
    c.add_argument("--replay", type=Path, metavar="TABLE", help="a second run's actual table, for idempotence")
    c.add_argument("--json", type=Path, metavar="OUT", help="write the canonical JSON report ('-' for stdout)")
    c.add_argument("--md", type=Path, metavar="OUT", help="write the Markdown report")
    c.add_argument("--force", action="store_true", help="replace output files that exist")
    c.set_defaults(handler=_score)

    lk = sub.add_parser("leaks", help="find sealed answer values where they must not be; exit 6 on hits")
    lk.add_argument("--answers", type=Path, required=True, action="append", metavar="TABLE")
    lk.add_argument("--inputs", type=Path, action="append", default=[], metavar="PATH",
                    help="inputs of the cases: values found here are not distinctive")
    lk.add_argument("--actual", type=Path, action="append", default=[], metavar="TABLE",
                    help="an actual table: checked for mirroring the answers, not for values")
    lk.add_argument("--min-length", type=int, default=4, help="shortest value treated as distinctive")
    lk.add_argument("--key", action="append", default=[], metavar="COLUMN",
                    help="a key column of the answer table: it names rows and is not searched")
    lk.add_argument("--json", type=Path, metavar="OUT")
    lk.add_argument("paths", type=Path, nargs="*", metavar="PATH")
    lk.add_argument("--force", action="store_true", help="replace output files that exist")
    lk.set_defaults(handler=_leaks)

    ex = sub.add_parser("exam", help="build an exam and run it against a target")
    exs = ex.add_subparsers(dest="exam_command", required=True, parser_class=_Parser)
    eb = exs.add_parser("build", help="generate cases, compute and seal the answer key, self-check")
    eb.add_argument("--allow-unsandboxed", action="store_true", help=UNSANDBOXED)
    eb.add_argument("exam", type=Path, help="the exam folder (exam.yaml, SPEC.md, TESTPLAN.md, caliber.yaml)")
    eb.add_argument("--seed", required=True)
    eb.add_argument("--out", type=Path, help="new build folder (default EXAM/builds/seed-SEED)")
    eb.set_defaults(handler=_exam_build)
    er = exs.add_parser("run", help="run every case of a build against a target through the gateway")
    er.add_argument("--allow-unsandboxed", action="store_true", help=UNSANDBOXED)
    er.add_argument("build", type=Path, help="the folder `exam build` wrote")
    er.add_argument("--target", type=Path, required=True, metavar="TARGET.yaml")
    er.add_argument("--out", type=Path, required=True, help="new run folder")
    er.add_argument("--twice", action="store_true", help="run twice and require byte-identical results")
    er.set_defaults(handler=_exam_run)
    es = exs.add_parser("score", help="score a run folder against its build's sealed key (all three channels)")
    es.add_argument("build", type=Path)
    es.add_argument("run", type=Path)
    es.add_argument("--json", type=Path, metavar="OUT")
    es.add_argument("--md", type=Path, metavar="OUT")
    es.add_argument("--force", action="store_true", help="replace output files that exist")
    es.set_defaults(handler=_exam_score)

    rr = sub.add_parser("rerun", help="re-run a sample of a run's cases and compare fingerprints")
    rr.add_argument("--allow-unsandboxed", action="store_true", help=UNSANDBOXED)
    rr.add_argument("run", type=Path, help="the folder `exam run` wrote")
    rr.add_argument("--build", type=Path, required=True)
    rr.add_argument("--target", type=Path, required=True, metavar="TARGET.yaml")
    rr.add_argument("--sample", type=int, default=5)
    rr.add_argument("--seed", type=int, default=0)
    rr.set_defaults(handler=_rerun)

    mu = sub.add_parser("mutate", help="mutation gate: prove the exam catches deliberate bugs")
    mu.add_argument("--allow-unsandboxed", action="store_true", help=UNSANDBOXED)
    mu.add_argument("--target", type=Path, required=True, metavar="TARGET.yaml")
    mu.add_argument("--exam", type=Path, required=True, metavar="BUILD", help="the folder `exam build` wrote")
    mu.add_argument("--menu", type=Path, required=True, metavar="mutations.yaml")
    mu.add_argument("--out", type=Path, required=True, help="new report folder")
    mu.add_argument("--jobs", type=int, default=2, help="mutants judged in parallel")
    mu.add_argument("--threshold", type=float, default=100, help="minimum kill rate in percent")
    mu.add_argument("--min-mutants", type=int, default=3, help="fewest judged mutants the gate accepts")
    mu.add_argument("--timeout-factor", type=float, default=5.0, help="mutant timeout as a multiple of the clean run")
    mu.add_argument("--exam-dir", type=Path, metavar="EXAM", help="the exam's folder: the difference hunt runs its "
                    "generator at fresh seeds (without it, only the menu's class inputs are hunted)")
    mu.add_argument("--hunt-seeds", type=int, default=20, metavar="N",
                    help="fresh generator seeds a survivor is hunted over before it may be called equivalent")
    mu.add_argument("--only", nargs="+", metavar="ID", help="judge only these mutant instances")
    mu.add_argument("--concrete", type=Path, metavar="MUTANTS.yaml",
                    help="the judge's exact edits (exam/judge/config/mutants.yaml): each that applies is judged too")
    mu.add_argument("--per-class", type=int, metavar="N", help="judge up to N instances of every bug class")
    mu.add_argument("--sample", type=int, metavar="N", help="with --per-class: judge N instances in all, spread "
                    "over the classes, new ones first (>= 30%% new, 50%% after a red --previous round)")
    mu.add_argument("--previous", type=Path, action="append", default=[], metavar="SUMMARY.json",
                    help="summary.json of an earlier round (its mutants count as used)")
    mu.add_argument("--rotation-seed", default="0", help="seed of the samples and of the hunt's generator seeds")
    mu.add_argument("--mutmut", type=int, default=0, metavar="N",
                    help="add N syntactic mutants sampled from mutmut (Python targets), judged by the case runner")
    mu.add_argument("--differential", action="store_true",
                    help="calibrate against a target that does not pass yet: killed = the exam's findings change")
    mu.set_defaults(handler=_mutate)

    pr = sub.add_parser("presets", help="list the target presets, or show one")
    pr.add_argument("name", nargs="?")
    pr.set_defaults(handler=_presets)

    ct = sub.add_parser("contract", help="role contracts")
    cts = ct.add_subparsers(dest="contract_command", required=True, parser_class=_Parser)
    cs = cts.add_parser("show", help="show a role's contract and check the iron rules")
    cs.add_argument("role")
    cs.add_argument("--roles", type=Path, help="folder of charters (default: the shipped roles/)")
    cs.add_argument("--unsafe-contract", action="store_true", help="show a contract that breaks an iron rule")
    cs.set_defaults(handler=_contract_show)

    ws = sub.add_parser("workspace", help="assemble exactly what a role would see")
    ws.add_argument("role")
    ws.add_argument("--project", type=Path, required=True)
    ws.add_argument("--out", type=Path, required=True)
    ws.add_argument("--roles", type=Path, help="folder of charters (default: the shipped roles/)")
    ws.add_argument("--unsafe-contract", action="store_true")
    ws.set_defaults(handler=_workspace)

    it = sub.add_parser("init", help="the startup survey: writes PROJECT/acceptance.yaml (answering is consent)")
    it.add_argument("project", type=Path, nargs="?", default=Path("."))
    it.add_argument("--scope", help="what is being accepted")
    it.add_argument("--spec", help="spec file(s), comma-separated, relative to the project")
    it.add_argument("--depth", choices=["quick", "standard", "deep"])
    it.add_argument("--gate-n", help="consecutive green rounds required")
    it.add_argument("--target-kind", help=f"preset: {', '.join(_shipped('presets'))}")
    it.add_argument("--driver", action="append", default=[], metavar="ROLE=DRIVER",
                    help="scripted, in-session, command, anthropic or openai (default scripted)")
    it.add_argument("--target", metavar="FILE", help="the target file, relative to the project (target.yaml)")
    it.add_argument("--exam", metavar="DIR", help="the exam folder, relative to the project (exam)")
    it.add_argument("--evidence", metavar="DIR", help="the run's state folder (default under $XDG_STATE_HOME)")
    it.add_argument("--script", metavar="FILE", help="recorded role actions, for scripted drivers")
    it.add_argument("--budget-usd", metavar="X", help="cap on the whole run's model spend (20)")
    it.add_argument("--model", action="append", default=[], metavar="ROLE=MODEL", help="model of an API-driven role")
    it.add_argument("--model-option", action="append", default=[], metavar="ROLE.KEY=VALUE",
                    help="base_url, api (responses or chat), api_key_env or temperature ('none': not sent)")
    it.add_argument("--command", action="append", default=[], metavar="ROLE=COMMAND LINE", dest="commands",
                    help="argv of a command-driven role, split like a shell line")
    it.add_argument("--limit", action="append", default=[], metavar="ROLE.KEY=VALUE",
                    help="what one episode may spend: turns, seconds, budget_usd, output_bytes, write_bytes")
    it.add_argument("--mutmut", metavar="N", help="mutmut's syntactic mutants per round (0)")
    it.add_argument("--hunt-seeds", metavar="N", help="fresh generator seeds a survivor is hunted over (20)")
    it.add_argument("--jobs", metavar="J", help="mutants the gate judges side by side (2)")
    it.add_argument("--non-interactive", action="store_true", help="never ask; every answer comes from a flag")
    it.set_defaults(handler=_init)

    nw = sub.add_parser("new", help="write a complete, working acceptance project for a preset into a new folder")
    nw.add_argument("project", type=Path, help="the new (or empty) folder")
    nw.add_argument("--preset", required=True, help=f"a preset with a skeleton: {', '.join(_shipped('skeletons'))}")
    nw.set_defaults(handler=_new)

    ac = sub.add_parser("accept", help="run the hard acceptance of a project to a decision")
    ac.add_argument("--allow-unsandboxed", action="store_true", help=UNSANDBOXED)
    ac.add_argument("project", type=Path, nargs="?", default=Path("."))
    ac.add_argument("--resume", action="store_true", help="continue a trail after an interruption")
    ac.add_argument("--watch", action="store_true", help="when the builder (the agent session) must fix tickets, "
                    "wait for its next commit and go on, instead of stopping (run this outside the session)")
    ac.set_defaults(handler=_accept)

    ck = sub.add_parser("check", help="check everything a run of the project needs, before it writes evidence; "
                        "every problem at once")
    ck.add_argument("project", type=Path, nargs="?", default=Path("."))
    ck.add_argument("--allow-unsandboxed", action="store_true", help=UNSANDBOXED)
    ck.set_defaults(handler=_check)

    sk = sub.add_parser("install-skill", help="install SKILL.md and a /hard-acceptance command for Claude Code")
    sk.add_argument("--home", type=Path, help="home folder to install into (default: yours)")
    sk.add_argument("--force", action="store_true", help="replace an installed skill")
    sk.set_defaults(handler=_install_skill)

    vt = sub.add_parser("verify-trail", help="check a run: every sealed record, the chain, the pinned head and "
                                             "what the records claim")
    vt.add_argument("store", type=Path, help="the evidence store, or the project folder of the run")
    vt.add_argument("--expect", metavar="DIGEST", help="the trail digest recorded earlier")
    vt.set_defaults(handler=_verify_trail)

    dr = sub.add_parser("doctor", help="isolation layers, drivers and credentials on this machine")
    dr.set_defaults(handler=_doctor)

    sc = sub.add_parser("schema", help="export the JSON Schemas of every on-disk format, or their Markdown reference")
    sc.add_argument("--out", type=Path, default=Path("schemas"))
    sc.add_argument("--docs", type=Path, help="write the Markdown reference of every format to this file instead")
    sc.add_argument("--force", action="store_true", help="replace output files that exist")
    sc.set_defaults(handler=_schema)
    return p


UNSANDBOXED = ("run role-written code (targets, generators, oracles) even where no OS sandbox works; such a run "
               "can never certify")


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    handler: Handler = args.handler
    try:
        from .sandbox._jail import configure

        configure(allow_unsandboxed=_unsandboxed(args))
        _refuse_existing(args)
        return handler(args)
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

