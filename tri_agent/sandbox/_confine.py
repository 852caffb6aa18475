"""The second layer, where bubblewrap cannot start: Landlock, a private network, and a subreaper.

    python -m tri_agent.sandbox._confine [--read PATH]... [--write PATH]... [--no-network] -- ARGV...
    python -m tri_agent.sandbox._confine --reap-only -- ARGV...   (no confinement; only the subreaper)
    ... --sweep -- ARGV...   (ARGV may ask, through a pipe, that every process below it be killed)

This small launcher runs ARGV as its child under a Landlock ruleset (reads allowed only beneath the
``--read`` paths, reads and writes only beneath the ``--write`` paths; no signals or abstract sockets
outside the domain, where the kernel supports it), with ``--no-network`` in a network namespace of its own
(its loopback up, nothing else; the run fails when the namespace cannot be had), and with this launcher as
the child subreaper: whatever
the child forks, daemons included, is reparented here and killed when the child ends or when the launcher
is told to stop (SIGTERM). The launcher exits with the child's status. Landlock needs Linux 5.13 or newer;
``landlock_abi()`` says whether it works here.

With ``--sweep`` the child gets two pipe ends, named in ``TRI_AGENT_SWEEP`` (``request,answer``): each byte it
writes asks the launcher, which alone can read /proc, to kill every process below the child (not the child);
the launcher answers ``k`` once none is left, or ``x`` when some outran every pass (the child must then trust
nothing that ran since). The fork server runs its jobs so under Landlock, as
bubblewrap's pid namespace lets it do by itself: a job's daemons die with the job.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import signal
import struct
import sys
import time
import warnings  # noqa: F401 - os.execvp imports it lazily: after Landlock, the stdlib may be unreadable

# the launcher starts once per run of role-written code: it imports neither argparse nor socket (most of an
# interpreter start's cost beyond the bare minimum), and is started with -I -S

_CREATE, _ADD_RULE, _RESTRICT = 444, 445, 446  # the same numbers on x86_64 and aarch64
_PATH_BENEATH = 1
_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1
_AF_INET, _SOCK_DGRAM = 2, 2
_VERSION = 1
_SUBREAPER, _NO_NEW_PRIVS, _PDEATHSIG, _CAPBSET_DROP, _CAP_AMBIENT = 36, 38, 1, 24, 47
_NEWUSER, _NEWNET = 0x10000000, 0x40000000
_READ = (1 << 0) | (1 << 2) | (1 << 3)  # execute, read file, read dir
_FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1, 5: (1 << 16) - 1}
_SCOPED_ALL = (1 << 0) | (1 << 1)  # abstract unix sockets and signals (ABI 6)


class _Ruleset(ctypes.Structure):
    _fields_ = [("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]


class _Beneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed", ctypes.c_uint64), ("fd", ctypes.c_int32)]


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def landlock_abi() -> int:
    """The Landlock ABI version the kernel offers (0: none)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        version = _libc().syscall(_CREATE, None, ctypes.c_size_t(0), ctypes.c_uint32(_VERSION))
    except (OSError, AttributeError):
        return 0
    return max(int(version), 0)


