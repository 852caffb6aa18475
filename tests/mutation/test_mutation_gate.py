"""The mutation gate on toy-grades: mutants made from bug classes, kills, proven equivalence, survivors,
the judge's concrete mutants, differential calibration, coverage that lies, the report."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from conftest import TOY, toy_copy

from tri_agent import InfrastructureFailure, MalformedInput, UsageError
from tri_agent.mutation import _gate, _verdict
from tri_agent.mutation._gate import mutate, run_gate
from tri_agent.mutation._menu import load_menu
from tri_agent.mutation._operators import OPERATORS, instances
from tri_agent.sandbox._process import STOPPING

SCHEMA = json.loads((Path(__file__).resolve().parents[1] / "data" / "mutation-testing-report-schema.json").read_text())
ARGV_CHECK = "validation-skipped:grades.py:1eeda14db0"  # `if len(sys.argv) != 3: sys.exit(...)` never fires
UNIQUE_ALL = "duplicates-merged:grades.py:75ee4a0c33"  # the *ALL* row's scores made unique: live, rarely seen
# a real bug the exam cannot see: its cases never hold a score above 100
CLAMP = """schema_version: 1
mutants:
  - id: clamp-high-scores
    bug_class: bounds
    file: grades.py
    find: "score = Decimal(row[col[\\"score\\"]].strip())"
    replace: "score = min(Decimal(row[col[\\"score\\"]].strip()), Decimal(1000))"
