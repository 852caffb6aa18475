"""Child processes: every generator, oracle, build and target run goes through ``run``.

A child gets its own session (so a timeout kills its whole process group, grandchildren included),
a scrubbed environment, and capped captured output. Nothing here interprets the result.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .._errors import UsageError

OUTPUT_CAP = 1 << 20
# variables a child may inherit; everything else (API keys, tokens, agent config) stays out
_PASS_THROUGH = ("PATH", "LANG", "LC_ALL", "TZ", "TMPDIR", "SYSTEMROOT")


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


def base_env(home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """A scrubbed environment: a few harmless variables, a private HOME, then ``extra``."""
    env = {k: os.environ[k] for k in _PASS_THROUGH if k in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.update({"HOME": str(home), "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0", "LC_ALL": "C.UTF-8"})
    env.update(extra or {})
    return env


def run(argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout: float,
        stdin: bytes = b"", cap: int = OUTPUT_CAP) -> Completed:
    """Run ``argv`` to completion or until ``timeout`` seconds, then kill its process group."""
    start = time.monotonic()
    try:
        proc = subprocess.Popen(list(argv), cwd=cwd, env=dict(env), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
    except FileNotFoundError:
        raise UsageError(f"command not found: {argv[0]!r}", hint="check the command in the config") from None
    except PermissionError:
        raise UsageError(f"command is not executable: {argv[0]!r}") from None
    timed_out = False
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc.pid)
        out, err = proc.communicate()
    finally:
        _kill_group(proc.pid)  # reap stragglers the child left behind in its group
    truncated = len(out) > cap or len(err) > cap
    return Completed(tuple(argv), None if timed_out else proc.returncode, out[:cap], err[:cap],
                     time.monotonic() - start, timed_out, truncated)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
