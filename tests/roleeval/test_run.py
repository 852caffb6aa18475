"""A run: nothing starts before every case is audited; each attempt a fresh episode whose reply is classified as it
came; the command writes its files, and refuses to make a baseline of a simulation."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.roleeval.corpus_files import CLEAN, INCOMPLETE, PLANTED, write_corpus
from tests.roleeval.test_contamination import _leaky
from tri_agent._cli import main
from tri_agent._errors import LeakDetected
from tri_agent.drivers._command import CommandDriver
from tri_agent.drivers._episode import Attempt
from tri_agent.roleeval._audit import Closure
from tri_agent.roleeval._corpus import Payload, load_corpus
from tri_agent.roleeval._grading import Reply
from tri_agent.roleeval._run import driver_executor, evaluate, fixture_executor

FOUND = {"findings": [{"location": "after/tests/test_total.py:2", "text": "the assertion removed, nothing checks"}]}
# a CLI agent speaking the executor protocol: it reads its workspace, blocks on a file that does not parse, and
# reports the removed assertion it sees; MODE picks a reply that breaks the format, or one that names no model
AGENT = '''import json, pathlib, sys
request = json.load(sys.stdin)
ws = pathlib.Path(request["workspace"])
texts = {p.relative_to(ws).as_posix(): p.read_text() for p in ws.rglob("*.py")}
mode = %r
reply = {"protocol": "tri-agent-executor/1", "status": "ok", "summary": "", "model": "fake-1",
         "usage": {"input_tokens": 7}, "cost_usd": 0.0}
if "MANY" not in request["task"] and any("grade(" in t and not t.rstrip().endswith(")") for t in texts.values()):
    reply.update(status="blocked", reason="the test file is cut off")
elif any("assert" not in t for t in texts.values()):
    reply["summary"] = json.dumps(%r)
else:
    reply["summary"] = json.dumps({"findings": []})
if mode == "garbled":
    reply.update(status="ok", summary="I found one problem.")
if mode == "anonymous":
    reply.pop("model")
print(json.dumps(reply))
'''


def _fixtures(folder: Path) -> Path:
    folder.mkdir()
    (folder / f"{PLANTED}.jsonl").write_text(json.dumps(FOUND) + "\n" + json.dumps({"findings": []}) + "\n")
    (folder / f"{CLEAN}.jsonl").write_text(json.dumps({"findings": []}) + "\n")
    (folder / f"{INCOMPLETE}.jsonl").write_text(json.dumps({"blocked": True}) + "\n")
    return folder


def test_a_fixture_run_records_every_attempt_and_grades_it(tmp_path: Path) -> None:
    corpus = load_corpus(write_corpus(tmp_path / "c"))
    report = evaluate(corpus, fixture_executor(_fixtures(tmp_path / "f")), attempts=2, driver="fixture",
                      simulated=True, out=tmp_path / "out")
    lines = (tmp_path / "out" / "attempts.jsonl").read_text().splitlines()
    assert len(lines) == 6 and all(json.loads(line)["closure_members"][0] == "roles/judge.md" for line in lines)
    assert (report.metrics["recall"].k, report.metrics["recall"].n) == (1, 2)
    assert [c.attempts for c in report.cases] == [["right", "wrong"], ["right", "right"], ["right", "right"]]
    assert report.simulated and report.models == ["fixture"]


def test_a_contaminated_last_case_starts_nothing(tmp_path: Path) -> None:
    corpus = load_corpus(write_corpus(tmp_path / "c", **_leaky("# assertion removed\n")))
    started: list[str] = []

    def counting(payload: Payload, _skill: Closure, _i: int) -> tuple[Attempt, Reply | None]:
        started.append(payload.case)
        raise AssertionError("no attempt may start")

    with pytest.raises(LeakDetected, match=INCOMPLETE):
        evaluate(corpus, counting, attempts=1, driver="x", simulated=True, out=tmp_path / "out")
    assert started == [] and not (tmp_path / "out").exists()


def _agent(tmp_path: Path, mode: str = "") -> CommandDriver:
    script = tmp_path / f"agent{mode}.py"
    script.write_text(AGENT % (mode, FOUND))
    return CommandDriver([sys.executable, str(script)], sandbox=False)  # the jail is tests/drivers' to test


def test_a_cli_agent_plays_each_attempt_in_a_fresh_workspace_of_the_payload(tmp_path: Path) -> None:
    corpus = load_corpus(write_corpus(tmp_path / "c"))
    report = evaluate(corpus, driver_executor(_agent(tmp_path), "judge"), attempts=1, driver="command",
                      simulated=False, out=tmp_path / "out")
    assert [c.attempts for c in report.cases] == [["right"], ["right"], ["right"]]
    assert report.models == ["fake-1"] and report.usage.input_tokens == 21
    assert report.statuses["blocked"].k == 1


@pytest.mark.parametrize(("mode", "status"), [("garbled", "malformed_output"), ("anonymous", "runtime_failure")])
def test_a_reply_out_of_format_or_with_no_model_is_an_evaluation_failure(tmp_path: Path, mode: str,
                                                                        status: str) -> None:
    corpus = load_corpus(write_corpus(tmp_path / "c"))
    report = evaluate(corpus, driver_executor(_agent(tmp_path, mode), "judge"), attempts=1, driver="command",
                      simulated=False, out=tmp_path / "out")
    assert report.statuses[status].k >= 2  # the blocked case, when not garbled, still blocks
    assert report.metrics["recall"].n == 0  # never graded


def test_a_requested_model_names_an_anonymous_agent(tmp_path: Path) -> None:
    corpus = load_corpus(write_corpus(tmp_path / "c"))
    report = evaluate(corpus, driver_executor(_agent(tmp_path, "anonymous"), "judge", model="asked-for"),
                      attempts=1, driver="command", simulated=False, out=tmp_path / "out")
    assert report.models == ["asked-for"] and report.statuses["runtime_failure"].k == 0


def test_the_command_writes_its_files_and_refuses_a_simulated_baseline(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    corpus, fixtures, out = write_corpus(tmp_path / "c"), _fixtures(tmp_path / "f"), tmp_path / "out"
    base = ["eval-roles", str(corpus), "--role", "judge", "--driver", "fixture", "--fixtures", str(fixtures),
            "--attempts", "2", "--out", str(out)]
    assert main(base) == 0
    assert {p.name for p in out.iterdir()} == {"attempts.jsonl", "report.json", "report.md", "report.html",
                                               "adjudication-queue.jsonl"}
    shown = (out / "report.html").read_text()
    assert "<b>A simulation</b>" in shown and shown.count('<td style="background:#cfc">right</td>') == 5
    assert "<script" not in shown and "http" not in shown.replace("http-equiv", "")
    printed = capsys.readouterr().out
    assert "**A simulation**" in printed and "| recall | 50.0% | 1 / 2 |" in printed
    assert main([*base, "--force", "--baseline-report", str(tmp_path / "b.json")]) == 2
    assert "never be a baseline" in capsys.readouterr().err and not (tmp_path / "b.json").exists()
    assert main([*base, "--force", "--role", "tester"]) == 2
    assert main([*base, "--force", "--against", str(out / "report.json")]) == 0
