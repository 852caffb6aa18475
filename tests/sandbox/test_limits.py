"""Resource limits: a run that allocates, forks or opens without end ends itself, and nothing else; each limit is
shown first as the cgroup enforces it, then as the rlimit fallback does where no cgroup can be had."""

from __future__ import annotations

import os
import shutil
import sys
import time
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


@pytest.mark.parametrize("field, value", [("processes", 0), ("processes", 8193), ("memory", (64 << 30) + 1),
                                          ("open_files", (1 << 20) + 1), ("cpu_seconds", 86_401)])
def test_a_limit_beyond_reason_is_refused_with_the_field(field: str, value: int) -> None:
    """Bounded both ways: the examiner writes exam.yaml, and may not lift its own generator out of every limit."""
    with pytest.raises(ValueError, match=field):
        Limits.model_validate({field: value})
    assert Limits.model_validate({field: 8192 if field == "processes" else 16 << 20 if field == "memory"
                                  else 16 if field == "open_files" else 1})


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


# --- the parts, on their own: what the machine offers is probed once, so its rules are tested here on fakes ---

MOUNTINFO = """31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
33 31 0:30 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
"""


def test_the_v1_mounts_of_a_controller_are_read_from_mountinfo() -> None:
    assert limits._mounts("memory", MOUNTINFO) == [(Path("/sys/fs/cgroup/memory"), False)]
    assert limits._mounts("pids", MOUNTINFO) == [(Path("/sys/fs/cgroup/pids"), False)]
    assert limits._mounts("cpu", MOUNTINFO) == [(Path("/sys/fs/cgroup/cpu,cpuacct"), False)]
    assert limits._mounts("name", MOUNTINFO) == limits._mounts("rw", "garbage - x\n") == []


def test_a_v2_mount_holds_the_controllers_its_root_lists(tmp_path: Path) -> None:
    (tmp_path / "cgroup.controllers").write_text("cpu memory io\n")
    line = f"41 31 0:38 / {tmp_path} rw,relatime - cgroup2 cgroup2 rw\n"
    assert limits._mounts("memory", line) == [(tmp_path, True)]
    assert limits._mounts("pids", line) == []


def test_own_paths_name_each_controller_and_the_v2_hierarchy() -> None:
    text = "9:name=systemd:/\n8:pids:/a\n4:memory:/process_api/x\n2:cpu,cpuacct:/c\n0::/user.slice\n"
    assert limits._own_paths(text) == {"name=systemd": "/", "pids": "/a", "memory": "/process_api/x", "cpu": "/c",
                                       "cpuacct": "/c", "": "/user.slice"}


def test_a_hierarchy_is_usable_only_where_a_leaf_gets_its_limit_file(tmp_path: Path) -> None:
    """A plain folder (no cgroup file system) makes leaves without limit files: not a hierarchy."""
    own = {"pids": "/x", "": "/y"}
    (tmp_path / "x").mkdir()
    assert limits._usable("pids", own, [(tmp_path, False)]) is None
    assert not [p for p in (tmp_path / "x" / "tri-agent").iterdir()]  # the probe leaf is removed
    assert limits._usable("pids", {}, [(tmp_path, False)]) is None  # this process is in none of its cgroups
    (tmp_path / "y").mkdir()
    (tmp_path / "y" / "cgroup.subtree_control").write_text("cpu\n")
    assert limits._usable("pids", own, [(tmp_path, True)]) is None  # v2, not delegated: never enabled by us
    assert not (tmp_path / "y" / "tri-agent").exists()


@pytest.mark.skipif("pids" not in CGROUPS, reason="no pids cgroup here")
def test_the_real_pids_hierarchy_is_found_where_this_process_sits() -> None:
    hierarchy = CGROUPS["pids"]
    own = limits._own_paths(Path("/proc/self/cgroup").read_text())
    mounts = limits._mounts("pids", Path("/proc/self/mountinfo").read_text())
    assert limits._usable("pids", own, mounts) == hierarchy
    assert hierarchy.base.name == "tri-agent" and (hierarchy.base / "cgroup.procs").exists()


