"""Child processes: every generator, oracle, build, target and agent run goes through ``run``.

A child gets its own session and a scrubbed environment. Its output is read while it runs, never more
than the cap is kept (past it, the rest is drained and dropped, or the child is killed), and at its
deadline the whole tree dies at once, without waiting for pipes a grandchild may hold open. Inside a
jail (``_jail``) the tree is a pid namespace, so even a daemon that left the process group dies with it.
Nothing here interprets the result.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from .._errors import InfrastructureFailure, UsageError

OUTPUT_CAP = 1 << 20
_CHUNK = 1 << 16
_DRAIN = 0.5  # seconds to read what an ended child left in its pipes
# variables a child may inherit; everything else (API keys, tokens, agent config) stays out
_PASS_THROUGH = ("PATH", "LANG", "LC_ALL", "TZ", "TMPDIR", "SYSTEMROOT")
# set when the command is interrupted (Ctrl-C, SIGTERM): every running child is killed at once, none starts
STOPPING = threading.Event()


@dataclass(frozen=True)
class Completed:
    """How a child ended."""

    argv: tuple[str, ...]
    exit_code: int | None  # None: killed on timeout
    stdout: bytes
    stderr: bytes
    seconds: float
    timed_out: bool
    truncated: bool
    limit: str | None = None  # the resource limit that ended or hobbled the run (``_limits``), if any


def base_env(home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """A scrubbed environment: a few harmless variables, a private HOME, then ``extra``."""
    env = {k: os.environ[k] for k in _PASS_THROUGH if k in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.update({"HOME": str(home), "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0", "LC_ALL": "C.UTF-8"})
    env.update(extra or {})
    return env


def run(argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout: float, stdin: bytes = b"",
        cap: int = OUTPUT_CAP, kill_at_cap: bool = False, grace: float = 0.0) -> Completed:
    """Run ``argv`` until it ends or ``timeout`` seconds pass, then kill its whole tree. At most ``cap`` bytes
    of each stream are kept; past that the rest is dropped (``kill_at_cap``: the child is killed). With a
    ``grace``, the group is asked to stop (SIGTERM) that long before it is killed: a launcher that reaps
    its descendants needs the moment."""
    start = time.monotonic()
    if STOPPING.is_set():
        raise InfrastructureFailure(f"interrupted: {argv[0]} was not started", hint="run the command again")
    try:
        proc = subprocess.Popen(list(argv), cwd=cwd, env=dict(env), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
    except FileNotFoundError:
        raise UsageError(f"command not found: {argv[0]!r}", hint="check the command in the config") from None
    except PermissionError:
        raise UsageError(f"command is not executable: {argv[0]!r}") from None
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    feeder = threading.Thread(target=_feed, args=(proc.stdin, stdin), daemon=True)
    feeder.start()
    try:
        out, err, timed_out, truncated = _collect(proc, start + timeout, cap, kill_at_cap)
    finally:
        _stop_group(proc, grace)  # the deadline, the cap, or stragglers the child left behind in its group
        for stream in (proc.stdout, proc.stderr):
            stream.close()  # never wait for a pipe a grandchild holds open
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)
    return Completed(tuple(argv), None if timed_out else proc.returncode, out, err, time.monotonic() - start,
                     timed_out, truncated)


def _feed(pipe: IO[bytes], data: bytes) -> None:
    with contextlib.suppress(OSError):  # a child that never reads its input, or is gone
        pipe.write(data)
    with contextlib.suppress(OSError):
        pipe.close()


def _collect(proc: subprocess.Popen[bytes], deadline: float, cap: int,
             kill_at_cap: bool) -> tuple[bytes, bytes, bool, bool]:
    """Read both streams as they come, until both close, or the child has ended and what it left in the pipes
    is read (a grandchild may hold them open forever); (stdout, stderr, timed out, truncated)."""
    assert proc.stdout is not None and proc.stderr is not None
    kept = {proc.stdout.fileno(): bytearray(), proc.stderr.fileno(): bytearray()}
    truncated, timed_out = False, False
    with selectors.DefaultSelector() as selector:
        for stream in (proc.stdout, proc.stderr):
            selector.register(stream, selectors.EVENT_READ)
        while selector.get_map() and not (truncated and kill_at_cap):
            if STOPPING.is_set():
                timed_out = proc.poll() is None
                break
            if proc.poll() is not None:
                deadline = min(deadline, time.monotonic() + _DRAIN)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = proc.poll() is None
                break
            for key, _ in selector.select(min(remaining, 0.2)):
                chunk = os.read(key.fd, _CHUNK)
                if not chunk:
                    selector.unregister(key.fileobj)
                    continue
                buffer = kept[key.fd]
                room = cap - len(buffer)
                buffer += chunk[:max(room, 0)]
                truncated = truncated or len(chunk) > room
    return bytes(kept[proc.stdout.fileno()]), bytes(kept[proc.stderr.fileno()]), timed_out, truncated


def _stop_group(proc: subprocess.Popen[bytes], grace: float) -> None:
    if grace > 0 and proc.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=grace)
    _kill_group(proc.pid)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
