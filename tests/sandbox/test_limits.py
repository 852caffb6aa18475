"""Resource limits: a run that allocates, forks or opens without end ends itself, and nothing else; each limit is
shown first as the cgroup enforces it, then as the rlimit fallback does where no cgroup can be had."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import tri_agent.sandbox._jail as jail
import tri_agent.sandbox._limits as limits
from tri_agent.sandbox._confine import landlock_abi
from tri_agent.sandbox._limits import Limits
from tri_agent.sandbox._process import base_env

# bounded, each of them, so that a broken limit (a mutant of _limits) costs the machine 2 GiB and 1,000 sleeping
# processes for a moment, never all it has: the assertions, not the programs, tell a limit that held
HOG = "x = []\nfor _ in range(32):\n    x.append(b'\\1' * (64 << 20))\n"  # every page touched: resident
FLOOD = ("import os, time\nforked = 0\nfor _ in range(1000):\n    try:\n        if os.fork() == 0:\n"
         "            time.sleep(30)\n            os._exit(0)\n        forked += 1\n    except OSError:\n"
         "        break\nprint(forked)\n")
FILES = ("import sys\nkept = []\ntry:\n    while len(kept) < 100_000:\n        kept.append(open('/dev/null'))\n"
         "except OSError as e:\n    print(len(kept), e.errno)\n    sys.exit(3)\n")
SPIN = "while True:\n    pass\n"
SMALL = Limits(memory=256 << 20, processes=32, open_files=200, cpu_seconds=1)
CGROUPS = limits.hierarchies()


def _run(tmp: Path, program: str, timeout: float = 20, **jail_args: bool) -> jail.Completed:
    done, _ = jail.Jail(writable=(tmp,), **jail_args).run([sys.executable, "-c", program], cwd=tmp,
                                                          env=base_env(tmp), timeout=timeout, limits=SMALL)
    return done


@pytest.fixture(params=["as the machine is", "no cgroup"])
def mechanism(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "no cgroup":
        monkeypatch.setattr(limits, "hierarchies", dict)
    return str(request.param)


def test_a_memory_hog_ends_at_its_limit(tmp_path: Path, mechanism: str) -> None:
    done = _run(tmp_path, HOG)
    assert done.exit_code != 0 and not done.timed_out
    if "memory" in CGROUPS and mechanism != "no cgroup":
        assert (done.exit_code, done.limit) == (137, "memory")  # the OOM killer, inside the run's own cgroup
    else:
        assert b"MemoryError" in done.stderr  # RLIMIT_AS: the allocation fails inside the program


def test_a_browser_run_is_never_bounded_by_its_address_space(tmp_path: Path, mechanism: str) -> None:
    """A browser reserves far more address space than it uses: RLIMIT_AS would crash it, so a jail that
    ``reserves`` is bounded by a cgroup or not at all, and the record says which."""
    reserve = "import mmap\nm = mmap.mmap(-1, 1 << 30)\nprint('reserved')\n"  # 1 GiB reserved, never touched
    done = _run(tmp_path, reserve, reserves=True)
    assert (done.exit_code, done.stdout) == (0, b"reserved\n")
    assert _run(tmp_path, reserve).exit_code == (0 if "memory" in CGROUPS and mechanism != "no cgroup" else 1)
    how = limits.enforcement(address_space=False)["memory"]
    assert how == ("cgroup" if "memory" in CGROUPS and mechanism != "no cgroup" else
                   "not enforced (no memory cgroup, and the run reserves more address space than it uses)")


def test_a_fork_flood_stops_at_its_process_limit(tmp_path: Path, mechanism: str) -> None:
    enforced = limits.enforcement()["processes"]
    done = _run(tmp_path, FLOOD)
    forked = int(done.stdout)
    if enforced.startswith("not enforced"):
        assert os.geteuid() == 0 and "root" in enforced  # said, never silently dropped
        assert forked == 1000
    else:
        assert forked <= SMALL.processes and done.exit_code == 0
        assert done.limit == ("processes" if enforced == "cgroup" else None)


def test_a_run_opening_100k_files_stops_at_its_open_files_limit(tmp_path: Path, mechanism: str) -> None:
    done = _run(tmp_path, FILES)
    kept, errno = done.stdout.split()
    assert (done.exit_code, int(errno)) == (3, 24) and int(kept) <= SMALL.open_files  # EMFILE


def test_a_spinning_run_ends_at_its_cpu_limit(tmp_path: Path, mechanism: str) -> None:
    done = _run(tmp_path, SPIN)
    assert not done.timed_out and done.seconds < 10
    assert (done.exit_code, done.limit) == (128 + 24, "cpu")  # SIGXCPU, as bubblewrap or the launcher reports it


def test_a_plain_run_hits_nothing_and_its_cgroups_are_gone(tmp_path: Path) -> None:
    done = _run(tmp_path, "print('hi')")
    assert (done.exit_code, done.stdout, done.limit) == (0, b"hi\n", None)
    for hierarchy in CGROUPS.values():
        assert not [p for p in hierarchy.base.iterdir() if p.name.startswith(f"{os.getpid()}-")]


@pytest.mark.skipif(not CGROUPS, reason="no cgroup hierarchy can be written here")
def test_the_leaves_of_a_dead_orchestrator_are_swept(tmp_path: Path) -> None:
    """A killed orchestrator cannot remove its leaves: the next one's start does (a pid no process has)."""
    hierarchy = next(iter(CGROUPS.values()))
    dead = 1
    while _alive(dead):
        dead += 7919
    orphan, live = hierarchy.base / f"{dead}-0", hierarchy.base / f"{os.getpid()}-999999"
    orphan.mkdir()
    live.mkdir()
    limits.sweep(hierarchy.base)
    assert not orphan.exists() and live.exists()
    live.rmdir()


def _alive(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists()


def test_a_limit_beyond_reason_is_refused_with_the_field() -> None:
    with pytest.raises(ValueError, match="processes"):
        Limits(processes=0)


@pytest.mark.skipif(landlock_abi() <= 0, reason="no Landlock")
@pytest.mark.parametrize("program, expected", [(SPIN, (152, "cpu")), (HOG, (137, "memory"))])
def test_under_landlock_the_same_limits_hold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, program: str,
                                             expected: tuple[int, str]) -> None:
    """The layer of a bare machine: the launcher starts inside the same cgroups and under the same rlimits."""
    monkeypatch.setattr(jail, "strongest", lambda: jail.LANDLOCK)
    done = _run(tmp_path, program)
    if expected[1] == "memory" and "memory" not in CGROUPS:
        assert b"MemoryError" in done.stderr
    else:
        assert (done.exit_code, done.limit) == expected
