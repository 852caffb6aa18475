#!/usr/bin/env python3
"""Bootstrap a virtualenv in .venv and run the project's two jobs.

    python3 dev.py demo   # the toy-grades hard acceptance, the self-test and the examples (offline, no API key)
    python3 dev.py test   # ruff, mypy, the import layers and the whole pytest suite
    python3 dev.py mutation [MODULE ...]   # the suite's own mutation score per verdict module (slow; not in CI)

Needs only Python >= 3.11: the first run creates .venv and installs the pinned dependencies; later runs
reinstall only when pyproject.toml changes.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")


def ensure_env(extras: str) -> dict[str, str]:
    if sys.version_info < (3, 11):  # noqa: UP036 - dev.py may be started by an older python3
        sys.exit(f"dev.py: Python >= 3.11 is needed, this is {sys.version.split()[0]}; run it with python3.11 or newer")
    if not (BIN / "python").exists():
        print(f"dev.py: creating {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    want = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + extras.encode()).hexdigest()
    stamp = VENV / ".tri-agent-installed"
    if not stamp.exists() or stamp.read_text() != want:
        print(f"dev.py: installing tri-agent[{extras}] into {VENV}", flush=True)
        _run([str(BIN / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-e",
              f".[{extras}]" if extras else "."])
        stamp.write_text(want)
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", VIRTUAL_ENV=str(VENV))
    env.pop("PYTHONHOME", None)
    return env


# command -> the Debian package that brings it (pg_ctlcluster: Debian's PostgreSQL, server binaries included)
SYSTEM_PACKAGES = {"bwrap": "bubblewrap", "chromium": "chromium", "pg_ctlcluster": "postgresql"}
DEMO_PACKAGES = ("bwrap",)  # the main job needs only the OS sandbox
# what a run without bubblewrap costs, by the layer role-written code gets instead (tri_agent.sandbox.strongest)
LAYER_COST = {
    "landlock": "role-written code runs under Landlock only, so the acceptance cannot certify",
    "none": "there is no OS sandbox at all: role-written code runs unsandboxed, so the acceptance cannot certify",
}


def ensure_system_packages(commands: tuple[str, ...] = tuple(SYSTEM_PACKAGES)) -> list[str]:
    """bubblewrap backs the OS sandbox (the main job and its tests), chromium the browser targets (driven by
    Playwright, never a downloaded browser), PostgreSQL the service targets' template restore (a server the
    tests start themselves); install what is missing where we can (root with apt). Returns what is still
    missing."""
    missing = [SYSTEM_PACKAGES[c] for c in commands if not shutil.which(c)]
    if missing and shutil.which("apt-get") and hasattr(os, "geteuid") and os.geteuid() == 0:
        print(f"dev.py: installing {', '.join(missing)} (apt-get)", flush=True)
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        subprocess.run(["apt-get", "update", "-qq"], check=False, **quiet)  # type: ignore[call-overload]
        subprocess.run(["apt-get", "install", "-y", "-qq", *missing], check=False, **quiet)  # type: ignore[call-overload]
    return [SYSTEM_PACKAGES[c] for c in commands if not shutil.which(c)]


def sandbox_layer(env: dict[str, str]) -> str:
    """The layer role-written code gets on this machine, as the installed tri-agent decides it."""
    probe = "from tri_agent.sandbox._jail import strongest; print(strongest() or 'none')"
    done = subprocess.run([str(BIN / "python"), "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True)
    return done.stdout.strip() or "none"


def _run(cmd: list[str], env: dict[str, str] | None = None) -> int:
    return subprocess.run(cmd, cwd=ROOT, env=env).returncode


def demo() -> int:
    env = ensure_env("")
    ensure_system_packages(DEMO_PACKAGES)
    layer = sandbox_layer(env)
    print(f"dev.py: role-written code runs under: {layer}", flush=True)
    if layer in LAYER_COST:
        print(f"dev.py: bubblewrap is missing: {LAYER_COST[layer]}; the demo runs anyway. Install it with "
              "`sudo apt-get install bubblewrap` (Debian, Ubuntu) or your system's package.", flush=True)
    unsandboxed = ["--allow-unsandboxed"] if layer == "none" else []
    temp = memory_temp()  # the acceptance's and the self-test's scratch folders: their results stay on disk
    try:
        fast = env if temp is None else {**env, "TMPDIR": str(temp)}
        codes = [_run([str(BIN / "python"), "examples/toy-grades/run_acceptance.py", *unsandboxed], fast),
                 _run(["bash", "selftest/run_selftest.sh", *unsandboxed], fast)]
    finally:
        if temp is not None:
            shutil.rmtree(temp, ignore_errors=True)
    for example in ("invoice-totals", "toy-grades"):  # each names a work folder to look at afterwards: kept
        codes.append(_run([str(BIN / "python"), f"examples/{example}/run_example.py"], env))
    return next((c for c in codes if c), 0)


# The suite and the demo make and remove many thousand small folders (copies of targets, the jails' folders, each
# hunted input's). On this project's machines a folder and a file made on disk cost about 1 ms of kernel time
# against 0.03 ms in memory: their temporary files go to a memory file system when the machine has one with room
# (benchmarks/RESULTS.md has the figures). Only our own bundled targets run there: a user's acceptance keeps the
# machine's temporary folder (docs/commands.md says why). Each test's folder is removed as it passes.
MEMORY_FS = Path("/dev/shm")
MEMORY_ROOM = 4 << 30


def memory_temp(where: Path = MEMORY_FS, mounts: Path = Path("/proc/mounts")) -> Path | None:
    """A private folder for temporary files on a memory file system (tmpfs) with room, else None."""
    try:
        mounted = {fields[1]: fields[2] for fields in (line.split() for line in mounts.read_text().splitlines())
                   if len(fields) > 2}
        room = os.statvfs(where)
        if mounted.get(str(where)) != "tmpfs" or room.f_bavail * room.f_frsize < MEMORY_ROOM:
            return None
        made = Path(tempfile.mkdtemp(dir=where))  # no telling name: a case's path must name nothing of the engine
        made.chmod(0o711)  # others may pass through, never list (the suite's PostgreSQL runs as its own user)
        return made
    except OSError:
        return None


def test(pytest_args: list[str]) -> int:
    env = ensure_env("test")
    ensure_system_packages()
    python = str(BIN / "python")
    checks = (("ruff", [python, "-m", "ruff", "check", "."]), ("mypy", [python, "-m", "mypy"]),
              ("lint-imports", [str(BIN / "lint-imports"), "--no-logo"]))
    for name, cmd in checks:
        if _run(cmd, env) != 0:
            print(f"dev.py: {name} failed", file=sys.stderr)
            return 1
    # the whole suite on two workers a core (its tests wait on jails, browsers and servers: at one a core half the
    # CPU idled; at three a core both cores were busy and the longest tests stretched), one test a worker's unit but
    # a file with a module-scoped fixture, the longest units first (tests/conftest.py; xdist keeps that order), and
    # the 20 slowest tests named so the next slow one is seen; arguments of the caller's replace all of it
    workers = str(2 * (os.cpu_count() or 1))
    args = pytest_args or ["-n", workers, "--no-loadscope-reorder", "--durations=20", "-o",
                           "tmp_path_retention_policy=failed"]
    temp = None if pytest_args else memory_temp()
    if temp is not None:
        (temp / "tmp").mkdir()
        env = {**env, "TMPDIR": str(temp / "tmp")}
        args = [*args, f"--basetemp={temp / 'base'}"]
        print(f"dev.py: the suite's temporary files are in memory, in {temp}", flush=True)
    code = _run([python, "-m", "pytest", *args], env)
    if temp is not None and code == 0:
        shutil.rmtree(temp, ignore_errors=True)
    elif temp is not None:
        print(f"dev.py: the failed tests' folders are kept in {temp} (memory: remove it when done)", file=sys.stderr)
    if code == 5:
        print("dev.py: pytest collected no tests; that is a failure here", file=sys.stderr)
        return 1
    return code


def mutation(modules: list[str]) -> int:
    env = ensure_env("test")
    ensure_system_packages()
    return _run([str(BIN / "python"), "benchmarks/mutation.py", *modules], env)


def main() -> int:
    job = sys.argv[1] if len(sys.argv) > 1 else ""
    if job == "demo":
        return demo()
    if job == "test":
        return test(sys.argv[2:])
    if job == "mutation":
        return mutation(sys.argv[2:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
