"""The jail every piece of role-written code runs in: the target in every case and mutant, its build step,
the exam's generator and oracle.

A jail names what one run may read and what it may write; nothing else of the machine exists for it. The
layer that enforces it is the strongest this machine offers (see ``layers``):

    bubblewrap   new pid, ipc, uts, user and network namespaces (a private loopback only), a private /proc,
                 /tmp and HOME, read-only system folders, the run's own folders at their own paths, no
                 inherited environment; the run's whole process tree dies with it, daemons included
    landlock     where bubblewrap cannot start: a Landlock ruleset (reads and writes confined to the same
                 folders), a private network namespace when unprivileged user namespaces work, and a
                 subreaper that kills every descendant when the run ends
    none         only when the caller explicitly allowed it (``--allow-unsandboxed``); such a run never
                 certifies, and every record says so

The layer a run really had is returned with its result, so every record can state it.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from .._errors import InfrastructureFailure, PolicyViolation
from ._bubblewrap import _MERGED, _SYSTEM, probe
from ._limits import DEFAULT as DEFAULT_LIMITS
from ._limits import Limits, cpu_hit, group, rlimits
from ._process import OUTPUT_CAP, Completed, run
from ._scratch import top as temp_top

BUBBLEWRAP, LANDLOCK = "bubblewrap", "landlock"
TMPFS_BYTES = 64 << 20
_DEVICES = ("/dev/urandom", "/dev/random", "/dev/zero", "/proc/cpuinfo", "/sys/devices/system/cpu")


@dataclass
class Policy:
    """What the orchestrator allows for this process: running unsandboxed, and the paths no jail may show."""

    allow_unsandboxed: bool = False
    protected: tuple[Path, ...] = ()


POLICY = Policy()


def configure(*, allow_unsandboxed: bool, protected: Sequence[Path] = ()) -> None:
    """Set the policy of this process (the CLI and ``accept`` call it once, before any run)."""
    POLICY.allow_unsandboxed = allow_unsandboxed
    POLICY.protected = tuple(Path(p).resolve() for p in protected)


@dataclass(frozen=True)
class Jail:
    """What one run may see: folders it may read, folders it may write (each at its own path)."""

    readable: tuple[Path, ...] = ()
    writable: tuple[Path, ...] = ()
    network: bool = False
    extra: tuple[Path, ...] = field(default=(), repr=False)
    # the run's first process is pid 1 of the jail (bubblewrap): no bubblewrap process holding the run's pipes
    # shares its namespace, where a process it starts (a service beside a driver) could open them through /proc
    first_is_init: bool = False
    # the run may ask the Landlock launcher to kill every process below it (a fork server between its jobs);
    # under bubblewrap the jail's own pid namespace serves
    sweeps: bool = False
    # the run starts a program that reserves far more address space than it uses (a browser, a JavaScript
    # runtime): its memory is bounded by a cgroup or, where none can be had, not at all (see ``_limits``)
    reserves: bool = False

    def run(self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout: float,
            cap: int = OUTPUT_CAP, file_cap: int | None = None, stdin: bytes = b"",
            kill_at_cap: bool = False, limits: Limits = DEFAULT_LIMITS) -> tuple[Completed, list[str]]:
        """Run ``argv`` in this jail under ``limits`` (see ``_limits``); the result (with the limit it hit, if
        any) and the layers it really had (empty: none). ``file_cap`` bounds every file the run writes
        (RLIMIT_FSIZE: a write past it fails, sparse files included)."""
        layers = require()
        asked, argv = list(argv), [*rlimits(limits, file_cap, address_space=not self.reserves), *argv]
        if layers == [BUBBLEWRAP]:
            full, child_env, grace = self.bubblewrap(argv, cwd, env), _minimal(env), 0.0
        else:  # Landlock; or, allowed to run unsandboxed, the launcher alone, so no daemon outlives the run
            full, child_env, grace = self.confined(argv, env, landlock=layers == [LANDLOCK]), dict(env), 5.0
        leaves = group(limits)
        try:
            done = run(leaves.argv(full), cwd=cwd, env=child_env, timeout=timeout, cap=cap, stdin=stdin,
                       kill_at_cap=kill_at_cap, grace=grace)
            hit = leaves.hit() or ("cpu" if cpu_hit(done.exit_code) else None)
        finally:
            leaves.remove()
        return _as(done, asked, hit), layers

    def bubblewrap(self, argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> list[str]:
        # --cap-drop ALL: run as root, bwrap would keep every capability, and a remount could make its
        # read-only binds writable; the binary by its absolute path: PATH is the run's, not ours
        args = [_bwrap(), "--die-with-parent", "--new-session", "--unshare-all", "--cap-drop", "ALL", "--clearenv"]
        if self.network:
            args.append("--share-net")
        if self.first_is_init:
            args.append("--as-pid-1")
        for system in _SYSTEM:
            args += ["--ro-bind-try", system, system]
        for name in _MERGED:
            merged = Path("/") / name
            args += (["--symlink", f"usr/{name}", f"/{name}"] if merged.is_symlink()
                     else ["--ro-bind-try", str(merged), str(merged)])
        # /tmp is memory: a fixed size, so a run cannot fill the host's RAM (later mounts shadow it)
        args += ["--proc", "/proc", "--dev", "/dev", "--size", str(TMPFS_BYTES), "--tmpfs", "/tmp"]
        for path in (*tool_roots(env), *self.extra, *self.readable):
            args += ["--ro-bind-try", str(path), str(path)]
        for path in self.writable:
            args += ["--bind", str(path), str(path)]
        args += ["--chdir", str(cwd)]
        for key, value in env.items():
            args += ["--setenv", key, value]
        return [*args, "--", *argv]

    def confined(self, argv: Sequence[str], env: Mapping[str, str], *, landlock: bool = True) -> list[str]:
        # no /proc: through it a run could read the orchestrator's environment and open files
        readable = [*_SYSTEM, *(f"/{n}" for n in _MERGED), *_DEVICES, *map(str, tool_roots(env)),
                    *map(str, self.extra), *map(str, self.readable)]
        args = _launcher()
        for path in readable:
            args += ["--read", path]
        for path in (*map(str, self.writable), "/dev/null"):  # not /dev/shm: it is the host's, shared by every run
            args += ["--write", path]
        if not self.network:
            args.append("--no-network")
        if self.sweeps:
            args.append("--sweep")
        if not landlock:
            args = [*_launcher(), "--reap-only"]
        return [*args, "--", *argv]


def odd_files(folder: Path) -> list[str]:
    """What a run left that the orchestrator must never read or copy: symlinks (they point anywhere outside
    the jail), hard links (a second name of a file that may live anywhere), pipes, devices and sockets.
    Checked before anything reads a run's output."""
    return sorted(rel for rel, _ in _unplain(folder, inner_links=False))


