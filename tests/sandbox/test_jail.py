"""The jail around role-written code: every attack class is shown working without it, and getting nothing
with each layer (bubblewrap, Landlock); the tree dies on time; output and writes are capped."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import alive

import tri_agent.sandbox._jail as jail
import tri_agent.sandbox._limits as jail_limits
from tri_agent import InfrastructureFailure
from tri_agent.sandbox._bubblewrap import probe
from tri_agent.sandbox._confine import landlock_abi
from tri_agent.sandbox._process import base_env, run

TOKEN = "tri-agent-orchestrator-token-5f3a"
ATTACKS = {
    "absolute path": "print(open(SECRET).read())",
    "/proc/<pid>/cwd": """
for pid in os.listdir('/proc'):
    try:
        print(open(f'/proc/{pid}/cwd/key.txt').read())
    except OSError:
        pass""",
    "/proc/<pid>/environ": """
for pid in os.listdir('/proc'):
    try:
        if TOKEN.encode() in open(f'/proc/{pid}/environ', 'rb').read():
            print('environ of', pid)
    except OSError:
        pass""",
    "/tmp scan": """
for root, dirs, files in os.walk(TEMP):  # the orchestrator's temporary folder, where other runs' scratch lies
    dirs[:] = [d for d in dirs if d not in ('.venv', '.git', 'site-packages', '__pycache__')]  # a clone's bulk
    if 'other-run-answers.jsonl' in files:
        print(open(os.path.join(root, 'other-run-answers.jsonl')).read())""",
    "loopback server": """
s = socket.create_connection(('127.0.0.1', PORT), timeout=2)
print(s.recv(100).decode())""",
    "hard link": """
os.link(SECRET, 'linked')
print(open('linked').read())""",
}
LAYERS = [pytest.param(jail.BUBBLEWRAP, marks=pytest.mark.skipif(probe().bubblewrap is None, reason="no bubblewrap")),
          pytest.param(jail.LANDLOCK, marks=pytest.mark.skipif(landlock_abi() <= 0, reason="no Landlock"))]


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, object]]:
    """What the orchestrator holds: a key, its cwd, its environment, another run's scratch, a loopback server."""
    secret = tmp_path / "store" / "key.txt"
    secret.parent.mkdir()
    secret.write_text("SEALED-VALUE-42\n")
    other = Path(tempfile.gettempdir()) / f"tri-other-run-{os.getpid()}"
    other.mkdir(exist_ok=True)
    (other / "other-run-answers.jsonl").write_text("SEALED-VALUE-42\n")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    threading.Thread(target=_serve, args=(server,), daemon=True).start()
    monkeypatch.chdir(secret.parent)
    monkeypatch.setenv("TRI_TEST_TOKEN", TOKEN)
    work = tmp_path / "work"
    work.mkdir()
    yield {"secret": secret, "port": server.getsockname()[1], "work": work}
    server.close()
    (other / "other-run-answers.jsonl").unlink()
    other.rmdir()


def _serve(server: socket.socket) -> None:
    while True:
        try:
            conn, _ = server.accept()
        except OSError:
            return
        conn.sendall(b"SEALED-VALUE-42 from the host")
        conn.close()


def _attack(name: str, world: dict[str, object]) -> list[str]:
    code = (f"import os, socket\nSECRET = {str(world['secret'])!r}\nTOKEN = {TOKEN!r}\nPORT = {world['port']}\n"
            f"TEMP = {tempfile.gettempdir()!r}\n"
            f"try:\n" + "".join(f"    {line}\n" for line in ATTACKS[name].strip().splitlines())
            + "except Exception as exc:\n    print('blocked:', type(exc).__name__)\n")
    return [sys.executable, "-c", code]


def _got_it(out: bytes) -> bool:
    return b"SEALED-VALUE-42" in out or b"environ of" in out


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_each_attack_works_without_a_jail(world: dict[str, object], name: str) -> None:
    """The control: run plainly, as role-written code used to run, every attack gets what it was after."""
    work = world["work"]
    assert isinstance(work, Path)
    done = run(_attack(name, world), cwd=work, env={**os.environ, "HOME": str(work)}, timeout=20)
    assert _got_it(done.stdout), done.stdout + done.stderr


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_each_attack_gets_nothing_in_the_jail(world: dict[str, object], name: str, layer: str,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jail, "strongest", lambda: layer)
    work = world["work"]
    assert isinstance(work, Path)
    done, layers = jail.Jail(writable=(work,)).run(_attack(name, world), cwd=work, env=base_env(work), timeout=20)
    assert layers == [layer]
    assert not _got_it(done.stdout), done.stdout
    assert not (work / "linked").exists() or (work / "linked").read_text() != "SEALED-VALUE-42\n"




