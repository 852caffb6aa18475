"""Shared helpers: write small tables and calibers, run the CLI in-process."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import settings

from tri_agent._cli import main

# `python3 dev.py mutation` judges each mutant by these tests: there, hypothesis must give the same verdict on
# every run (derandomized, no example database shared between mutants) and never fail on a slow, traced run.
# The suite itself runs on two workers a core beside jails, chromium and PostgreSQL: hypothesis's 200 ms deadline
# per example is a wall-clock limit that a busy machine trips (a 15 ms example took 255 ms), so it is off everywhere.
settings.register_profile("mutation", deadline=None, derandomize=True, database=None)
settings.register_profile("suite", deadline=None)
settings.load_profile(os.environ.get("TRI_AGENT_HYPOTHESIS_PROFILE", "suite"))


@pytest.fixture(scope="session", autouse=True)
def _state_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Every run's state folder under a temporary home, and every seed fixed (tests compare trails).
    Runs need not be isolated from each other here: a state folder is named after its project's path."""
    home = tmp_path_factory.mktemp("state-home")
    saved = {k: os.environ.get(k) for k in ("XDG_STATE_HOME", "TRI_AGENT_SEED_SECRET")}
    os.environ.update(XDG_STATE_HOME=str(home), TRI_AGENT_SEED_SECRET="tri-agent-tests")
    yield home
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


CALIBER = """schema_version: 1
key: [case, group]
fields:
  avg: amount
  share: ratio
  n: count
  state: {class: status, values: [ok, late]}
  label: text
"""
ANSWERS = [
    {"case": "c-1", "group": "a", "avg": "2.35", "share": "0.500000", "n": "2", "state": "ok", "label": "Ärger"},
    {"case": "c-1", "group": "b", "avg": "1.10", "share": "0.250000", "n": "1", "state": "late", "label": "b"},
    {"case": "c-2", "group": "a", "avg": "7.00", "share": "0.250000", "n": "1", "state": "ok", "label": "x, \"y\""},
]


