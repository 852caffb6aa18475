"""The exam pipeline: ``exam build``, ``exam run``, ``exam score``, ``rerun``, ``mutate``, ``presets``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from .._errors import ExitCode
from ._evidence import print_score
from ._table import CLUSTER, UNSANDBOXED, arg, command, say, shown, unsandboxed

if TYPE_CHECKING:
    from ..mutation._rotation import Selection
    from ..mutation._verdict import MutationSummary


@command(
    "exam build",
    "generate cases, compute and seal the answer key, self-check",
    arg("--allow-unsandboxed", action="store_true", help=UNSANDBOXED),
    arg("exam", type=Path, help="the exam folder (exam.yaml, SPEC.md, TESTPLAN.md, caliber.yaml)"),
    arg("--seed", required=True),
    arg("--out", type=Path, help="new build folder (default EXAM/builds/seed-SEED)"),
)
def _exam_build(args: argparse.Namespace) -> int:
    from .._api import build_exam

    out = args.out or args.exam / "builds" / f"seed-{args.seed}"
    record = build_exam(args.exam, args.seed, out, allow_unsandboxed=unsandboxed(args))
    print(f"BUILT {record.exam} seed {record.seed}: {record.cases} cases in {out}")
    print(f"  visible {record.visible_digest}\n  sealed  {record.sealed_digest}")
    return ExitCode.PASS


@command(
    "exam run",
    "run every case of a build against a target through the gateway",
    arg("--allow-unsandboxed", action="store_true", help=UNSANDBOXED),
    arg("build", type=Path, help="the folder `exam build` wrote"),
    arg("--target", type=Path, required=True, metavar="TARGET.yaml"),
    arg("--out", type=Path, required=True, help="new run folder"),
    arg("--twice", action="store_true", help="run twice and require byte-identical results"),
    arg("--cluster", metavar="SPEC", help=CLUSTER),
)
def _exam_run(args: argparse.Namespace) -> int:
    from .._api import run_exam

    with shown("exam run"):
        record = run_exam(args.build, args.target, args.out, twice=args.twice, allow_unsandboxed=unsandboxed(args),
                          cluster=args.cluster)
    print(
        f"RAN {record.cases} cases{' twice, byte-identical' if record.twice else ''}; actual table "
        f"{args.out / 'actual.jsonl'} (sha256 {record.actual_sha256[:12]})"
    )
    if record.faults:
        print(f"  {len(record.faults)} fault(s) on the cluster, each retried on another worker; first: "
              f"{record.faults[0]} (all in run.json)")
    for case, why in list(record.unread.items())[:10]:  # the score will count their rows missing: say why now
        print(f"  case {case}: {why}; its rows count as missing")
    if len(record.unread) > 10:
        print(f"  ... and {len(record.unread) - 10} more cases whose output could not be read (see run.json)")
    return ExitCode.PASS


@command(
    "exam score",
    "score a run folder against its build's sealed key (all three channels)",
    arg("build", type=Path),
    arg("run", type=Path),
    arg("--json", type=Path, metavar="OUT"),
    arg("--md", type=Path, metavar="OUT"),
    arg("--force", action="store_true", help="replace output files that exist"),
)
def _exam_score(args: argparse.Namespace) -> int:
    from .._api import score_canaries, score_run

    code = print_score(args, score_run(args.build, args.run))
    hit, planted = score_canaries(args.build, args.run)
    if planted:
        say(args, f"canaries: {len(hit)}/{planted} passed (scored apart, against expectations planted against the "
                  "spec: an honest target passes none)" + (f"; passed: {', '.join(hit)}" if hit else ""))
    return code


@command(
    "rerun",
    "re-run a sample of a run's cases and compare fingerprints",
    arg("--allow-unsandboxed", action="store_true", help=UNSANDBOXED),
    arg("run", type=Path, help="the folder `exam run` wrote"),
    arg("--build", type=Path, required=True),
    arg("--target", type=Path, required=True, metavar="TARGET.yaml"),
    arg("--sample", type=int, default=5),
    arg("--seed", type=int, default=0),
)
def _rerun(args: argparse.Namespace) -> int:
    from ..targets._gateway import rerun

    differing = rerun(args.run, args.build, args.target, args.sample, args.seed)
    if differing:
        print(f"MISMATCH {len(differing)} case(s) no longer reproduce their fingerprint: {', '.join(differing)}")
        return ExitCode.FAIL
    print(f"OK {args.sample} sampled case(s) reproduce their recorded fingerprints")
    return ExitCode.PASS


@command(
    "mutate",
    "mutation gate: prove the exam catches deliberate bugs",
    arg("--allow-unsandboxed", action="store_true", help=UNSANDBOXED),
    arg("--target", type=Path, required=True, metavar="TARGET.yaml"),
    arg("--exam", type=Path, required=True, metavar="BUILD", help="the folder `exam build` wrote"),
    arg("--menu", type=Path, required=True, metavar="mutations.yaml"),
    arg("--out", type=Path, required=True, help="new report folder"),
    arg("--resume", action="store_true", help="go on with a gate that was cut short in OUT: the verdicts it wrote "
        "for this very code and exam are kept, the rest judged"),
    arg("--jobs", type=int, default=2, help="mutants judged in parallel"),
    arg("--threshold", type=float, default=100, help="minimum kill rate in percent"),
    arg("--min-mutants", type=int, default=3, help="fewest judged mutants the gate accepts"),
    arg("--timeout-factor", type=float, default=5.0, help="mutant timeout as a multiple of the clean run"),
    arg(
        "--exam-dir",
        type=Path,
        metavar="EXAM",
        help="the exam's folder: the difference hunt runs its "
        "generator at fresh seeds (without it, only the menu's class inputs are hunted)",
    ),
    arg(
        "--hunt-seeds",
        type=int,
        default=20,
        metavar="N",
        help="fresh generator seeds a survivor is hunted over before it may be called equivalent",
    ),
    arg("--only", nargs="+", metavar="ID", help="judge only these mutant instances"),
    arg(
        "--concrete",
        type=Path,
        metavar="MUTANTS.yaml",
        help="the judge's exact edits (exam/judge/config/mutants.yaml): each that applies is judged too",
    ),
    arg("--per-class", type=int, metavar="N", help="judge up to N instances of every bug class"),
    arg(
        "--sample",
        type=int,
        metavar="N",
        help="with --per-class: judge N instances in all, spread "
        "over the classes, new ones first (>= 30%% new, 50%% after a red --previous round)",
    ),
    arg(
        "--previous",
        type=Path,
        action="append",
        default=[],
        metavar="SUMMARY.json",
        help="summary.json of an earlier round (its mutants count as used)",
    ),
    arg("--rotation-seed", default="0", help="seed of the samples and of the hunt's generator seeds"),
    arg(
        "--mutmut",
        type=int,
        default=0,
        metavar="N",
        help="add N syntactic mutants sampled from mutmut (Python targets), judged by the case runner",
    ),
    arg(
        "--differential",
        action="store_true",
        help="calibrate against a target that does not pass yet: killed = the exam's findings change",
    ),
    arg("--cluster", metavar="SPEC", help=CLUSTER),
)
def _mutate(args: argparse.Namespace) -> int:
    from ..mutation._gate import used_in
    from ..mutation._rotation import Selection

    selection = None
    if args.per_class is not None:
        used, red = used_in(args.previous)
        selection = Selection(
            per_class=args.per_class, total=args.sample, used=frozenset(used), red=red, seed=args.rotation_seed
        )
    with shown("mutation gate"):
        summary = _gate(args, selection)
    for m in summary.mutants:
        print(f"{m.status:<12} {m.id} ({m.bug_class}): {m.reason}")
    if summary.unexpressed:
        print(f"no mutant of: {', '.join(summary.unexpressed)} (no operator applies to this code)")
    print(f"{summary.verdict.upper()} {summary.figure()}; report in {args.out}")
    for reason in summary.reasons:
        print(f"  blocker: {reason}")
    return ExitCode.PASS if summary.verdict == "pass" else ExitCode.FAIL


def _gate(args: argparse.Namespace, selection: Selection | None) -> MutationSummary:
    from .._api import mutate

    return mutate(args.target, args.exam, args.menu, args.out, exam_dir=args.exam_dir, jobs=args.jobs,
                  threshold=args.threshold / 100, minimum=args.min_mutants, timeout_factor=args.timeout_factor,
                  selection=selection, only=args.only, mutmut=args.mutmut, seed=args.rotation_seed,
                  differential=args.differential, hunt_seeds=args.hunt_seeds, concrete=args.concrete,
                  resume=args.resume, allow_unsandboxed=unsandboxed(args), cluster=args.cluster)


@command("presets", "list the target presets, or show one", arg("name", nargs="?"))
def _presets(args: argparse.Namespace) -> int:
    from ..targets._presets import get_preset, load_presets

    if args.name is None:
        for p in load_presets().values():
            print(
                f"{p.name:<12} {p.title}: {p.driven_by} (classes {', '.join(p.tolerance_classes)}; "
                f"cost {p.relative_cost:g}x)"
            )
        return ExitCode.PASS
    preset = get_preset(args.name)
    print(json.dumps(preset.model_dump(mode="json"), indent=1, ensure_ascii=False))
    return ExitCode.PASS


COMMANDS = (
    _exam_build,
    _exam_run,
    _exam_score,
    _rerun,
    _mutate,
    _presets,
)
