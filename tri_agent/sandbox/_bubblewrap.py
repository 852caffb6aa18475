"""Layer 3, the OS sandbox: bubblewrap around CLI-agent roles, when this machine can run it.

The sandbox shows a role's process only the system's read-only program folders, the interpreters it
needs, its workspace (read-write, at ``/workspace``) and its own HOME; everything else on the machine,
the project and the evidence store included, does not exist inside it, whatever the process or its
children try. It is never required for correctness (layers 1 and 2 always run); the run record says
which layers were active. Landlock has no binding in the standard library and is reported unavailable.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pydantic import Field

from .._model import Record

WORKSPACE = "/workspace"
HOME = "/home/role"
_SYSTEM = ("/usr", "/etc/alternatives", "/etc/ssl", "/etc/ca-certificates", "/etc/resolv.conf", "/etc/hosts",
           "/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/localtime")
_MERGED = ("bin", "lib", "lib64", "sbin")


class Layers(Record):
    """The isolation layers a role run had."""

    physical_omission: bool = Field(default=True, description="Workspace assembled from the contract (always).")
    write_audit: bool = Field(default=True, description="Workspace hashed before and after (always).")
    os_sandbox: str | None = Field(default=None, description="'bubblewrap' when the process ran inside it.")


@dataclass(frozen=True)
class Probe:
    bubblewrap: str | None  # version, when bwrap exists and can start a sandbox here
    reason: str  # why not, when it cannot
    landlock: bool = False


@lru_cache(maxsize=1)
def probe() -> Probe:
    """Whether bubblewrap is installed *and* works here (user namespaces may be off)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return Probe(None, "bwrap is not installed (Debian: apt-get install bubblewrap)")
    try:
        version = subprocess.run([bwrap, "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
        trial = subprocess.run(wrap(["true"], Path("/"), Path("/"), {}, bwrap=bwrap), capture_output=True,
                               text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Probe(None, f"bwrap could not run: {exc}")
    if trial.returncode != 0:
        return Probe(None, f"bwrap cannot start a sandbox here: {trial.stderr.strip()[:200]}")
    return Probe(version or "bubblewrap", "")


def wrap(argv: Sequence[str], workspace: Path, home: Path, env: Mapping[str, str], *, network: bool = False,
         bwrap: str = "bwrap", extra_ro: Sequence[Path] = ()) -> list[str]:
    """``argv`` inside a bubblewrap sandbox that sees only the system, ``workspace`` and ``home``."""
    args = [bwrap, "--die-with-parent", "--new-session", "--unshare-all", "--cap-drop", "ALL", "--clearenv"]
    if network:
        args.append("--share-net")
    for system in _SYSTEM:
        args += ["--ro-bind-try", system, system]
    for name in _MERGED:
        merged = Path("/") / name
        args += ["--symlink", f"usr/{name}", f"/{name}"] if merged.is_symlink() else ["--ro-bind-try", str(merged),
                                                                                          str(merged)]
    # later mounts shadow earlier ones: /tmp first, so an interpreter living under /tmp stays visible
    args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    for extra in (*_interpreters(), *extra_ro):
        args += ["--ro-bind-try", str(extra), str(extra)]
    args += ["--bind", str(workspace), WORKSPACE, "--bind", str(home), HOME, "--chdir", WORKSPACE]
    for key, value in {**env, "HOME": HOME, "PATH": env.get("PATH", "/usr/local/bin:/usr/bin:/bin")}.items():
        args += ["--setenv", key, value]
    return [*args, "--", *argv]


def _interpreters() -> list[Path]:
    # the Python that runs tri-agent (and its virtualenv) may live outside /usr, e.g. under pyenv
    found = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve()}
    return sorted(p for p in found if not str(p).startswith("/usr"))
