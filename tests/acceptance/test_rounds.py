"""accept end to end on toy-grades with scripted roles: red, fixed, three greens, final, ACCEPTED;
interrupted and resumed it leaves the same trail; any tampering with a round is caught."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import TOY, clone_run, toy_project

from tri_agent.acceptance._config import load_config
from tri_agent.acceptance._rounds import accept
from tri_agent.acceptance._scoreboard import acceptance_json, report_html, rounds_of, scoreboard
from tri_agent.acceptance._state import RunState, locate
from tri_agent.evidence._trail import EvidenceStore

GIT = ["git", "-c", "user.name=tri-agent-test", "-c", "user.email=test@invalid"]


def _project(dest: Path) -> Path:
    """A committed copy of the toy; its mutation gate hunts equivalents over fewer fresh seeds than the example's
    20 (a prefix of the same seeds: an equivalent stays equivalent). These tests test the protocol, not the proof's
    depth: tests/mutation tests that."""
    return toy_project(dest)


def _state(project: Path) -> RunState:
    return locate(project, load_config(project))


def _store(project: Path) -> EvidenceStore:
    return _state(project).store


def _records(project: Path) -> Path:
    return _state(project).root / "records"


_clone = clone_run  # the same run at another path: the project, its state folder and its pin (re-pointed)


@pytest.fixture
def accepted(toy_accepted: tuple[Path, dict[str, list[list[str]]]]) -> Path:
    """The toy accepted in 5 rounds (conftest: toy_accepted, a _project run to its end; shared with test_attacks)."""
    return toy_accepted[0]


def test_the_toy_trail(accepted: Path) -> None:
    store = _store(accepted)
    assert store.verify_trail() == [] and [e.name for e in store.entries()][-1] == "verdict"
    board = scoreboard(store)
    lines = [x for x in board.splitlines() if re.match(r"\| \d", x)]  # the rounds' rows
    # mutability per bug class and round: the fix (round 2) added a rounding call, and no class lost its places
    assert "| rounding-mode | 1 | 2 | 2 | 2 | 2 |" in board and "| missing-total | 6 | 6 | 6 | 6 | 6 |" in board
    assert "| red |" in lines[0] and all("GREEN" in x for x in lines[1:])
    assert "drift: average" in lines[0] and "unexpected" in lines[0]  # both planted bugs, round 1
    assert "(final)" in lines[-1] and "can never certify" in board and "PASSED, NOT CERTIFIED" in board
    first = _records(accepted) / "round-0001"
    assert len(list((first / "tickets").glob("builder-*.md"))) >= 2
    # the canaries: planted in every round, passed in none; the refusal's pressure filed beside round 1's work
    # (the final round has the baseline's and the canaries among the cases ever red, which a buggy target failed)
    assert all("| 0/2 passed |" in x for x in lines[:-1]) and "canaries (cases)" in board
    assert re.search(r"\| 0/[23] passed \|", lines[-1])
    assert all(json.loads((_records(accepted) / f"round-000{k}" / "facts.json").read_text())["canaries_passed"] == []
               for k in range(1, 6))
    planted = [json.loads(x) for x in (_state(accepted).builds / "round-0001" / "sealed" / "canaries.jsonl"
                                       ).read_text().splitlines()]
    assert sorted(c["kind"] for c in planted) == ["impossible", "refuse"]
    refusal = next(c["case"] for c in planted if c["kind"] == "refuse")
    pressure = [t.read_text() for t in (first / "tickets").glob("builder-*.md") if refusal in t.read_text()]
    assert len(pressure) == 1 and "behaviour 'rejected' where the spec calls for another" in pressure[0]
    facts = json.loads((first / "facts.json").read_text())
    # filed, and recorded as pressure for the rounds after, never counted against the fuse
    assert "builder:behavior:observed-rejected" in facts["pressure"] and facts["canaries_judged"]
    assert "builder:behavior:observed-rejected" not in facts["failing_tickets"]
    assert (first / "canary-score.json").is_file()
    # round 1 calibrated (differentially) with one mutant of every class, shown as killed / judged
    assert re.search(r"\| \d+/\d+ killed \(\d+%\); 0 ignored, \d+ no coverage \|", lines[0]), lines[0]
    assert [e.kind for e in store.entries()] == (["preflight", "build", "baseline"] + ["build", "round"] * 5
                                                 + ["verdict"])
    checks = json.loads((_records(accepted) / "preflight" / "checks.json").read_text())
    assert [c["name"] for c in checks] == ["spec readable", "git ready"] and all(c["ok"] for c in checks)
    baseline = json.loads((_records(accepted) / "baseline" / "checks.json").read_text())
    assert "byte-identical; the baseline scores fail" in baseline[0]["detail"]  # the planted bugs, before any fix


def test_the_examiner_deepens_and_the_menu_rotates(accepted: Path) -> None:
    rounds = rounds_of(_store(accepted))
    assert all(r.deepening and r.deepening.new_cases > 0 for r in rounds)
    assert "generator/generate.py" in rounds[1].deepening.exam_files_changed  # type: ignore[union-attr]
    assert rounds[1].deepening.new_cases > rounds[0].deepening.new_cases  # type: ignore[union-attr]  # new chaos
    middle = [json.loads((_records(accepted) / f"round-000{k}" / "mutation-summary.json").read_text())
              for k in (2, 3, 4)]
    judged = [{m["id"] for m in s["mutants"] if m["status"] in ("Killed", "Timeout")} for s in middle]
    assert all(len(j) >= 3 and s["killed"] == s["judged"] for j, s in zip(judged, middle, strict=True))
    assert len(rounds[1].deepening.new_mutants) >= 2  # type: ignore[union-attr]  # after a red round: half new
    assert all(len(r.deepening.new_mutants) >= 1 for r in rounds[2:4])  # type: ignore[union-attr]
    # the classes the examiner added in round 2 are made into mutants of the code and judged
    final = json.loads((_records(accepted) / "round-0005" / "mutation-summary.json").read_text())
    classes = {m["bug_class"] for s in [*middle, final] for m in s["mutants"] if m["status"] == "Killed"}
    assert {"duplicates-merged", "swallowed-exception"} <= classes


def test_the_final_round_runs_the_baseline_and_every_case_ever_red(accepted: Path) -> None:
    records = _records(accepted)
    first = json.loads((records / "round-0001" / "score.json").read_text())
    red = {f["key"]["case"] for f in first["answers"]["failures"]}
    provenance = (records / "round-0005" / "provenance.jsonl").read_text().splitlines()
    final_cases = {json.loads(x)["case"] for x in provenance}
    progress = json.loads((records / "round-0004" / "progress.json").read_text())
    seed1 = json.loads((records / "round-0001" / "seeds.json").read_text())["revealed"]["round-1"]
    assert red and red <= final_cases and set(progress["red_cases"][seed1]) >= red
    baseline = {c for c in final_cases if c not in set(progress["red_cases"][seed1])}
    assert len(baseline) >= 13  # the baseline seed, every case
    label = json.loads((records / "round-0005" / "round.json").read_text())["seed"]
    assert label.endswith(f" (all) + {seed1[:8]} ({len(progress['red_cases'][seed1])} red)")
    assert json.loads((records / "round-0005" / "rerun.json").read_text()) == {
        "schema_version": 1, "sample": 5, "mismatched": []}
    layers = json.loads((records / "round-0005" / "layers.json").read_text())
    assert set(layers) == {"examiner", "builder", "tester", "judge"} and "write-audit" in layers["tester"]


def test_tickets_resolved_later_move_aside_and_the_open_folder_holds_only_open_ones(accepted: Path) -> None:
    filed = sorted(p.name.removeprefix("builder-") for p in (_records(accepted) / "round-0001" / "tickets").glob(
        "builder-*.md"))
    assert len(filed) >= 2  # both planted bugs at least (the seeds are drawn at random)
    for folder in (accepted / "exam" / "tickets" / "builder", _state(accepted).work / "exam" / "tickets" / "builder"):
        assert sorted(p.name for p in folder.iterdir()) == ["resolved"]  # no round after the first filed any
        assert sorted(p.name for p in (folder / "resolved").iterdir()) == filed
        for name in filed:
            text = (folder / "resolved" / name).read_text()
            original = (_records(accepted) / "round-0001" / "tickets" / f"builder-{name}").read_text()
            header = original.partition("\n\n")[2].partition("\n\n")[0]
            assert text == original.replace(header, header + "\nresolved: round 2 (last filed in round 1)", 1)


def test_each_rounds_mutation_report_names_its_target_round_seed_and_exam(accepted: Path) -> None:
    state = _state(accepted)
    page = (state.runs / "round-0002" / "mutation" / "mutation-report.html").read_text()
    build = json.loads((_records(accepted) / "round-0002" / "build.json").read_text())
    seed = json.loads((_records(accepted) / "round-0002" / "seeds.json").read_text())["revealed"]["round-2"]
    assert f"<tr><th>round</th><td>round 2</td></tr><tr><th>seed</th><td>{seed}</td></tr>" in page
    assert (f"<tr><th>exam</th><td>toy-grades, built at seed {seed}: visible digest {build['visible_digest']}, "
            f"sealed digest {build['sealed_digest']}</td></tr>") in page
    named = re.search(r"<tr><th>target</th><td>(/[^<]+) \(tree digest ", page)  # where the run was made: the
    assert named and Path(named[1]).name == "target" and Path(named[1]).parent.name == accepted.name  # shared one


def test_resuming_a_finished_run_plays_no_more_rounds(accepted: Path, tmp_path: Path) -> None:
    project = _clone(accepted, tmp_path / "toy")
    before = _store(project).digest()
    assert accept(project, resume=True).decision == "accepted"
    assert _store(project).digest() == before


def test_a_nondeterministic_baseline_stops_in_preflight(tmp_path: Path) -> None:
    from tri_agent import InfrastructureFailure

    project = tmp_path / "toy"
    shutil.copytree(TOY, project, ignore=shutil.ignore_patterns("builds", "runs", "evidence", "SCOREBOARD.md", "out"))
    grades = project / "target" / "grades.py"
    grades.write_text(grades.read_text().replace("def main():", "def main():\n    import os\n"
                                                 "    open(sys.argv[2] + '.stamp', 'w').write(os.urandom(8).hex())"))
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "baseline"]):
        subprocess.run([*GIT, *args], cwd=project, check=True, capture_output=True)
    with pytest.raises(InfrastructureFailure, match="preflight: baseline double-run") as err:
        accept(project)
    assert err.value.exit_code == 7 and "deterministic" in err.value.hint
    store = _store(project)
    assert [e.name for e in store.entries()] == ["preflight", "build-baseline"] and store.verify_trail() == []


def test_an_exam_that_does_not_build_stops_and_keeps_the_trail(tmp_path: Path) -> None:
    from tri_agent import InfrastructureFailure

    project = _project(tmp_path / "toy")
    broken = project / "scripted" / "examiner-round-2" / "generate.py"
    broken.write_text("import sys\nsys.exit('generator: cannot parse the spec')\n")
    subprocess.run([*GIT, "commit", "-qam", "an examiner that breaks its generator"], cwd=project, check=True)
    with pytest.raises(InfrastructureFailure, match="generator exited 1: generator: cannot parse") as err:
        accept(project)
    assert err.value.exit_code == 7
    store = _store(project)
    digest = store.digest()
    assert [e.name for e in store.entries()][-2:] == ["build-round-0001", "round-0001"]
    assert store.verify_trail() == []
    with pytest.raises(InfrastructureFailure):
        accept(project, resume=True)
    assert store.digest() == digest and store.verify_trail() == []


def test_tampering_with_a_round_is_caught(accepted: Path, tmp_path: Path) -> None:
    copy = tmp_path / "evidence"
    shutil.copytree(_state(accepted).root, copy)
    score = copy / "records" / "round-0001" / "score.json"
    score.write_text(score.read_text().replace('"verdict": "fail"', '"verdict": "pass"'))
    assert any("round-0001/score.json" in f.where for f in EvidenceStore(copy).verify_trail())


def test_killed_and_resumed_gives_the_same_trail(accepted: Path, tmp_path: Path) -> None:
    project = _project(tmp_path / "toy")
    cli = [sys.executable, "-m", "tri_agent", "accept", str(project)]
    proc = subprocess.Popen(cli, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 300
    # mid-round: round 3's exam is built and its cases are running, nothing of round 3 is sealed yet
    while not (_state(project).runs / "round-0003").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not (_records(project) / "round-0003").exists()
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done = subprocess.run([*cli, "--resume"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 9, done.stderr  # passed; a simulation never certifies
    assert _store(project).digest() == _store(accepted).digest()


def test_reports_render_offline_and_deterministically(accepted: Path) -> None:

    store = _store(accepted)
    page = report_html(store)
    assert "<svg" in page and "<script" not in page and "src=" not in page and "href=" not in page
    assert page.count("<rect") == 5 and "can never certify" in page
    data = json.loads(acceptance_json(store))
    assert data["trail_digest"] == store.digest() and [r["green"] for r in data["rounds"]] == [False] + [True] * 4
    assert acceptance_json(store) == acceptance_json(store)


def test_in_session_builder_stops_with_tickets_and_resumes_after_a_commit(stopped: Path, tmp_path: Path) -> None:
    from tri_agent import BuilderTurn

    # stopped (conftest): the in-session run (gate N = 1) stopped after round 1 ("round 2 waits for the builder",
    # exit 1), its tickets in the project; a copy of it goes on here
    project = _clone(stopped, tmp_path / "toy")
    assert "builder: in-session" in (project / "acceptance.yaml").read_text()
    assert list((project / "exam" / "tickets" / "builder").glob("t-*.md"))
    with pytest.raises(BuilderTurn):
        accept(project, resume=True)  # nothing committed yet: still the builder's turn
    subprocess.run(["git", "apply", "-p1", "../fix.patch"], cwd=project / "target", check=True)
    subprocess.run([*GIT, "commit", "-qam", "fix: HALF_UP, trimmed keys"], cwd=project, check=True)
    verdict = accept(project, resume=True)
    assert verdict.decision == "accepted" and verdict.rounds == 3  # red, green, final (gate N = 1 keeps it short)


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

    from tri_agent.drivers._fakes import FakeModelServer, Move

    fixed = (TOY / "scripted" / "fixed-grades.py").read_text()

    def submit_only(_e: int, _t: int, _r: list[str]) -> Move:
        return Move(calls=[("submit", {"summary": "done"})])

    deeper = TOY / "scripted" / "examiner-round-2"

    def examiner(episode: int, turn: int, _r: list[str]) -> Move:
        if episode == 2 and turn == 0:  # deepen: new chaos and new mutants, as the recorded examiner does
            return Move(calls=[("write", {"path": f"exam/{dest}", "content": (deeper / src).read_text()})
                               for src, dest in (("generate.py", "generator/generate.py"),
                                                 ("mutations.yaml", "mutations.yaml"))])
        return Move(calls=[("submit", {"summary": "deeper" if episode == 2 else "exam as written"})])

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
    monkeypatch.delenv("TRI_AGENT_SEED_SECRET")  # seeds drawn at random, as in a real run
    servers = {role: FakeModelServer(_episodes(player)) for role, player in
               (("examiner", examiner), ("builder", builder), ("tester", tester), ("judge", submit_only))}
    project = _project(tmp_path / "toy")
    config = project / "acceptance.yaml"
    text = config.read_text()
    text = text.replace("drivers: {examiner: scripted, builder: scripted, tester: scripted, judge: scripted}",
                        "drivers: {examiner: openai, builder: openai, tester: anthropic, judge: openai}")
    text = text.replace("gate_n: 3", "gate_n: 1")
    text += "models:\n" + "".join(
        f"  {role}: {{model: fake-model-1, base_url: '{s.base_url}{'' if role == 'tester' else '/v1'}'"
        f"{', api: chat' if role in ('examiner', 'judge') else ''}}}\n" for role, s in servers.items())
    config.write_text(text)
    subprocess.run([*GIT, "commit", "-qam", "model-driven roles"], cwd=project, check=True)
    for s in servers.values():
        s.__enter__()
    try:
        verdict = accept(project)
    finally:
        for s in servers.values():
            s.__exit__(None, None, None)
    assert verdict.decision == "accepted" and verdict.rounds == 3
    board = scoreboard(_store(project))
    assert "can never certify" not in board  # no scripted role: this trail is not a simulation
    # no scripted role, every episode and every run of role-written code had its layers, secret seeds:
    # the one kind of run that certifies (where bubblewrap or Landlock works; dev.py installs bubblewrap)
    assert verdict.certified and verdict.reasons == [], verdict.reasons
    assert verdict.drivers == {"builder": "openai", "examiner": "openai-chat", "judge": "openai-chat",
                               "tester": "anthropic"}
    assert {r["path"] for r in servers["tester"].requests} == {"/v1/messages"}
    assert {r["path"] for r in servers["examiner"].requests} == {"/v1/chat/completions"}
    assert {r["path"] for r in servers["builder"].requests} == {"/v1/responses"}
    transcripts = list((_state(project).root / "transcripts").glob("*.jsonl"))
    assert transcripts and "sk-ant-fake" not in "".join(p.read_text() for p in transcripts)
    assert not (project / "transcripts").exists()  # nothing a judge's model said lands where a builder reads


def test_a_tester_that_skips_cases_makes_every_round_red_until_the_fuse(tmp_path: Path) -> None:
    from tri_agent import Escalation

    project = _project(tmp_path / "toy")
    script = project / "scripted" / "roles.yaml"
    script.write_text(script.read_text().replace("{tool: run_case, args: {}, each_case: true}",
                                                 "{tool: list, args: {}}"))
    subprocess.run([*GIT, "commit", "-qam", "a lazy tester"], cwd=project, check=True)
    with pytest.raises(Escalation, match="fix attempts") as err:
        accept(project)
    store = _store(project)
    assert err.value.exit_code == 8 and store.entries()[-1].kind == "escalation" and store.verify_trail() == []
    board = scoreboard(store)
    assert "the tester skipped" in board and "GREEN" not in board
    assert "# Escalation after round 3" in board
    assert "process ticket t-" in board and "(`orchestrator:tester:skipped`): red in 3 rounds" in board
    with pytest.raises(Escalation):
        accept(project, resume=True)  # a human decides; resuming plays no further round
    assert store.entries()[-1].kind == "escalation" and len(store.entries()) == 10  # preflight, baseline, 3 rounds


def test_sealed_values_in_what_the_builder_wrote_are_a_leak(toy_build: Path, tmp_path: Path) -> None:
    from tri_agent.acceptance._judging import leak_tickets

    project = _project(tmp_path / "toy")
    answers = (toy_build / "sealed" / "answers.jsonl").read_text()
    inputs = "".join(p.read_text() for p in (toy_build / "visible" / "inputs").rglob("*.csv"))
    sealed = next(x.split('"total": "')[1].split('"')[0] for x in answers.splitlines()
                  if x.split('"total": "')[1].split('"')[0] not in inputs)
    (project / "target" / "cheat.py").write_text(f"EXPECTED_TOTAL = '{sealed}'\n")
    spec = [project / "spec" / "README.md"]
    [ticket] = leak_tickets(toy_build, spec, {"builder": [project / "target" / "cheat.py"], "tester": []})
    assert ticket.signature == "orchestrator:leak:builder" and "target/cheat.py:1" in ticket.body
    assert sealed not in ticket.markdown()
    assert leak_tickets(toy_build, spec, {"builder": [project / "target" / "grades.py"], "tester": []}) == []


def test_code_that_names_a_case_is_a_blocker_every_round_until_it_is_gone(toy_build: Path, tmp_path: Path) -> None:
    from tri_agent.acceptance._judging import builder_smells, case_ids, code_changes, code_of, smell_and_guard

    project = _project(tmp_path / "toy")
    before = code_of(project, "builder")
    case = case_ids(toy_build)[0]
    grades = project / "target" / "grades.py"
    grades.write_text(grades.read_text() + f"\nKNOWN = {{'{case}': 'accepted'}}\n")
    after = code_of(project, "builder")
    assert [c.path for c in code_changes(before, after)] == ["target/grades.py"]
    found = builder_smells(after, [], frozenset(case_ids(toy_build)))  # not changed this round: still there
    assert [(s.name, s.path, s.severity) for s in found] == [("case-id-in-code", "target/grades.py", "blocker")]
    [ticket] = smell_and_guard(toy_build, found)
    assert ticket.route == "builder" and ticket.signature == "builder:smell:case-id-in-code"
    grades.write_text(grades.read_text().replace(case, "c-000000000000"))
    assert builder_smells(code_of(project, "builder"), [], frozenset(case_ids(toy_build))) == []


def test_a_weakened_test_is_seen_from_the_sealed_code_even_when_no_episode_changed_it(tmp_path: Path) -> None:
    """Resumed after a kill, or an in-session builder: the diff comes from the last sealed code.json."""
    from tri_agent.acceptance._judging import builder_smells, code_changes, code_of

    project = _project(tmp_path / "toy")
    tests = project / "target" / "tests"
    tests.mkdir()
    (tests / "test_grades.py").write_text("def test_half_up():\n    assert 1 + 1 == 2\n")
    sealed = code_of(project, "builder")
    (tests / "test_grades.py").write_text("import pytest\n\n\n@pytest.mark.skip(reason='slow')\ndef test_half_up():\n"
                                          "    assert 1 + 1 == 2\n")
    now = code_of(project, "builder")
    assert {s.name for s in builder_smells(now, code_changes(sealed, now), frozenset())} == {"skip-added"}
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("KEY = 1\n")
    (project / "target" / "link").symlink_to(outside)
    assert not any("secret" in p for p in code_of(project, "builder").files)  # symlinks are never followed
    vendored = project / "target" / ".venv" / "lib" / "tests"
    vendored.mkdir(parents=True)
    (vendored / "test_dep.py").write_text("import pytest\n\n\n@pytest.mark.skip(reason='vendored')\ndef test_dep():\n"
                                         "    pass\n")
    assert not any(".venv" in p for p in code_of(project, "builder").files)  # environments are not the code


def test_a_judge_model_flags_a_weakened_test_every_round_until_the_fuse(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from tri_agent import Escalation
    from tri_agent.drivers._fakes import FakeModelServer, Move

    project = _project(tmp_path / "toy")
    tests = project / "target" / "tests"
    tests.mkdir()
    (tests / "test_grades.py").write_text("def test_half_up():\n    assert round_half_up('80.005') == '80.01'\n")
    (project / "scripted" / "loosened.py").write_text("def test_half_up():\n    assert round_half_up('80.005')\n")
    script = project / "scripted" / "roles.yaml"
    script.write_text(script.read_text().replace(
        "      - {tool: write, args: {path: target/grades.py}, content_file: fixed-grades.py}\n",
        "      - {tool: write, args: {path: target/grades.py}, content_file: fixed-grades.py}\n"
        "      - {tool: write, args: {path: target/tests/test_grades.py}, content_file: loosened.py}\n"))
    flag = json.dumps({"flags": [{"category": "weakened", "location": "after/target/tests/test_grades.py:2",
                                  "reason": "the expected value was dropped from the assertion"}]})
    holder: list[FakeModelServer] = []

    def judge(_results: list[str]) -> Move:
        if not holder[0].requests[-1]["body"].get("tools"):
            return Move(text=flag)  # a ruling: a plain question, no tools
        return Move(calls=[("submit", {"summary": "reviewed"})])

    monkeypatch.setenv("OPENAI_API_KEY", "sk-oai-fake-0123456789")
    with FakeModelServer(judge) as server:
        holder.append(server)
        config = project / "acceptance.yaml"
        text = config.read_text().replace("judge: scripted}", "judge: openai}").replace("gate_n: 3", "gate_n: 1")
        judge_model = f"{{model: fake-model-1, base_url: '{server.base_url}/v1', api: chat}}"
        config.write_text(text + f"models:\n  judge: {judge_model}\n")
        subprocess.run([*GIT, "add", "-A"], cwd=project, check=True)
        subprocess.run([*GIT, "commit", "-qm", "tests in the target; a model judge"], cwd=project, check=True)
        with pytest.raises(Escalation, match="fix attempts"):
            accept(project)
    # round 1 red (the planted bugs); from round 2 the fix passes the exam, but the loosened test stays
    # loosened, so the ruling flags it every round until the fuse blows: one red round buys nothing
    records = _records(project)
    rounds = rounds_of(_store(project))
    assert len(rounds) == 4 and not any(r.green for r in rounds)
    for k in (2, 3, 4):
        ruling = json.loads((records / f"round-000{k}" / "ruling-weakened.json").read_text())
        assert ruling["verdict"] == "flagged" and ruling["samples"] == 5
        assert any("weakened tests" in r for r in rounds[k - 1].reasons) and rounds[k - 1].passed == rounds[k - 1].total
    assert not (records / "round-0001" / "ruling-weakened.json").exists()  # no test changed yet: nothing to rule on
    assert rounds[1].cost_usd["judge"] == 0.0  # the fake model has no price: the basis says so, nothing invented


def test_a_tester_that_answers_garbage_is_a_process_ticket_and_blows_the_fuse(tmp_path: Path) -> None:
    from tri_agent import Escalation

    project = _project(tmp_path / "toy")
    config = project / "acceptance.yaml"
    config.write_text(config.read_text().replace("tester: scripted", "tester: command")
                      + "commands:\n  tester: [python3, -c, \"print('all green, trust me')\"]\n")
    subprocess.run([*GIT, "commit", "-qam", "a tester that does not speak the protocol"], cwd=project, check=True)
    with pytest.raises(Escalation, match="fix attempts"):
        accept(project)
    store = _store(project)
    rounds = rounds_of(store)
    assert len(rounds) == 3 and not any(r.green for r in rounds)
    assert all("the tester episode ended malformed_output" in r.reasons for r in rounds)
    assert "(`orchestrator:tester:malformed_output`): red in 3 rounds" in scoreboard(store)


def test_resuming_a_tampered_trail_is_refused(accepted: Path, tmp_path: Path) -> None:
    from tri_agent import TamperDetected

    project = _clone(accepted, tmp_path / "toy")
    code = _records(project) / "round-0004" / "code.json"
    code.write_text(code.read_text().replace("ROUND_HALF_UP", "ROUND_HALF_EVEN"))
    with pytest.raises(TamperDetected, match=r"does not verify: records/round-0004/code\.json") as err:
        accept(project, resume=True)
    assert err.value.exit_code == 4


def test_a_judge_api_failure_is_an_inconclusive_ruling_not_a_crash(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from tri_agent.acceptance._config import load_config
    from tri_agent.acceptance._rounds import _ruling
    from tri_agent.acceptance._smells import Change
    from tri_agent.drivers._fakes import FakeModelServer, Move

    project = _project(tmp_path / "toy")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-oai-fake-0123456789")
    with FakeModelServer(lambda _r: Move(text="{}"), status=529) as server:
        config = project / "acceptance.yaml"
        config.write_text(config.read_text().replace("judge: scripted}", "judge: openai}")
                          + f"models:\n  judge: {{model: m, base_url: '{server.base_url}/v1', api: chat}}\n")
        changed = [Change(path="target/tests/test_a.py", old="def test_a():\n    assert f() == 1\n",
                          new="def test_a():\n    assert f()\n")]
        ruling, cost = _ruling(load_config(project), project, tmp_path / "transcripts", 2, changed)
    assert ruling is not None and ruling.verdict == "inconclusive" and cost == 0.0
    assert all("no answer: " in d for d in ruling.dropped)


def test_the_rulings_samples_and_floor_come_from_acceptance_yaml(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from tri_agent.acceptance._config import load_config
    from tri_agent.acceptance._rounds import _ruling
    from tri_agent.acceptance._smells import Change
    from tri_agent.drivers._fakes import FakeModelServer, Move

    project = _project(tmp_path / "toy")
    flag = json.dumps({"flags": [{"category": "weakened", "location": "after/target/tests/test_a.py:2",
                                  "reason": "the expected value was dropped"}]})
    replies = iter([flag, flag, "{}"])  # 2 of 3 samples flag: below 0.8, at 0.6
    monkeypatch.setenv("OPENAI_API_KEY", "sk-oai-fake-0123456789")
    with FakeModelServer(lambda _r: Move(text=next(replies))) as server:
        config = project / "acceptance.yaml"
        config.write_text(config.read_text().replace("judge: scripted}", "judge: openai}")
                          + f"models:\n  judge: {{model: m, base_url: '{server.base_url}/v1', api: chat}}\n"
                          + "weakening: {samples: 3, floor: 0.6}\n")
        changed = [Change(path="target/tests/test_a.py", old="def test_a():\n    assert f() == 1\n",
                          new="def test_a():\n    assert f()\n")]
        ruling, _ = _ruling(load_config(project), project, tmp_path / "transcripts", 2, changed)
    assert ruling is not None and (ruling.samples, ruling.floor, ruling.verdict) == (3, 0.6, "flagged")


def test_fingerprint_reruns_catch_a_target_that_changed_since_its_run(toy_build: Path, tmp_path: Path) -> None:
    from conftest import toy_copy

    from tri_agent.acceptance._judging import fingerprint_rerun, rerun_tickets
    from tri_agent.targets._gateway import run_exam

    buggy, fixed = toy_copy(tmp_path / "buggy", fixed=False), toy_copy(tmp_path / "fixed", fixed=True)
    run_exam(toy_build, buggy / "target.yaml", tmp_path / "run")
    assert fingerprint_rerun(toy_build, tmp_path / "run", buggy / "target.yaml", 2) == []
    changed = fingerprint_rerun(toy_build, tmp_path / "run", fixed / "target.yaml", 2)
    assert changed and rerun_tickets(changed)[0].signature == "orchestrator:rerun:mismatch"


def test_the_projects_reports_must_say_what_the_trail_says(accepted: Path, tmp_path: Path) -> None:
    from tri_agent.acceptance._scoreboard import write_reports
    from tri_agent.acceptance._verify import verify_run

    write_reports(accepted)
    assert verify_run(accepted)[1] == []  # as the run wrote them: every report matches its trail, byte for byte
    path = accepted / "ACCEPTANCE.json"
    honest = path.read_bytes()
    try:
        report = json.loads(honest)
        report.update(certified=True, reasons=[])
        path.write_text(json.dumps(report, indent=1) + "\n")
        found = verify_run(accepted)[1]
        assert [f.where for f in found] == ["ACCEPTANCE.json"]
        assert found[0].detail.startswith("differs from what the trail says (")
    finally:
        path.write_bytes(honest)
    copy = tmp_path / "copy"  # the reports copied beside another (empty) trail claim a run it does not hold
    shutil.copytree(accepted, copy, ignore=shutil.ignore_patterns(".git"))
    assert [f.where for f in verify_run(copy)[1]] == ["ACCEPTANCE.json", "REPORT.html", "SCOREBOARD.md"]


def test_only_files_written_since_preflight_are_scanned_for_sealed_values() -> None:
    """A vendored library's issue number that happens to equal a sealed sum was there before any key existed (found
    on csvkit's cli.py in CI); a file written since, or a new one, is scanned whole."""
    from types import SimpleNamespace

    from tri_agent.acceptance._judging import CodeSnapshot, FileState
    from tri_agent.acceptance._rounds import _since_preflight

    def snap(**files: str) -> CodeSnapshot:
        return CodeSnapshot(files={k.replace("_", "/"): FileState(sha256=v, text="") for k, v in files.items()})

    now = snap(target_lib="a", target_app="b2", target_new="c")
    turn = SimpleNamespace(code=now, past=SimpleNamespace(baseline_code=snap(target_lib="a", target_app="b")))
    assert _since_preflight(turn) == ["target/app", "target/new"]  # type: ignore[arg-type]
    turn.past.baseline_code = None
    assert _since_preflight(turn) == ["target/lib", "target/app", "target/new"]  # type: ignore[arg-type]