"""


def _menu(tmp_path: Path, body: str) -> Path:
    menu = tmp_path / "menu.yaml"
    menu.write_text("schema_version: 2\nclasses:\n" + body)
    return menu


def test_a_menu_of_classes_only_gives_judged_mutants_of_every_class_the_code_can_express(toy_build: Path,
                                                                                        tmp_path: Path) -> None:
    toy = toy_copy(tmp_path / "toy", fixed=True)
    menu = load_menu(toy / "exam" / "mutations.yaml")
    assert all(not c.inputs or set(c.inputs[0]) == {"scores.csv"} for c in menu.classes)  # no code anywhere
    gate = run_gate(toy / "target.yaml", toy_build, toy / "exam" / "mutations.yaml", tmp_path / "m",
                    selection=_gate.Selection(per_class=1), exam_dir=toy / "exam", hunt_seeds=2)
    summary = gate.summary
    judged = {m.bug_class for m in summary.mutants if m.status in (*_verdict.DETECTED, *_verdict.UNDETECTED)}
    expressible = {c.id for c in menu.classes} - set(gate.rotation.empty_classes)
    ignored = {m.bug_class for m in summary.mutants if m.status == "Ignored"}
    assert expressible - ignored <= judged and len(judged) >= 7
    assert summary.killed == summary.judged and summary.verdict == "pass" and summary.sham == "passed"
    assert summary.figure().startswith(f"{summary.killed}/{summary.judged} killed")
    report = json.loads((tmp_path / "m" / "mutation-report.json").read_text())
    jsonschema.validate(report, SCHEMA)
    page = (tmp_path / "m" / "mutation-report.html").read_text()
    assert "<script" not in page and "http" not in page.lower().replace('lang="en"', "")


def test_an_honest_fix_written_differently_gets_the_same_classes(tmp_path: Path) -> None:
    from conftest import DIFFERENT_FIX  # the acceptance battery's honest control

    recorded, other = tmp_path / "a", tmp_path / "b"
    recorded.mkdir()
    other.mkdir()
    (recorded / "grades.py").write_text((TOY / "scripted" / "fixed-grades.py").read_text())
    (other / "grades.py").write_text(DIFFERENT_FIX)
    classes = [c.id for c in load_menu(TOY / "exam" / "mutations.yaml").classes]
    a, b = instances(recorded, classes), instances(other, classes)
    assert {i.bug_class for i in a} == {i.bug_class for i in b}
    assert {i.id for i in a} != {i.id for i in b}  # the code differs, so do the instances: new ones to judge


def test_a_truly_equivalent_mutant_is_ignored_with_its_evidence(toy_build: Path, tmp_path: Path) -> None:
    toy = toy_copy(tmp_path / "toy", fixed=True)
    summary = mutate(toy / "target.yaml", toy_build, toy / "exam" / "mutations.yaml", tmp_path / "m",
                     only=[ARGV_CHECK], exam_dir=toy / "exam", minimum=0)
    [m] = summary.mutants
    assert m.status == "Ignored" and m.reason.startswith(_verdict.EQUIVALENT) and m.cases_run == 0
    assert m.hunt is not None and len(m.hunt.seeds) == 20 and m.hunt.difference is None  # 20 fresh seeds by default
    assert m.hunt.inputs >= 20 * 13 and summary.judged == 0


def test_a_live_mutant_with_a_sloppy_class_input_is_judged_not_ignored(toy_build: Path, tmp_path: Path) -> None:
    toy = toy_copy(tmp_path / "toy", fixed=True)
    sloppy = _menu(tmp_path, '  - id: duplicates-merged\n    clause: "*ALL* covers every score"\n'
                             '    inputs: [{scores.csv: "student,group,score\\ns1,A,70\\ns2,B,80\\n"}]\n')
    (tmp_path / "x").mkdir()
    exposing = _menu(tmp_path / "x", '  - id: duplicates-merged\n    clause: "*ALL* covers every score"\n'
                                     '    inputs: [{scores.csv: "student,group,score\\ns1,A,70\\ns2,B,70\\n"}]\n')
    for menu, seeds in ((sloppy, 20), (exposing, 0)):
        summary = mutate(toy / "target.yaml", toy_build, menu, tmp_path / f"m-{seeds}", only=[UNIQUE_ALL],
                         exam_dir=toy / "exam", minimum=1, hunt_seeds=seeds)
        [m] = summary.mutants
        assert m.status == "Survived" and summary.verdict == "fail" and UNIQUE_ALL in summary.reasons[0]
        assert m.hunt is not None and m.hunt.difference is not None and "outputs" in m.hunt.difference
    # the class's own input exposes it at once; the sloppy one leaves the proof to the generator's fresh seeds
    assert "class:duplicates-merged#1" in m.hunt.difference


def test_without_any_hunt_input_a_survivor_stays_in_the_denominator(toy_build: Path, tmp_path: Path) -> None:
    toy = toy_copy(tmp_path / "toy", fixed=True)
    summary = mutate(toy / "target.yaml", toy_build, toy / "exam" / "mutations.yaml", tmp_path / "m",
                     only=[ARGV_CHECK], minimum=0)  # no exam folder: nothing to hunt over
    [m] = summary.mutants
    assert m.status == "NoCoverage" and "no hunt input" in m.reason and summary.judged == 1


def test_coverage_that_lies_cannot_save_a_mutant(toy_build: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    toy = toy_copy(tmp_path / "toy", fixed=True)
    real = _gate._clean_run

    def lying(target: object, exam: object, differential: bool) -> object:
        clean, got = real(target, exam, differential)  # type: ignore[arg-type]
        return _gate._Clean(clean.seconds, {case: {} for case in clean.lines}), got  # "no case reaches anything"

    monkeypatch.setattr(_gate, "_clean_run", lying)
    only = ["row-dropped:grades.py:96049a5919"]  # the *ALL* row dropped
    summary = mutate(toy / "target.yaml", toy_build, toy / "exam" / "mutations.yaml", tmp_path / "m", only=only,
                     minimum=1)
    [m] = summary.mutants
    assert m.status == "Killed" and m.killed_by and m.cases_run >= 1  # the real runs decided, not the trace


ORDER_LOST = "order-lost:grades.py:2104d460a8"  # groups in set order: only the exam as a whole sees it


def test_a_kill_only_the_whole_exam_sees_costs_one_fork_server_pass_not_every_real_case(toy_build: Path,
                                                                                        tmp_path: Path) -> None:
    toy = toy_copy(tmp_path / "toy", fixed=True)
    summary = mutate(toy / "target.yaml", toy_build, toy / "exam" / "mutations.yaml", tmp_path / "m",
                     only=[ORDER_LOST], minimum=1)
    [m] = summary.mutants
    assert m.status == "Killed" and m.killed_by == ["whole-exam"] and "fork server" in m.reason
    assert m.cases_run <= 1 and summary.fork_server == "agrees"


def _fork_aware(toy: Path) -> None:
    """The fixed toy, but its rows come out backwards when run through the fork server (its server imported ctypes)."""
    grades = toy / "target" / "grades.py"
    text = grades.read_text()
    rows = '        rows = summarize(scores)\n        if "ctypes" in sys.modules:\n            rows.reverse()\n'
    old = "        writer.writerows(summarize(scores))\n"
    grades.write_text(text.replace(old, rows + "        writer.writerows(rows)\n"))
    assert "rows.reverse()" in grades.read_text()


@pytest.mark.parametrize("forced", [False, True])
def test_a_target_that_behaves_otherwise_on_the_fork_server_gets_no_kill_from_it(
        toy_build: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forced: bool) -> None:
    toy = toy_copy(tmp_path / "toy", fixed=True)
    _fork_aware(toy)
    if forced:  # without the check, the fork server's reversed rows would "kill" a live survivor
        monkeypatch.setattr(_gate._ForkCheck, "agrees", lambda *_args: True)
    concrete = tmp_path / "mutants.yaml"  # other bytes, the same rows: a change the exam rightly accepts
    concrete.write_text('schema_version: 1\nmutants:\n  - id: crlf\n    bug_class: encoding\n    file: grades.py\n'
                        '    find: "lineterminator=\\"\\\\n\\""\n    replace: "lineterminator=\\"\\\\r\\\\n\\""\n')
    summary = mutate(toy / "target.yaml", toy_build, toy / "exam" / "mutations.yaml", tmp_path / "m", only=[],
                     concrete=concrete, minimum=1)
    [m] = summary.mutants
    if forced:
        assert m.status == "Killed" and m.killed_by == ["whole-exam"]
    else:
        cases = len((toy_build / "visible" / "cases.jsonl").read_text().splitlines())
        assert summary.fork_server == "disagrees" and m.status == "Survived" and m.confirmed and m.cases_run == cases


def test_the_judges_concrete_mutants_are_judged_and_stale_ones_are_named(toy_build: Path, tmp_path: Path) -> None:
    toy = toy_copy(tmp_path / "toy", fixed=True)
    concrete = tmp_path / "mutants.yaml"
    concrete.write_text(CLAMP + """  - id: hang-on-many
    bug_class: hang
    file: grades.py
    find: "    groups = {}\\n"
    replace: "    groups = {}\\n    __import__('time').sleep(60 if len(scores) > 1 else 0)\\n"
  - id: stale
    bug_class: bounds
    file: grades.py
    find: "this text is not in the code"
    replace: "x"
