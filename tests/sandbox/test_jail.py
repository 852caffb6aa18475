"""The jail around role-written code: every attack class is shown working without it, and getting nothing
with each layer (bubblewrap, Landlock); the tree dies on time; output and writes are capped."""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import alive

import tri_agent.sandbox._jail as jail
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
for root, dirs, files in os.walk('/tmp'):
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
    other = Path(os.environ.get("TMPDIR", "/tmp")) / f"tri-other-run-{os.getpid()}"
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
    assert b"wrote" not in done.stdout
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
    path = ":".join(str(home / f) for f in (".cargo/bin", ".local/bin", ".pyenv/shims", "venv/bin"))
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