def write_jsonl(path: Path, rows: Iterable[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def write_csv(path: Path, rows: list[dict[str, object]], columns: list[str] | None = None) -> Path:
    import csv
    import io

    columns = columns or list(rows[0])
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for r in rows:
        writer.writerow({c: r.get(c, "") for c in columns})
    path.write_text(buf.getvalue(), encoding="utf-8")
    return path


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """Run ``tri-agent ARGS`` in-process; returns (exit code, stdout, stderr)."""

    def run(*args: object) -> tuple[int, str, str]:
        try:
            code = main([str(a) for a in args])
        except SystemExit as exc:  # argparse usage errors
            code = int(exc.code or 0)
        out = capsys.readouterr()
        return code, out.out, out.err

    return run


@pytest.fixture
def scored(tmp_path: Path) -> Callable[..., dict[str, object]]:
    """Score ``actual`` rows against ANSWERS with CALIBER; returns the report as a dict."""
    from tri_agent import ScoreInputs, score

    def run(actual: list[dict[str, object]], caliber: str = CALIBER, answers: list[dict[str, object]] | None = None,
            fmt: str = "jsonl") -> dict[str, object]:
        cal = tmp_path / "caliber.yaml"
        cal.write_text(caliber)
        ans = write_jsonl(tmp_path / "answers.jsonl", answers if answers is not None else ANSWERS)
        act = tmp_path / f"actual.{fmt}"
        if fmt == "csv":
            write_csv(act, actual)
        else:
            write_jsonl(act, actual)
        report = score(ScoreInputs(cal, ans, act))
        return report.model_dump(mode="json")

    return run


TOY = Path(__file__).resolve().parents[1] / "examples" / "toy-grades"


@pytest.fixture(scope="session")
def toy_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The toy-grades exam built once for seed 1 (the build folder)."""
    from tri_agent.exam._build import build_exam

    root = tmp_path_factory.mktemp("toy")
    return build_exam(TOY / "exam", "1", root / "build") and root / "build"


def toy_copy(dest: Path, fixed: bool) -> Path:
    """A private copy of the toy-grades example; with ``fixed``, fix.patch applied to its target."""
    import shutil
    import subprocess

    shutil.copytree(TOY, dest, ignore=shutil.ignore_patterns("builds", "out"))
    if fixed:
        subprocess.run(["git", "apply", "-p1", str(dest / "fix.patch")], cwd=dest / "target", check=True)
    return dest


GIT = ["git", "-c", "user.name=tri-agent-test", "-c", "user.email=test@invalid"]


def round_record(project: Path, name: str) -> Path:
    """The folder of one record (``round-0001``, ...) of an accepted project's trail."""
    from tri_agent.acceptance._config import load_config
    from tri_agent.acceptance._state import locate

    return locate(project, load_config(project)).root / "records" / name


def round_score(project: Path, round_name: str) -> dict[str, Any]:
    """The score report of one round of an accepted project."""
    import json

    return dict(json.loads((round_record(project, round_name) / "score.json").read_text()))


def toy_project(dest: Path, gate_n: int | None = None, hunt_seeds: int = 3) -> Path:
    """A committed copy of the toy-grades acceptance project (optionally with another gate N). Its mutation gate
    hunts equivalents over ``hunt_seeds`` fresh generator seeds (the example's own default is 20): the protocol
    tests do not test the proof's depth, the gate's tests do."""
    import shutil
    import subprocess

    # out/: the demo's results, a git work tree of its own, never part of a copy
    shutil.copytree(TOY, dest, ignore=shutil.ignore_patterns("builds", "runs", "mutation", "evidence", "SCOREBOARD.md",
                                                             "out"))
    config = dest / "acceptance.yaml"
    text = config.read_text() if gate_n is None else config.read_text().replace("gate_n: 3", f"gate_n: {gate_n}")
    config.write_text(text + ("" if hunt_seeds == 20 else f"mutation: {{hunt_seeds: {hunt_seeds}}}\n"))
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "baseline"]):
        subprocess.run([*GIT, *args], cwd=dest, check=True, capture_output=True)
    return dest


def commit(project: Path, message: str) -> None:
    import subprocess

    subprocess.run([*GIT, "add", "-A"], cwd=project, check=True, capture_output=True)
    subprocess.run([*GIT, "commit", "-qm", message], cwd=project, check=True, capture_output=True)


def in_session(dest: Path, gate_n: int = 1) -> Path:
    """A committed toy project (gate N = ``gate_n``) whose builder is the session: a run stops for it."""
    project = toy_project(dest, gate_n=gate_n)
    config = project / "acceptance.yaml"
    config.write_text(config.read_text().replace("builder: scripted", "builder: in-session"))
    commit(project, "the session plays the builder")
    return project


