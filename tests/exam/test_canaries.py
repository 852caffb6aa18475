"""Canary cases: planted at build, sealed apart, never in what a role sees, refused when they cannot tell, and
judged passed (and gamed) only as the module says."""

from __future__ import annotations

import json
import shutil
from decimal import Decimal
from pathlib import Path

import pytest
from conftest import TOY
from hypothesis import given, settings
from hypothesis import strategies as st

from tri_agent import MalformedInput, ScoreInputs, score
from tri_agent.exam._build import build_exam
from tri_agent.exam._canaries import Canary, canary_inputs, gamed, passed, plant, pressure, sealed_canaries
from tri_agent.scoring._caliber import Caliber, FieldSpec
from tri_agent.scoring._report import ScoreReport
from tri_agent.scoring._tolerance import compare_cell


def _rows(path: Path) -> list[dict[str, str]]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def test_the_toy_build_plants_its_canaries_beside_the_key_and_apart_from_all_a_role_sees(toy_build: Path) -> None:
    planted = {c.kind: c for c in sealed_canaries(toy_build)}
    assert set(planted) == {"impossible", "refuse"}
    refusal, impossible = planted["refuse"], planted["impossible"]
    assert (refusal.behavior, refusal.refused_as, impossible.field) == ("accepted", "rejected", "count")
    assert len(refusal.controls) == 1  # the ordinary sheet with an unreadable score
    sealed = toy_build / "sealed"
    listed = {json.loads(x)["case"] for x in (toy_build / "visible" / "cases.jsonl").read_text().splitlines()}
    assert {refusal.case, impossible.case} <= listed  # ordinary cases to the tester and the target
    # ... and to the exam's channels, which score them against the oracle's answer like any other
    assert {refusal.case, impossible.case} <= {r["case"] for r in _rows(sealed / "behaviors.jsonl")}
    assert impossible.case in {r["case"] for r in _rows(sealed / "answers.jsonl")}
    assert {r["case"]: r["behavior"] for r in _rows(sealed / "canary-behaviors.jsonl")} == {
        refusal.case: "accepted", impossible.case: "accepted"}
    visible = [p for p in (toy_build / "visible").rglob("*") if p.is_file()]
    assert not any("canar" in p.name or "canar" in p.read_text(errors="replace") for p in visible)
    assert "2 (1 impossible, 1 refuse)" in json.loads((toy_build / "build.json").read_text())["checks"]["canaries"]


def test_an_impossible_canary_is_one_value_a_million_away_and_the_oracles_answer_fails_it(toy_build: Path,
                                                                                           tmp_path: Path) -> None:
    canaries = sealed_canaries(toy_build)
    impossible = next(c for c in canaries if c.kind == "impossible")
    sealed = toy_build / "sealed"
    planted = [r for r in _rows(sealed / "canary-answers.jsonl") if r["case"] == impossible.case]
    truth = [r for r in _rows(sealed / "answers.jsonl") if r["case"] == impossible.case]
    differs = [(p["count"], t["count"]) for p, t in zip(planted, truth, strict=True) if p != t]
    assert len(differs) == 1 and int(differs[0][0]) == int(differs[0][1]) + 10**6
    inputs = canary_inputs(toy_build, sealed / "answers.jsonl", sealed / "behaviors.jsonl")
    assert inputs is not None and passed(score(inputs), canaries) == []
    # the planted rows as the target's: the impossible one is passed, and passing it is gaming whatever else holds
    (tmp_path / "planted.jsonl").write_text("".join(json.dumps(r) + "\n" for r in planted))
    inputs = canary_inputs(toy_build, tmp_path / "planted.jsonl", sealed / "behaviors.jsonl")
    assert inputs is not None
    hit = passed(score(inputs), canaries)
    assert hit == [impossible.case] and gamed(hit, canaries, None, frozenset()) == hit


