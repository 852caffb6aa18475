"""The main job as Python: what the ``tri-agent`` commands do, as functions returning the models they print.

Each function takes paths (``str`` or ``Path``), returns the pydantic model the matching command prints a line
of (and writes as JSON), and raises the same error tree (``TriAgentError`` and its exit-coded classes). Role-written
code (targets, generators, oracles) runs in the jail; ``allow_unsandboxed`` is the command line's
``--allow-unsandboxed``: where no OS sandbox works, run anyway, and never certify.

- :func:`accept`: a project's hard acceptance to a verdict (``tri-agent accept``), its reports written;
- :func:`build_exam`: an exam built and sealed at a seed (``tri-agent exam build``);
- :func:`run_exam`: every case of a build run against a target (``tri-agent exam run``);
- :func:`score_run`: a run scored against its build's sealed key (``tri-agent exam score``);
- :func:`mutate`: the mutation gate on a build (``tri-agent mutate``);
- :func:`verify_trail`: a run's evidence store verified (``tri-agent verify-trail``).

``score`` (any answer key against any actual table, ``tri-agent score``) is public too, beside these.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .acceptance._gate import Verdict
    from .acceptance._verify import TrailReport
    from .exam._formats import BuildRecord
    from .mutation._verdict import MutationSummary
    from .scoring._report import ScoreReport
    from .targets._gateway import RunRecord

PathLike = str | Path


def accept(project: PathLike, *, resume: bool = False, allow_unsandboxed: bool = False,
           watch: Callable[[str], None] | None = None, fresh: str | None = None,
           cluster: str | None = None) -> Verdict:
    """Run the hard acceptance of ``project`` (a folder with ``acceptance.yaml``) to its verdict, and write its
    reports (``SCOREBOARD.md``, ``ACCEPTANCE.json``, ``REPORT.html``) also when it stops early. ``resume`` goes on
    from the trail of a stopped run; ``fresh`` (a reason) abandons a stopped run on the record (the reason sealed
    as its trail's last record; its store and pin are kept) and starts a new one. Raises ``Escalation`` (exit 8)
    when a human must decide, ``PolicyViolation`` (exit 5) when the target passed a canary case planted against
    the spec, ``BuilderTurn`` (exit 1) when an in-session builder has tickets to fix; with ``watch`` (told each
    line of what it waits for), it waits for the session's next commit instead and goes on. ``cluster``: the case
    runs of every round on that Dask cluster (``local:N`` or a scheduler's address; docs/scale.md)."""
    from .acceptance._rounds import accept as run
    from .acceptance._rounds import watch as run_watching
    from .acceptance._scoreboard import write_reports

    _sandbox(allow_unsandboxed)
    try:
        with _on(cluster):
            if watch is not None:
                return run_watching(Path(project), resume=resume, say=watch, fresh=fresh)
            return run(Path(project), resume=resume, fresh=fresh)
    finally:
        write_reports(Path(project))


def build_exam(exam: PathLike, seed: str, out: PathLike | None = None, *,
               allow_unsandboxed: bool = False) -> BuildRecord:
    """Build the exam folder ``exam`` at ``seed`` into ``out`` (default ``exam/builds/seed-<seed>``): cases and
    inputs generated twice (they must agree), the answer key computed by the oracle and sealed."""
    from .exam._build import build_exam as build

    _sandbox(allow_unsandboxed)
    return build(Path(exam), seed, Path(out) if out is not None else Path(exam) / "builds" / f"seed-{seed}")


def run_exam(build: PathLike, target: PathLike, out: PathLike, *, twice: bool = False,
             allow_unsandboxed: bool = False, cluster: str | None = None) -> RunRecord:
    """Run every case of ``build`` against the target file ``target`` into the new folder ``out``; ``twice``
    runs it again and requires byte-identical results; ``cluster`` (``local:N`` or a Dask scheduler's address) runs
    the cases on that cluster's workers instead of this process's threads (docs/scale.md)."""
    from .targets._gateway import run_exam as run

    _sandbox(allow_unsandboxed)
    with _on(cluster):
        return run(Path(build), Path(target), Path(out), twice=twice)


def score_run(build: PathLike, run: PathLike) -> ScoreReport:
    """Score the run folder ``run`` against the sealed answer key of ``build``: the three channels."""
    from .scoring._grading import score
    from .targets._gateway import run_score_inputs

    return score(run_score_inputs(Path(build), Path(run)))


def score_canaries(build: PathLike, run: PathLike) -> tuple[list[str], int]:
    """The canary cases of ``build`` that the run in ``run`` passed (an honest target passes none), and how many the
    build planted; scored apart from the three channels, against their planted key."""
    from .exam._canaries import passed, sealed_canaries
    from .scoring._grading import score
    from .targets._gateway import canary_score_inputs

    inputs = canary_score_inputs(Path(build), Path(run))
    planted = sealed_canaries(Path(build))
    return (passed(score(inputs), planted) if inputs else []), len(planted)


def mutate(target: PathLike, build: PathLike, menu: PathLike, out: PathLike, *, exam_dir: PathLike | None = None,
           jobs: int = 2, threshold: float = 1.0, minimum: int = 3, allow_unsandboxed: bool = False,
           cluster: str | None = None, **options: object) -> MutationSummary:
    """The mutation gate: mutants of the target's code from the bug classes of ``menu``, each judged by replaying
    the exam ``build``; equivalents proven by hunting over the generator of ``exam_dir``. Writes its reports into
    the new folder ``out``. ``options`` are the gate's others (``hunt_seeds``, ``concrete``, ``mutmut``, ...).
    ``cluster``: every case run of the gate (the clean run, each mutant's replays, each hunted input run for real) on
    that Dask cluster; ``jobs`` mutants are judged at once."""
    from .mutation._gate import mutate as gate

    _sandbox(allow_unsandboxed)
    with _on(cluster):
        return gate(Path(target), Path(build), Path(menu), Path(out), exam_dir=Path(exam_dir) if exam_dir else None,
                    jobs=jobs, threshold=threshold, minimum=minimum, **options)


def verify_trail(store: PathLike, *, expect: str | None = None) -> TrailReport:
    """Verify a run's evidence store (or the project that names it): the chain and every seal, the pinned head,
    what the sealed records claim and the reports against them. ``expect`` pins the trail's digest."""
    from .acceptance._verify import verify_trail as verify

    return verify(Path(store), expect=expect)


@contextmanager
def _on(cluster: str | None) -> Iterator[None]:
    """The fan-out on ``cluster`` inside the block (None: the local pool)."""
    if cluster is None:
        yield
        return
    from .fanout import open_cluster, using

    with open_cluster(cluster) as executor, using(executor):
        yield


def _sandbox(allow_unsandboxed: bool) -> None:
    from .sandbox._jail import configure

    configure(allow_unsandboxed=allow_unsandboxed)