def require_plain(tree: Path, what: str, skip: Sequence[str] = ()) -> None:
    """Refuse a tree a role wrote (a target's baseline or build, an exam) that holds what no copy may carry:
    a hard link, a special file, or a symbolic link leading out of the tree (relative links inside it stay)."""
    found = _unplain(tree, inner_links=True, skip=skip)
    if found:
        rel, why = found[0]
        raise PolicyViolation(f"{what} {tree} holds {why} at {rel}: no run may see a file through it",
                              hint="replace it with a plain file (links to anything outside the folder are refused)")


def _unplain(folder: Path, *, inner_links: bool, skip: Sequence[str] = ()) -> list[tuple[str, str]]:
    found, root = [], folder.resolve()
    for top, dirs, files in os.walk(folder, followlinks=False):
        dirs[:] = [d for d in dirs if d not in skip]  # folders the copy leaves out are never copied
        for name in [*dirs, *(f for f in files if f not in skip)]:
            path = Path(top) / name
            info = path.lstat()
            why = _why_unplain(path, info, root, inner_links)
            if why:
                found.append((path.relative_to(folder).as_posix(), why))
    return sorted(found)


def _why_unplain(path: Path, info: os.stat_result, root: Path, inner_links: bool) -> str | None:
    if stat.S_ISLNK(info.st_mode):
        target = os.readlink(path)
        inside = not os.path.isabs(target) and path.resolve().is_relative_to(root)
        return None if inner_links and inside else f"a symbolic link to {target}"
    if stat.S_ISDIR(info.st_mode):
        return None
    if not stat.S_ISREG(info.st_mode):
        return "a special file (pipe, socket or device)"
    return f"a hard link ({info.st_nlink} names)" if info.st_nlink > 1 else None


def written(folders: Sequence[Path]) -> int:
    """Bytes the folders hold, at their apparent size (a sparse file counts at its length)."""
    return sum(p.lstat().st_size for folder in folders for p in folder.rglob("*") if not p.is_dir())


def _as(done: Completed, argv: Sequence[str], limit: str | None) -> Completed:
    """The result under the command the caller asked for, not its wrapper's."""
    return Completed(tuple(argv), done.exit_code, done.stdout, done.stderr, done.seconds, done.timed_out,
                     done.truncated, limit)


