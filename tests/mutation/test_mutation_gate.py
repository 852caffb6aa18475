"""The mutation gate on toy-grades: kills, an equivalent mutant, survivors, drifted anchors, rotation."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from conftest import toy_copy
from hypothesis import given
from hypothesis import strategies as st

from tri_agent import InfrastructureFailure, MalformedInput, UsageError
from tri_agent.mutation._gate import mutate, rotate

# a real bug the exam cannot see: its cases never hold a score above 100
CLAMP = """  - id: m-clamp-high-scores
    bug_class: bounds
    file: grades.py
    anchor: "score = Decimal(row[col[\\"score\\"]].strip())"
    replace: "score = min(Decimal(row[col[\\"score\\"]].strip()), Decimal(1000))"
    witness: {scores.csv: "student,group,score\\ns1,A,5000\\n"}
"""
SCHEMA = json.loads((Path(__file__).resolve().parents[1] / "data" / "mutation-testing-report-schema.json").read_text())


def test_gate_kills_every_menu_mutant_and_detects_the_equivalent_one(toy_build: Path, tmp_path: Path) -> None:
    toy = toy_copy(tmp_path / "toy", fixed=True)
    summary = mutate(toy / "target.yaml", toy_build, toy / "exam" / "mutations.yaml", tmp_path / "m")
    status = {m.id: m.status for m in summary.mutants}
    assert status.pop("m-sorted-keys") == "Ignored"  # the witness shows no difference: equivalent
    assert set(status.values()) == {"Killed"} and len(status) == 8
    assert summary.verdict == "pass" and summary.kill_rate == 1.0
    # drift-only bugs are killed by the whole-exam check, the others by a first failing case
    assert {m.id for m in summary.mutants if m.killed_by == ["whole-exam"]} == {"m-half-even", "m-half-down"}
    report = json.loads((tmp_path / "m" / "mutation-report.json").read_text())
    jsonschema.validate(report, SCHEMA)
    assert report["files"]["grades.py"]["mutants"][0]["location"]["start"]["line"] > 1
    page = (tmp_path / "m" / "mutation-report.html").read_text()
    assert "<script" not in page and "http" not in page.lower().replace('lang="en"', "") and "m-half-even" in page


def test_a_survivor_is_a_blind_spot_and_fails_the_gate(toy_build: Path, tmp_path: Path) -> None:
    toy = toy_copy(tmp_path / "toy", fixed=True)
    menu = tmp_path / "menu.yaml"
    menu.write_text("schema_version: 1\nmutants:\n" + CLAMP + """  - id: m-count-plus-one
    bug_class: off-by-one
    file: grades.py
    anchor: "len(values), total.quantize(CENT)"
    replace: "len(values) + 1, total.quantize(CENT)"
    witness: {scores.csv: "student,group,score\\ns1,A,70\\n"}
""")
    summary = mutate(toy / "target.yaml", toy_build, menu, tmp_path / "m", minimum=2)
    assert [m.status for m in summary.mutants] == ["Survived", "Killed"]
    assert summary.verdict == "fail" and summary.kill_rate == 0.5
    assert any("blind spots: m-clamp-high-scores" in r for r in summary.reasons)
    too_few = mutate(toy / "target.yaml", toy_build, menu, tmp_path / "m2", only=["m-count-plus-one"])
    assert too_few.verdict == "fail" and "the gate needs at least 3" in too_few.reasons[0]


def test_a_drifted_anchor_is_refused_before_anything_runs(toy_build: Path, tmp_path: Path) -> None:
    toy = toy_copy(tmp_path / "toy", fixed=False)  # the menu's anchors name the fixed code
    with pytest.raises(MalformedInput, match="anchor 'rounding=ROUND_HALF_UP\\)' occurs 0 times"):
        mutate(toy / "target.yaml", toy_build, toy / "exam" / "mutations.yaml", tmp_path / "m")
    assert not (tmp_path / "m").exists()


def test_the_clean_run_must_pass(toy_build: Path, tmp_path: Path) -> None:
    toy = toy_copy(tmp_path / "toy", fixed=False)
    menu = tmp_path / "menu.yaml"
    menu.write_text("""schema_version: 1
mutants:
  - {id: m-x, bug_class: off-by-one, file: grades.py, anchor: "len(values), total", replace: "len(values) + 1, total",
     witness: {scores.csv: "student,group,score\\ns1,A,70\\n"}}