def _restrict(readable: list[str], writable: list[str]) -> None:
    abi = landlock_abi()
    if abi <= 0:
        raise OSError("Landlock is not available")
    libc = _libc()
    fs = _FS_BY_ABI.get(abi, _FS_BY_ABI[5])
    # TCP is left to the network namespace: the run's own loopback works (a service, an agent's egress relay),
    # and nothing else is there to reach
    attr = _Ruleset(fs, 0, _SCOPED_ALL if abi >= 6 else 0)
    size = ctypes.sizeof(_Ruleset) if abi >= 6 else (16 if abi >= 4 else 8)
    ruleset = libc.syscall(_CREATE, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
    for paths, access in ((readable, _READ), (writable, fs)):
        for path in paths:
            _allow(libc, ruleset, path, access, fs)
    if libc.prctl(_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or libc.syscall(_RESTRICT, ruleset, ctypes.c_uint32(0)) != 0:
        raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    os.close(ruleset)


def _allow(libc: ctypes.CDLL, ruleset: int, path: str, access: int, fs: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # a folder this machine does not have
    try:
        # a file (not a folder) takes only file rights
        allowed = access & fs if os.path.isdir(path) else access & fs & ((1 << 0) | (1 << 1) | (1 << 2) | (1 << 14))
        rule = _Beneath(allowed, fd)
        if libc.syscall(_ADD_RULE, ruleset, _PATH_BENEATH, ctypes.byref(rule), ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), f"landlock_add_rule {path}")
    finally:
        os.close(fd)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _drop_capabilities() -> None:
    """Run as root, the child would keep every capability (mknod, chown, remounts): drop them all."""
    libc = _libc()
    libc.prctl(_CAP_AMBIENT, 4, 0, 0, 0)  # PR_CAP_AMBIENT_CLEAR_ALL
    for cap in range(64):
        libc.prctl(_CAPBSET_DROP, cap, 0, 0, 0)  # past the last capability it fails, harmlessly
    header, data = _CapHeader(0x20080522, 0), (_CapData * 2)()
    if libc.syscall(126 if os.uname().machine == "x86_64" else 91, ctypes.byref(header), data) != 0:  # capset
        raise OSError(ctypes.get_errno(), "capset")


def _private_network(own_ids: bool = False) -> None:
    """A network namespace of the run's own, its loopback up and nothing else in it. Without one, every host
    interface and service would be reachable: fail rather than run with less than the layer claims. With
    ``own_ids`` the run's user namespace maps its own user and group to themselves, so the run may make
    namespaces of its own (the fork server gives each job a pid namespace)."""
    uid, gid = os.geteuid(), os.getegid()
    if _libc().unshare(_NEWUSER | _NEWNET) != 0:
        raise OSError(ctypes.get_errno(), "no private network namespace (unprivileged user namespaces are off)")
    if own_ids:
        for name, text in (("uid_map", f"{uid} {uid} 1\n"), ("setgroups", "deny\n"), ("gid_map", f"{gid} {gid} 1\n")):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
    probe = _libc().socket(_AF_INET, _SOCK_DGRAM, 0)  # a new namespace's loopback starts down
    if probe < 0:
        raise OSError(ctypes.get_errno(), "socket")
    try:
        flags = struct.unpack_from("H", fcntl.ioctl(probe, _SIOCGIFFLAGS, struct.pack("16sH14x", b"lo", 0)), 16)[0]
        fcntl.ioctl(probe, _SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | _IFF_UP))
    finally:
        os.close(probe)


def private_network_works() -> bool:
    """Whether this machine lets a process take a private network namespace without privileges (probed in a
    child, so this process keeps its own)."""
    child = os.fork()
    if child == 0:
        try:
            _private_network()
            os._exit(0)
        except BaseException:
            os._exit(1)
    _, status = os.waitpid(child, 0)
    return os.waitstatus_to_exitcode(status) == 0


def descendants(root: int) -> list[int]:
    """Every live process below ``root`` (read from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rfind(b")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    found, stack = [], [root]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def _kill_all(root: int) -> None:
    for _ in range(50):  # orphans reparent here as their parents die: repeat until none is left
        alive = descendants(root)
        if not alive:
            return
        for pid in alive:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        time.sleep(0.01)


def _stop(me: int) -> None:
    _kill_all(me)
    os._exit(128 + signal.SIGTERM)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2:][:1] not in (b"Z", b"X")  # a zombie is dead: its parent reaps it


def _sweep_below(root: int) -> bool:
    """Kill every live process below ``root`` (not ``root``): what a job left behind; False when some still live
    after every pass (a chain of forks outrunning the scan), which the caller must treat as a failed run. Each
    found process is stopped before any is killed, so a stopped one forks no more. Never reaps: the processes
    are ``root``'s to reap (it is their subreaper), and ``root`` itself must stay this launcher's."""
    for _ in range(200):
        alive = [pid for pid in descendants(root) if _alive(pid)]
        if not alive:
            return True
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for pid in alive:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, sig)
        time.sleep(0.001)
    return not any(_alive(pid) for pid in descendants(root))


def _hand_over(pipes: tuple[tuple[int, int], tuple[int, int]]) -> None:
    """In the child: keep the request's write end and the answer's read end, named in the environment."""
    (request_r, request_w), (answer_r, answer_w) = pipes
    os.close(request_r)
    os.close(answer_w)
    for fd in (request_w, answer_r):
        os.set_inheritable(fd, True)
    os.environ["TRI_AGENT_SWEEP"] = f"{request_w},{answer_r}"


def _serve_sweeps(child: int, pipes: tuple[tuple[int, int], tuple[int, int]]) -> None:
    """Answer the child's sweep requests until it closes its end (it ended, or wants no more)."""
    (request_r, request_w), (answer_r, answer_w) = pipes
    os.close(request_w)
    os.close(answer_r)
    try:
        while os.read(request_r, 1):
            os.write(answer_w, b"k" if _sweep_below(child) else b"x")
    except OSError:
        pass  # the child is gone: what is left below it dies with the launcher's own sweep
    finally:
        os.close(request_r)
        os.close(answer_w)


_USAGE = ("usage: _confine.py [--read PATH]... [--write PATH]... [--no-network] [--reap-only] [--sweep] "
          "-- ARGV...")


class _Args:  # not a dataclass: dataclasses imports inspect, which costs more than this whole launcher
    def __init__(self) -> None:
        self.read: list[str] = []
        self.write: list[str] = []
        self.no_network = False
        self.reap_only = False
        self.sweep = False
        self.command: list[str] = []


def _parse(argv: list[str]) -> _Args:
    """The launcher's few flags (no argparse: its import costs more than the run it wraps, for a small one)."""
    args, rest = _Args(), list(argv)
    while rest and rest[0] != "--" and rest[0].startswith("--"):
        flag = rest.pop(0)
        if flag in ("--read", "--write") and rest:
            getattr(args, flag[2:]).append(rest.pop(0))
        elif flag in ("--no-network", "--reap-only", "--sweep"):
            setattr(args, flag[2:].replace("-", "_"), True)
        else:
            raise SystemExit(f"{_USAGE}\n_confine.py: error: unknown argument {flag!r}")
    args.command = rest[1:] if rest[:1] == ["--"] else rest
    if not args.command:
        raise SystemExit(f"{_USAGE}\n_confine.py: error: no command")
    return args


def main(argv: list[str] | None = None) -> int:
    args = _parse(sys.argv[1:] if argv is None else argv)
    command = args.command
    me = os.getpid()
    signal.signal(signal.SIGTERM, lambda *_: _stop(me))
    _libc().prctl(_SUBREAPER, 1, 0, 0, 0)
    _libc().prctl(_PDEATHSIG, signal.SIGTERM, 0, 0, 0)  # the orchestrator died: take the run down with us
    pipes = (os.pipe(), os.pipe()) if args.sweep else None  # (request read, write), (answer read, write)
    child = os.fork()
    if child == 0:
        try:
            if pipes is not None:
                _hand_over(pipes)
            if not args.reap_only:
                if args.no_network:
                    _private_network(own_ids=args.sweep)
                _drop_capabilities()
                _restrict(args.read, args.write)
            os.execvp(command[0], command)
        except OSError as exc:
            os.write(2, f"confine: {exc}\n".encode())
        os._exit(127)
    if pipes is not None:
        _serve_sweeps(child, pipes)
    _, status = os.waitpid(child, 0)
    _kill_all(me)  # a daemon the run left behind dies with it
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main())