def _launcher() -> list[str]:
    """The Landlock launcher by its absolute path, in isolated mode: run with ``-m`` from the run's folder,
    Python would import a ``tri_agent`` package the role planted there instead."""
    from . import _confine

    return [sys.executable, "-I", "-S", str(Path(_confine.__file__).resolve())]


def _minimal(env: Mapping[str, str]) -> dict[str, str]:
    # bwrap itself needs only a PATH; the run's environment is set inside with --clearenv/--setenv
    return {"PATH": env.get("PATH", "/usr/bin:/bin")}


@lru_cache(maxsize=1)
def _bwrap() -> str:
    return shutil.which("bwrap") or "bwrap"


@lru_cache(maxsize=1)
def strongest() -> str | None:
    """The strongest layer this machine offers to role-written code; None when there is none."""
    if probe().bubblewrap is not None:
        return BUBBLEWRAP
    from ._confine import landlock_abi, private_network_works

    # Landlock alone confines files and TCP; the run's own network namespace is what keeps UDP and the host's
    # interfaces out: without it the layer would be less than it claims, so it is no layer
    return LANDLOCK if landlock_abi() > 0 and private_network_works() else None


def require() -> list[str]:
    """The layer every run will get, or exit 7 when there is none and unsandboxed runs were not allowed."""
    layer = strongest()
    if layer is None and not POLICY.allow_unsandboxed:
        raise InfrastructureFailure(f"no OS sandbox for role-written code on this machine ({probe().reason}; "
                                    "Landlock with a private network namespace is not available either)",
                                    hint="install bubblewrap (Debian: apt-get install bubblewrap) or enable Landlock; "
                                         "--allow-unsandboxed runs anyway, and such a run can never certify")
    return [layer] if layer else []


def refused(folder: Path) -> str | None:
    """Why ``folder`` may not be shown to a run read-only at a target's asking (None: it may), by the rule the tool
    folders on ``PATH`` follow: an absolute path to a folder, not inside the project, the run's state or the temporary
    folder, and not holding any of them, HOME or the whole file system."""
    if not folder.is_absolute():
        return "it is not an absolute path"
    if not folder.is_dir():
        return "it is no folder"
    shown = folder.resolve()
    sealed_off = _sealed_off(POLICY.protected)
    inside = next((p for p in sealed_off if shown.is_relative_to(p)), None)
    holds = next((p for p in (*sealed_off, Path.home().resolve()) if p.is_relative_to(shown)), None)
    if inside is not None:
        return f"it would show a folder inside {inside}, which no run may see"
    return f"it would show {holds}, which no run may see" if holds is not None else None


def tool_roots(env: Mapping[str, str]) -> list[Path]:
    """Folders of the programs on ``PATH`` (a tool's whole root for pyenv's ``shims`` or a virtualenv's ``bin``),
    read-only, minus any that would show a protected path (the project, the run's state, the temporary folder,
    HOME)."""
    return list(_roots(env.get("PATH", ""), POLICY.protected))


def _sealed_off(protected: tuple[Path, ...]) -> tuple[Path, ...]:
    """What no jail may show, nor anything inside it: the protected paths, the run's state home, the temporary
    folder."""
    state = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state").resolve()
    return (*protected, state, Path(tempfile.gettempdir()).resolve(), temp_top().resolve())


@lru_cache(maxsize=16)
def _roots(path: str, policy: tuple[Path, ...]) -> tuple[Path, ...]:
    # nothing inside these is a tool: a PATH entry there (a target's own env may set PATH) would mount a key
    sealed_off = _sealed_off(policy)
    protected = (*sealed_off, Path.home().resolve(), Path("/"))
    roots: set[Path] = set()
    for entry in path.split(os.pathsep):
        # a relative entry names a folder of the orchestrator's cwd, which the run must not see (and which is
        # not where the run would look: its cwd is its own)
        if not Path(entry).is_absolute() or not Path(entry).is_dir():
            continue
        folder = Path(entry).resolve()
        if any(folder.is_relative_to(p) for p in sealed_off):
            continue
        # a whole tool root only where the programs need it (pyenv's shims, a virtualenv's bin); elsewhere
        # just the folder on PATH: ~/.cargo/bin must not bring ~/.cargo/credentials.toml along
        whole = folder.name == "shims" or (folder.parent / "pyvenv.cfg").is_file()
        for candidate in ((folder.parent, folder) if whole else (folder,)):
            if not any(p == candidate or p.is_relative_to(candidate) for p in protected):
                roots.add(candidate)
                break
    roots |= {p for p in (Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve())}
    # /usr is mounted with the system; a folder inside another needs no mount of its own
    kept = sorted(r for r in roots if not r.is_relative_to("/usr"))
    return tuple(r for r in kept if not any(r != o and r.is_relative_to(o) for o in kept))