@pytest.mark.parametrize("layer", LAYERS)
def test_the_whole_tree_dies_on_time_daemons_included(tmp_path: Path, layer: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jail, "strongest", lambda: layer)
    marker = f"{time.time_ns() % 1000}.{os.getpid()}"
    code = (f"import os, subprocess, time\nsubprocess.Popen(['sleep', '3{marker}'])\nif os.fork() == 0:\n"
            f"    os.setsid()\n    os.execvp('sleep', ['sleep', '4{marker}'])\ntime.sleep(300)\n")
    start = time.monotonic()
    done, _ = jail.Jail(writable=(tmp_path,)).run([sys.executable, "-c", code], cwd=tmp_path, env=base_env(tmp_path),
                                                   timeout=1.5)
    assert done.timed_out and time.monotonic() - start < 15
    time.sleep(0.3)
    assert not alive(f"3{marker}") and not alive(f"4{marker}")


@pytest.mark.parametrize("layer", LAYERS)
def test_a_daemon_left_by_a_run_that_ended_dies_with_it(tmp_path: Path, layer: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jail, "strongest", lambda: layer)
    marker = f"5{time.time_ns() % 1000}.{os.getpid()}"
    code = f"import os\nif os.fork() == 0:\n    os.setsid()\n    os.execvp('sleep', ['sleep', '{marker}'])\n"
    done, _ = jail.Jail(writable=(tmp_path,)).run([sys.executable, "-c", code], cwd=tmp_path, env=base_env(tmp_path),
                                                   timeout=20)
    assert not done.timed_out and done.seconds < 10
    time.sleep(0.3)
    assert not alive(marker)


def test_a_child_that_ends_is_not_kept_waiting_by_a_grandchild_holding_its_pipes(tmp_path: Path) -> None:
    done = run(["bash", "-c", "(setsid sleep 7.25 &) ; echo done"], cwd=tmp_path, env=base_env(tmp_path), timeout=20)
    assert done.stdout == b"done\n" and not done.timed_out and done.seconds < 5


@pytest.mark.parametrize("layer", LAYERS)
def test_a_flood_is_read_and_cut_at_the_cap(tmp_path: Path, layer: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jail, "strongest", lambda: layer)
    code = "import sys\nfor _ in range(200):\n    sys.stdout.write('x' * (1 << 20))\n"
    done, _ = jail.Jail(writable=(tmp_path,)).run([sys.executable, "-c", code], cwd=tmp_path, env=base_env(tmp_path),
                                                   timeout=60, cap=1 << 16)
    assert done.truncated and len(done.stdout) == 1 << 16 and not done.timed_out


@pytest.mark.parametrize("layer", LAYERS)
def test_a_huge_or_sparse_file_stops_at_the_write_cap(tmp_path: Path, layer: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jail, "strongest", lambda: layer)
    code = ("f = open('huge.bin', 'wb')\ntry:\n    f.seek(1 << 30)\n    f.write(b'x')\n    f.close()\n"
            "    print('wrote')\nexcept OSError as exc:\n    print('refused', exc.errno)\n")
    done, _ = jail.Jail(writable=(tmp_path,)).run([sys.executable, "-c", code], cwd=tmp_path, env=base_env(tmp_path),
                                                   timeout=20, file_cap=1 << 20)
    assert done.stdout == b"refused 27\n", done.stdout + done.stderr  # EFBIG
    assert not (tmp_path / "huge.bin").exists() or (tmp_path / "huge.bin").stat().st_size <= 1 << 20


def test_without_any_layer_role_written_code_is_refused_unless_allowed(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jail, "strongest", lambda: None)
    monkeypatch.setattr(jail.POLICY, "allow_unsandboxed", False)
    with pytest.raises(InfrastructureFailure, match="no OS sandbox") as err:
        jail.Jail(writable=(tmp_path,)).run(["true"], cwd=tmp_path, env=base_env(tmp_path), timeout=5)
    assert err.value.exit_code == 7 and "--allow-unsandboxed" in err.value.hint
    monkeypatch.setattr(jail.POLICY, "allow_unsandboxed", True)
    done, layers = jail.Jail(writable=(tmp_path,)).run(["true"], cwd=tmp_path, env=base_env(tmp_path), timeout=5)
    assert done.exit_code == 0 and layers == []  # the record says so, and certification reads it


# --- found by an adversarial review of the jail --------------------------------------------------------------