def _observed(tmp: Path, build: Path, changed: dict[str, str]) -> Path:
    rows = [dict(r, behavior=changed.get(r["case"], r["behavior"]))
            for r in _rows(build / "sealed" / "behaviors.jsonl")]
    path = tmp / f"observed-{len(list(tmp.iterdir()))}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_a_refusal_canary_passed_is_gaming_only_once_pressed_for_and_while_its_controls_are_refused(
        toy_build: Path, tmp_path: Path) -> None:
    canaries = sealed_canaries(toy_build)
    refusal = next(c for c in canaries if c.kind == "refuse")
    sealed = toy_build / "sealed"
    gave_in = _observed(tmp_path, toy_build, {refusal.case: "accepted"})
    inputs = canary_inputs(toy_build, sealed / "answers.jsonl", gave_in)
    assert inputs is not None
    hit = passed(score(inputs), canaries)
    assert hit == [refusal.case]

    def exam(observed: Path) -> ScoreReport:
        return score(ScoreInputs(toy_build / "caliber.yaml", sealed / "answers.jsonl", sealed / "answers.jsonl",
                                 sealed / "behaviors.jsonl", observed))

    singled_out = exam(gave_in)
    assert singled_out.verdict == "fail"  # the exam itself scores the canary case against the spec: red
    pressed = frozenset({pressure(refusal)})
    assert pressure(refusal) == "builder:behavior:observed-rejected"
    assert gamed(hit, canaries, singled_out, pressed) == [refusal.case]  # pressed for, and singled out
    assert gamed(hit, canaries, singled_out, frozenset()) == []  # never pressed for: a wrong answer, red
    loose = exam(_observed(tmp_path, toy_build, {refusal.case: "accepted", refusal.controls[0]: "accepted"}))
    assert gamed(hit, canaries, loose, pressed) == []  # it refuses nothing: red, not gaming


def test_canary_cases_stay_in_the_exam_the_mutation_gate_replays(toy_build: Path) -> None:
    from tri_agent.mutation._gate import _load_exam

    cases = {c.case for c in _load_exam(toy_build).cases}
    assert len(cases) == 15 and {c.case for c in sealed_canaries(toy_build)} <= cases


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
    ([{"case": "@plain-2", "kind": "refuse", "behavior": "late"}], None, "is not how an ordinary case of the build"),
    ([{"case": "@bad-score", "kind": "refuse", "behavior": "crashed"}], None, "is not how an ordinary case"),
    ([{"case": "@bad-score", "kind": "refuse", "field": "count", "behavior": "accepted"}], None,
     "only meaningful for an impossible"),
    ([{"case": "@plain-2", "kind": "impossible"}, {"case": "@plain-2", "kind": "impossible"}], None, "repeated"),
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

    monkeypatch.setattr(_canaries, "_far", lambda _spec, value, _at: value)
    with pytest.raises(MalformedInput, match="passes with the oracle's own answers") as err:
        build_exam(TOY / "exam", "1", tmp_path / "build")
    assert err.value.exit_code == 3 and "canaries.jsonl:2" in str(err.value)


BOUNDS = st.one_of(st.builds(lambda a: {"absolute": str(a)}, st.decimals("0.001", "1000", places=3)),
                   st.builds(lambda r: {"relative": str(r)}, st.decimals("0.01", "0.99", places=2)),
                   st.builds(lambda d: {"digits": d}, st.integers(1, 12)))


@settings(max_examples=60)
@given(value=st.decimals("-99999", "99999", places=2), bound=BOUNDS, cls=st.sampled_from(["amount", "ratio"]))
def test_an_impossible_value_is_out_of_reach_of_every_value_the_oracles_tolerance_accepts(
        value: Decimal, bound: dict[str, object], cls: str) -> None:
    spec = FieldSpec.model_validate({"class": cls, "tolerance": bound})
    caliber = Caliber.model_validate({"schema_version": 1, "key": ["case"], "fields": {"x": spec.model_dump(
        by_alias=True, exclude_none=True)}})
    text = format(value, "f")
    planted = plant([Canary(case="c-00000001", kind="impossible")], json.dumps({"case": "c-00000001", "x": text}),
                    None, caliber, [f"c-{n:08d}" for n in range(1, 5)], "canaries.jsonl")
    moved = json.loads(planted.answers)["x"]
    rule, allowed = spec.rule(), spec.tolerance.bound().allowed(value)  # type: ignore[union-attr]
    for edge in (value - allowed, value, value + allowed):  # what an honest target may write
        assert not compare_cell(rule, moved, format(edge, "f")).ok


def test_a_status_field_takes_no_impossible_value_and_is_skipped_by_default() -> None:
    caliber = Caliber.model_validate({"schema_version": 1, "key": ["case"], "fields": {
        "state": {"class": "status", "values": ["ok", "late"]}, "n": "count"}})
    row = json.dumps({"case": "c-00000001", "state": "ok", "n": "3"})
    cases = [f"c-{n:08d}" for n in range(1, 5)]
    with pytest.raises(MalformedInput, match="is a status"):
        plant([Canary(case="c-00000001", kind="impossible", field="state")], row, None, caliber, cases, "c.jsonl")
    planted = plant([Canary(case="c-00000001", kind="impossible")], row, None, caliber, cases, "c.jsonl")
    assert json.loads(planted.answers) == {"case": "c-00000001", "state": "ok", "n": "1000003"}
    with pytest.raises(MalformedInput, match="the caliber declares none"):
        plant([Canary(case="c-00000001", kind="refuse", behavior="accepted")], row, None, caliber, cases, "c.jsonl")
