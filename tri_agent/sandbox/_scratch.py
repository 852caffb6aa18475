"""The scratch folders of one command: every temporary folder it makes lives under one root, and the root is gone
when the command ends, however it ends.

- normal end, an error, Ctrl-C: the ``session`` removes the root on the way out;
- SIGTERM, Ctrl-C: every running child is killed at once and none starts (``_process.STOPPING``), then the
  command unwinds (it says it was interrupted, exit 7);
- SIGKILL, a power cut: nothing of the dying process can run, so each command's start sweeps the roots whose
  command is gone (``sweep``).

The root's name is as opaque as any temporary folder's (a case's path must not name the engine); what ties it to
its command is an entry in a registry folder beside it, which no jail shows. An entry is trusted only as far as
it can be checked: its root must be a plain folder directly in the temporary folder, owned by this user.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

from ._process import STOPPING

REGISTRY = ".tri-agent-scratch"
_OUTER: list[Path] = []  # the temporary folder the active session's root lies in (see ``top``)


def top() -> Path:
    """The machine's temporary folder, also while a session has moved ``tempfile``'s into its root: what no jail
    may show is the whole of it (other commands' scratch folders included), not only this command's root."""
    return _OUTER[-1] if _OUTER else Path(tempfile.gettempdir())


@contextlib.contextmanager
def session() -> Iterator[Path]:
    """Make this command's scratch root (every ``tempfile`` folder lands in it), sweep the roots of commands
    that were killed, and remove the root when the block ends; SIGTERM unwinds like Ctrl-C meanwhile."""
    outer = Path(tempfile.gettempdir())
    sweep(outer)
    root = Path(tempfile.mkdtemp(dir=outer))
    entry = _register(outer, root)
    before, tempfile.tempdir = tempfile.tempdir, str(root)
    _OUTER.append(outer)
    try:
        with _sigterm_unwinds():
            yield root
    finally:
        _OUTER.pop()
        tempfile.tempdir = before
        shutil.rmtree(root, ignore_errors=True)
        if entry is not None:
            entry.unlink(missing_ok=True)


def sweep(top: Path) -> list[Path]:
    """Remove the roots whose command is gone; the roots removed. A registry another user made or could write
    is never read (its entries could name any folder of ours in the temporary folder)."""
    registry, removed = top / REGISTRY, list[Path]()
    if not _private(registry):
        return removed
    for entry in registry.iterdir():
        pid, _, start = entry.name.partition("-")
        if not (pid.isascii() and pid.isdigit()) or not gone(int(pid), start) or not _plain(entry):
            continue  # a live command's, or not an entry
        root = Path(entry.read_text(encoding="utf-8", errors="replace").strip())
        if _ours(root, top):
            shutil.rmtree(root, ignore_errors=True)
            removed.append(root)
        entry.unlink(missing_ok=True)
    return removed


def _private(registry: Path) -> bool:
    """A registry folder of this user's, which nobody else may write, and no link."""
    try:
        info = registry.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and not info.st_mode & 0o022


def _plain(entry: Path) -> bool:
    try:
        info = entry.lstat()
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_size < 4096


def _ours(root: Path, top: Path) -> bool:
    """A root a forged entry cannot point elsewhere with: a real folder directly in ``top``, owned by us."""
    try:
        info = root.lstat()
    except OSError:
        return False
    return (root.parent == top and root.name not in ("", ".", "..", REGISTRY) and os.path.isdir(root)
            and not root.is_symlink() and info.st_uid == os.geteuid())


def _register(top: Path, root: Path) -> Path | None:
    """This command's entry (None where the registry is not ours alone: its root is then only removed at its end,
    never swept)."""
    registry = top / REGISTRY
    with contextlib.suppress(FileExistsError):
        registry.mkdir(mode=0o700)
    if not _private(registry):
        return None
    entry = registry / identity()
    try:
        fd = os.open(entry, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except OSError:
        return None
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(str(root))
    return entry


def identity(pid: int | None = None) -> str:
    """``pid-starttime`` of ``pid`` (None: this process, read from ``/proc/self``, which names it whatever pid
    namespace ``/proc`` belongs to): a pid the kernel gave a new process since is another command."""
    try:
        stat = Path(f"/proc/{'self' if pid is None else pid}/stat").read_text()
    except OSError:
        return f"{os.getpid() if pid is None else pid}-gone"
    return f"{os.getpid() if pid is None else pid}-{stat.rpartition(')')[2].split()[19]}"


def gone(pid: int, start: str) -> bool:
    """The process that was ``pid`` started at ``start`` has ended: no process has the pid, or one that started
    since has it. A live pid whose start cannot be read (``/proc`` mounted with hidepid) is taken for the same
    process: what it holds is left alone rather than taken from a live command."""
    if not alive(pid):
        return True
    seen = identity(pid)
    return not seen.endswith("-gone") and seen != f"{pid}-{start}"


def alive(pid: int) -> bool:
    """Some process has ``pid`` (one of another user's included)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def _sigterm_unwinds() -> Iterator[None]:
    """SIGTERM and Ctrl-C stop every running child at once (threads running cases wait on none), then unwind."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, _interrupt) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        STOPPING.clear()


def _interrupt(signum: int, frame: FrameType | None) -> None:
    STOPPING.set()
    raise KeyboardInterrupt
