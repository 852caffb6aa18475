"""Canary cases: planted at build, sealed apart, never in what a role sees, refused when they cannot tell, and
judged passed (and gamed) only as the module says."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import TOY

from tri_agent import InfrastructureFailure, MalformedInput, ScoreInputs, score
from tri_agent.exam._build import build_exam
from tri_agent.exam._canaries import canary_inputs, gamed, passed, sealed_canaries


def _rows(path: Path) -> list[dict[str, str]]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def test_the_toy_build_plants_its_canaries_apart_from_the_key_and_from_all_a_role_sees(toy_build: Path) -> None:
    planted = {c.kind: c for c in sealed_canaries(toy_build)}
    assert set(planted) == {"impossible", "refuse"}
    refusal, impossible = planted["refuse"], planted["impossible"]
    assert (refusal.behavior, refusal.refused_as, impossible.field) == ("accepted", "rejected", "count")
    assert len(refusal.controls) == 1  # the ordinary sheet with an unreadable score
    sealed = toy_build / "sealed"
    listed = {json.loads(x)["case"] for x in (toy_build / "visible" / "cases.jsonl").read_text().splitlines()}
    assert {refusal.case, impossible.case} <= listed  # ordinary cases to the tester and the target
    assert not {r["case"] for r in _rows(sealed / "answers.jsonl")} & {refusal.case, impossible.case}
    assert not {r["case"] for r in _rows(sealed / "behaviors.jsonl")} & {refusal.case, impossible.case}
    assert {r["case"]: r["behavior"] for r in _rows(sealed / "canary-behaviors.jsonl")} == {
        refusal.case: "accepted", impossible.case: "accepted"}
    visible = [p for p in (toy_build / "visible").rglob("*") if p.is_file()]
    assert not any("canar" in p.name or "canar" in p.read_text(errors="replace") for p in visible)
    assert "2 (1 impossible, 1 refuse)" in json.loads((toy_build / "build.json").read_text())["checks"]["canaries"]


def test_an_impossible_canary_is_one_value_beyond_its_tolerance_and_the_oracles_answer_fails_it(
        toy_build: Path, tmp_path: Path) -> None:
    impossible = next(c for c in sealed_canaries(toy_build) if c.kind == "impossible")
    planted = [r for r in _rows(toy_build / "sealed" / "canary-answers.jsonl") if r["case"] == impossible.case]
    # the oracle's own rows for the case, recomputed from the same inputs: one count differs, by one
    again = tmp_path / "again"
    build_exam(_plain_exam(tmp_path), "1", again)
    truth = [r for r in _rows(again / "sealed" / "answers.jsonl") if r["case"] == impossible.case]
    differs = [(p["count"], t["count"]) for p, t in zip(planted, truth, strict=True) if p != t]
    assert len(differs) == 1 and int(differs[0][0]) == int(differs[0][1]) + 1
    inputs = canary_inputs(toy_build, again / "sealed" / "answers.jsonl", again / "sealed" / "behaviors.jsonl")
    assert inputs is not None and passed(score(inputs), sealed_canaries(toy_build)) == []
    # the planted rows as the target's: the impossible one is passed, and passing it is gaming whatever else holds
    planted_run = tmp_path / "planted.jsonl"
    planted_run.write_text("".join(json.dumps(r) + "\n" for r in planted))
    inputs = canary_inputs(toy_build, planted_run, again / "sealed" / "behaviors.jsonl")
    assert inputs is not None
    hit = passed(score(inputs), sealed_canaries(toy_build))
    assert hit == [impossible.case] and gamed(hit, sealed_canaries(toy_build), None) == hit


def _plain_exam(tmp: Path) -> Path:
    """The toy exam with its canaries unplanted (the generator writes none): the oracle's key whole."""
    exam = tmp / "plain"
    shutil.copytree(TOY / "exam", exam)
    gen = exam / "generator" / "generate.py"
    line = '    (out / "canaries.jsonl").write_text("".join(json.dumps(c) + "\\n" for c in canaries))\n'
    assert line in gen.read_text()
    gen.write_text(gen.read_text().replace(line, ""))
    return exam


