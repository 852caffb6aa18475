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
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

from ._process import STOPPING

REGISTRY = ".tri-agent-scratch"


@contextlib.contextmanager
def session() -> Iterator[Path]:
    """Make this command's scratch root (every ``tempfile`` folder lands in it), sweep the roots of commands
    that were killed, and remove the root when the block ends; SIGTERM unwinds like Ctrl-C meanwhile."""
    top = Path(tempfile.gettempdir())
    sweep(top)
    root = Path(tempfile.mkdtemp(dir=top))
    entry = _registry(top) / _identity(os.getpid())
    entry.write_text(str(root), encoding="utf-8")
    before, tempfile.tempdir = tempfile.tempdir, str(root)
    try:
        with _sigterm_unwinds():
            yield root
    finally:
        tempfile.tempdir = before
        shutil.rmtree(root, ignore_errors=True)
        entry.unlink(missing_ok=True)


def sweep(top: Path) -> list[Path]:
    """Remove the roots whose command is gone; the roots removed."""
    registry, gone = top / REGISTRY, list[Path]()
    if not registry.is_dir():
        return gone
    for entry in registry.iterdir():
        pid = entry.name.partition("-")[0]
        if not pid.isdigit() or _identity(int(pid)) == entry.name:
            continue  # a live command's, or not an entry
        root = Path(entry.read_text(encoding="utf-8", errors="replace").strip())
        if _ours(root, top):
            shutil.rmtree(root, ignore_errors=True)
            gone.append(root)
        entry.unlink(missing_ok=True)
    return gone


def _ours(root: Path, top: Path) -> bool:
    """A root a forged entry cannot point elsewhere with: a real folder directly in ``top``, owned by us."""
    try:
        info = root.lstat()
    except OSError:
        return False
    return (root.parent == top and root.name not in ("", ".", "..", REGISTRY) and os.path.isdir(root)
            and not root.is_symlink() and info.st_uid == os.geteuid())


def _registry(top: Path) -> Path:
    registry = top / REGISTRY
    registry.mkdir(mode=0o700, exist_ok=True)
    return registry


def _identity(pid: int) -> str:
    """``pid-starttime``: a pid the kernel gave a new process since is another command."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return f"{pid}-gone"
    return f"{pid}-{stat.rpartition(')')[2].split()[19]}"


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
