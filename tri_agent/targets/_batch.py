"""Many inputs through one Python target in one jail: a fork server for the mutation gate's difference hunts.

Proving a mutant equivalent means running it and the original over hundreds of inputs, and starting an
interpreter per input costs more than the target's work. For a Python target (``python {target}/x.py ...``)
one interpreter starts in the jail with nothing of the target imported, then forks once per input: each child
gets its own copy of the built target, its input, an empty output folder, the run's environment, and runs
the entry point as ``__main__`` the way the interpreter does (compiled from the file into a fresh module).
Original and mutant run under the same harness, so what they are compared on is the same; no case is ever
*scored* this way (kills and scores always come from the gateway).
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import shutil
import stat
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from threading import Lock

from ..exam._formats import DOCUMENT_FORMATS, Case
from ..sandbox._jail import BUBBLEWRAP, LANDLOCK, Jail, odd_files, strongest
from ..sandbox._process import Completed, base_env
from ._specs import PLACEHOLDERS, Cell, expand
from ._target import Target, extract_rows, failed
from ._trace import traceable

SERVER = r'''
ANNOTATED = "__annotations__" in globals()  # whether this interpreter gives a script's __main__ one (3.11 does)
import builtins, ctypes, io, json, os, signal, sys, time, traceback, types
from importlib.machinery import SourceFileLoader
jobs_path, results_path, timeout = sys.argv[1], sys.argv[2], float(sys.argv[3])
LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: what a job double-forks comes back to this server


class Ruleset(ctypes.Structure):
    _fields_ = [("fs", ctypes.c_uint64)]


class Beneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed", ctypes.c_uint64), ("fd", ctypes.c_int32)]


def confine(folder):
    """Landlock: from here on, this job writes only below its own folder (and /dev/null), never another's."""
    abi = LIBC.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    if abi <= 0:
        raise OSError("Landlock is not available")
    handled = ((1 << 13) - 1 if abi == 1 else (1 << 14) - 1 if abi == 2 else (1 << 15) - 1) & ~0b1101
    ruleset = LIBC.syscall(444, ctypes.byref(Ruleset(handled)), ctypes.c_size_t(8), ctypes.c_uint32(0))
    for path, allowed in ((folder, handled), ("/dev/null", handled & ((1 << 1) | (1 << 14)))):
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        if LIBC.syscall(445, ruleset, 1, ctypes.byref(Beneath(allowed, fd)), ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_add_rule " + path)
        os.close(fd)
    if LIBC.prctl(38, 1, 0, 0, 0) != 0 or LIBC.syscall(446, ruleset, ctypes.c_uint32(0)) != 0:
        raise OSError(ctypes.get_errno(), "landlock_restrict_self")


SWEEP = [int(fd) for fd in os.environ.pop("TRI_AGENT_SWEEP", "").split(",") if fd]


def sweep():
    """Kill every process of the jail but its init and this server: a job's daemons die with the job. Under
    bubblewrap the jail has a pid namespace of its own, so nothing else is in sight; under Landlock the launcher
    does it (it alone reads /proc), asked through its pipe."""
    if SWEEP:
        os.write(SWEEP[0], b"s")
        answer = os.read(SWEEP[1], 1)
        reap()
        return answer == b"k"  # b"x": something below outran the sweep; nothing after it is trusted
    keep = {1, os.getpid(), os.getppid()}
    for _ in range(1000):
        alive = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in keep]
        if not alive:
            return True
        for pid in alive:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        reap()
        time.sleep(0.001)
    return False


def reap():
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass

for name in filter(None, sys.argv[4].split(",")):  # the entry's standard-library imports, once for every child
    try:
        __import__(name)
    except Exception:
        pass
jobs = json.load(open(jobs_path))
results = []


