"""Gate, counter and fuse: every condition shown failing; the counter resets; three strikes escalate."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tri_agent.acceptance._gate import FUSE, REQUIRED_LAYERS, Played, Progress, RoundFacts, advance, certify, gate

GREEN = RoundFacts(round=1, stable=True, passed=10, total=10, mutants_judged=5, mutants_detected=5)


def test_a_green_round() -> None:
    assert gate(GREEN).green


@pytest.mark.parametrize("change,reason", [
    ({"stable": False}, "not byte-identical"), ({"passed": 9}, "9/10 pass"), ({"passed": 0, "total": 0}, "0/0"),
    ({"blockers": ["drift: average"]}, "drift"), ({"mutants_judged": 2, "mutants_detected": 2}, "only 2 mutants"),
    ({"mutants_detected": 4}, "blind spots"), ({"seals_ok": False}, "seal"),
    ({"canaries_gamed": ["c-0123456789ab"]}, "policy: the target passed 1 canary case(s)"),
])
def test_every_condition_can_turn_a_round_red(change: dict[str, object], reason: str) -> None:
    result = gate(GREEN.model_copy(update=change))
    assert not result.green and any(reason in r for r in result.reasons)


def test_n_green_rounds_then_a_final_round_then_accepted() -> None:
    p = Progress(gate_n=3)
    decisions = []
    for k in range(1, 5):
        facts = GREEN.model_copy(update={"round": k})
        p, d = advance(p, gate(facts), facts)
        decisions.append(d)
    assert decisions == ["next_round", "next_round", "final_round", "accepted"]


def test_a_red_round_resets_the_counter() -> None:
    p = Progress(gate_n=3, green_streak=2)
    red = GREEN.model_copy(update={"passed": 3, "failing_tickets": ["engine:average:drift"]})
    p, d = advance(p, gate(red), red)
    assert (p.green_streak, d) == (0, "next_round") and p.ever_red == ["engine:average:drift"]


def test_the_fuse_blows_on_the_third_failed_fix() -> None:
    p = Progress(gate_n=3)
    red = GREEN.model_copy(update={"passed": 3, "failing_tickets": ["engine:count:not_equal"]})
    decisions = []
    for _ in range(FUSE):
        p, d = advance(p, gate(red), red)
        decisions.append(d)
    assert decisions == ["next_round", "next_round", "escalate"]


@given(st.lists(st.booleans(), min_size=1, max_size=20))
def test_the_streak_counts_trailing_greens(greens: list[bool]) -> None:
    p = Progress(gate_n=100)
    for k, g in enumerate(greens, 1):
        facts = GREEN.model_copy(update={"round": k, "passed": 10 if g else 9})
        p, _ = advance(p, gate(facts), facts)
    trailing = len(greens) - max((i + 1 for i, g in enumerate(greens) if not g), default=0)
    assert p.green_streak == trailing


def _played(driver: str, layers: list[str], role: str = "tester", simulation: bool = False) -> Played:
    return Played(round=1, role=role, driver=driver, simulation=simulation, isolation=layers)


def _full(driver: str, role: str = "tester") -> Played:
    layers = sorted(REQUIRED_LAYERS[driver] - {"os-sandbox"}) + (["bubblewrap"] if driver == "command" else [])
    return _played(driver, layers, role)


SANDBOXED = [["bubblewrap"]]


def test_a_run_with_every_layer_certifies_and_names_its_drivers() -> None:
    cert = certify([_full("anthropic"), _full("command", "builder"), _full("in-session", "builder")], SANDBOXED,
                   unsafe_contract=False, fixed_seeds=False)
    assert cert.certified and cert.reasons == [] and cert.drivers == {"builder": "command, in-session",
                                                                      "tester": "anthropic"}


@pytest.mark.parametrize(("played", "code", "unsafe", "fixed", "reason"), [
    ([_played("scripted", [], simulation=True)], SANDBOXED, False, False, "a simulation: the tester"),
    ([_full("openai"), _played("scripted", [], "builder")], SANDBOXED, False, False, "a simulation: the builder"),
    ([_played("command", ["physical-omission", "write-audit"])], SANDBOXED, False, False,
     "the tester (command) lacked bubblewrap"),
    ([_played("command", ["physical-omission", "write-audit", "landlock"])], SANDBOXED, False, False,
     "the tester (command) lacked bubblewrap (Landlock alone"),
    ([_full("anthropic")], [["landlock"]], False, False, "ran under Landlock only"),
    ([_played("in-session", ["none: agent settings missing"], "builder")], SANDBOXED, False, False,
     "the builder (in-session) lacked agent-client-sandbox"),
    ([_played("my-driver", ["physical-omission"])], SANDBOXED, False, False, "lacked a known driver"),
    ([_full("anthropic")], [["bubblewrap"], []], False, False, "ran outside the OS sandbox"),
    ([_full("anthropic")], SANDBOXED, True, False, "unsafe contract"),
    ([_full("anthropic")], SANDBOXED, False, True, "fixed by the caller"),
    ([_full("in-session", "builder")], SANDBOXED, False, False, "exam's hidden parts in the project"),
])
def test_each_missing_guarantee_prevents_certification(played: list[Played], code: list[list[str]], unsafe: bool,
                                                       fixed: bool, reason: str) -> None:
    exposed = ["exam/oracle"] if "hidden parts" in reason else []
    cert = certify(played, code, unsafe_contract=unsafe, fixed_seeds=fixed, exposed=exposed)
    assert not cert.certified and any(reason in r for r in cert.reasons), cert.reasons


def test_progress_remembers_red_cases_judged_and_equivalent_mutants() -> None:
    p = Progress(gate_n=1)
    red = GREEN.model_copy(update={"passed": 8, "red_cases": {"1": ["c-01", "c-02"]},
                                   "mutants_used_ids": ["m1", "m2"], "mutants_equivalent": ["m9"]})
    p, decision = advance(p, gate(red), red)
    assert decision == "next_round" and p.decision == "next_round" and not p.last_green
    again = GREEN.model_copy(update={"red_cases": {"1": ["c-02", "c-03"]}, "mutants_used_ids": ["m2", "m3"]})
    p, decision = advance(p, gate(again), again)
    assert p.red_cases == {"1": ["c-01", "c-02", "c-03"]} and p.mutants_used == ["m1", "m2", "m3"]
    assert p.mutants_retired == ["m9"] and p.last_green and decision == "final_round" and p.final_round
    p, decision = advance(p, gate(GREEN), GREEN)
    assert decision == "accepted" == p.decision and not p.final_round


def test_a_round_that_fails_everything_lists_every_reason_in_order() -> None:
    facts = GREEN.model_copy(update={"stable": False, "passed": 7, "blockers": ["drift: average"],
                                     "mutants_detected": 3, "seals_ok": False})
    assert gate(facts).reasons == ["the run was not byte-identical when repeated", "7/10 pass", "drift: average",
                                   "kill rate 3/5: the exam has blind spots", "a seal did not verify"]
    short = GREEN.model_copy(update={"mutants_judged": 2, "mutants_detected": 1, "min_mutants": 3})
    assert gate(short).reasons == ["only 2 mutants judged (the gate needs 3)"]


def test_exactly_the_minimum_of_judged_mutants_is_enough() -> None:
    assert gate(GREEN.model_copy(update={"min_mutants": 5})).green
    assert not gate(GREEN.model_copy(update={"min_mutants": 6})).green


def test_rounds_are_counted_one_by_one_and_a_red_final_round_goes_on() -> None:
    p = Progress(gate_n=1)
    p, decision = advance(p, gate(GREEN), GREEN)
    assert (p.rounds, decision, p.final_round) == (1, "final_round", True)
    red = GREEN.model_copy(update={"passed": 9})
    p, decision = advance(p, gate(red), red)
    assert (p.rounds, decision, p.final_round, p.decision) == (2, "next_round", False, "next_round")


def test_certification_reasons_say_who_what_and_when() -> None:
    played = [_played("scripted", [], "judge"), _played("scripted", [], "builder", simulation=True),
              _played("command", ["physical-omission"]),
              Played(round=3, role="tester", driver="command", simulation=False, isolation=["physical-omission"])]
    exposed = ["exam/a", "exam/b", "exam/c", "exam/d", "exam/e"]
    cert = certify(played, [[]], unsafe_contract=True, fixed_seeds=True, exposed=exposed)
    assert cert.reasons == [
        "a simulation: the builder, judge replayed recorded actions (scripted)",
        "the tester (command) lacked bubblewrap (Landlock alone leaves unix sockets, UDP and file metadata open), "
        "write-audit in round(s) 1, 3",
        "role-written code (the target in every case and mutant, the exam's generator and oracle) ran outside the "
        "OS sandbox",
        "a role ran under an unsafe contract (an iron rule was overridden)",
        "the seeds were fixed by the caller (TRI_AGENT_SEED_SECRET), so the exam was predictable",
        "the in-session builder could read the exam's hidden parts in the project or its git history "
        "(exam/a, exam/b, exam/c, exam/d): keep the exam outside the project"]
    assert cert.drivers == {"builder": "scripted", "judge": "scripted", "tester": "command"}
    landlock = certify([_full("anthropic")], [["landlock"]], unsafe_contract=False, fixed_seeds=False)
    assert landlock.reasons == ["role-written code ran under Landlock only, which leaves the host's named unix "
                                "sockets and file metadata open: install bubblewrap to certify"]


def test_a_gamed_canary_stops_the_run_for_good_whatever_else_the_round_decides() -> None:
    for before in (Progress(gate_n=1, final_round=True, green_streak=1),  # it would have been accepted
                   Progress(gate_n=3, attempts={"builder:count:not_equal": FUSE - 1})):  # it would have escalated
        gamed = GREEN.model_copy(update={"canaries_gamed": ["c-0123456789ab"], "failing_tickets": [
            "builder:count:not_equal"]})
        p, d = advance(before, gate(gamed), gamed)
        assert d == "policy" and p.gamed == ["round 1: c-0123456789ab"]
        later = GREEN.model_copy(update={"round": 2})
        assert advance(p, gate(later), later)[1] == "policy"  # sticky: no later round undoes it


def test_canary_tickets_are_counted_apart_from_the_fuse() -> None:
    p = Progress(gate_n=3)
    pressed = GREEN.model_copy(update={"passed": 3, "pressure": ["builder:behavior:observed-rejected"]})
    for _ in range(FUSE + 1):
        p, d = advance(p, gate(pressed), pressed)
        assert d == "next_round"
    assert p.pressed == {"builder:behavior:observed-rejected": FUSE + 1} and p.attempts == {}


@pytest.mark.parametrize("sham, red", [("passed", False), ("not run", False), ("case c-1: behaviour 'crashed'", True)])
def test_a_round_whose_sham_was_told_apart_is_red_at_a_full_kill_rate(sham: str, red: bool) -> None:
    from pathlib import Path

    from tri_agent.acceptance._rounds import _facts, _Round
    from tri_agent.mutation._verdict import MutantOutcome, summarise

    killed = [MutantOutcome(id=f"op:f.py:{n}", bug_class="x", operator="op", status="Killed", reason="case c-1")
              for n in range(5)]
    summary = summarise(killed, threshold=1.0, minimum=3, digest="", unexpressed=[], isolation=[], sham=sham)
    rnd = _Round(k=1, seed="s", final=False, build=Path("b"), run=Path("r"))
    facts = _facts(rnd, None, True, summary, None, [], [])  # no score report: the round's own blocker says so
    mutation = [b for b in facts.blockers if b.startswith("mutation gate:")]
    result = gate(facts.model_copy(update={"passed": 10, "total": 10, "blockers": mutation}))
    assert facts.mutants_detected == facts.mutants_judged == 5
    assert result.green is not red
    assert red == any("an edit that changes nothing was told apart" in r for r in result.reasons)