@pytest.mark.parametrize("offered, euid, memory, processes", [
    ({"memory", "pids"}, 0, "cgroup", "cgroup"),
    (set(), 1000, "rlimit (address space)", "rlimit"),
    (set(), 0, "rlimit (address space)", "not enforced (root, whom RLIMIT_NPROC does not bind; no pids cgroup)"),
])
def test_enforcement_says_how_each_limit_holds(monkeypatch: pytest.MonkeyPatch, offered: set[str], euid: int,
                                               memory: str, processes: str) -> None:
    monkeypatch.setattr(limits, "hierarchies", lambda: dict.fromkeys(offered))
    monkeypatch.setattr(limits.os, "geteuid", lambda: euid)
    assert limits.enforcement() == {"memory": memory, "processes": processes, "open files": "rlimit", "cpu": "rlimit"}
    browser = limits.enforcement(address_space=False)["memory"]
    assert browser == ("cgroup" if offered else
                       "not enforced (no memory cgroup, and the run reserves more address space than it uses)")


def test_rlimits_set_what_no_cgroup_covers(monkeypatch: pytest.MonkeyPatch) -> None:
    prlimit = shutil.which("prlimit")
    monkeypatch.setattr(limits, "hierarchies", dict)
    assert limits.rlimits(SMALL, 4096) == [prlimit, "--nofile=200:200", "--cpu=1:2", f"--as={256 << 20}:{256 << 20}",
                                           "--nproc=32:32", "--fsize=4096:4096", "--"]
    assert limits.rlimits(SMALL, None, address_space=False) == [prlimit, "--nofile=200:200", "--cpu=1:2",
                                                                "--nproc=32:32", "--"]
    monkeypatch.setattr(limits, "hierarchies", lambda: {"memory": None, "pids": None})
    assert limits.rlimits(SMALL, None) == [prlimit, "--nofile=200:200", "--cpu=1:2", "--"]


def _fake(tmp: Path, controller: str, v2: bool) -> limits._Hierarchy:
    base = tmp / controller
    base.mkdir()
    return limits._Hierarchy(controller, base, v2)


