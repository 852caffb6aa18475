"""The judge's weakened-test ruling: asked only when the builder touched tests, K samples, flag-only,
fail closed; and the one-shot ask of every API driver, through the real SDKs against the loopback fake."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tri_agent.acceptance._judging import weakened_ruling, weakened_tickets
from tri_agent.acceptance._smells import Change

OLD = "def test_total():\n    assert total([1, 2]) == 3\n    assert total([]) == 0\n"
NEW = "def test_total():\n    assert total([1, 2]) >= 0\n    assert total([]) == 0\n"
LOOSENED = Change(path="target/tests/test_total.py", old=OLD, new=NEW)


def _flag(location: str = "after/target/tests/test_total.py:2") -> str:
    return json.dumps({"flags": [{"category": "weakened", "location": location,
                                  "reason": "the equality became a bound that always holds"}]})


def test_no_test_file_changed_means_no_question() -> None:
    asked: list[str] = []
    source = Change(path="target/grades.py", old="x = 1\n", new="x = 2\n")
    assert weakened_ruling(lambda q: asked.append(q) or _flag(), [source]) is None and asked == []


def test_agreeing_samples_flag_and_the_builder_gets_a_blocker_ticket() -> None:
    questions: list[str] = []
    ruling = weakened_ruling(lambda q: questions.append(q) or _flag(), [LOOSENED])
    assert ruling is not None and ruling.verdict == "flagged" and ruling.samples == 5 and ruling.floor == 0.8
    assert "   2  |     assert total([1, 2]) >= 0" in questions[0]
    assert "before/target/tests/test_total.py" in questions[0]
    [ticket] = weakened_tickets(ruling)
    assert ticket.route == "builder" and ticket.signature == "builder:smell:weakened"
    assert "after/target/tests/test_total.py:2" in ticket.body


def test_nothing_flagged_files_no_ticket() -> None:
    ruling = weakened_ruling(lambda q: '{"flags": []}', [LOOSENED])
    assert ruling is not None and ruling.verdict == "nothing_flagged" and weakened_tickets(ruling) == []


@pytest.mark.parametrize("reply", ["not json", _flag("after/target/tests/test_total.py:99"), _flag("../etc/passwd:1")])
def test_unreadable_or_uncited_rulings_fail_closed(reply: str) -> None:
    ruling = weakened_ruling(lambda q: reply, [LOOSENED])
    assert ruling is not None and ruling.verdict == "inconclusive"
    [ticket] = weakened_tickets(ruling)
    assert "inconclusive" in ticket.title


@pytest.mark.parametrize("provider,api", [("anthropic", None), ("openai", "responses"), ("openai", "chat")])
def test_one_shot_ask_through_the_real_sdks(provider: str, api: str | None) -> None:
    from tri_agent.drivers._fakes import FakeModelServer, Move
    from tri_agent.drivers._llm import anthropic_driver, openai_driver

    with FakeModelServer(lambda _results: Move(text='{"flags": []}')) as server:
        if provider == "anthropic":
            driver = anthropic_driver("fake-model-1", api_key="sk-ant-fake-0123456789", base_url=server.base_url)
        else:
            driver = openai_driver("fake-model-1", api_key="sk-oai-fake-0123456789", base_url=server.base_url + "/v1",
                                   api=str(api))
        assert driver.ask_text("rule on tests", "is this weakened?") == '{"flags": []}'
        body = server.requests[-1]["body"]
        assert "tools" not in body or not body["tools"]
        assert "is this weakened?" in json.dumps(body) and driver.spent.input_tokens > 0


def test_a_judge_without_temperature_sends_none() -> None:
    from tri_agent.drivers._fakes import FakeModelServer, Move
    from tri_agent.drivers._llm import openai_driver

    with FakeModelServer(lambda _results: Move(text='{"flags": []}')) as server:
        for api in ("responses", "chat"):
            driver = openai_driver("o-reasoning", api_key="sk-oai-fake-0123456789", base_url=server.base_url + "/v1",
                                   api=api, temperature=None)
            driver.ask_text("rule", "weakened?")
            assert "temperature" not in server.requests[-1]["body"]
        pinned = openai_driver("m", api_key="sk-oai-fake-0123456789", base_url=server.base_url + "/v1", api="chat")
        pinned.ask_text("rule", "weakened?")
        assert server.requests[-1]["body"]["temperature"] == 0.0


def _judge_ticket(exam: Path, route: str, name: str, text: str) -> str:
    path = exam / "tickets" / route / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return f"exam/tickets/{route}/{name}"


def test_judge_tickets_need_mechanical_evidence_and_pass_the_leak_guard(toy_build: Path, tmp_path: Path) -> None:
    from tri_agent.acceptance._judging import case_ids, judge_tickets

    case = case_ids(toy_build)[0]
    rows = [json.loads(x) for x in (toy_build / "sealed" / "answers.jsonl").read_text().splitlines()]
    inputs = "".join(p.read_text() for p in (toy_build / "visible").rglob("*.csv"))
    sealed = next(r["total"] for r in rows if r["total"] not in inputs and len(r["total"]) >= 5)
    exam = tmp_path / "exam"
    changed = [
        _judge_ticket(exam, "builder", "t-good.md", f"# group keys keep their spaces\n\ncases: {case}\n\nTrim them.\n"),
        _judge_ticket(exam, "builder", "t-leak.md", f"# wrong total\n\ncases: {case}\n\nIt must be {sealed}.\n"),
        _judge_ticket(exam, "builder", "t-vague.md", "# the code feels wrong\n\ncases: -\n\nRewrite it.\n"),
        _judge_ticket(exam, "builder", "t-made-up.md", "# a case nobody ran\n\ncases: c-000000000000\n\nx\n"),
    ]
    tickets = judge_tickets(exam, changed, toy_build)
    by_title = {t.title: t for t in tickets}
    assert by_title["judge: group keys keep their spaces"].route == "builder"
    assert by_title["judge: group keys keep their spaces"].signature.startswith("builder:judge:")
    assert sealed not in "".join(t.markdown() for t in tickets)
    assert "redacted" in by_title["judge: wrong total"].body
    assert any(t.signature == "orchestrator:judge:no-evidence" and "t-vague.md" in t.body and "t-made-up.md" in t.body
               for t in tickets)
    assert judge_tickets(exam, [], toy_build) == []  # nothing the judge's episode changed: nothing filed


def test_a_key_changed_after_its_pin_stops_the_round(toy_build: Path, tmp_path: Path) -> None:
    import shutil
    from types import SimpleNamespace

    from tri_agent import TamperDetected
    from tri_agent.acceptance._rounds import _key, _pin_build
    from tri_agent.evidence._trail import EvidenceStore

    build = tmp_path / "builds" / "round-0001"
    shutil.copytree(toy_build, build)
    run = SimpleNamespace(store=EvidenceStore(tmp_path / "store"))
    _pin_build(run, build, "build-round-0001")  # type: ignore[arg-type]
    assert _key(run, build, "build-round-0001") == build  # type: ignore[arg-type]
    answers = build / "sealed" / "answers.jsonl"
    answers.write_text(answers.read_text().replace('"count": "', '"count": "1', 1))
    with pytest.raises(TamperDetected, match=r"no longer matches its pin: sealed/answers\.jsonl modified") as err:
        _key(run, build, "build-round-0001")  # type: ignore[arg-type]
    assert err.value.exit_code == 4
    with pytest.raises(TamperDetected):
        _pin_build(run, build, "build-round-0001")  # type: ignore[arg-type]  # a replayed round's rebuild


def test_resolved_tickets_are_guarded_again_against_every_key_since(toy_build: Path) -> None:
    from tri_agent.acceptance._judging import case_files, guarded_texts
    from tri_agent.acceptance._tickets import Ticket, redacted_text

    answers = (toy_build / "sealed" / "answers.jsonl").read_text()
    inputs = "".join(p.read_text() for p in (toy_build / "visible" / "inputs").rglob("*.csv"))
    sealed = next(v for v in (json.loads(x)["average"] for x in answers.splitlines()) if v not in inputs)
    old = Ticket(id="t-old", route="builder", signature="builder:average:x", title="average wrong", cases=["c-1"],
                 body=f"the target wrote '{sealed}'.").markdown()  # its own output then; a later key holds it
    clean = Ticket(id="t-ok", route="builder", signature="builder:count:x", title="count wrong", cases=[],
                   body="the target wrote '3'.").markdown()
    texts = {"t-old": old, "t-ok": clean}
    assert guarded_texts(texts, [toy_build]) == {"t-old": redacted_text(old), "t-ok": clean}
    assert redacted_text(old) == ("# average wrong\n\nticket: t-old\nroute: builder\ncases: c-1\n\n(redacted: the "
                                  "description shares a value with a later round's sealed answers)\n")
    assert guarded_texts(texts, []) == texts and guarded_texts({}, [toy_build]) == {}
    case = json.loads((toy_build / "visible" / "cases.jsonl").read_text().splitlines()[0])["case"]
    files = case_files(toy_build / "visible", case)
    assert list(files) == ["scores.csv"] and files["scores.csv"].startswith("student,group,score\n")
    assert case_files(toy_build / "visible", "") == {} and case_files(toy_build / "visible", "c-none") == {}


def test_canary_tickets_ride_along_with_other_builder_work_and_never_outlive_the_fuse() -> None:
    from tri_agent.acceptance._gate import FUSE
    from tri_agent.acceptance._judging import with_pressure
    from tri_agent.acceptance._tickets import Ticket, ticket_id

    def ticket(signature: str) -> Ticket:
        route = signature.partition(":")[0]
        return Ticket.model_validate({"id": ticket_id(signature), "route": route, "signature": signature,
                                      "title": "t", "body": "b", "cases": []})

    work, exam, canary = ticket("builder:total:out_of_tolerance"), ticket("exam:menu:stale"), [
        ticket("builder:behavior:observed-rejected"), ticket("builder:total:out_of_tolerance")]
    assert with_pressure([], canary, {}) == [] and with_pressure([exam], canary, {}) == []  # no builder work: none
    assert with_pressure([work], canary, {}) == [canary[0]]  # the same id as the exam's ticket is filed once
    assert with_pressure([work], canary, {canary[0].signature: FUSE - 2}) == [canary[0]]
    assert with_pressure([work], canary, {canary[0].signature: FUSE - 1}) == []


def test_a_round_that_could_not_be_scored_judges_no_canary(toy_build: Path, tmp_path: Path) -> None:
    from tri_agent.acceptance._judging import CanaryRound, canary_round

    unjudged = canary_round(toy_build, tmp_path, None, [toy_build], "", frozenset())
    assert (unjudged.passed, unjudged.gamed, unjudged.tickets, unjudged.report) == ([], [], [], None)
    assert unjudged.figure() == "2 not judged" and CanaryRound([], [], [], []).figure() == "-"