""")
    with pytest.raises(InfrastructureFailure, match="clean run does not pass"):
        mutate(toy / "target.yaml", toy_build, menu, tmp_path / "m")


@given(size=st.integers(1, 12), used=st.integers(0, 12), red=st.booleans(), seed=st.text(max_size=4))
def test_rotation_brings_enough_new_mutants(size: int, used: int, red: bool, seed: str) -> None:
    menu = [f"m{i:02d}" for i in range(24)]
    previous = menu[:used]
    try:
        chosen = rotate(menu, previous, red=red, size=size, seed=seed)
    except UsageError:
        return
    new = [m for m in chosen if m not in previous]
    assert len(chosen) == size == len(set(chosen)) and set(chosen) <= set(menu)
    assert len(new) * (2 if red else 10) >= size * (1 if red else 3)
    assert chosen == rotate(menu, previous, red=red, size=size, seed=seed)  # deterministic for a seed


def test_a_stale_menu_still_gives_a_sample_and_says_it_is_short() -> None:
    from tri_agent.mutation._gate import rotation

    sample = rotation(["a", "b", "c", "d"], ["a", "b", "c"], red=True, size=4, seed="s")
    assert sample.chosen == ["a", "b", "c", "d"] and sample.new == ["d"] and sample.need == 2 and sample.short
    fresh = rotation(["a", "b", "c", "d"], ["a"], red=False, size=3, seed="s")
    assert len(fresh.chosen) == 3 and len(fresh.new) >= 1 and not fresh.short


def test_rotation_refuses_when_the_menu_is_exhausted() -> None:
    with pytest.raises(UsageError, match="unused mutants"):
        rotate(["a", "b", "c"], ["a", "b", "c"], red=True, size=2, seed="s")


def test_mutmut_mutants_are_selected_by_environment_and_judged_by_the_case_runner(toy_build: Path,
                                                                                    tmp_path: Path) -> None:
    toy = toy_copy(tmp_path / "toy", fixed=True)
    summary = mutate(toy / "target.yaml", toy_build, toy / "exam" / "mutations.yaml", tmp_path / "m",
                     only=[], mutmut=5, seed="7", minimum=1, threshold=0.0)
    syntactic = [m for m in summary.mutants if m.id.startswith("mutmut:grades.x_")]
    assert len(syntactic) == 5
    # a selected mutant really runs: mutmut's own trampolines would run the original code otherwise
    assert any(m.status == "Killed" for m in syntactic)
    report = json.loads((tmp_path / "m" / "mutation-report.json").read_text())
    jsonschema.validate(report, SCHEMA)
    again = mutate(toy / "target.yaml", toy_build, toy / "exam" / "mutations.yaml", tmp_path / "m2",
                   only=[], mutmut=5, seed="7", minimum=1, threshold=0.0)
    assert [m.id for m in again.mutants] == [m.id for m in summary.mutants]  # the sample is seeded


def test_a_hanging_mutant_times_out_after_a_multiple_of_the_clean_run(toy_build: Path, tmp_path: Path) -> None:
    toy = toy_copy(tmp_path / "toy", fixed=True)
    menu = tmp_path / "menu.yaml"
    menu.write_text("""schema_version: 1
mutants:
  - id: m-hang-on-empty-group
    bug_class: hang
    file: grades.py
    anchor: "    groups = {}\\n"
    replace: "    groups = {}\\n    __import__('time').sleep(60 if len(scores) > 1 else 0)\\n"
    witness: {scores.csv: "student,group,score\\ns1,A,70\\ns2,A,71\\n"}
""")
    import time

    start = time.monotonic()
    summary = mutate(toy / "target.yaml", toy_build, menu, tmp_path / "m", minimum=1)
    assert [m.status for m in summary.mutants] == ["Timeout"] and summary.verdict == "pass"
    assert time.monotonic() - start < 45  # 20 s is the target's own limit; the mutant's is far lower


def test_differential_calibration_on_a_target_that_does_not_pass_yet(toy_build: Path, tmp_path: Path) -> None:
    toy = toy_copy(tmp_path / "toy", fixed=False)  # still has both planted bugs
    summary = mutate(toy / "target.yaml", toy_build, toy / "exam" / "mutations.yaml", tmp_path / "m",
                     differential=True, skip_drifted=True)
    status = {m.id: m.status for m in summary.mutants}
    # the rounding and strip anchors name code the fix will write: not in this version
    assert {status["m-half-even"], status["m-half-down"], status["m-strip-dropped"]} == {"Ignored"}
    assert status["m-sorted-keys"] == "Ignored"  # equivalent, by its witness
    killed = [i for i, s in status.items() if s == "Killed"]
    assert len(killed) >= 3 and summary.verdict == "pass"
    jsonschema.validate(json.loads((tmp_path / "m" / "mutation-report.json").read_text()), SCHEMA)


def test_differential_survivor_is_still_a_blind_spot(toy_build: Path, tmp_path: Path) -> None:
    toy = toy_copy(tmp_path / "toy", fixed=False)
    menu = tmp_path / "menu.yaml"
    menu.write_text("schema_version: 1\nmutants:\n" + CLAMP)
    summary = mutate(toy / "target.yaml", toy_build, menu, tmp_path / "m", differential=True, minimum=1)
    assert [m.status for m in summary.mutants] == ["Survived"] and summary.verdict == "fail"