def test_a_group_makes_a_leaf_per_hierarchy_with_its_limit_and_no_swap(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    found = {"memory": _fake(tmp_path, "memory", False), "pids": _fake(tmp_path, "pids", True)}
    monkeypatch.setattr(limits, "hierarchies", lambda: found)
    made = limits.group(SMALL)
    memory, pids = made.leaves["memory"], made.leaves["pids"]
    assert memory.parent == found["memory"].base and memory.name.startswith(f"{os.getpid()}-")
    assert (memory / "memory.limit_in_bytes").read_text() == str(256 << 20)
    assert (pids / "pids.max").read_text() == str(SMALL.processes + 2)
    assert made.argv(["prog", "a"]) == ["/bin/sh", "-c", limits._JOIN, "sh", str(memory / "cgroup.procs"),
                                        str(pids / "cgroup.procs"), "--", "prog", "a"]
    assert limits.Group({}).argv(["prog"]) == ["prog"]
    assert made.hit() is None
    (pids / "pids.events").write_text("max 3\n")
    (pids / "cgroup.events").write_text("populated 0\n")  # a v2 leaf
    assert made.hit() == "processes"
    (memory / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 1\n")
    assert made.hit() == "memory"


def test_no_swap_bounds_swap_with_memory_in_v1_and_forbids_it_in_v2(tmp_path: Path) -> None:
    for name in ("memory.memsw.limit_in_bytes", "memory.swap.max"):
        (tmp_path / name).write_text("max\n")
    limits._no_swap(tmp_path, "pids", 123)
    assert (tmp_path / "memory.swap.max").read_text() == "max\n"
    limits._no_swap(tmp_path, "memory", 123)
    assert ((tmp_path / "memory.memsw.limit_in_bytes").read_text(), (tmp_path / "memory.swap.max").read_text()) == (
        "123", "0")


def test_a_leaf_that_cannot_be_made_is_an_infrastructure_failure_and_leaves_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    found = {"memory": _fake(tmp_path, "memory", False), "pids": limits._Hierarchy("pids", tmp_path / "absent", False)}
    monkeypatch.setattr(limits, "hierarchies", lambda: found)
    removed: list[Path] = []
    monkeypatch.setattr(limits, "_remove", removed.append)  # a plain folder holding files cannot be rmdir'd
    with pytest.raises(limits.InfrastructureFailure, match="cannot make the run's pids cgroup at") as err:
        limits.group(SMALL)
    [made] = list(found["memory"].base.iterdir())
    assert err.value.exit_code == 7 and sorted(removed) == sorted([made, tmp_path / "absent" / made.name])
    assert err.value.hint == "free the cgroup hierarchy, or run where it can be written"


@pytest.mark.skipif("pids" not in CGROUPS, reason="no pids cgroup here")
def test_removing_a_leaf_kills_what_is_left_in_it() -> None:
    made = limits.group(SMALL)
    leaf = made.leaves["pids"]
    import subprocess

    sleeper = subprocess.Popen(["/bin/sh", "-c", f'echo $$ > "{leaf}/cgroup.procs"; exec sleep 60'])
    deadline = time.monotonic() + 10
    while not (leaf / "cgroup.procs").read_text().split() and time.monotonic() < deadline:
        time.sleep(0.01)
    made.remove()
    assert sleeper.wait(timeout=10) == -9 and not leaf.exists()
    limits._remove(leaf)  # gone already: nothing to do


def test_events_count_only_their_own_line(tmp_path: Path) -> None:
    files = limits._FILES[("pids", True)]
    (tmp_path / "pids.events").write_text("max.imposed 9\nmax 2\n")
    assert limits._events(tmp_path, files) == 2
    (tmp_path / "pids.events").write_text("max x\n")
    assert limits._events(tmp_path, files) == 0
    assert limits._events(tmp_path / "absent", files) == 0
    assert limits.cpu_hit(152) and limits.cpu_hit(-24) and not limits.cpu_hit(137) and not limits.cpu_hit(None)


def test_the_join_script_writes_nothing_but_a_leafs_procs_file(tmp_path: Path) -> None:
    """The shell that joins the leaves must never become a writer of any path an argument list names: a leaf list
    that lost its "--" (or named another file) stops it before anything is written or run."""
    import subprocess

    victim = tmp_path / "victim"
    victim.write_text("intact\n")
    leaf = tmp_path / "tri-agent" / "1-0"
    leaf.mkdir(parents=True)
    for argv in ([str(victim), "--", "true"], [str(leaf / "cgroup.procs"), str(victim), "true"]):
        done = subprocess.run(["/bin/sh", "-c", limits._JOIN, "sh", *argv], capture_output=True)
        assert done.returncode == 125 and victim.read_text() == "intact\n"
    done = subprocess.run(["/bin/sh", "-c", limits._JOIN, "sh", str(leaf / "cgroup.procs"), "--", "echo", "ran"],
                          capture_output=True)
    assert (done.returncode, done.stdout) == (0, b"ran\n") and (leaf / "cgroup.procs").read_text().strip().isdigit()


def test_mountinfo_is_read_by_its_fields_past_lines_it_cannot_read(tmp_path: Path) -> None:
    """The file system type is the first field after the separator (the source may be anything), and a line that
    cannot be read is passed over, never the end of the search."""
    (tmp_path / "cgroup.controllers").write_text("pids\n")
    text = ("garbage\n1 2 3 4 - cgroup\n"
            "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup none rw,pids\n"
            f"41 31 0:38 / {tmp_path} rw,relatime - cgroup2 none rw\n")
    assert limits._mounts("pids", text) == [(Path("/sys/fs/cgroup/pids"), False), (tmp_path, True)]


@pytest.mark.skipif("pids" not in CGROUPS, reason="no pids cgroup here")
def test_a_hierarchy_that_cannot_serve_is_passed_over_for_the_next(tmp_path: Path) -> None:
    own = limits._own_paths(Path("/proc/self/cgroup").read_text())
    real = limits._mounts("pids", Path("/proc/self/mountinfo").read_text())
    (tmp_path / "v2").mkdir()
    (tmp_path / "v2" / "cgroup.subtree_control").write_text("cpu\n")  # v2, pids not delegated
    found = limits._usable("pids", {**own, "": "/v2"}, [(tmp_path, True), *real])
    assert found == CGROUPS["pids"]
    assert limits._usable("pids", {"pids": own["pids"]}, [(tmp_path, True), *real]) == CGROUPS["pids"]


def test_without_prlimit_no_limit_can_be_applied_and_it_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits.shutil, "which", lambda name: None)
    with pytest.raises(limits.InfrastructureFailure) as err:
        limits.rlimits(SMALL, None)
    assert (err.value.message, err.value.hint) == (
        "prlimit is missing: the resource limits of role-written code cannot be applied",
        "install util-linux (Debian: apt-get install util-linux)")


def _every_leaf_has_its_limit_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """A plain folder standing in for a cgroup file system: "." is in every fresh leaf, as a limit file is in a
    real one."""
    monkeypatch.setattr(limits, "_FILES", {key: {**files, "limit": "."} for key, files in limits._FILES.items()})


def test_a_delegated_v2_hierarchy_is_used_and_its_controller_enabled_for_the_leaves(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _every_leaf_has_its_limit_file(monkeypatch)
    top = tmp_path / "Xuser.slice"  # a path that starts like no separator: read whole, never stripped of letters
    top.mkdir()
    (top / "cgroup.subtree_control").write_text("cpu memory\n")
    found = limits._usable("memory", {"memory": "/elsewhere", "": "/Xuser.slice"}, [(tmp_path, True)])
    assert found == limits._Hierarchy("memory", top / "tri-agent", True)
    assert (top / "tri-agent" / "cgroup.subtree_control").read_text() == "+memory"
    assert [p.name for p in (top / "tri-agent").iterdir()] == ["cgroup.subtree_control"]  # the probe is gone
    (top / "cgroup.subtree_control").write_text("cpu\n")
    assert limits._usable("memory", {"": "/Xuser.slice"}, [(tmp_path, True)]) is None  # no longer delegated


def test_a_v1_hierarchy_is_found_by_the_controllers_own_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _every_leaf_has_its_limit_file(monkeypatch)
    (tmp_path / "own").mkdir()
    found = limits._usable("pids", {"pids": "/own", "": "/v2-path"}, [(tmp_path, False)])
    assert found == limits._Hierarchy("pids", tmp_path / "own" / "tri-agent", False)
    assert not (tmp_path / "own" / "tri-agent" / "cgroup.subtree_control").exists()  # v1 has no delegation file
    # a hierarchy whose folder cannot be made (its parent is a file) is passed over, not an error
    (tmp_path / "file").write_text("")
    assert limits._usable("pids", {"pids": "/file"}, [(tmp_path, False)]) is None


def test_odd_cgroup_files_read_as_nothing(tmp_path: Path) -> None:
    assert limits._read(tmp_path / "absent") == "" and limits._words(tmp_path / "absent") == []
    assert not limits._is_v2(tmp_path)
    (tmp_path / "cgroup.events").write_text("populated 0\n")
    assert limits._is_v2(tmp_path)


def test_mountinfo_lines_of_five_fields_are_read_and_shorter_ones_passed_over() -> None:
    five = "39 31 0:36 / /sys/fs/cgroup/pids - cgroup cgroup rw,pids\n"
    assert limits._mounts("pids", five) == [(Path("/sys/fs/cgroup/pids"), False)]
    assert limits._mounts("pids", "39 31 0:36 / - cgroup cgroup rw,pids\n") == []


def test_a_cgroup_path_may_hold_colons() -> None:
    assert limits._own_paths("4:memory:/a:b:c\n0::/x:y\n") == {"memory": "/a:b:c", "": "/x:y"}


def test_killing_a_leaf_passes_over_processes_that_are_gone_or_not_ours(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    limits._kill_all(tmp_path / "absent")  # no procs file: nothing to kill
    (tmp_path / "cgroup.procs").write_text("0\nabc\n41\n42\n")
    sent: list[int] = []

    def kill(pid: int, sig: int) -> None:
        sent.append(pid)
        raise ProcessLookupError if pid == 41 else PermissionError

    monkeypatch.setattr(limits.os, "kill", kill)
    limits._kill_all(tmp_path)
    assert sent == [41, 42]


@pytest.mark.skipif("memory" not in CGROUPS, reason="no memory cgroup here")
def test_a_real_memory_leaf_bounds_swap_with_its_memory() -> None:
    made = limits.group(SMALL)
    try:
        leaf = made.leaves["memory"]
        swap = leaf / ("memory.swap.max" if limits._is_v2(leaf) else "memory.memsw.limit_in_bytes")
        if not swap.exists():
            pytest.skip("this kernel accounts no swap")
        assert swap.read_text().strip() in ("0", str(SMALL.memory))
    finally:
        made.remove()


@pytest.mark.skipif(not CGROUPS, reason="no cgroup hierarchy can be written here")
def test_a_leaf_whose_pid_was_given_to_another_process_is_swept(tmp_path: Path) -> None:
    """Leaves are named pid-starttime-n: a pid the kernel reused since (this very process, started at another
    time) does not keep a dead orchestrator's leaf alive; this process's own leaf, and names of another shape, stay."""
    hierarchy = next(iter(CGROUPS.values()))
    mine = limits.group(SMALL)
    own = next(iter(mine.leaves.values()))
    reused = hierarchy.base / f"{os.getpid()}-1-0"
    odd = hierarchy.base / f"{os.getpid()}-x-0"
    for leaf in (reused, odd):
        leaf.mkdir()
    try:
        assert own.name.startswith(limits.identity(os.getpid()) + "-")
        limits.sweep(hierarchy.base)
        assert not reused.exists() and own.exists() and odd.exists()
    finally:
        odd.rmdir()
        mine.remove()


def test_a_leaf_is_judged_by_its_owners_pid_and_start_time(monkeypatch: pytest.MonkeyPatch) -> None:
    from tri_agent.sandbox import _scratch

    dead = 1
    while _alive(dead):
        dead += 7919
    me = os.getpid()
    assert limits._owner_gone(f"{dead}-7") and limits._owner_gone(f"{dead}-123-7")  # no process has the pid
    assert limits._owner_gone(f"{me}-1-0")  # the pid is this process's now, started at another time
    assert not limits._owner_gone(f"{limits.identity()}-0") and not limits._owner_gone(f"{me}-7")  # its own
    for odd in ("probe-12", f"{me}", f"{me}-1-2-3", "١٢-3", f"{dead}-x-1", ""):
        assert not limits._owner_gone(odd), odd  # not a leaf name of ours
    # /proc mounted with hidepid: a live pid's start cannot be read, and what it holds is left alone
    monkeypatch.setattr(_scratch, "identity", lambda pid=None: f"{pid}-gone")
    assert not limits._owner_gone(f"{me}-1-0") and limits._owner_gone(f"{dead}-123-7")
    assert not _scratch.gone(me, "1") and _scratch.gone(dead, "1")