def child(job):
    for fd in SWEEP:  # the launcher's pipe is the server's alone
        os.close(fd)
    os.setsid()
    confine(job["work"])
    os.chdir(job["cwd"])
    fd_in = os.open(os.devnull, os.O_RDONLY)
    os.dup2(fd_in, 0)
    os.dup2(os.open(job["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 1)
    os.dup2(os.open(job["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 2)
    os.environ.clear()
    os.environ.update(job["env"])
    script = job["argv"][1]
    sys.argv = job["argv"][1:]
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    code = 0
    try:
        run_main(script)
    except SystemExit as exc:
        if exc.code is None:
            code = 0
        elif isinstance(exc.code, int):
            code = exc.code
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except BaseException:
        traceback.print_exc()
        code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code & 0xFF)


def run_main(script):
    """The script as `python script` runs it: compiled from its bytes into a fresh __main__ with the globals the
    interpreter gives one (runpy's run_path costs about 4 ms more a run, and gives other globals)."""
    with io.open_code(script) as f:
        source = f.read()
    code = compile(source, script, "exec", dont_inherit=True)
    main = types.ModuleType("__main__")
    main.__dict__.update(__file__=script, __cached__=None, __loader__=SourceFileLoader("__main__", script),
                         __builtins__=builtins)
    if ANNOTATED:
        main.__annotations__ = {}
    sys.modules["__main__"] = main
    exec(code, main.__dict__)


def contained(job):
    """The job in a pid namespace of its own, as its init: every process it leaves dies with it (the kernel's rule
    for a namespace's init; a chain of forks that hops away from every scan of /proc cannot leave it), and the init
    dies with this process (a timeout's kill reaches it). It ends as the job ended, signal included. The sweep
    after it stays, a second net."""
    if LIBC.unshare(0x10000000 | 0x20000000) != 0:  # CLONE_NEWUSER | CLONE_NEWPID: the next fork is the init
        os._exit(71)
    pid = os.fork()
    if pid == 0:
        LIBC.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
        child(job)
    _, raw = os.waitpid(pid, 0)
    if os.WIFSIGNALED(raw):
        signal.signal(os.WTERMSIG(raw), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(raw))
    os._exit(os.waitstatus_to_exitcode(raw) & 0xFF)


for n, job in enumerate(jobs):
    if results and results[-1]["timed_out"]:  # a run that hangs has said enough: the rest are not run
        results += [{"exit": None, "timed_out": False, "skipped": True}] * (len(jobs) - n)
        break
    pid = os.fork()
    if pid == 0:
        try:
            contained(job)
        finally:
            os._exit(70)
    deadline, status, timed_out = time.monotonic() + timeout, None, False
    while status is None:
        done, raw = os.waitpid(pid, os.WNOHANG)
        if done:
            status = raw
        elif time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            timed_out, status = True, -1
        else:
            time.sleep(0.001)
    if not sweep():  # this job's processes outlived it: its outputs and every later job are untrusted
        why = "a job's processes outlived it"
        results += [{"exit": None, "timed_out": False, "skipped": True, "why": why}] * (len(jobs) - n)
        break
    code = None if timed_out else (os.waitstatus_to_exitcode(status) if status >= 0 else None)
    results.append({"exit": code, "timed_out": timed_out})
json.dump(results, open(results_path, "w"))
'''


_PARSING = Lock()
_MAX_SCRIPT = 4 << 20
_PER_PROCESS = frozenset({"random", "secrets", "uuid", "tempfile", "multiprocessing", "threading", "asyncio",
                          "logging", "atexit", "signal", "faulthandler", "os", "sys"})


@dataclass(frozen=True)
class Fingerprint:
    """What a hunt compares between original and mutant for one input."""

    outputs: tuple[tuple[str, str], ...]
    behavior: str
    exit_code: int | None
    stdout_sha256: str
    # read only on request (the exam's own cases, to score them); never part of what is compared
    rows: tuple[dict[str, Cell], ...] | None = field(default=None, compare=False)
    timed_out: bool = field(default=False, compare=False)
    skipped: bool = field(default=False, compare=False)  # not run at all (an earlier input hung, or the jail failed)

    def differs(self, other: Fingerprint) -> str:
        """'' when equal, else what differs, in words."""
        names = ("outputs", "behavior", "exit_code", "stdout_sha256")
        return ", ".join(n for n in names if getattr(self, n) != getattr(other, n))


def batchable(target: Target) -> bool:
    """A Python command target, on a machine whose jail can kill every process a job left (bubblewrap's pid
    namespace, or the Landlock launcher's sweeps) and has Landlock (each job writes only its own folder);
    elsewhere each input gets a jail. So does every input of a target whose output is a document: the document
    reader runs after each case, in a jail of its own."""
    from ..sandbox._confine import landlock_abi

    extract = target.config.extract
    reads_documents = extract is not None and extract.format in DOCUMENT_FORMATS  # read in a jail of their own
    return (target.config.run is not None and traceable(target.config.run) and not reads_documents
            and strongest() in (BUBBLEWRAP, LANDLOCK) and landlock_abi() > 0)


def run_batch(target: Target, built: Path, items: list[tuple[Path, Case]], scratch: Path, *,
              rows: bool = False) -> list[Fingerprint]:
    """Run each (visible folder, case) against the already built tree ``built``, all in one jail; ``rows`` also
    reads each case's rows the way the gateway does, so the exam can score them."""
    scratch.mkdir(parents=True, exist_ok=True)
    jobs = [_job(target, built, visible, case, scratch / f"j{n}") for n, (visible, case) in enumerate(items)]
    cases = [case for _, case in items]
    (scratch / "server.py").write_text(SERVER, encoding="utf-8")
    (scratch / "jobs.json").write_text(json.dumps(jobs), encoding="utf-8")
    home, tmp = scratch / "home", scratch / "tmp"
    home.mkdir()
    tmp.mkdir()
    env = {**base_env(home, target.config.env), "TMPDIR": str(tmp), "PYTHONHASHSEED": "0"}
    run = target.config.argv
    argv = [run[0], str(scratch / "server.py"), str(scratch / "jobs.json"), str(scratch / "results.json"),
            str(target.config.timeout), ",".join(preloadable(built, run[1]))]
    # each job's input is a copy inside scratch: nothing else is needed but the folders the target file names
    Jail(readable=target.readable, writable=(scratch,), sweeps=True).run(
        argv, cwd=scratch, env=env, timeout=target.config.timeout * max(1, len(cases)) + 10,
        file_cap=target.config.write_cap, limits=target.config.limits)
    results = _results(scratch / "results.json", len(cases))
    return [_fingerprint(target, job, r, case if rows else None)
            for job, r, case in zip(jobs, results, cases, strict=True)]


def preloadable(built: Path, entry: str) -> list[str]:
    """The standard-library modules the entry script imports at its top level, for the server to import before
    it forks (each child then skips that work). Modules that keep per-process state (random seeds, temporary
    names) are left for each child, so a child sees what a fresh interpreter would."""
    path = built / entry.removeprefix("{target}/")
    try:  # never through a link, never more than a script's worth: the file is the role's
        with open(path, "rb", opener=lambda p, flags: os.open(p, flags | os.O_NOFOLLOW)) as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return []
            source = f.read(_MAX_SCRIPT + 1)
    except OSError:
        return []
    if len(source) > _MAX_SCRIPT:
        return []
    return list(_stdlib_imports(source))


@lru_cache(maxsize=64)  # every batch of a gate runs the same entry script: parse it once
def _stdlib_imports(source: bytes) -> tuple[str, ...]:
    try:
        with _PARSING:  # CPython 3.11's ast can fail with SystemError when threads parse at once
            tree = ast.parse(source)
    except (SyntaxError, ValueError, SystemError, RecursionError, MemoryError):
        return ()  # nothing preloaded: each child imports for itself, as a fresh interpreter would
    names = {a.name.split(".")[0] for n in tree.body if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module.split(".")[0] for n in tree.body if isinstance(n, ast.ImportFrom) and n.module and not n.level}
    return tuple(sorted(n for n in names if n in sys.stdlib_module_names and n not in _PER_PROCESS))


def _job(target: Target, built: Path, visible: Path, case: Case, work: Path) -> dict[str, object]:
    shutil.copytree(built, work / "target", symlinks=True)
    shutil.copytree(visible / case.inputs, work / "input", symlinks=False)
    for name in ("output", "home", "tmp"):
        (work / name).mkdir()
    values = dict(zip(PLACEHOLDERS, (str(work / "target"), str(work / "input"), str(work / "output"), case.case),
                      strict=True))
    values["{tmp}"] = str(work / "tmp")
    argv = [expand(a, values) for a in [*target.config.argv, *case.argv]]
    env = {**base_env(work / "home", target.config.env), "TMPDIR": str(work / "tmp"), "PYTHONHASHSEED": "0"}
    return {"argv": argv, "cwd": str(work / "target"), "env": env, "stdout": str(work / "stdout"),
            "stderr": str(work / "stderr"), "work": str(work)}


def _results(path: Path, n: int) -> list[dict[str, object]]:
    """The server's results; a server that died part way leaves the rest as crashed runs."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8")) if path.is_file() and not path.is_symlink() else []
    except (OSError, ValueError):
        raw = []
    raw = raw if isinstance(raw, list) else []
    return [r if isinstance(r, dict) else {} for r in raw[:n]] + [{"exit": None, "timed_out": True}] * (n - len(raw))


def _fingerprint(target: Target, job: dict[str, object], result: dict[str, object],
                 case: Case | None) -> Fingerprint:
    work = Path(str(job["work"]))
    stdout, stderr = (_read(work / name, target.config.output_cap) for name in ("stdout", "stderr"))
    if result.get("skipped"):
        return Fingerprint((), f"not run ({result.get('why') or 'an earlier input hung'})", None, "",
                           () if case else None, skipped=True)
    raw = result.get("exit")
    exit_code = raw if isinstance(raw, int) else None
    timed_out = bool(result.get("timed_out")) or exit_code is None
    done = Completed(argv=(), exit_code=None if timed_out else exit_code, stdout=stdout, stderr=stderr, seconds=0.0,
                     timed_out=timed_out, truncated=False)
    output = work / "output"
    odd = odd_files(output)
    outputs = (("odd", ",".join(odd)),) if odd else tuple(
        (p.relative_to(output).as_posix(), hashlib.sha256(p.read_bytes()).hexdigest())
        for p in sorted(output.rglob("*")) if p.is_file())
    return Fingerprint(outputs, target.classify(done), done.exit_code, hashlib.sha256(stdout).hexdigest(),
                       _rows(target, output, case, odd, failed(done)), timed_out)


def _rows(target: Target, output: Path, case: Case | None, odd: list[str],
          run_failed: bool) -> tuple[dict[str, Cell], ...] | None:
    extract = case and (case.extract or target.config.extract)
    if case is None or not extract or odd:  # a link in the output is never followed: no rows, as the gateway
        return None if case is None else ()
    return tuple(extract_rows(output, extract, case.case, run_failed)[0])


def _read(path: Path, cap: int) -> bytes:
    if path.is_symlink() or not path.is_file():
        return b""
    with path.open("rb") as f:
        return f.read(cap)
