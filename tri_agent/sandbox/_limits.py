"""Resource limits of every jailed run: memory, processes, open files, CPU time.

A jail bounds what a run may see; these bound what it may take, so that a target that allocates without end,
forks without end or opens every file it can ends its own case and nothing else. How each is enforced, the
strongest way this machine offers first (``enforcement`` says which one a run had):

    memory      a memory cgroup of the run's own (cgroup v1 ``memory.limit_in_bytes``, v2 ``memory.max``): the
                kernel's OOM killer ends the run's largest process and the run is marked; else RLIMIT_AS (the
                address space of each process: a browser, which reserves far more than it uses, is then left
                unbounded and the record says so)
    processes   a pids cgroup of the run's own (``pids.max``: a fork past it fails with EAGAIN); else
                RLIMIT_NPROC, which the kernel enforces only for a user other than root (root: not enforced,
                and the record says so)
    open files  RLIMIT_NOFILE of every process (an open past it fails with EMFILE)
    cpu         RLIMIT_CPU of every process (SIGXCPU at the limit, SIGKILL a second later)

The cgroups are made below the orchestrator's own (``<hierarchy>/<own path>/tri-agent/<pid>-<starttime>-<n>``)
and removed when the run ends; a leaf whose orchestrator died is removed at the next start (``sweep``). The rlimits are
set by ``prlimit`` inside the jail, so the run cannot raise them.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import signal
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pydantic import ConfigDict, Field

from .._errors import InfrastructureFailure
from .._model import Written
from ._scratch import alive, gone, identity

_COUNTER = itertools.count()
# joins the leaves it is given, then execs the run; it writes nothing but a cgroup.procs file of a tri-agent leaf
# (an argument list gone wrong must never turn it into a writer of any path: it stops, exit 125)
_JOIN = ('while [ "$1" != -- ]; do case "$1" in */tri-agent/*/cgroup.procs) echo $$ > "$1" || exit 125;; '
         '*) exit 125;; esac; shift; done; shift; exec "$@"')
_SIGXCPU_EXITS = (-signal.SIGXCPU, 128 + signal.SIGXCPU)
_MOUNTINFO, _OWN = Path("/proc/self/mountinfo"), Path("/proc/self/cgroup")


class Limits(Written):
    """What one jailed run may take (``limits:`` of a target file and of exam.yaml; each bound applies to the
    run's whole process tree where a cgroup enforces it, else to each of its processes)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # upper bounds too: exam.yaml is the examiner's, and no role may lift its own code out of every bound
    memory: int = Field(default=4 << 30, ge=16 << 20, le=64 << 30, description="Bytes of memory the run may use "
                        "(swap included; at most 64 GiB); past it the kernel ends its largest process and the run is "
                        "marked `memory`.")
    processes: int = Field(default=512, ge=1, le=8192, description="Processes and threads the run may have at once "
                           "(at most 8192); a fork past it fails (EAGAIN) and the run is marked `processes`.")
    open_files: int = Field(default=4096, ge=16, le=1 << 20, description="Files each process may have open (at most "
                            "1,048,576); an open past it fails (EMFILE).")
    cpu_seconds: int = Field(default=600, ge=1, le=86_400, description="CPU seconds each process may use (at most a "
                             "day); past it the process is ended (SIGXCPU) and the run is marked `cpu`.")


DEFAULT = Limits()


@dataclass(frozen=True)
class _Hierarchy:
    """One controller's cgroup folder this process may make leaves in; v2 or v1 file names."""

    controller: str
    base: Path
    v2: bool

    def files(self) -> dict[str, str]:
        return _FILES[(self.controller, self.v2)]


# controller, v2 -> the file that sets its limit, and the file (and its line) that counts the times it was hit
_FILES: dict[tuple[str, bool], dict[str, str]] = {
    ("memory", False): {"limit": "memory.limit_in_bytes", "events": "memory.oom_control", "hit": "oom_kill"},
    ("memory", True): {"limit": "memory.max", "events": "memory.events", "hit": "oom_kill"},
    ("pids", False): {"limit": "pids.max", "events": "pids.events", "hit": "max"},
    ("pids", True): {"limit": "pids.max", "events": "pids.events", "hit": "max"},
}
_NAMES = {"memory": "memory", "pids": "processes"}


@dataclass
class Group:
    """The cgroup leaves of one run, one per controller hierarchy that could be had."""

    leaves: dict[str, Path]

    def argv(self, argv: list[str]) -> list[str]:
        """``argv`` started inside the leaves (a shell joins them, then execs it, so nothing runs outside)."""
        if not self.leaves:
            return argv
        return ["/bin/sh", "-c", _JOIN, "sh", *(str(p / "cgroup.procs") for p in self.leaves.values()), "--", *argv]

    def hit(self) -> str | None:
        """The limit the run hit, by name (``memory``, ``processes``), if any."""
        for controller, leaf in self.leaves.items():
            if _events(leaf, _FILES[(controller, _is_v2(leaf))]) > 0:
                return _NAMES[controller]
        return None

    def remove(self) -> None:
        """Kill what is left in the leaves and remove them (a run's pid namespace mostly did the first)."""
        for leaf in self.leaves.values():
            _remove(leaf)


def enforcement(*, address_space: bool = True) -> dict[str, str]:
    """How each limit is enforced on this machine, as a record states it (``address_space``: see ``rlimits``)."""
    found = hierarchies()
    memory = ("cgroup" if "memory" in found else "rlimit (address space)" if address_space
              else "not enforced (no memory cgroup, and the run reserves more address space than it uses)")
    processes = ("cgroup" if "pids" in found else "rlimit" if os.geteuid() != 0
                 else "not enforced (root, whom RLIMIT_NPROC does not bind; no pids cgroup)")
    return {"memory": memory, "processes": processes, "open files": "rlimit", "cpu": "rlimit"}


def group(limits: Limits) -> Group:
    """A fresh leaf per hierarchy this machine offers, its limit set."""
    leaves: dict[str, Path] = {}
    name = f"{identity()}-{next(_COUNTER)}"  # pid-starttime-n: a reused pid is not its owner
    for controller, hierarchy in hierarchies().items():
        leaf = hierarchy.base / name
        try:
            leaf.mkdir()
            value = limits.memory if controller == "memory" else limits.processes + 2  # the jail's own two
            (leaf / hierarchy.files()["limit"]).write_text(str(value))
            _no_swap(leaf, controller, limits.memory)
        except OSError as error:
            _remove(leaf)
            Group(leaves).remove()
            raise InfrastructureFailure(f"cannot make the run's {controller} cgroup at {leaf}: {error}",
                                        hint="free the cgroup hierarchy, or run where it can be written") from None
        leaves[controller] = leaf
    return Group(leaves)


def rlimits(limits: Limits, file_cap: int | None, *, address_space: bool = True) -> list[str]:
    """The ``prlimit`` prefix that sets every rlimit the cgroups do not cover. ``address_space`` False: the run
    starts a program that reserves far more address space than it uses (a browser, a JavaScript runtime), so
    without a memory cgroup its memory is left unbounded rather than bounded by RLIMIT_AS into a crash."""
    prlimit = shutil.which("prlimit")
    if prlimit is None:
        raise InfrastructureFailure("prlimit is missing: the resource limits of role-written code cannot be applied",
                                    hint="install util-linux (Debian: apt-get install util-linux)")
    found = hierarchies()
    args = [prlimit, f"--nofile={limits.open_files}:{limits.open_files}",
            f"--cpu={limits.cpu_seconds}:{limits.cpu_seconds + 1}"]
    if "memory" not in found and address_space:
        args.append(f"--as={limits.memory}:{limits.memory}")
    if "pids" not in found:
        args.append(f"--nproc={limits.processes}:{limits.processes}")
    if file_cap is not None:
        args.append(f"--fsize={file_cap}:{file_cap}")
    return [*args, "--"]


def _no_swap(leaf: Path, controller: str, memory: int) -> None:
    """Swap counts against the limit too (v1: memory and swap together; v2: no swap at all)."""
    if controller != "memory":
        return
    for name, value in (("memory.memsw.limit_in_bytes", memory), ("memory.swap.max", 0)):
        if (leaf / name).exists():
            (leaf / name).write_text(str(value))


def cpu_hit(exit_code: int | None) -> bool:
    """The run was ended by its CPU limit (SIGXCPU, as the process itself or as a launcher reports it)."""
    return exit_code in _SIGXCPU_EXITS


@lru_cache(maxsize=1)
def hierarchies() -> dict[str, _Hierarchy]:
    """The memory and pids hierarchies this process may make leaves in (probed once; swept of dead leaves)."""
    found = {}
    own, mountinfo = _own_paths(_read(_OWN)), _read(_MOUNTINFO)
    for controller in ("memory", "pids"):
        hierarchy = _usable(controller, own, _mounts(controller, mountinfo))
        if hierarchy is not None:
            sweep(hierarchy.base)
            found[controller] = hierarchy
    return found


def _read(path: Path) -> str:
    with contextlib.suppress(OSError):
        return path.read_text()
    return ""


def _usable(controller: str, own: dict[str, str], mounts: list[tuple[Path, bool]]) -> _Hierarchy | None:
    """The first mounted hierarchy of ``controller`` where this process may make a leaf that has the limit file."""
    for mount, v2 in mounts:
        relative = own.get("" if v2 else controller)
        if relative is None:
            continue
        top = mount / relative.lstrip("/")
        if v2 and controller not in _words(top / "cgroup.subtree_control"):
            continue  # not delegated: enabling it would move this process, which is not ours to do
        base = top / "tri-agent"
        with contextlib.suppress(OSError):
            base.mkdir(exist_ok=True)
            if v2:
                (base / "cgroup.subtree_control").write_text(f"+{controller}")
            probe = base / f"probe-{os.getpid()}"
            probe.mkdir()
            ok = (probe / _FILES[(controller, v2)]["limit"]).exists()
            probe.rmdir()
            if ok:
                return _Hierarchy(controller, base, v2)
    return None


def _mounts(controller: str, mountinfo: str) -> list[tuple[Path, bool]]:
    """Where each hierarchy holding ``controller`` is mounted (``/proc/self/mountinfo``): (mount point, is v2)."""
    found = []
    for line in mountinfo.splitlines():
        left, _, right = line.partition(" - ")
        fields, kind = left.split(), right.split()
        if len(fields) < 5 or len(kind) < 3:
            continue
        if kind[0] == "cgroup" and controller in kind[2].split(","):
            found.append((Path(fields[4]), False))
        elif kind[0] == "cgroup2" and controller in _words(Path(fields[4]) / "cgroup.controllers"):
            found.append((Path(fields[4]), True))
    return found


def _own_paths(text: str) -> dict[str, str]:
    """Controller -> this process's cgroup path (``/proc/self/cgroup``; "" names the v2 hierarchy)."""
    paths = {}
    for line in text.splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            paths[controller] = path
    return paths


def sweep(base: Path) -> None:
    """Remove the leaves of orchestrators that are gone (killed before they could remove their own)."""
    with contextlib.suppress(OSError):
        for leaf in base.iterdir():
            if leaf.is_dir() and _owner_gone(leaf.name):
                _remove(leaf)


def _owner_gone(name: str) -> bool:
    """The orchestrator that named a leaf ``pid-starttime-n`` is gone (``gone``). A leaf named ``pid-n`` (before
    start times were recorded) is judged by its pid alone; a name of another shape is not ours to judge."""
    parts = name.split("-")
    if len(parts) not in (2, 3) or not all(p.isascii() and p.isdigit() for p in parts):
        return False
    return not alive(int(parts[0])) if len(parts) == 2 else gone(int(parts[0]), parts[1])


def _remove(leaf: Path) -> None:
    for _ in range(50):
        try:
            leaf.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            _kill_all(leaf)
            time.sleep(0.01)


def _kill_all(leaf: Path) -> None:
    with contextlib.suppress(OSError):
        for pid in (leaf / "cgroup.procs").read_text().split():
            if pid.isascii() and pid.isdigit() and int(pid) > 0:  # 0: a process outside our pid namespace
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(int(pid), signal.SIGKILL)


def _events(leaf: Path, files: dict[str, str]) -> int:
    with contextlib.suppress(OSError, ValueError):
        for line in (leaf / files["events"]).read_text().splitlines():
            key, _, count = line.partition(" ")
            if key == files["hit"]:
                return int(count)
    return 0


def _is_v2(leaf: Path) -> bool:
    return (leaf / "cgroup.events").exists()


def _words(path: Path) -> list[str]:
    with contextlib.suppress(OSError):
        return path.read_text().split()
    return []