""")
    import time

    start = time.monotonic()
    # no input of the class and a generator that never writes a score above 100: out of the exam's domain the
    # clamp changes nothing, so the hunt proves it equivalent there
    blind = mutate(toy / "target.yaml", toy_build, toy / "exam" / "mutations.yaml", tmp_path / "m", only=[],
                   concrete=concrete, minimum=1, exam_dir=toy / "exam", hunt_seeds=2)
    status = {m.id: m.status for m in blind.mutants}
    assert status == {"judge:clamp-high-scores": "Ignored", "judge:hang-on-many": "Timeout", "judge:stale": "Ignored"}
    assert time.monotonic() - start < 90  # 20 s is the target's own limit; the mutant's is far lower
    assert "not applicable" in next(m.reason for m in blind.mutants if m.id == "judge:stale")
    # the examiner names the class with an input that reaches past 100: the same mutant is live, a blind spot
    menu = _menu(tmp_path, '  - id: bounds\n    clause: "any score"\n'
                           '    inputs: [{scores.csv: "student,group,score\\ns1,A,5000\\n"}]\n')
    seen = mutate(toy / "target.yaml", toy_build, menu, tmp_path / "m2", only=[], concrete=concrete, minimum=1)
    clamp = next(m for m in seen.mutants if m.id == "judge:clamp-high-scores")
    assert clamp.status == "Survived" and clamp.hunt and "class:bounds#1" in (clamp.hunt.difference or "")
    assert seen.judged == 2 and "judge:clamp-high-scores" in seen.reasons[0]


def test_a_version_1_menu_with_code_is_refused_with_what_to_write(tmp_path: Path) -> None:
    menu = tmp_path / "menu.yaml"
    menu.write_text("schema_version: 1\nmutants:\n  - {id: m, bug_class: x, file: a.py, anchor: a, replace: b, "
                    "witness: {a: b}}\n")
    with pytest.raises(MalformedInput, match="holds code") as caught:
        load_menu(menu)
    assert "schema_version: 2" in (caught.value.hint or "")
    dup = _menu(tmp_path, '  - {id: a, clause: "x"}\n  - {id: a, clause: "y"}\n')
    with pytest.raises(MalformedInput, match="listed twice"):
        load_menu(dup)


def test_the_clean_run_must_pass(toy_build: Path, tmp_path: Path) -> None:
    toy = toy_copy(tmp_path / "toy", fixed=False)
    with pytest.raises(InfrastructureFailure, match="clean run does not pass"):
        mutate(toy / "target.yaml", toy_build, toy / "exam" / "mutations.yaml", tmp_path / "m")
    assert not (tmp_path / "m").exists()


def test_differential_calibration_on_a_target_that_does_not_pass_yet(toy_build: Path, tmp_path: Path) -> None:
    toy = toy_copy(tmp_path / "toy", fixed=False)  # still has both planted bugs
    summary = mutate(toy / "target.yaml", toy_build, toy / "exam" / "mutations.yaml", tmp_path / "m",
                     differential=True, selection=_gate.Selection(per_class=1), minimum=3)
    killed = [m for m in summary.mutants if m.status == "Killed"]
    assert len(killed) >= 5
    # the buggy code has HALF_EVEN: the operator swaps it to HALF_UP there, which the exam sees as a change
    assert any(m.operator == "rounding-swap" and m.status == "Killed" for m in summary.mutants)
    survivors = [m for m in summary.mutants if m.status in _verdict.UNDETECTED]
    assert all("not hunted (a calibration round)" in m.reason for m in survivors)
    jsonschema.validate(json.loads((tmp_path / "m" / "mutation-report.json").read_text()), SCHEMA)


def test_every_operator_has_a_row_and_a_class_the_presets_name() -> None:
    from tri_agent.targets._presets import load_presets

    named = {c.id for p in load_presets().values() for c in p.mutation_bug_classes}
    for op in OPERATORS.values():
        assert op.description and set(op.classes) & named, op.id


def test_mutmut_mutants_are_selected_by_environment_and_judged_by_the_case_runner(toy_build: Path,
                                                                                    tmp_path: Path) -> None:
    toy = toy_copy(tmp_path / "toy", fixed=True)
    summary = mutate(toy / "target.yaml", toy_build, toy / "exam" / "mutations.yaml", tmp_path / "m",
                     only=[], mutmut=5, seed="7", minimum=1, threshold=0.0)
    syntactic = [m for m in summary.mutants if m.id.startswith("mutmut:grades.x_")]
    assert len(syntactic) == 5
    # a selected mutant really runs: mutmut's own trampolines would run the original code otherwise
    assert any(m.status == "Killed" for m in syntactic)
    jsonschema.validate(json.loads((tmp_path / "m" / "mutation-report.json").read_text()), SCHEMA)


def test_a_gate_cut_short_keeps_its_verdicts_and_a_resume_judges_only_the_rest(toy_build: Path, tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: verdicts were written only at the end, so a gate killed after 25 minutes left nothing."""
    toy = toy_copy(tmp_path / "toy", fixed=True)
    menu, out = toy / "exam" / "mutations.yaml", tmp_path / "m"
    options = {"selection": _gate.Selection(per_class=1), "exam_dir": toy / "exam", "hunt_seeds": 1, "jobs": 1}
    judge, judged = _gate._judge, []

    def cut_after_two(ctx: object, plan: _gate._Plan, scratch: Path) -> _verdict.MutantOutcome:
        if len(judged) == 3:
            raise KeyboardInterrupt
        if len(judged) == 2:  # SIGTERM comes while the third is judged: its runs are cut short, its "verdict" is none
            STOPPING.set()
        judged.append(plan.id)
        return judge(ctx, plan, scratch)  # type: ignore[arg-type]

    monkeypatch.setattr(_gate, "_judge", cut_after_two)
    try:
        with pytest.raises(KeyboardInterrupt):
            run_gate(toy / "target.yaml", toy_build, menu, out, **options)  # type: ignore[arg-type]
    finally:
        STOPPING.clear()
    lines = (out / "verdicts.jsonl").read_text().splitlines()
    assert [json.loads(line)["outcome"]["id"] for line in lines] == judged[:2] and not (out / "summary.json").exists()
    del judged[2:]
    with (out / "verdicts.jsonl").open("a") as torn:
        torn.write('{"schema_version": 1, "tree": "')  # the kill cut the next line in half
    with pytest.raises(UsageError, match="already holds a mutation report"):
        run_gate(toy / "target.yaml", toy_build, menu, out, **options)  # type: ignore[arg-type]
    first, judged[:] = list(judged), []

    def counted(ctx: object, plan: _gate._Plan, scratch: Path) -> _verdict.MutantOutcome:
        judged.append(plan.id)
        return judge(ctx, plan, scratch)  # type: ignore[arg-type]

    monkeypatch.setattr(_gate, "_judge", counted)
    gate = run_gate(toy / "target.yaml", toy_build, menu, out, resume=True, **options)  # type: ignore[arg-type]
    summary = gate.summary
    assert summary.carried == len(first) == 2  # the summary says what it did not judge again
    assert not set(first) & set(judged) and {m.id for m in summary.mutants} >= set(first) | set(judged)
    whole = run_gate(toy / "target.yaml", toy_build, menu, tmp_path / "whole",
                     **options).summary  # type: ignore[arg-type]
    assert [(m.id, m.status) for m in summary.mutants] == [(m.id, m.status) for m in whole.mutants]
    with pytest.raises(UsageError, match="nothing to resume"):
        run_gate(toy / "target.yaml", toy_build, menu, out, resume=True, **options)  # type: ignore[arg-type]


