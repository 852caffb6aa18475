"""Drivers: the scripted driver replays through the tool box; the command driver's status taxonomy."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tri_agent.drivers._command import CommandDriver
from tri_agent.drivers._episode import STATUSES, Episode, Limits, mask
from tri_agent.drivers._scripted import ScriptedDriver
from tri_agent.isolation._contract import load_charter
from tri_agent.isolation._tools import ToolBox

FAKE_AGENT = r'''
import json, os, sys, time, subprocess
req = json.loads(sys.stdin.read())
mode = req["task"]
if mode == "ok":  # a tester reaches the engine's tools over MCP, as a real one must
    import asyncio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def tools():
        server = StdioServerParameters(command=req["mcp"]["command"][0], args=req["mcp"]["command"][1:])
        async with stdio_client(server) as (r, w), ClientSession(r, w) as session:
            await session.initialize()
            return [t.name for t in (await session.list_tools()).tools]

    assert asyncio.run(tools()) == req["mcp"]["tools"]
if mode == "ticket":  # a judge files a ticket through the engine's file_ticket, over MCP
    import asyncio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def ticket():
        server = StdioServerParameters(command=req["mcp"]["command"][0], args=req["mcp"]["command"][1:])
        async with stdio_client(server) as (r, w), ClientSession(r, w) as session:
            await session.initialize()
            await session.list_tools()
            args = {"route": "builder", "title": "keys keep spaces", "body": "trim them", "cases": ["c-1"]}
            return (await session.call_tool("file_ticket", args)).content[0].text

    print(json.dumps({"protocol": req["protocol"], "status": "ok", "summary": asyncio.run(ticket())}))
base = {"protocol": "tri-agent-executor/1", "model": "fake-1", "usage": {"input_tokens": 7, "output_tokens": 3},
        "cost_usd": 0.01}
if mode == "ok":
    open("exam/judge/seen.json", "w").write(json.dumps({k: req[k] for k in ("role", "tools", "workspace")}))
    print(json.dumps({**base, "status": "ok", "summary": "key " + os.environ.get("ROLE_KEY", "none")}))
elif mode == "blocked":
    print(json.dumps({**base, "status": "blocked", "reason": "the spec contradicts itself"}))
elif mode == "crash":
    sys.exit("Traceback: boom")
elif mode == "hang":
    subprocess.Popen(["sleep", "60"]); time.sleep(60)
elif mode == "garbage":
    print("I think the answer is 42")
elif mode == "oversize":
    print("x" * 5000)
elif mode == "old-protocol":
    print(json.dumps({**base, "protocol": "tri-agent-executor/0", "status": "ok"}))
elif mode == "simulated":  # an agent that replays a recording says so, and must be believed
    print(json.dumps({**base, "status": "blocked", "simulation": True, "reason": "replayed"}))
elif mode == "weird-status":
    print(json.dumps({**base, "status": "done"}))
elif mode in ("fill-home", "sparse-home"):  # past the write cap, outside the audited workspace
    if mode == "sparse-home":
        open(os.path.join(os.environ["HOME"], "big"), "wb").truncate(100 << 30)
    else:
        for i in range(3):
            open(os.path.join(os.environ["HOME"], f"f{i}"), "wb").write(b"x" * 60000)
    print(json.dumps({**base, "status": "ok"}))
'''


@pytest.fixture
def episode_for(tmp_path: Path):  # type: ignore[no-untyped-def]
    charter = load_charter("tester")
    ws = tmp_path / "ws"
    (ws / "exam" / "judge").mkdir(parents=True)
    (tmp_path / "agent.py").write_text(FAKE_AGENT)

    def make(task: str, seconds: float = 20, write_bytes: int = 64 << 20) -> Episode:
        return Episode(charter, task, ToolBox(charter.contract, ws),
                       Limits(seconds=seconds, output_bytes=2048, write_bytes=write_bytes))

    return make


@pytest.mark.parametrize("task,status", [
    ("ok", "ok"), ("blocked", "blocked"), ("crash", "runtime_failure"), ("garbage", "malformed_output"),
    ("oversize", "oversized_output"), ("old-protocol", "protocol_mismatch"), ("weird-status", "malformed_output"),
])
def test_command_driver_status_taxonomy(tmp_path: Path, episode_for, task: str, status: str) -> None:  # type: ignore[no-untyped-def]
    driver = CommandDriver([sys.executable, str(tmp_path / "agent.py")], credentials={"ROLE_KEY": "k-1234567890"},
                           sandbox=False)
    result = driver.run(episode_for(task))
    assert result.status == status and result.valid is STATUSES[status] and not result.simulation
    assert result.attempts[0].driver == "command"
    if task == "ok":
        assert result.summary == "key [masked:ROLE_KEY]"  # the secret never leaves the driver
        assert result.attempts[0].usage.input_tokens == 7 and result.attempts[0].model == "fake-1"
        seen = json.loads((tmp_path / "ws" / "exam" / "judge" / "seen.json").read_text())
        assert seen["role"] == "tester" and "run_case" in seen["tools"]
    if task == "blocked":
        assert result.reason == "the spec contradicts itself"


def test_an_agent_that_reports_a_simulation_makes_the_episode_one(tmp_path: Path, episode_for) -> None:  # type: ignore[no-untyped-def]
    driver = CommandDriver([sys.executable, str(tmp_path / "agent.py")], sandbox=False)
    result = driver.run(episode_for("simulated"))
    assert (result.status, result.simulation) == ("blocked", True)
    assert driver.run(episode_for("blocked")).simulation is False


def test_command_driver_timeout_and_spawn_failure(tmp_path: Path, episode_for) -> None:  # type: ignore[no-untyped-def]
    driver = CommandDriver([sys.executable, str(tmp_path / "agent.py")], sandbox=False)
    assert driver.run(episode_for("hang", seconds=1)).status == "timeout"
    missing = CommandDriver([str(tmp_path / "no-such-agent")], sandbox=False)
    assert missing.run(episode_for("ok")).status == "spawn_failure"


def test_command_driver_in_the_sandbox_sees_only_its_workspace(tmp_path: Path, episode_for) -> None:  # type: ignore[no-untyped-def]
    from tri_agent.sandbox._bubblewrap import probe

    if probe().bubblewrap is None:
        pytest.skip(f"no working bubblewrap here: {probe().reason}")
    driver = CommandDriver([sys.executable, str(tmp_path / "agent.py")])
    # the agent script itself lives outside the workspace: inside the sandbox it does not exist
    assert driver.run(episode_for("ok")).status == "runtime_failure"
    (tmp_path / "ws" / "agent.py").write_text(FAKE_AGENT)
    inside = CommandDriver([sys.executable, str(tmp_path / "ws" / "agent.py")])
    result = inside.run(episode_for("ok"))
    assert result.status == "ok", result.reason
    seen = json.loads((tmp_path / "ws" / "exam" / "judge" / "seen.json").read_text())
    assert seen["workspace"] == str((tmp_path / "ws").resolve()) and inside.layers == ["bubblewrap"]


@pytest.mark.parametrize("task", ["fill-home", "sparse-home"])
def test_what_an_agent_writes_into_its_home_is_capped(tmp_path: Path, episode_for, task: str) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "ws" / "agent.py").write_text(FAKE_AGENT)
    driver = CommandDriver([sys.executable, str(tmp_path / "ws" / "agent.py")])
    result = driver.run(episode_for(task, write_bytes=1 << 17))
    if task == "sparse-home":  # no single file may grow past the cap, live: the agent's write fails
        assert (result.status, result.reason) == ("runtime_failure", "exit 1; OSError: [Errno 27] File too large")
    else:  # many files under it: counted when the episode ends
        assert result.status == "oversized_output" and "into its home folder, past the 131072-byte cap" in str(
            result.reason)
    assert driver.run(episode_for("blocked", write_bytes=1 << 17)).status == "blocked"


def test_without_bubblewrap_a_command_agent_runs_under_landlock_and_says_so(  # type: ignore[no-untyped-def]
        tmp_path: Path, episode_for, monkeypatch: pytest.MonkeyPatch) -> None:
    import tri_agent.sandbox._jail as jail
    from tri_agent.sandbox._confine import landlock_abi

    if landlock_abi() <= 0:
        pytest.skip("no Landlock on this kernel")
    monkeypatch.setattr(jail, "strongest", lambda: jail.LANDLOCK)  # as where bubblewrap cannot start
    secret = tmp_path / "outside.txt"
    secret.write_text("SEALED\n")
    (tmp_path / "ws" / "agent.py").write_text(FAKE_AGENT.replace(
        'if mode == "ok":', f'try:\n    open({str(secret)!r}).read(); mode = "garbage"\nexcept OSError:\n    pass\n'
                            'if mode == "ok":'))
    driver = CommandDriver([sys.executable, str(tmp_path / "ws" / "agent.py")])
    result = driver.run(episode_for("ok"))
    assert result.status == "ok", result.reason  # it could not read the file outside its workspace
    assert driver.layers == ["landlock"]


def test_a_cli_judge_files_a_ticket_over_mcp(tmp_path: Path) -> None:
    charter = load_charter("judge")
    ws = tmp_path / "judge-ws"
    ws.mkdir()
    (tmp_path / "agent.py").write_text(FAKE_AGENT)
    episode = Episode(charter, "ticket", ToolBox(charter.contract, ws), Limits(seconds=60))
    result = CommandDriver([sys.executable, str(tmp_path / "agent.py")], sandbox=False).run(episode)
    assert result.status == "ok" and result.summary.startswith("filed t-") and result.tool_calls == 1
    [ticket] = (ws / "exam" / "tickets" / "builder").glob("t-*.md")
    assert "cases: c-1" in ticket.read_text()


def test_scripted_driver_replays_through_the_tool_box(tmp_path: Path, episode_for) -> None:  # type: ignore[no-untyped-def]
    script = tmp_path / "script.yaml"
    script.write_text("""schema_version: 1
