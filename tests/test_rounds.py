"""accept end to end on toy-grades with scripted roles: red, fixed, three greens, final, ACCEPTED;
interrupted and resumed it leaves the same trail; any tampering with a round is caught."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import TOY

from tri_agent._evidence import EvidenceStore
from tri_agent._rounds import accept, acceptance_json, report_html, scoreboard

GIT = ["git", "-c", "user.name=tri-agent-test", "-c", "user.email=test@invalid"]


def _project(dest: Path) -> Path:
    shutil.copytree(TOY, dest, ignore=shutil.ignore_patterns("builds", "runs", "mutation", "evidence", "SCOREBOARD.md"))
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "baseline"]):
        subprocess.run([*GIT, *args], cwd=dest, check=True, capture_output=True)
    return dest


@pytest.fixture(scope="module")
def accepted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = _project(tmp_path_factory.mktemp("acc") / "toy")
    decision, progress = accept(project)
    assert decision == "accepted" and progress.rounds == 5
    return project


def test_the_toy_trail(accepted: Path) -> None:
    store = EvidenceStore(accepted / "evidence")
    assert store.verify_trail() == [] and [e.name for e in store.entries()][-1] == "round-0005"
    board = scoreboard(store)
    lines = [x for x in board.splitlines() if x.startswith("| ")][1:]
    assert "| red |" in lines[0] and all("GREEN" in x for x in lines[1:])
    assert "drift: average" in lines[0] and "unexpected" in lines[0]  # both planted bugs, round 1
    assert "(final)" in lines[-1] and "can never certify" in board
    first = accepted / "evidence" / "records" / "round-0001"
    assert len(list((first / "tickets").glob("builder-*.md"))) >= 2
    assert "100% of 9" in board.splitlines()[4]  # round 1 calibrated (differentially) with the menu


def test_tampering_with_a_round_is_caught(accepted: Path, tmp_path: Path) -> None:
    copy = tmp_path / "evidence"
    shutil.copytree(accepted / "evidence", copy)
    score = copy / "records" / "round-0001" / "score.json"
    score.write_text(score.read_text().replace('"verdict": "fail"', '"verdict": "pass"'))
    assert any("round-0001/score.json" in f.where for f in EvidenceStore(copy).verify_trail())


def test_killed_and_resumed_gives_the_same_trail(accepted: Path, tmp_path: Path) -> None:
    project = _project(tmp_path / "toy")
    cli = [sys.executable, "-m", "tri_agent", "accept", str(project)]
    proc = subprocess.Popen(cli, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 300
    while not (project / "evidence" / "records" / "round-0002").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done = subprocess.run([*cli, "--resume"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert EvidenceStore(project / "evidence").digest() == EvidenceStore(accepted / "evidence").digest()


def test_reports_render_offline_and_deterministically(accepted: Path) -> None:
    import json

    store = EvidenceStore(accepted / "evidence")
    page = report_html(store)
    assert "<svg" in page and "<script" not in page and "src=" not in page and "href=" not in page
    assert page.count("<rect") == 5 and "can never certify" in page
    data = json.loads(acceptance_json(store))
    assert data["trail_digest"] == store.digest() and [r["green"] for r in data["rounds"]] == [False] + [True] * 4
    assert acceptance_json(store) == acceptance_json(store)


def test_in_session_builder_stops_with_tickets_and_resumes_after_a_commit(tmp_path: Path) -> None:
    from tri_agent import BuilderTurn

    project = _project(tmp_path / "toy")
    config = project / "acceptance.yaml"
    config.write_text(config.read_text().replace("builder: scripted", "builder: in-session"))
    subprocess.run([*GIT, "commit", "-qam", "the session plays the builder"], cwd=project, check=True)
    with pytest.raises(BuilderTurn, match="round 2 waits for the builder") as err:
        accept(project)
    assert err.value.exit_code == 1
    assert list((project / "exam" / "tickets" / "builder").glob("t-*.md"))
    with pytest.raises(BuilderTurn):
        accept(project, resume=True)  # nothing committed yet: still the builder's turn
    subprocess.run(["git", "apply", "-p1", "../fix.patch"], cwd=project / "target", check=True)
    subprocess.run([*GIT, "commit", "-qam", "fix: HALF_UP, trimmed keys"], cwd=project, check=True)
    decision, progress = accept(project, resume=True)
    assert decision == "accepted" and progress.rounds == 5


def _episodes(moves):  # type: ignore[no-untyped-def]
    """A fake-model player that knows which episode (1, 2, ...) and turn it is in."""
    state = {"episode": 0}

    def player(results: list[str]):  # type: ignore[no-untyped-def]
        turn = results.count("\x00turn")
        if turn == 0:
            state["episode"] += 1
        return moves(state["episode"], turn, [r for r in results if r != "\x00turn"])

    return player


def test_accept_with_every_role_played_by_a_model_through_the_real_sdks(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from tri_agent._fakes import FakeModelServer, Move

    fixed = (TOY / "scripted" / "fixed-grades.py").read_text()

    def submit_only(_e: int, _t: int, _r: list[str]) -> Move:
        return Move(calls=[("submit", {"summary": "done"})])

    def builder(episode: int, turn: int, _r: list[str]) -> Move:
        if episode >= 2 and turn == 0:
            return Move(calls=[("write", {"path": "target/grades.py", "content": fixed})])
        return Move(calls=[("submit", {"summary": "fixed" if episode >= 2 else "as built"})])

    def tester(_e: int, turn: int, results: list[str]) -> Move:
        if turn == 0:
            return Move(calls=[("list", {"path": "builds"})])
        if turn == 1:
            latest = sorted(x for x in results[-1].splitlines() if x.endswith("cases.jsonl"))[-1]
            return Move(calls=[("read", {"path": latest})])
        if turn == 2:
            cases = [json.loads(x)["case"] for x in results[-1].splitlines() if x.startswith("{")]
            return Move(calls=[("run_case", {"case": c}) for c in cases])
        return Move(calls=[("submit", {"summary": f"ran {len(results) - 2} cases"})])

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-fake-0123456789")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-oai-fake-0123456789")
    servers = {role: FakeModelServer(_episodes(player)) for role, player in
               (("examiner", submit_only), ("builder", builder), ("tester", tester), ("judge", submit_only))}
    project = _project(tmp_path / "toy")
    config = project / "acceptance.yaml"
    text = config.read_text()
    text = text.replace("drivers: {examiner: scripted, builder: scripted, tester: scripted, judge: scripted}",
                        "drivers: {examiner: openai, builder: openai, tester: anthropic, judge: openai}")
    text += "models:\n" + "".join(
        f"  {role}: {{model: fake-model-1, base_url: '{s.base_url}{'' if role == 'tester' else '/v1'}'"
        f"{', api: chat' if role in ('examiner', 'judge') else ''}}}\n" for role, s in servers.items())
    config.write_text(text)
    subprocess.run([*GIT, "commit", "-qam", "model-driven roles"], cwd=project, check=True)
    for s in servers.values():
        s.__enter__()
    try:
        decision, progress = accept(project)
    finally:
        for s in servers.values():
            s.__exit__(None, None, None)
    assert decision == "accepted" and progress.rounds == 5
    board = scoreboard(EvidenceStore(project / "evidence"))
    assert "can never certify" not in board  # no scripted role: this trail is not a simulation
    assert {r["path"] for r in servers["tester"].requests} == {"/v1/messages"}
    assert {r["path"] for r in servers["examiner"].requests} == {"/v1/chat/completions"}
    assert {r["path"] for r in servers["builder"].requests} == {"/v1/responses"}
    assert "sk-ant-fake" not in "".join(p.read_text() for p in (project / "transcripts").glob("*.jsonl"))


def test_a_tester_that_skips_cases_makes_every_round_red_until_the_fuse(tmp_path: Path) -> None:
    from tri_agent import Escalation

    project = _project(tmp_path / "toy")
    script = project / "scripted" / "roles.yaml"
    script.write_text(script.read_text().replace("{tool: run_case, args: {}, each_case: true}",
                                                 "{tool: list, args: {}}"))
    subprocess.run([*GIT, "commit", "-qam", "a lazy tester"], cwd=project, check=True)
    with pytest.raises(Escalation, match="fix attempts"):
        accept(project)
    board = scoreboard(EvidenceStore(project / "evidence"))
    assert "the tester skipped" in board and "GREEN" not in board


def test_sealed_values_in_what_the_builder_wrote_are_a_leak(toy_build: Path, tmp_path: Path) -> None:
    from tri_agent._acceptance import load_config
    from tri_agent._rounds import _leak_tickets, _Round

    project = _project(tmp_path / "toy")
    answers = (toy_build / "sealed" / "answers.jsonl").read_text()
    inputs = "".join(p.read_text() for p in (toy_build / "visible" / "inputs").rglob("*.csv"))
    sealed = next(x.split('"total": "')[1].split('"')[0] for x in answers.splitlines()
                  if x.split('"total": "')[1].split('"')[0] not in inputs)
    (project / "target" / "cheat.py").write_text(f"EXPECTED_TOTAL = '{sealed}'\n")
    rnd = _Round(2, "1", False, toy_build, tmp_path / "run")
    config = load_config(project)
    [ticket] = _leak_tickets(project, config, rnd, {"builder": ["target/cheat.py"], "tester": []})
    assert ticket.signature == "orchestrator:leak:builder" and "target/cheat.py:1" in ticket.body
    assert sealed not in ticket.markdown()
    assert _leak_tickets(project, config, rnd, {"builder": ["target/grades.py"], "tester": []}) == []