def test_kept_verdicts_hold_only_for_the_code_and_exam_they_were_judged_against(tmp_path: Path) -> None:
    from tri_agent.mutation._ledger import Ledger

    outcome = _verdict.MutantOutcome(id="m1", bug_class="c", operator="o", status="Killed", reason="r")
    Ledger(tmp_path / "m", "tree1", "exam1", resume=False).write(outcome)
    assert Ledger(tmp_path / "m", "tree1", "exam1", resume=True).kept == {"m1": outcome}
    assert Ledger(tmp_path / "m", "tree2", "exam1", resume=True).kept == {}  # other code
    assert Ledger(tmp_path / "m", "tree1", "exam2", resume=True).kept == {}  # another exam
    (tmp_path / "m" / "verdicts.jsonl").write_text("garbage\n" + (tmp_path / "m" / "verdicts.jsonl").read_text())
    with pytest.raises(MalformedInput, match=r"verdicts\.jsonl:1 is not a verdict line"):
        Ledger(tmp_path / "m", "tree1", "exam1", resume=True)


def _self_checking(toy: Path) -> None:
    """The fixed toy, but it refuses to run when its own code differs from a copy the builder committed beside it:
    every mutant then crashes on every case, a kill that says nothing of the exam."""
    grades = toy / "target" / "grades.py"
    (toy / "target" / "pristine.txt").write_text(grades.read_text())
    check = ("import pathlib\nif pathlib.Path(__file__).read_text() != "
             "(pathlib.Path(__file__).parent / 'pristine.txt').read_text():\n    sys.exit(3)\n")
    text = grades.read_text().replace("import sys\n", "import sys\n" + check, 1)
    grades.write_text(text)
    (toy / "target" / "pristine.txt").write_text(text)


@pytest.mark.parametrize("where", ["fork server", "real runs", "no check"])
def test_a_target_that_checks_its_own_code_fails_the_gate_however_many_it_kills(
        toy_build: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    toy = toy_copy(tmp_path / "toy", fixed=True)
    _self_checking(toy)
    if where == "real runs":  # a target the fork server cannot run (a service): a few real runs of the sham
        monkeypatch.setattr(_gate.Hunt, "told_apart", lambda *_args: None)
    if where == "no check":  # without the sham, the check alone "kills" every mutant: a perfect, empty gate
        monkeypatch.setattr(_gate, "_sham", lambda *_args: "passed")
    summary = mutate(toy / "target.yaml", toy_build, toy / "exam" / "mutations.yaml", tmp_path / "m",
                     selection=_gate.Selection(per_class=1), minimum=3)
    assert summary.killed == summary.judged >= 3
    if where == "no check":
        assert summary.verdict == "pass"
    else:
        assert summary.verdict == "fail" and summary.sham.startswith("case c-") and "crashed" in summary.sham
        assert any("an edit that changes nothing was told apart" in r for r in summary.reasons)
