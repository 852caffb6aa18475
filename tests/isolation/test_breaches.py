"""The breach battery: every way a role might reach beyond its contract is blocked or detected."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tri_agent import PolicyViolation
from tri_agent.isolation._contract import load_charter
from tri_agent.isolation._tools import WRITE_CAP, ToolBox, ToolError
from tri_agent.isolation._workspace import assemble, audit, harvest, quarantine, snapshot
from tri_agent.sandbox._bubblewrap import probe, wrap
from tri_agent.sandbox._process import base_env, run

SECRET = "sk-secret-of-another-role-0123456789"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    p = tmp_path / "project"
    for rel, text in {
        "spec/spec.md": "the spec\n", "target/app.py": "print('impl')\n", "exam/TESTPLAN.md": "plan\n",
        "exam/oracle/oracle.py": "answers\n", "builds/r1/visible/cases.jsonl": '{"case": "c-00000001"}\n',
        "builds/r1/sealed/answers.jsonl": SECRET + "\n", "CLAUDE.md": "agent instructions\n",
        ".git/HEAD": "ref: refs/heads/main\n", ".claude/settings.json": "{}\n", "exam/judge/.keep": "",
    }.items():
        (p / rel).parent.mkdir(parents=True, exist_ok=True)
        (p / rel).write_text(text)
    os.symlink(p / "builds" / "r1" / "sealed" / "answers.jsonl", p / "exam" / "judge" / "shortcut")
    return p


def _tester(project: Path, tmp: Path) -> tuple[ToolBox, Path]:
    contract = load_charter("tester").contract
    ws = tmp / "ws"
    assemble(contract, project, ws)
    return ToolBox(contract, ws), ws


def test_workspace_holds_only_what_the_contract_lets_the_tester_read(project: Path, tmp_path: Path) -> None:
    contract = load_charter("tester").contract
    record = assemble(contract, project, tmp_path / "ws")
    files = sorted(p.relative_to(tmp_path / "ws").as_posix() for p in (tmp_path / "ws").rglob("*") if p.is_file())
    assert files == ["builds/r1/visible/cases.jsonl", "exam/TESTPLAN.md", "exam/judge/.keep"]
    assert {"CLAUDE.md", ".git/HEAD", ".claude/settings.json"} <= set(record.stripped)
    assert record.symlinks_skipped == ["exam/judge/shortcut"]
    assert SECRET not in "".join(p.read_text() for p in (tmp_path / "ws").rglob("*") if p.is_file())


def test_hard_links_and_special_files_are_never_copied_into_a_workspace(project: Path, tmp_path: Path) -> None:
    os.link(project / "builds" / "r1" / "sealed" / "answers.jsonl", project / "exam" / "judge" / "answers.jsonl")
    os.mkfifo(project / "exam" / "judge" / "pipe")
    record = assemble(load_charter("tester").contract, project, tmp_path / "ws")
    assert record.refused == ["exam/judge/answers.jsonl", "exam/judge/pipe"]
    assert not (tmp_path / "ws" / "exam" / "judge" / "answers.jsonl").exists()


@pytest.mark.parametrize("call", [
    ("read", {"path": "../project/builds/r1/sealed/answers.jsonl"}),
    ("read", {"path": "/etc/hostname"}),
    ("read", {"path": "/proc/self/root/etc/hostname"}),
    ("read", {"path": "exam/judge/../../../project/target/app.py"}),
    ("list", {"path": ".."}),
    ("write", {"path": "../escape.txt", "content": "x"}),
    ("write", {"path": "builds/r1/visible/cases.jsonl", "content": "forged"}),
    ("write", {"path": "target/app.py", "content": "pwned"}),
    ("score", {}),
])
def test_tool_escapes_are_refused_and_recorded(project: Path, tmp_path: Path, call: tuple[str, dict[str, str]]) -> None:
    box, ws = _tester(project, tmp_path)
    before = snapshot(ws)
    with pytest.raises(ToolError):
        box.call(*call)
    assert box.attempts or call[0] == "score"
    assert not (tmp_path / "escape.txt").exists()
    assert audit(load_charter("tester").contract, before, snapshot(ws)) == []
    assert (project / "target" / "app.py").read_text() == "print('impl')\n"


def test_a_symlink_planted_in_the_workspace_is_not_followed(project: Path, tmp_path: Path) -> None:
    box, ws = _tester(project, tmp_path)
    os.symlink(project / "builds" / "r1" / "sealed", ws / "exam" / "judge" / "door")
    with pytest.raises(ToolError, match="symlink"):
        box.call("read", {"path": "exam/judge/door/answers.jsonl"})
    with pytest.raises(ToolError, match="symlink"):
        box.call("write", {"path": "exam/judge/door/answers.jsonl", "content": "forged"})
    assert (project / "builds" / "r1" / "sealed" / "answers.jsonl").read_text() == SECRET + "\n"


def test_allowed_tools_work_and_writes_are_capped(project: Path, tmp_path: Path) -> None:
    box, _ = _tester(project, tmp_path)
    assert "builds/r1/visible/cases.jsonl" in box.call("list", {})
    assert box.call("write", {"path": "exam/judge/notes.md", "content": "all cases ran\n"}).startswith("wrote")
    assert "exam/judge/notes.md:1: all cases ran" in box.call("search", {"pattern": "cases ran"})
    with pytest.raises(ToolError, match="cap"):
        box.call("write", {"path": "exam/judge/big.txt", "content": "x" * (WRITE_CAP + 1)})


def test_write_audit_catches_changes_the_contract_forbids(project: Path, tmp_path: Path) -> None:
    contract = load_charter("tester").contract
    _, ws = _tester(project, tmp_path)
    before = snapshot(ws)
    (ws / "exam" / "judge" / "result.md").write_text("ok\n")  # allowed
    (ws / "exam" / "TESTPLAN.md").write_text("weakened plan\n")  # a read-only input
    (ws / "target").mkdir()
    (ws / "target" / "app.py").write_text("forged\n")  # outside the writable globs
    os.symlink("/etc", ws / "exam" / "judge" / "link")  # a planted link
    kinds = {(b.path, b.kind) for b in audit(contract, before, snapshot(ws))}
    assert kinds == {("exam/TESTPLAN.md", "changed-read-only-input"), ("target/app.py", "write-outside-writable"),
                     ("exam/judge/link", "planted-link-or-special-file")}
    with pytest.raises(PolicyViolation, match="breached its contract") as err:
        harvest(contract, before, snapshot(ws), ws, project)
    assert err.value.exit_code == 5
    assert (project / "exam" / "TESTPLAN.md").read_text() == "plan\n"
    assert not (project / "exam" / "judge" / "result.md").exists()
    kept = quarantine(ws, tmp_path / "quarantine", "tester-r1")
    assert (kept / "exam" / "TESTPLAN.md").read_text() == "weakened plan\n" and not ws.exists()


def test_a_hard_link_or_a_flood_of_bytes_is_never_harvested(project: Path, tmp_path: Path) -> None:
    contract = load_charter("tester").contract
    _, ws = _tester(project, tmp_path)
    outside = tmp_path / "key.jsonl"
    outside.write_text("sealed\n")
    before = snapshot(ws)
    os.link(outside, ws / "exam" / "judge" / "key.jsonl")  # a second name for a file outside the workspace
    (ws / "exam" / "judge" / "big.bin").write_bytes(b"x" * (200 << 10))
    kinds = {(b.path, b.kind) for b in audit(contract, before, snapshot(ws), write_cap=64 << 10)}
    assert kinds == {("exam/judge/key.jsonl", "planted-link-or-special-file"), (".", "past-write-cap")}
    with pytest.raises(PolicyViolation, match="breached its contract"):
        harvest(contract, before, snapshot(ws), ws, project, write_cap=64 << 10)
    assert not (project / "exam" / "judge" / "big.bin").exists()


def test_a_clean_run_is_harvested(project: Path, tmp_path: Path) -> None:
    contract = load_charter("tester").contract
    _, ws = _tester(project, tmp_path)
    before = snapshot(ws)
    (ws / "exam" / "judge" / "result.md").write_text("ok\n")
    assert harvest(contract, before, snapshot(ws), ws, project) == ["exam/judge/result.md"]
    assert (project / "exam" / "judge" / "result.md").read_text() == "ok\n"


def test_children_never_inherit_another_roles_credentials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    env = base_env(tmp_path, {"ROLE_TOKEN": "mine"})
    done = run([sys.executable, "-c", "import os; print(sorted(os.environ))"], cwd=tmp_path, env=env, timeout=30)
    assert SECRET not in done.stdout.decode() and "ANTHROPIC_API_KEY" not in done.stdout.decode()
    assert "ROLE_TOKEN" in done.stdout.decode() and env["HOME"] == str(tmp_path)


def test_output_past_the_cap_is_cut_and_flagged(tmp_path: Path) -> None:
    done = run([sys.executable, "-c", "print('x' * 3_000_000)"], cwd=tmp_path, env=base_env(tmp_path), timeout=30,
               cap=1000)
    assert done.truncated and len(done.stdout) == 1000


SANDBOX = probe()


@pytest.mark.skipif(SANDBOX.bubblewrap is None, reason=f"no working bubblewrap here: {SANDBOX.reason}")
def test_in_the_sandbox_a_planted_secret_is_unreadable_even_from_a_subprocess(project: Path, tmp_path: Path) -> None:
    _, ws = _tester(project, tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    secret = project / "builds" / "r1" / "sealed" / "answers.jsonl"
    script = (f"import subprocess, sys\n"
              f"child = subprocess.run(['cat', {str(secret)!r}], capture_output=True, text=True)\n"
              f"print('child:', child.returncode, child.stdout.strip())\n"
              f"try:\n    print('direct:', open({str(secret)!r}).read())\nexcept OSError as e:\n"
              f"    print('direct: refused', type(e).__name__)\n"
              f"open('exam/judge/out.txt', 'w').write('written inside')\n")
    argv = wrap([sys.executable, "-c", script], ws, home, {"ROLE_TOKEN": "mine"})
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert SECRET not in done.stdout and "direct: refused FileNotFoundError" in done.stdout
    assert "child: 1" in done.stdout
    assert (ws / "exam" / "judge" / "out.txt").read_text() == "written inside"


@pytest.mark.skipif(SANDBOX.bubblewrap is None, reason=f"no working bubblewrap here: {SANDBOX.reason}")
def test_the_sandbox_environment_is_cleared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    (tmp_path / "ws").mkdir()
    (tmp_path / "home").mkdir()
    argv = wrap(["/bin/sh", "-c", "env"], tmp_path / "ws", tmp_path / "home", {"ROLE_TOKEN": "mine"})
    out = subprocess.run(argv, capture_output=True, text=True, timeout=60).stdout
    assert SECRET not in out and "ROLE_TOKEN=mine" in out and "HOME=/home/role" in out


def test_the_judge_files_tickets_only_where_its_contract_allows(project: Path, tmp_path: Path) -> None:
    contract = load_charter("judge").contract
    ws = tmp_path / "judge-ws"
    assemble(contract, project, ws)
    box = ToolBox(contract, ws, engine={"score": lambda _args: "PASS answers 3/3"})
    assert box.call("score", {}) == "PASS answers 3/3"
    filed = box.call("file_ticket", {"route": "builder", "title": "counts wrong", "body": "case c-1 shows it",
                                     "cases": ["c-00000001"]})
    ticket = next((ws / "exam" / "tickets" / "builder").glob("t-*.md"))
    assert filed.startswith("filed t-") and "counts wrong" in ticket.read_text()
    with pytest.raises(ToolError, match="no round is running"):
        box.call("rerun", {"sample": 2})
    with pytest.raises(ToolError, match="may not write"):
        box.call("write", {"path": "target/app.py", "content": "judge edits code"})