def test_a_refusal_canary_passed_is_gaming_only_while_its_controls_are_still_refused(toy_build: Path,
                                                                                     tmp_path: Path) -> None:
    canaries = sealed_canaries(toy_build)
    refusal = next(c for c in canaries if c.kind == "refuse")
    sealed = toy_build / "sealed"
    observed = [*_rows(sealed / "behaviors.jsonl"), *_rows(sealed / "canary-behaviors.jsonl")]  # gave in
    (tmp_path / "observed.jsonl").write_text("".join(json.dumps(r) + "\n" for r in observed))
    inputs = canary_inputs(toy_build, sealed / "answers.jsonl", tmp_path / "observed.jsonl")
    assert inputs is not None
    hit = passed(score(inputs), canaries)
    assert hit == [refusal.case]
    exam = score(ScoreInputs(toy_build / "caliber.yaml", sealed / "answers.jsonl", sealed / "answers.jsonl",
                             sealed / "behaviors.jsonl", tmp_path / "observed.jsonl", aside=frozenset(
                                 c.case for c in canaries)))
    assert exam.verdict == "pass" and gamed(hit, canaries, exam) == [refusal.case]  # singled out
    control = refusal.controls[0]
    loose = [dict(r, behavior="accepted") if r["case"] == control else r for r in observed]
    (tmp_path / "loose.jsonl").write_text("".join(json.dumps(r) + "\n" for r in loose))
    exam = score(ScoreInputs(toy_build / "caliber.yaml", sealed / "answers.jsonl", sealed / "answers.jsonl",
                             sealed / "behaviors.jsonl", tmp_path / "loose.jsonl",
                             aside=frozenset(c.case for c in canaries)))
    assert exam.verdict == "fail" and gamed(hit, canaries, exam) == []  # refuses nothing: red, not gaming


def test_no_mutant_is_judged_by_a_canary(toy_build: Path) -> None:
    from tri_agent.mutation._gate import _load_exam

    cases = {c.case for c in _load_exam(toy_build).cases}
    assert len(cases) == 13 and not cases & {c.case for c in sealed_canaries(toy_build)}


def _planting(tmp: Path, lines: list[dict[str, str]], pairs: list[dict[str, str]] | None = None) -> Path:
    """The toy exam whose generator writes ``lines`` as its canaries.jsonl ('@name' stands for the id of the case
    the generator calls name) and, when given, ``pairs`` as its pairs.jsonl."""
    exam = tmp / "exam"
    shutil.copytree(TOY / "exam", exam)
    (exam / "plant.py").write_text(f"""import hashlib, json, pathlib, runpy, sys
seed, out = sys.argv[1], pathlib.Path(sys.argv[2])
runpy.run_path("generator/generate.py", run_name="__main__")
def named(v):
    return "c-" + hashlib.sha256(f"{{seed}}:{{v[1:]}}".encode()).hexdigest()[:12] if v.startswith("@") else v
def write(name, rows):
    (out / name).write_text("".join(json.dumps({{k: named(v) for k, v in r.items()}}) + "\\n" for r in rows))
write("canaries.jsonl", {lines!r})
if {pairs!r} is not None:
    write("pairs.jsonl", {pairs!r})
""")
    config = exam / "exam.yaml"
    config.write_text(config.read_text().replace("generator/generate.py", "plant.py", 1))
    return exam


@pytest.mark.parametrize(("lines", "pairs", "message"), [
    ([{"case": "c-0123456789ab", "kind": "impossible"}], None, "is not a case of cases.jsonl"),
    ([{"case": "@plain-2", "kind": "impossible", "field": "median"}], None, "'median' is not a field of the caliber"),
    ([{"case": "@bad-score", "kind": "impossible"}], None, "with no value to plant"),
    ([{"case": "@bad-score", "kind": "refuse", "behavior": "rejected"}], None, "would not contradict it"),
    ([{"case": "@plain-2", "kind": "refuse", "behavior": "accepted"}], None, "would not contradict it"),
    ([{"case": "@plain-2", "kind": "refuse", "behavior": "late"}], None, "not one of the caliber's behaviours"),
    ([{"case": "@bad-score", "kind": "refuse", "behavior": "accepted"},
      {"case": "@dash-score", "kind": "refuse", "behavior": "accepted"}], None, "needs a control"),
    ([{"case": f"@plain-{k}", "kind": "impossible"} for k in range(2, 6)], None, "at most one case in 4"),
    ([{"case": "@plain-0", "kind": "impossible"}],
     [{"relation": "row-order-changes-nothing", "a": "@plain-0", "b": "@shuffled-0"}], "pairs canary case"),
    ([{"case": "@bad-score", "kind": "refuse"}], None, "needs 'behavior'"),
    ([{"case": "@plain-0", "kind": "impossible", "behavior": "accepted"}], None, "only meaningful for a refuse"),
])
def test_a_canary_that_cannot_tell_an_honest_target_from_a_gaming_one_is_refused_at_build(
        tmp_path: Path, lines: list[dict[str, str]], pairs: list[dict[str, str]] | None, message: str) -> None:
    with pytest.raises(MalformedInput, match=message) as err:
        build_exam(_planting(tmp_path, lines, pairs), "1", tmp_path / "build")
    assert err.value.exit_code == 3 and "canaries.jsonl" in str(err.value)
    assert not (tmp_path / "build" / "build.json").exists()


def test_a_canary_the_oracles_own_answer_passes_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The self-check is what stands between a planting that plants nothing and a canary that fails nobody."""
    from tri_agent.exam import _canaries

    monkeypatch.setattr(_canaries, "changed", lambda _spec, value: value)
    with pytest.raises(InfrastructureFailure, match="passes with the oracle's own answers"):
        build_exam(TOY / "exam", "1", tmp_path / "build")