@pytest.fixture(scope="session")
def stopped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An in-session run (gate N = 1) stopped after its red round 1, waiting for the builder (the session) to fix.
    Read it as it is; a test that goes on from there plays on a copy of it (``clone_run``)."""
    from tri_agent import BuilderTurn
    from tri_agent.acceptance._rounds import accept

    project = in_session(tmp_path_factory.mktemp("stopped") / "toy")
    with pytest.raises(BuilderTurn, match="round 2 waits for the builder") as err:
        accept(project)
    assert err.value.exit_code == 1
    assert list((project / "exam" / "tickets" / "builder").glob("t-*.md"))  # the session reads its tickets here
    return project


def once_per_run(factory: pytest.TempPathFactory, name: str, make: Callable[[Path], dict[str, Any]]) \
        -> dict[str, Any]:
    """``make(folder)`` run once for the whole test run, whichever xdist worker asks first; the others wait for it
    and get what it returned (JSON). Without xdist, once per session. A ``make`` that failed is tried again by the
    next worker that asks, and fails there too."""
    import fcntl

    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if run is None:
        return make(factory.mktemp(name))
    shared = factory.getbasetemp().parent / f"once-{run[:16]}"
    shared.mkdir(exist_ok=True)
    done = shared / f"{name}.json"
    with (shared / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            done.write_text(json.dumps(make(factory.mktemp(name))))
        return json.loads(done.read_text())  # type: ignore[no-any-return]


def _accept_watched(dest: Path) -> dict[str, Any]:
    import tri_agent.acceptance._cast as cast
    import tri_agent.acceptance._rounds as rounds

    project = toy_project(dest / "toy")
    state = run_state(project)
    seen: dict[str, list[list[str]]] = {"builder": [], "tester": []}
    play, audit = rounds.play, cast.before_launch

    def watched_play(project_: Path, config, role: str, k: int, stage, run_case=None):  # type: ignore[no-untyped-def]
        if role == "builder":
            seen["builder"].append(sorted(p.name for p in state.builds.glob("round-*")))
        return play(project_, config, role, k, stage, run_case)

    def watched_audit(contract, workspace: Path, texts, keys, exposure):  # type: ignore[no-untyped-def]
        if contract.role == "tester":
            seen["tester"].append(sorted(p.relative_to(workspace).as_posix() for p in workspace.rglob("*.md")))
        return audit(contract, workspace, texts, keys, exposure)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(rounds, "play", watched_play)
        patch.setattr(cast, "before_launch", watched_audit)
        verdict = rounds.accept(project)
    assert verdict.decision == "accepted" and verdict.rounds == 5 and not verdict.certified
    return {"project": str(project), "root": str(state.root), "pin": str(state.pin_path), "seen": seen}


@pytest.fixture(scope="session")
def toy_accepted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[list[str]]]]:
    """The toy accepted by an honest scripted run (gate N = 3: red, fixed, three greens and the final round),
    watched: which builds exist when each builder starts, and which files each tester's workspace holds when it is
    launched (the watchers only look; the run is the one an unwatched run plays). Played once per test run (the
    first worker that needs it; every other worker reads its own copy of it). Read it as it is; a test that changes
    it works on a copy (``clone_run``)."""
    made = once_per_run(tmp_path_factory, "toy-accepted", _accept_watched)
    project = Path(made["project"])
    if run_state(project).root != Path(made["root"]):  # played by another worker, under its own state home
        project = clone_run(project, tmp_path_factory.mktemp("acc") / "toy", Path(made["root"]), Path(made["pin"]))
    return project, made["seen"]


def clone_run(src: Path, dest: Path, root: Path | None = None, pin: Path | None = None) -> Path:
    """The same run at another path: the project, its state folder and its pin (re-pointed). The run's state
    folder and pin are found where this process would keep them, unless ``root`` and ``pin`` say where."""
    import shutil

    shutil.copytree(src, dest)
    old, new = run_state(src), run_state(dest)
    root, pin = root or old.root, pin or old.pin_path
    shutil.copytree(root, new.root)
    new.pin_path.parent.mkdir(parents=True, exist_ok=True)
    new.pin_path.write_text(pin.read_text().replace(str(root), str(new.root)))
    return dest


def run_state(project: Path):  # type: ignore[no-untyped-def]
    """The run state (store, builds, pin) of an acceptance project."""
    from tri_agent.acceptance._config import load_config
    from tri_agent.acceptance._state import locate

    return locate(project, load_config(project))


# an honest fix of the toy written otherwise than the recorded one: an alias, str.strip called as a function
DIFFERENT_FIX = (TOY / "scripted" / "fixed-grades.py").read_text().replace(
    "from decimal import ROUND_HALF_UP, Decimal, InvalidOperation",
    "from decimal import ROUND_HALF_UP as HALF_UP, Decimal, InvalidOperation").replace(
    "rounding=ROUND_HALF_UP)", "rounding=HALF_UP)").replace(
    'group = row[col["group"]].strip()', 'group = str.strip(row[col["group"]])')


def alive(marker: str) -> bool:
    """Is any process on the host running with ``marker`` in its command line?"""
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and marker.encode() in (proc / "cmdline").read_bytes():
                return True
        except OSError:
            continue
    return False


@contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """Fail (TimeoutError) instead of hanging: for inputs built to make a reader hang."""
    def hung(*_: object) -> None:
        raise TimeoutError(f"no answer after {seconds} s: a hang")

    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def load_script(path: Path, name: str) -> ModuleType:
    """A standalone script (dev.py, an example's runner) imported as a module, so its functions can be tested."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


# --- the suite over every core (pytest-xdist) --------------------------------------------------------------------
# A test is one unit of work for a worker, except in a file with a module-scoped fixture (an acceptance, a database
# server): that file is one unit, so its fixture is made once (pytest-xdist's own xdist_group mark does not group
# under pytest 9: its scheduler is replaced here). The suite waits on jails, browsers and servers more than it
# computes, and a whole file of toy acceptances on one worker was the suite's longest pole; the session's shared toy
# acceptance is made once per run whichever worker asks first (``once_per_run``).
TESTS = Path(__file__).resolve().parent
GROUPED = frozenset(p.relative_to(TESTS.parent).as_posix() for p in TESTS.rglob("test_*.py")
                    if 'scope="module"' in p.read_text(encoding="utf-8"))


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    from xdist.scheduler import LoadScopeScheduling

    class ByUnit(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            file = nodeid.split("::", 1)[0]
            return file if file in GROUPED else nodeid

        def _reschedule(self, node: Any) -> None:
            # A worker holds back its last test until it is sent another or told to stop (it must know the next test
            # to tear fixtures down). xdist sends one unit per call, so the worker that replaces a crashed one got a
            # single test and waited forever for a second, with every other worker gone: the run hung (CI's 90
            # minutes lost to one crash). It is sent two, as at the start.
            super()._reschedule(node)
            while self.workqueue and not node.shutting_down and self._pending_of(self.assigned_work[node]) < 2:
                self._assign_work_unit(node)

        def remove_node(self, node: Any) -> str | None:
            # xdist puts the test a dead worker was running back in the queue with the rest of its unit, where it
            # kills the replacement too; as xdist's own load scheduler does, the test that crashed is reported once,
            # as failed, and not run again.
            crashed = super().remove_node(node)
            for scope, unit in list(self.workqueue.items()):
                unit.pop(crashed, None)  # type: ignore[arg-type]
                if not unit:
                    del self.workqueue[scope]
            return crashed

    return ByUnit(config, log)


# the longest units first (the durations of a whole run), so the workers end together instead of one waiting alone
# for the last of them; the test that makes the shared toy acceptance early, so that those reading it find it made;
# the order is the same on every worker, as xdist requires
LONGEST = (
    "tests/examples/test_workshop_gui.py",
    "tests/examples/test_csvkit_stats.py",
    "tests/examples/test_ledger_api.py",
    "tests/examples/test_invoice_pdf.py",
    "tests/acceptance/test_rounds.py::test_the_toy_trail",
    "tests/acceptance/test_on_cluster.py",
    "tests/test_selftest.py::test_on_a_machine_without_bubblewrap",
    "tests/test_api.py::test_the_documented",
    "tests/acceptance/test_rounds.py::test_accept_with_every_role",
    "tests/acceptance/test_attacks.py::test_a_build",
    "tests/acceptance/test_rounds.py::test_a_judge_model",
    "tests/corpora/test_review_corpus.py",
    "tests/acceptance/test_attacks.py::test_watch",
    "tests/acceptance/test_attacks.py::test_examiner_tester",
    "tests/acceptance/test_attacks.py::test_an_honest_fix",
    "tests/acceptance/test_rounds.py::test_killed",
    "tests/acceptance/test_rounds.py::test_a_tester",
    "tests/acceptance/test_gaming.py",
    "tests/acceptance/test_attacks.py::test_a_c",
    "tests/mutation/test_mutation_gate.py",
)


def _rank(nodeid: str) -> int:
    return next((n for n, unit in enumerate(LONGEST) if nodeid.startswith(unit)), len(LONGEST))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: _rank(item.nodeid))