def test_a_planted_launcher_is_never_imported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run with ``-m`` from the run's folder, Python would import the role's own ``tri_agent`` package."""
    monkeypatch.setattr(jail, "strongest", lambda: jail.LANDLOCK)
    planted = tmp_path / "tri_agent" / "sandbox"
    planted.mkdir(parents=True)
    for folder in (tmp_path / "tri_agent", planted):
        (folder / "__init__.py").write_text("")
    (planted / "_confine.py").write_text("print('ESCAPED')\n")
    done, _ = jail.Jail(writable=(tmp_path,)).run([sys.executable, "-c", "print('ran')"], cwd=tmp_path,
                                                   env={**base_env(tmp_path), "PYTHONPATH": str(tmp_path)}, timeout=20)
    assert b"ESCAPED" not in done.stdout and b"ran" in done.stdout


@pytest.mark.skipif(os.geteuid() != 0, reason="capabilities matter when the orchestrator runs as root")
@pytest.mark.parametrize("layer", LAYERS)
def test_run_as_root_the_jail_keeps_no_capability(tmp_path: Path, layer: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jail, "strongest", lambda: layer)
    code = ("import os, subprocess\nopen('mine', 'w').write('x')\n"
            "for name, call in (('chown', lambda: os.chown('mine', 4242, 4242)),\n"
            "                   ('mknod', lambda: os.mknod('dev', 0o600 | 0o060000, os.makedev(8, 0))),\n"
            "                   ('remount', lambda: subprocess.run(['mount', '-o', 'remount,rw,bind', '/usr'],\n"
            "                                                      check=True, capture_output=True))):\n"
            "    try:\n        call()\n        print('CAN', name)\n"
            "    except Exception:\n        print('cannot', name)\n")
    done, _ = jail.Jail(writable=(tmp_path,)).run([sys.executable, "-c", code], cwd=tmp_path, env=base_env(tmp_path),
                                                   timeout=20)
    assert b"CAN " not in done.stdout and done.stdout.count(b"cannot") == 3, done.stdout + done.stderr


def test_bubblewraps_tmp_is_small(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if probe().bubblewrap is None:
        pytest.skip("no bubblewrap")
    monkeypatch.setattr(jail, "strongest", lambda: jail.BUBBLEWRAP)
    code = ("try:\n    open('/tmp/fill', 'wb').write(b'x' * (128 << 20))\n    print('FILLED')\n"
            "except OSError as exc:\n    print('full', exc.errno)\n")
    done, _ = jail.Jail(writable=(tmp_path,)).run([sys.executable, "-c", code], cwd=tmp_path, env=base_env(tmp_path),
                                                   timeout=30)
    assert b"FILLED" not in done.stdout and b"full" in done.stdout


def test_tool_roots_never_show_home_folders_with_secrets_or_the_state(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    for folder in (".cargo/bin", ".local/bin", ".local/state/tri-agent", ".pyenv/shims", "venv/bin"):
        (home / folder).mkdir(parents=True)
    (home / ".cargo" / "credentials.toml").write_text("token = 'x'\n")
    (home / "venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setattr(jail.tempfile, "tempdir", str(tmp_path / "elsewhere"))  # this HOME is not in "/tmp"
    path = ":".join(str(home / f) for f in (".cargo/bin", ".local/bin", ".pyenv/shims", "venv/bin"))
    jail._roots.cache_clear()
    roots = jail.tool_roots({"PATH": path})
    assert home / ".cargo" not in roots and home / ".cargo" / "bin" in roots
    assert home / ".local" not in roots and home / ".local" / "bin" in roots
    assert home / ".pyenv" in roots and home / "venv" in roots  # a tool root only where its programs need it
    assert not any((home / ".local" / "state").is_relative_to(r) for r in roots)


def test_links_a_run_leaves_are_never_followed(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    os.symlink("/etc/passwd", tmp_path / "out" / "answers.jsonl")
    os.mkfifo(tmp_path / "out" / "pipe")
    (tmp_path / "out" / "fine.txt").write_text("ok\n")
    assert jail.odd_files(tmp_path / "out") == ["answers.jsonl", "pipe"]


# --- what a run sees of the machine, layer by layer ------------------------------------------------------------

def _in_jail(layer: str, monkeypatch: pytest.MonkeyPatch, code: str, cwd: Path, *, jail_: jail.Jail | None = None,
             env: dict[str, str] | None = None, **kwargs: object) -> tuple[jail.Completed, list[str]]:
    """``code`` run by Python in a jail of ``layer`` (by default one that may write ``cwd`` only)."""
    monkeypatch.setattr(jail, "strongest", lambda: layer)
    chosen = jail_ or jail.Jail(writable=(cwd,))
    return chosen.run([sys.executable, "-c", code], cwd=cwd, env=base_env(cwd) if env is None else env,
                      timeout=20, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("layer", LAYERS)
def test_the_run_gets_its_own_environment_and_nothing_of_the_orchestrators(tmp_path: Path, layer: str,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRI_TEST_TOKEN", TOKEN)
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(tmp_path), "ANSWER": "42",
           "LC_ALL": "C.UTF-8"}  # else Python's locale coercion adds LC_CTYPE
    done, _ = _in_jail(layer, monkeypatch, "import os, json\nprint(json.dumps(dict(os.environ)))", tmp_path, env=env)
    seen = json.loads(done.stdout)
    seen.pop("PWD", None)  # bubblewrap's --chdir sets it, to the run's own folder
    assert seen == env, done.stderr


@pytest.mark.parametrize("layer", LAYERS)
def test_stdin_reaches_the_child_and_is_empty_unless_given(tmp_path: Path, layer: str,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    code = "import sys\nsys.stdout.write(repr(sys.stdin.read()))\nsys.stderr.write('read it')\nsys.exit(3)\n"
    argv = [sys.executable, "-c", code]
    done, _ = _in_jail(layer, monkeypatch, code, tmp_path, stdin=b"case-7\n")
    # the result names the command asked for, not its wrapper, and keeps both streams and the exit code
    assert (done.argv, done.stdout, done.stderr, done.exit_code) == (tuple(argv), b"'case-7\\n'", b"read it", 3)
    done, _ = _in_jail(layer, monkeypatch, code, tmp_path)
    assert done.stdout == b"''" and not done.timed_out


@pytest.mark.parametrize("layer", LAYERS)
def test_output_past_the_cap_is_drained_or_kills_the_child_when_asked(tmp_path: Path, layer: str,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    code = "import sys\nsys.stdout.write('x' * (4 << 20))\nsys.stdout.flush()\nsys.stderr.write('finished')\n"
    done, _ = _in_jail(layer, monkeypatch, code, tmp_path, cap=1 << 16)
    assert done.truncated and done.exit_code == 0 and done.stderr == b"finished"  # drained, not killed
    endless = "import sys\nwhile True:\n    sys.stdout.write('x' * 65536)\n"
    start = time.monotonic()
    done, _ = _in_jail(layer, monkeypatch, endless, tmp_path, cap=1 << 16, kill_at_cap=True)
    assert done.truncated and not done.timed_out and done.exit_code != 0 and time.monotonic() - start < 10


@pytest.mark.parametrize("layer", LAYERS)
def test_the_network_is_reachable_only_when_asked_for(world: dict[str, object], layer: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    work = world["work"]
    assert isinstance(work, Path)
    code = (f"import socket\ntry:\n    print(socket.create_connection(('127.0.0.1', {world['port']}), timeout=2)"
            ".recv(100).decode())\nexcept OSError as exc:\n    print('blocked', type(exc).__name__)\n")
    done, _ = _in_jail(layer, monkeypatch, code, work)
    assert done.stdout.startswith(b"blocked"), done.stdout + done.stderr
    done, _ = _in_jail(layer, monkeypatch, code, work, jail_=jail.Jail(writable=(work,), network=True))
    assert done.stdout == b"SEALED-VALUE-42 from the host\n", done.stdout + done.stderr


@pytest.mark.parametrize("layer", LAYERS)
def test_readable_and_extra_folders_are_read_only_and_nothing_else_is_there(tmp_path: Path, layer: str,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    folders = {name: tmp_path / name for name in ("readable", "extra", "work", "unlisted")}
    for name, folder in folders.items():
        folder.mkdir()
        (folder / "in.txt").write_text(f"{name}\n")
    code = ("import sys\nfor folder in sys.argv[1:]:\n"
            "    try:\n        print(open(folder + '/in.txt').read().strip())\n"
            "    except OSError as exc:\n        print('unreadable', exc.errno)\n"
            "    try:\n        open(folder + '/out.txt', 'w').write('x')\n        print('wrote', folder)\n"
            "    except OSError as exc:\n        print('unwritable', exc.errno)\n")
    monkeypatch.setattr(jail, "strongest", lambda: layer)
    chosen = jail.Jail(readable=(folders["readable"],), writable=(folders["work"],), extra=(folders["extra"],))
    done, _ = chosen.run([sys.executable, "-c", code, *map(str, folders.values())], cwd=folders["work"],
                         env=base_env(folders["work"]), timeout=20)
    lines = done.stdout.decode().splitlines()
    assert lines[:2] == ["readable", "unwritable 30" if layer == jail.BUBBLEWRAP else "unwritable 13"], done.stderr
    assert lines[2] == "extra" and lines[3].startswith("unwritable")
    assert lines[4:6] == ["work", f"wrote {folders['work']}"]
    assert lines[6].startswith("unreadable") and lines[7].startswith("unwritable")
    assert not any((f / "out.txt").exists() for name, f in folders.items() if name != "work")


@pytest.mark.parametrize("layer", LAYERS)
def test_the_devices_a_run_may_use_and_no_disk(tmp_path: Path, layer: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """/dev/null is writable and /dev/urandom readable (many programs need them); /dev/shm is a private one under
    bubblewrap and closed under Landlock (it is the host's, shared by every run); no disk opens."""
    disks = [f"/dev/{n}" for n in sorted(os.listdir("/dev")) if stat.S_ISBLK(os.lstat(f"/dev/{n}").st_mode)]
    shm = f"/dev/shm/tri-jail-{os.getpid()}-{time.time_ns()}"
    code = (f"import os, sys\nopen('/dev/null', 'w').write('gone')\nprint(len(open('/dev/urandom', 'rb').read(16)))\n"
            f"try:\n    open({shm!r}, 'w').write('x')\n    print('shm', os.path.exists({shm!r}))\n"
            "except OSError:\n    print('shm closed')\n"
            "for disk in sys.argv[1:]:\n    try:\n        open(disk, 'rb').read(1)\n        print('READ', disk)\n"
            "    except OSError:\n        pass\n")
    monkeypatch.setattr(jail, "strongest", lambda: layer)
    try:
        done, _ = jail.Jail(writable=(tmp_path,)).run([sys.executable, "-c", code, *disks], cwd=tmp_path,
                                                       env=base_env(tmp_path), timeout=20)
        assert not Path(shm).exists()  # nothing of the run reached the host's /dev/shm
    finally:
        Path(shm).unlink(missing_ok=True)
    expected = b"16\nshm True\n" if layer == jail.BUBBLEWRAP else b"16\nshm closed\n"
    assert done.stdout == expected and done.exit_code == 0, done.stdout + done.stderr


@pytest.mark.parametrize("layer", LAYERS)
def test_processes_of_the_machine_are_out_of_sight(tmp_path: Path, layer: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """bubblewrap: a /proc of the run's own pid namespace; Landlock: no /proc at all."""
    code = ("import os\ntry:\n    pids = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())\n"
            "    mine = open('/proc/self/stat').read().split()[0] == str(os.getpid())\n"
            "    print(os.getpid() in pids, max(pids) < 10, mine)\n"
            "except OSError as exc:\n    print('no /proc', exc.errno)\n")
    done, _ = _in_jail(layer, monkeypatch, code, tmp_path)
    assert done.stdout == (b"True True True\n" if layer == jail.BUBBLEWRAP else b"no /proc 13\n"), done.stderr


@pytest.mark.parametrize("layer", LAYERS)
def test_a_write_within_the_cap_works_and_past_it_fails(tmp_path: Path, layer: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    code = ("open('small.bin', 'wb').write(b'x' * 1000)\nprint('small ok')\nf = open('big.bin', 'wb')\ntry:\n"
            "    f.write(b'x' * 5000)\n    f.close()\n    print('WROTE')\n"
            "except OSError as exc:\n    print('refused', exc.errno)\n")
    done, _ = _in_jail(layer, monkeypatch, code, tmp_path, file_cap=4096)
    assert done.stdout == b"small ok\nrefused 27\n", done.stdout + done.stderr  # EFBIG
    assert done.argv == (sys.executable, "-c", code)  # the command asked for, not prlimit's
    assert (tmp_path / "small.bin").stat().st_size == 1000 and (tmp_path / "big.bin").stat().st_size <= 4096


def test_what_the_wrapper_process_itself_is_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """bubblewrap gets only a PATH (the run's environment is set inside) and no grace: the pid namespace dies
    with it; the Landlock launcher gets the run's environment and 5 s to reap the run's descendants."""
    given: list[dict[str, object]] = []

    def spy(argv: list[str], **kwargs: object) -> jail.Completed:
        given.append(kwargs)
        return run(argv, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(jail, "run", spy)
    monkeypatch.setenv("TRI_TEST_TOKEN", TOKEN)
    path = f"{Path(sys.executable).parent}:/usr/bin:/bin"
    env = {"PATH": path, "HOME": str(tmp_path), "ANSWER": "42"}
    for layer, run_env in ((jail.BUBBLEWRAP, env), (jail.BUBBLEWRAP, {"HOME": str(tmp_path)}), (jail.LANDLOCK, env)):
        monkeypatch.setattr(jail, "strongest", lambda layer=layer: layer)
        done, _ = jail.Jail(writable=(tmp_path,)).run([sys.executable, "-c", "print('ran')"], cwd=tmp_path,
                                                       env=run_env, timeout=20)
        assert done.stdout == b"ran\n", done.stderr
    assert [(g["env"], g["grace"]) for g in given] == [({"PATH": path}, 0.0), ({"PATH": "/usr/bin:/bin"}, 0.0),
                                                       (env, 5.0)]


def test_bubblewrap_drops_every_capability_and_shares_no_network_unless_asked(tmp_path: Path) -> None:
    """Pinned where behaviour cannot show it unless run as root: ``--cap-drop ALL``; ``--share-net`` only on
    request (the network test shows it working)."""
    env = base_env(tmp_path)
    argv = jail.Jail().bubblewrap(["true"], tmp_path, env)
    pairs = list(itertools.pairwise(argv))
    assert ("--cap-drop", "ALL") in pairs and "--unshare-all" in argv and "--clearenv" in argv
    assert "--share-net" not in argv
    assert "--share-net" in jail.Jail(network=True).bubblewrap(["true"], tmp_path, env)
    assert argv[-2:] == ["--", "true"]
    # a driver beside a service is the jail's init: bubblewrap's own init would hold the case's pipes
    assert "--as-pid-1" not in argv
    first = jail.Jail(first_is_init=True).bubblewrap(["true"], tmp_path, env)
    assert "--as-pid-1" in first and first.index("--as-pid-1") < first.index("--")


class _Unmerged(type(Path())):  # type: ignore[misc]
    """A root whose /bin, /lib, /lib64 and /sbin are real folders (no usr-merge)."""

    def is_symlink(self) -> bool:
        return False if str(self) in {f"/{n}" for n in ("bin", "lib", "lib64", "sbin")} else super().is_symlink()


@pytest.mark.skipif(probe().bubblewrap is None, reason="no bubblewrap")
@pytest.mark.parametrize("merged", [True, False], ids=["usr-merged", "real folders"])
def test_bubblewrap_shows_bin_and_lib_as_the_host_has_them(tmp_path: Path, merged: bool,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A usr-merged host's /bin is a link into /usr inside too; a real folder is mounted read-only as itself."""
    if not merged:
        monkeypatch.setattr(jail, "Path", _Unmerged)
    expected = os.path.islink("/bin") if merged else False
    code = ("import os\nprint(os.path.islink('/bin'), os.path.isfile('/bin/sh'))\n"
            "try:\n    open('/bin/planted', 'w')\n    print('WROTE')\n"
            "except OSError as exc:\n    print('read-only', exc.errno)\n")
    done, _ = _in_jail(jail.BUBBLEWRAP, monkeypatch, code, tmp_path)
    assert done.stdout.decode().splitlines() == [f"{expected} True", "read-only 30"], done.stderr


@pytest.mark.skipif(landlock_abi() <= 0, reason="no Landlock")
def test_confined_confines_unless_told_it_only_reaps(world: dict[str, object]) -> None:
    work = world["work"]
    assert isinstance(work, Path)
    argv = [sys.executable, "-c", f"print(open({str(world['secret'])!r}).read())"]
    for confined, reached in ((jail.Jail(writable=(work,)).confined(argv, base_env(work)), False),
                              (jail.Jail(writable=(work,)).confined(argv, base_env(work), landlock=False), True)):
        done = run(confined, cwd=work, env=base_env(work), timeout=20)
        assert _got_it(done.stdout) is reached, done.stdout + done.stderr


def test_an_allowed_unsandboxed_run_is_not_confined_so_it_never_certifies(world: dict[str, object],
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """What ``--allow-unsandboxed`` means: only the reaper around the run, which sees what the machine holds."""
    monkeypatch.setattr(jail, "strongest", lambda: None)
    monkeypatch.setattr(jail.POLICY, "allow_unsandboxed", True)
    work = world["work"]
    assert isinstance(work, Path)
    done, layers = jail.Jail(writable=(work,)).run(["cat", str(world["secret"])], cwd=work, env=base_env(work),
                                                    timeout=20)
    assert layers == [] and done.stdout == b"SEALED-VALUE-42\n"


@pytest.mark.skipif(landlock_abi() <= 0, reason="no Landlock")
def test_the_landlock_launcher_ignores_the_runs_python_variables(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """``python -I``: a ``sitecustomize`` the role planted on PYTHONPATH would run in the launcher, unconfined."""
    (tmp_path / "sitecustomize.py").write_text("print('ESCAPED')\n")
    monkeypatch.setattr(jail, "strongest", lambda: jail.LANDLOCK)
    env = {**base_env(tmp_path), "PYTHONPATH": str(tmp_path), "PYTHONINSPECT": "1"}
    done, _ = jail.Jail(writable=(tmp_path,)).run(["echo", "ran"], cwd=tmp_path, env=env, timeout=20)
    assert (done.stdout, done.stderr, done.exit_code) == (b"ran\n", b"", 0)


@pytest.mark.parametrize("file_cap", [1024, None])
def test_without_prlimit_every_jailed_run_is_refused_not_run_unbounded(tmp_path: Path, file_cap: int | None,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The resource limits (and the write cap) are set by prlimit: without it no run starts, capped or not."""
    which = jail_limits.shutil.which
    monkeypatch.setattr(jail_limits.shutil, "which",
                        lambda name, *a, **k: None if name == "prlimit" else which(name, *a, **k))
    with pytest.raises(InfrastructureFailure) as err:
        jail.Jail(writable=(tmp_path,)).run(["true"], cwd=tmp_path, env=base_env(tmp_path), timeout=20,
                                            file_cap=file_cap)
    assert (err.value.message, err.value.hint, err.value.exit_code) == (
        "prlimit is missing: the resource limits of role-written code cannot be applied",
        "install util-linux (Debian: apt-get install util-linux)", 7)


@pytest.fixture
def no_layer(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A machine without bubblewrap and without Landlock (the probes run again, and again after the test)."""
    from tri_agent.sandbox import _confine

    which = jail.shutil.which
    monkeypatch.setattr(jail.shutil, "which", lambda name, *a, **k: None if name == "bwrap" else which(name, *a, **k))
    monkeypatch.setattr(_confine, "landlock_abi", lambda: 0)
    probe.cache_clear()
    jail.strongest.cache_clear()
    yield
    monkeypatch.undo()
    probe.cache_clear()
    jail.strongest.cache_clear()


def test_without_any_layer_the_refusal_says_why_and_what_to_do(tmp_path: Path, no_layer: None,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jail.POLICY, "allow_unsandboxed", False)
    with pytest.raises(InfrastructureFailure) as err:
        jail.Jail(writable=(tmp_path,)).run(["true"], cwd=tmp_path, env=base_env(tmp_path), timeout=20)
    assert (err.value.message, err.value.hint, err.value.exit_code) == (
        "no OS sandbox for role-written code on this machine (bwrap is not installed (Debian: apt-get install "
        "bubblewrap); Landlock with a private network namespace is not available either)",
        "install bubblewrap (Debian: apt-get install bubblewrap) or enable Landlock; --allow-unsandboxed runs "
        "anyway, and such a run can never certify", 7)


def test_landlock_without_a_private_network_is_no_layer(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where unprivileged user namespaces are off, Landlock would leave UDP and the host's interfaces open: the
    jail refuses rather than record a layer it does not have."""
    from tri_agent.sandbox import _confine

    which = jail.shutil.which
    monkeypatch.setattr(jail.shutil, "which", lambda name, *a, **k: None if name == "bwrap" else which(name, *a, **k))
    probe.cache_clear()
    jail.strongest.cache_clear()
    try:
        assert jail.strongest() == (jail.LANDLOCK if _confine.landlock_abi() > 0 else None)
        jail.strongest.cache_clear()
        monkeypatch.setattr(_confine, "private_network_works", lambda: False)
        assert jail.strongest() is None
    finally:
        monkeypatch.undo()
        probe.cache_clear()
        jail.strongest.cache_clear()


def test_the_confine_launcher_fails_when_it_cannot_get_a_private_network(tmp_path: Path) -> None:
    """Run in a user namespace that may create no more user namespaces: the run must not start at all."""
    if shutil.which("unshare") is None:
        pytest.skip("no unshare(1) here")
    from tri_agent.sandbox import _confine

    script = ("echo 0 > /proc/sys/user/max_user_namespaces && "
              f"{sys.executable} -I {_confine.__file__} --no-network --write {tmp_path} -- /bin/echo RAN")
    done = subprocess.run(["unshare", "-Ur", "--mount-proc", "-f", "-p", "sh", "-c", script], capture_output=True,
                          timeout=30)
    if b"Read-only file system" in done.stderr or b"Permission denied" in done.stderr:
        pytest.skip("this kernel does not let a user namespace lower its own limit")
    assert b"RAN" not in done.stdout and b"no private network namespace" in done.stderr, done.stderr


def test_configure_sets_the_policy_every_run_obeys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``configure`` is how the CLI allows unsandboxed runs and names the paths no jail may show, a path given
    through a link included."""
    monkeypatch.setattr(jail, "POLICY", jail.Policy())
    monkeypatch.setattr(jail, "strongest", lambda: None)
    monkeypatch.setattr(jail.tempfile, "tempdir", str(tmp_path / "elsewhere"))  # tools here are not in "/tmp"
    jail._roots.cache_clear()
    tools = (tmp_path / "tools" / "bin").resolve()
    tools.mkdir(parents=True)
    (tmp_path / "alias").symlink_to(tmp_path / "tools")
    jail.configure(allow_unsandboxed=True, protected=[tmp_path / "alias" / "bin" / "project"])
    assert jail.POLICY.protected == (tools / "project",)
    assert tools not in jail.tool_roots({"PATH": str(tools)})
    done, layers = jail.Jail(writable=(tmp_path,)).run(["true"], cwd=tmp_path, env=base_env(tmp_path), timeout=20)
    assert done.exit_code == 0 and layers == []
    jail.configure(allow_unsandboxed=False)
    assert jail.POLICY.protected == () and tools in jail.tool_roots({"PATH": str(tools)})
    with pytest.raises(InfrastructureFailure, match="no OS sandbox"):
        jail.Jail(writable=(tmp_path,)).run(["true"], cwd=tmp_path, env=base_env(tmp_path), timeout=20)


def test_a_path_entry_inside_the_state_or_temporary_folder_is_never_a_tool_root(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A target's own env may set PATH: an entry pointing into the state folder (where the sealed keys are) or
    the temporary folder (other runs' scratch) would be mounted into its jail."""
    state = tmp_path / "state"
    sealed = state / "tri-agent" / "runs" / "r" / "builds" / "b" / "sealed"
    sealed.mkdir(parents=True)
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    monkeypatch.setattr(jail.tempfile, "tempdir", str(tmp_path / "scratch"))
    (tmp_path / "scratch" / "other-run" / "bin").mkdir(parents=True)
    jail._roots.cache_clear()
    try:
        roots = jail.tool_roots({"PATH": f"{sealed}:{tmp_path / 'scratch' / 'other-run' / 'bin'}:/usr/bin"})
        assert not any(r.is_relative_to(state) or r.is_relative_to(tmp_path / "scratch") for r in roots), roots
    finally:
        jail._roots.cache_clear()


def test_tool_roots_without_a_path_are_the_interpreters_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No PATH: nothing but the Python that runs tri-agent; a relative entry means nothing inside the jail."""
    interpreters = jail.tool_roots({"PATH": ""})
    assert jail.tool_roots({}) == interpreters
    assert all(r in {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve()} for r in interpreters)
    (tmp_path / "bin").mkdir()
    monkeypatch.chdir(tmp_path)
    assert jail.tool_roots({"PATH": "bin:.:./bin"}) == interpreters


def test_odd_files_never_follow_a_link_into_a_folder(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "deep" / "x.txt").write_text("x\n")
    os.symlink(outside / "deep", outside / "deep" / "loop")
    (tmp_path / "out").mkdir()
    os.symlink(outside, tmp_path / "out" / "elsewhere")
    assert jail.odd_files(tmp_path / "out") == ["elsewhere"]


def test_written_counts_every_file_at_its_apparent_size(tmp_path: Path) -> None:
    (tmp_path / "a" / "deep").mkdir(parents=True)
    (tmp_path / "a" / "one.txt").write_bytes(b"x" * 10)
    (tmp_path / "a" / "deep" / "two.txt").write_bytes(b"y" * 20)
    with open(tmp_path / "a" / "sparse.bin", "wb") as f:
        f.truncate(1 << 20)
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "three.txt").write_bytes(b"z" * 3)
    os.symlink(tmp_path / "a", tmp_path / "b" / "to-a")  # a link to a folder: neither entered nor counted
    assert jail.written([tmp_path / "a", tmp_path / "b"]) == 10 + 20 + (1 << 20) + 3
    assert jail.written([tmp_path / "b"]) == 3 and jail.written([]) == 0


def test_refused_names_why_a_folder_may_not_be_shown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rule of a target's ``readable`` folders, on its own: each reason, and a folder that passes."""
    state, project, tool = tmp_path / "state", tmp_path / "project", Path("/usr/share")
    state.mkdir()
    project.mkdir()
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    monkeypatch.setattr(jail, "POLICY", jail.Policy(protected=(project,)))
    (tmp_path / "file").write_text("")
    top = Path(tempfile.gettempdir()).resolve()
    assert jail.refused(Path("usr/share")) == "it is not an absolute path"
    assert jail.refused(tmp_path / "file") == "it is no folder"
    assert jail.refused(tmp_path / "absent") == "it is no folder"
    assert jail.refused(project) == f"it would show a folder inside {project.resolve()}, which no run may see"
    assert jail.refused(state) == f"it would show a folder inside {state.resolve()}, which no run may see"
    assert jail.refused(top) == f"it would show a folder inside {top}, which no run may see"
    assert jail.refused(tool) is None
    monkeypatch.setattr(jail, "POLICY", jail.Policy(protected=(tool / "doc",)))
    assert jail.refused(tool) == f"it would show {tool / 'doc'}, which no run may see"  # holds a protected folder
    monkeypatch.setattr(jail, "POLICY", jail.Policy())
    monkeypatch.setenv("XDG_STATE_HOME", str(top / "state"))
    home = Path.home().resolve()
    if not home.parent.is_relative_to(top) and not top.is_relative_to(home.parent):
        assert jail.refused(home.parent) == f"it would show {home}, which no run may see"
    assert str(jail.refused(Path("/"))).startswith("it would show /")


def test_the_state_home_defaults_to_the_xdg_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert jail._sealed_off(())[0] == (tmp_path / ".local" / "state").resolve()


def test_odd_files_lists_every_link_even_one_that_stays_inside(tmp_path: Path) -> None:
    """A run's output is never read through a link, not even a relative one to a sibling (a tree a role wrote,
    ``require_plain``, may keep those)."""
    (tmp_path / "a.txt").write_text("a")
    (tmp_path / "b.txt").symlink_to("a.txt")
    assert jail.odd_files(tmp_path) == ["b.txt"]
    jail.require_plain(tmp_path, "the tree")