episodes:
  - role: tester
    round: 1
    calls:
      - {tool: write, args: {path: exam/judge/notes.md, content: "ran everything\\n"}}
      - {tool: read, args: {path: ../secrets.txt}}
    submit: {summary: ran every case}
""")
    result = ScriptedDriver(script).run(episode_for("ignored"))
    assert result.status == "ok" and result.simulation and result.summary == "ran every case"
    assert (tmp_path / "ws" / "exam" / "judge" / "notes.md").read_text() == "ran everything\n"
    assert result.breach_attempts == ["path '../secrets.txt' leaves your workspace"]


def test_mask_replaces_only_real_secrets() -> None:
    assert mask("token sk-abcdefgh and x", {"KEY": "sk-abcdefgh", "SHORT": "x"}) == "token [masked:KEY] and x"


def test_run_budget_caps_every_episode_and_stops_the_run() -> None:
    from tri_agent import InfrastructureFailure
    from tri_agent.drivers._episode import Attempt, EpisodeResult, RunBudget

    budget = RunBudget(1.0)
    assert budget.limits_for(Limits(budget_usd=2.0)).budget_usd == 1.0
    spent = EpisodeResult(role="tester", status="ok", simulation=False,
                          attempts=[Attempt(driver="x", model="m", status="ok", cost_usd=0.75, cost_basis="t",
                                            seconds=1)])
    budget.charge(spent)
    assert budget.limits_for(Limits(budget_usd=2.0)).budget_usd == pytest.approx(0.25)
    budget.charge(spent)
    with pytest.raises(InfrastructureFailure, match="budget of \\$1 is spent"):
        budget.limits_for(Limits())


def test_the_mcp_bridge_answers_raw_json_rpc_through_the_relay() -> None:
    from tri_agent.drivers._mcp import self_check

    assert self_check("tester") == "works (tester: list, read, run_case, search, submit, write)"
    assert self_check("builder") == "works (builder: list, read, search, submit, write)"  # no engine tool: absent
