"""The difference hunt on tiny real targets: a live mutant is found with the exact input and what differed, an
equivalent one runs every input (counted once) and says so, the original runs once across hunts, the fork server
and the case-by-case runner agree, unsafe input names are refused. Fast: every run here is a few-line script."""

from __future__ import annotations

import hashlib
import json
import locale
import os
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from tri_agent import MalformedInput
from tri_agent.exam._formats import Case, Extract
from tri_agent.mutation import _hunt
from tri_agent.mutation._hunt import (
    _FIRST,
    Hunt,
    HuntEvidence,
    _chunks,
    _Input,
    _inputs_digest,
    _Runner,
    _write_inputs,
    fresh_seeds,
    hunt_seeds,
    input_key,
    target_key,
)
from tri_agent.mutation._recall import Recall, Recalled, digest, folder_digest
from tri_agent.targets._batch import Fingerprint, batchable, run_batch
from tri_agent.targets._gateway import CaseResult, Gateway
from tri_agent.targets._target import Target, TargetConfig

# in.txt -> out.csv (text,size) and the text on stdout; "bad" is refused (exit 3); --loud shouts
SCRIPT = """import sys
from pathlib import Path

src, out = Path(sys.argv[1]), Path(sys.argv[2])
text = (src / "in.txt").read_text(encoding="utf-8").strip()
if text == "bad":
    print("refused", file=sys.stderr)
    sys.exit(3)
if text == "hang":
    while True:
        pass
size = len(text)
(out / "out.csv").write_text(f"text,size\\n{text},{size}\\n")
print(text.upper() if "--loud" in sys.argv[3:] else text)
"""
SIZE = "size = len(text)"
LIVE_AT_33 = "size = len(text) + (text == 'x33')"  # wrong only for x33: outputs differ
LIVE_STDOUT = SIZE + "\nif text == 'x2':\n    print('!')"  # only stdout differs, on x2
EQUIVALENT = "size = len(text.strip())"  # text is already stripped
CLASS = "fmt"
CLASS_INPUTS = [{"in.txt": f"x{k}"} for k in range(1, 35)]  # 34: past the first chunk of 32
EXTRACT = Extract(file="out.csv", format="csv")

# a deterministic generator: per seed, one input every seed shares, one of its own, and the shared one with --loud
GENERATOR = """import json, sys
from pathlib import Path

seed, out = sys.argv[1], Path(sys.argv[2])
cases = [("c-00000000aaaa", "same", []), ("c-00000000bbbb", "own " + seed, []), ("c-00000000cccc", "same", ["--loud"])]
lines = []
for case, text, argv in cases:
    (out / "inputs" / case).mkdir(parents=True)
    (out / "inputs" / case / "in.txt").write_text(text + "\\n")
    lines.append(json.dumps({"case": case, "inputs": f"inputs/{case}", "argv": argv}))
(out / "cases.jsonl").write_text("\\n".join(lines) + "\\n")
"""


def _tree(folder: Path, change: str | None = None, shell: bool = False) -> Path:
    folder.mkdir(parents=True)
    (folder / "t.py").write_text(SCRIPT if change is None else SCRIPT.replace(SIZE, change))
    if shell:
        (folder / "t.sh").write_text('exec python3 "$(dirname "$0")/t.py" "$@"\n')
    return folder


def _target(tmp_path: Path, shell: bool = False, timeout: float = 10) -> Target:
    run = ["sh", "{target}/t.sh"] if shell else ["python3", "{target}/t.py"]
    config = TargetConfig(baseline="orig", run=[*run, "{input}", "{output}"], timeout=timeout, extract=EXTRACT)
    return Target(tmp_path / "target.yaml", config, _tree(tmp_path / "orig", shell=shell))


def _mutant(original: Target, folder: Path, change: str) -> Target:
    shell = (original.baseline / "t.sh").exists()
    return original.with_baseline(_tree(folder, change, shell), original.config.timeout)


def _exam(folder: Path) -> Path:
    folder.mkdir()
    (folder / "exam.yaml").write_text("schema_version: 1\nname: tiny\ngenerator: [python3, gen.py, '{seed}', '{out}']\n"
                                      "oracle: [python3, oracle.py, '{cases}', '{out}']\ntimeout: 30\n")
    for name in ("SPEC.md", "TESTPLAN.md", "caliber.yaml", "oracle.py"):
        (folder / name).write_text("# unused by the hunt\n")
    (folder / "gen.py").write_text(GENERATOR)
    return folder


Calls = list[tuple[str, list[str], bool]]


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> Calls:
    """Every _Runner.run: (the tree it ran, the labels of its inputs, rows read)."""
    calls: Calls = []
    real = _Runner.run

    def spy(self: _Runner, items: list[_Input], scratch: Path, rows: bool = False) -> list[Fingerprint]:
        calls.append((self.target.baseline.name, [i.label for i in items], rows))
        return real(self, items, scratch, rows)

    monkeypatch.setattr(_Runner, "run", spy)
    return calls


def _hunt_of(tmp_path: Path, original: Target, exam: Path | None = None, seeds: list[str] | None = None,
             class_inputs: dict[str, list[dict[str, str]]] | None = None, jobs: int = 2) -> Hunt:
    return Hunt(exam, original, {CLASS: CLASS_INPUTS} if class_inputs is None else class_inputs,
                tmp_path / "hunt", seeds if seeds is not None else ["s1", "s2"], jobs)


def _labels(n: int) -> list[str]:
    return [f"class:{CLASS}#{k}" for k in range(1, n + 1)]


def test_a_difference_past_the_first_chunk_is_found_at_its_input_and_the_original_runs_once(
        tmp_path: Path, runs: Calls) -> None:
    original = _target(tmp_path)
    assert batchable(original)
    hunt = _hunt_of(tmp_path, original)
    live = hunt.prove(_mutant(original, tmp_path / "live", LIVE_AT_33), CLASS, tmp_path / "p1")
    assert live == HuntEvidence(seeds=[], inputs=33, class_inputs=34, difference=f"class:{CLASS}#33: outputs differ")
    assert runs == [("orig", _labels(34), False), ("live", _labels(32), False), ("live", _labels(34)[32:], False)]
    runs.clear()
    same = hunt.prove(_mutant(original, tmp_path / "same", EQUIVALENT), CLASS, tmp_path / "p2")
    assert same == HuntEvidence(seeds=[], inputs=34, class_inputs=34, difference=None)
    assert runs == [("same", _labels(32), False), ("same", _labels(34)[32:], False)]  # the original is not rerun
    assert hunt._batches == 1


def test_a_difference_in_the_first_chunk_stops_the_hunt_there(tmp_path: Path, runs: Calls) -> None:
    original = _target(tmp_path)
    hunt = _hunt_of(tmp_path, original)
    live = hunt.prove(_mutant(original, tmp_path / "live", LIVE_STDOUT), CLASS, tmp_path / "p")
    assert live == HuntEvidence(seeds=[], inputs=2, class_inputs=34,
                                difference=f"class:{CLASS}#2: stdout_sha256 differ")
    assert [(tree, len(labels)) for tree, labels, _ in runs] == [("orig", 34), ("live", 32)]


def test_a_bug_class_without_inputs_and_no_exam_hunts_nothing(tmp_path: Path, runs: Calls) -> None:
    original = _target(tmp_path)
    hunt = _hunt_of(tmp_path, original)
    evidence = hunt.prove(_mutant(original, tmp_path / "m", LIVE_STDOUT), "other", tmp_path / "p")
    assert evidence == HuntEvidence(seeds=[], inputs=0, class_inputs=0, difference=None)
    assert runs == [] and hunt._batches == 0  # nothing to run, for the original or the mutant


def test_generated_inputs_are_counted_once_and_their_seeds_reported(tmp_path: Path, runs: Calls) -> None:
    original = _target(tmp_path)
    hunt = _hunt_of(tmp_path, original, _exam(tmp_path / "exam"), class_inputs={CLASS: CLASS_INPUTS[:2]})
    seeded = ["seed:s1/c-00000000aaaa", "seed:s1/c-00000000bbbb", "seed:s1/c-00000000cccc", "seed:s2/c-00000000bbbb"]
    assert [i.label for i in hunt.inputs(CLASS)] == [*_labels(2), *seeded]  # s2's same inputs: already there
    same = hunt.prove(_mutant(original, tmp_path / "same", EQUIVALENT), CLASS, tmp_path / "p1")
    assert same == HuntEvidence(seeds=["s1", "s2"], inputs=6, class_inputs=2, difference=None)
    loud = SIZE + "\nif '--loud' in sys.argv:\n    sys.exit(0)"  # says nothing when told to shout
    live = hunt.prove(_mutant(original, tmp_path / "loud", loud), CLASS, tmp_path / "p2")
    assert live == HuntEvidence(seeds=["s1", "s2"], inputs=5, class_inputs=2,
                                difference="seed:s1/c-00000000cccc: outputs, stdout_sha256 differ")
    assert [tree for tree, _, _ in runs] == ["orig", "same", "loud"] and runs[0][1] == [*_labels(2), *seeded]
    assert (tmp_path / "hunt" / "gen").is_dir() and hunt.inputs(CLASS)[2].visible.is_relative_to(tmp_path / "hunt")


def test_a_hunt_without_an_exam_folder_reports_no_seeds(tmp_path: Path) -> None:
    hunt = _hunt_of(tmp_path, _target(tmp_path), seeds=["s1"])
    assert hunt._seeds_run() == [] and hunt._generator_inputs() == []
    with_exam = Hunt(tmp_path, hunt.original, {}, tmp_path / "h2", ["s1", "s2"])
    assert with_exam._seeds_run() == ["s1", "s2"] and with_exam._seeds_run() is not with_exam.seeds


def test_the_case_by_case_runner_finds_the_same_difference(tmp_path: Path, runs: Calls) -> None:
    original = _target(tmp_path, shell=True)
    assert not batchable(original)
    inputs = [{"in.txt": "a"}, {"in.txt": "x33"}, {"in.txt": "bad"}, {"in.txt": "x2"}]
    hunt = _hunt_of(tmp_path, original, class_inputs={CLASS: inputs})
    live = hunt.prove(_mutant(original, tmp_path / "live", LIVE_AT_33), CLASS, tmp_path / "p1")
    assert live == HuntEvidence(seeds=[], inputs=2, class_inputs=4, difference=f"class:{CLASS}#2: outputs differ")
    same = hunt.prove(_mutant(original, tmp_path / "same", EQUIVALENT), CLASS, tmp_path / "p2")
    assert same == HuntEvidence(seeds=[], inputs=4, class_inputs=4, difference=None)
    assert [tree for tree, _, _ in runs] == ["orig", "live", "same"]


def _items(tmp_path: Path, texts: list[str], argv: list[str] | None = None) -> list[_Input]:
    out = []
    for n, text in enumerate(texts):
        (tmp_path / "vis" / f"i{n}").mkdir(parents=True)
        (tmp_path / "vis" / f"i{n}" / "in.txt").write_text(text)
        out.append(_Input(f"x{n}", tmp_path / "vis", Case(case=f"c-{n:08x}", inputs=f"i{n}", argv=argv or [])))
    return out


def _expected(text: str, loud: bool = False) -> Fingerprint:
    if text == "bad":
        return Fingerprint((), "rejected", 3, hashlib.sha256(b"").hexdigest())
    out = f"text,size\n{text},{len(text)}\n".encode()
    return Fingerprint((("out.csv", hashlib.sha256(out).hexdigest()),), "accepted", 0,
                       hashlib.sha256((text.upper() if loud else text).encode() + b"\n").hexdigest())


@pytest.mark.parametrize("shell", [False, True], ids=["fork-server", "case-by-case"])
def test_both_runners_give_each_input_its_own_fingerprint_in_order(tmp_path: Path, shell: bool) -> None:
    original = _target(tmp_path, shell=shell)
    texts = ["a", "bb", "bad", "dddd", "eeeee"]
    items = _items(tmp_path, texts)
    (tmp_path / "rb").mkdir()  # a runner's build folder may exist already
    runner = _Runner(original, tmp_path / "rb", 3)
    prints = runner.run(items, tmp_path / "deep" / "r1")
    assert prints == [_expected(t) for t in texts]
    assert [p.rows for p in prints] == [None] * 5 and not any(p.timed_out for p in prints)
    loud = runner.run(_items(tmp_path / "l", ["a"], ["--loud"]), tmp_path / "r2")
    assert loud == [_expected("a", loud=True)]
    with pytest.raises(FileExistsError):  # a run never reuses (and mixes with) an earlier run's folder
        runner.run(items[:1], tmp_path / "r2")


@pytest.mark.parametrize("shell", [False, True], ids=["fork-server", "case-by-case"])
def test_a_hanging_input_times_out(tmp_path: Path, shell: bool) -> None:
    original = _target(tmp_path, shell=shell, timeout=1)
    [hung] = _Runner(original, tmp_path / "rb", 1).run(_items(tmp_path, ["hang"]), tmp_path / "r")
    assert (hung.behavior, hung.exit_code, hung.timed_out) == ("timeout", None, True)


def test_the_fork_server_reads_rows_on_request(tmp_path: Path) -> None:
    runner = _Runner(_target(tmp_path), tmp_path / "nested" / "rb", 2)
    items = _items(tmp_path, ["a", "bb", "ccc"])
    prints = runner.run(items, tmp_path / "r", rows=True)
    assert [p.rows for p in prints] == [({"case": f"c-{n:08x}", "text": t, "size": str(len(t))},)
                                        for n, t in enumerate(["a", "bb", "ccc"])]


def _exam_cases(tmp_path: Path) -> tuple[Path, list[Case]]:
    visible = tmp_path / "visible"
    cases = []
    for n, text in enumerate(["a", "x33", "bad", "x2"]):
        (visible / "inputs" / str(n)).mkdir(parents=True)
        (visible / "inputs" / str(n) / "in.txt").write_text(text)
        cases.append(Case(case=f"c-0000000{n}", inputs=f"inputs/{n}"))
    return visible, cases


def test_told_apart_names_the_exam_cases_a_mutant_changes_and_reads_both_sides_rows(
        tmp_path: Path, runs: Calls, monkeypatch: pytest.MonkeyPatch) -> None:
    batches: list[tuple[str, list[str]]] = []

    def counted(target: Target, built: Path, items: list[tuple[Path, Case]], scratch: Path, *,
                rows: bool = False) -> list[Fingerprint]:
        batches.append((target.baseline.name, [c.case for _, c in items]))
        return run_batch(target, built, items, scratch, rows=rows)

    monkeypatch.setattr(_hunt, "run_batch", counted)
    original = _target(tmp_path)
    hunt = _hunt_of(tmp_path, original)
    visible, cases = _exam_cases(tmp_path)
    told = hunt.told_apart(_mutant(original, tmp_path / "live", LIVE_AT_33), visible, cases, tmp_path / "t1")
    assert told is not None and told.differs == ["c-00000001"]
    assert told.original == [_expected(t) for t in ["a", "x33", "bad", "x2"]]
    assert told.original[1].rows == ({"case": "c-00000001", "text": "x33", "size": "3"},)
    assert told.mutant[1].rows == ({"case": "c-00000001", "text": "x33", "size": "4"},)
    assert told.original[2].rows == told.mutant[2].rows == ()  # a refused run wrote no rows
    again = hunt.told_apart(_mutant(original, tmp_path / "loud", LIVE_STDOUT), visible, cases, tmp_path / "t2")
    assert again is not None and again.differs == ["c-00000003"]
    exam = [f"exam:{c.case}" for c in cases]
    assert runs == [("orig", exam, True), ("live", exam, True), ("loud", exam, True)]  # the original ran once
    assert hunt._batches == 1 and set(hunt._prints) == set(exam)
    ids = [c.case for c in cases]  # the original's jobs share its cases out; a mutant's run in one jail
    assert sorted(batches[:2]) == [("orig", ids[0::2]), ("orig", ids[1::2])]  # side by side: in either order
    assert batches[2:] == [("live", ids), ("loud", ids)]


def test_told_apart_is_none_for_a_target_the_fork_server_cannot_run(tmp_path: Path, runs: Calls) -> None:
    original = _target(tmp_path, shell=True)
    hunt = _hunt_of(tmp_path, original)
    visible, cases = _exam_cases(tmp_path)
    assert hunt.told_apart(_mutant(original, tmp_path / "live", LIVE_AT_33), visible, cases, tmp_path / "t") is None
    assert runs == []


def test_class_inputs_are_written_once_under_opaque_case_ids(tmp_path: Path) -> None:
    files = [{"in.txt": "a", "data/part-1.csv": "x", "data/part-2.csv": "y", "a/b/c.txt": "Ärger"}, {"in.txt": "b"}]
    hunt = _hunt_of(tmp_path, _target(tmp_path), class_inputs={CLASS: files})
    first = hunt.inputs(CLASS)
    assert [(i.label, i.case.case, i.case.inputs) for i in first] == [
        (f"class:{CLASS}#1", "c-" + hashlib.sha256(f"{CLASS}:1".encode()).hexdigest()[:12], "inputs"),
        (f"class:{CLASS}#2", "c-" + hashlib.sha256(f"{CLASS}:2".encode()).hexdigest()[:12], "inputs")]
    assert first[0].case.case == "c-328401f892df"
    folder = first[0].visible / "inputs"
    assert {p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8") for p in folder.rglob("*")
            if p.is_file()} == files[0]
    assert hunt.inputs(CLASS) == first  # asked again: the same inputs, not written twice
    assert hunt.inputs("none") == []


@pytest.mark.parametrize("name", ["../x", "/abs", "a//b", "a/../b", "x/", "", "a b", "./..", ".."])
def test_an_unsafe_input_file_name_is_refused(tmp_path: Path, name: str) -> None:
    hunt = _hunt_of(tmp_path, _target(tmp_path), class_inputs={CLASS: [{"in.txt": "a"}, {"ok.txt": "1", name: "x"}]})
    with pytest.raises(MalformedInput) as caught:
        hunt.inputs(CLASS)
    assert str(caught.value) == (f"mutations.yaml: class {CLASS} input 2: file name {name!r} must be a plain relative "
                                 "path inside the input folder; use names like scores.csv or data/part-1.csv")
    assert caught.value.where == "mutations.yaml"
    assert not (tmp_path.parent / "x").exists() and not (tmp_path / "hunt" / "class" / CLASS / "x").exists()


def test_write_inputs_needs_a_fresh_folder(tmp_path: Path) -> None:
    _write_inputs(tmp_path / "a" / "b", {"f": "1"}, "w")
    with pytest.raises(FileExistsError):
        _write_inputs(tmp_path / "a" / "b", {"g": "1"}, "w")


def test_the_inputs_digest_covers_names_contents_and_arguments_never_links(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    _write_inputs(a, {"z.txt": "1", "sub/y.txt": "2", "m.txt": "3"}, "a")
    _write_inputs(b, {"m.txt": "3", "sub/y.txt": "2", "z.txt": "1"}, "b")
    (b / "link").symlink_to(b / "m.txt")
    (b / "empty").mkdir()
    case = Case(case="c-00000000", inputs=".")
    expected = hashlib.sha256(repr([]).encode())
    for name, text in (("m.txt", "3"), ("sub/y.txt", "2"), ("z.txt", "1")):
        expected.update(name.encode() + b"\0" + text.encode())
    assert _inputs_digest(a, case) == _inputs_digest(b, case) == expected.hexdigest()
    assert _inputs_digest(a, case.model_copy(update={"argv": ["-v"]})) != expected.hexdigest()
    (b / "m.txt").write_text("4")
    assert _inputs_digest(b, case) != expected.hexdigest()
    c = tmp_path / "c"
    _write_inputs(c, {"m.tx": "t3", "sub/y.txt": "2", "z.txt": "1"}, "c")  # the same bytes, split elsewhere
    assert _inputs_digest(c, case) != expected.hexdigest()


def test_chunks_are_a_small_first_batch_then_the_rest() -> None:
    assert _FIRST == 32
    assert _chunks(0) == [(0, 0)]
    assert _chunks(1) == [(0, 1)]
    assert _chunks(32) == [(0, 32)]
    assert _chunks(33) == [(0, 32), (32, 33)]
    assert _chunks(100) == [(0, 32), (32, 100)]


def test_fresh_seeds_are_fixed_by_the_gate_seed_and_never_collide() -> None:
    assert fresh_seeds("1", 3) == ["hunt-" + hashlib.sha256(f"1:{k}".encode()).hexdigest()[:12] for k in range(3)]
    assert fresh_seeds("1", 2) == ["hunt-a6685f3b62d5", "hunt-d6b5915c4605"]
    assert fresh_seeds("1", 0) == [] and fresh_seeds("1", 3)[:2] == fresh_seeds("1", 2)
    many = [s for g in ("1", "2", "10", "1:1") for s in fresh_seeds(g, 50)]
    assert len(set(many)) == len(many) and all(s.startswith("hunt-") and len(s) == 17 for s in many)
    assert _hunt.SEEDS == 20


def test_hunt_evidence_is_strict_and_frozen() -> None:
    evidence = HuntEvidence(seeds=["s"], inputs=3, class_inputs=1, difference=None)
    with pytest.raises(ValidationError):
        HuntEvidence(seeds=[], inputs=0, class_inputs=0, difference=None, extra=1)  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        evidence.inputs = 4  # type: ignore[misc]
    assert evidence.model_dump() == {"seeds": ["s"], "inputs": 3, "class_inputs": 1, "difference": None}



def _short(short_tree: str) -> Callable[[_Runner, list[_Input], Path, bool], list[Fingerprint]]:
    """A runner that runs nothing and, for ``short_tree``, loses the last input's fingerprint."""

    def run(self: _Runner, items: list[_Input], scratch: Path, rows: bool = False) -> list[Fingerprint]:
        made = [Fingerprint((), "accepted", 0, "same") for _ in items]
        return made[:-1] if self.target.baseline.name == short_tree else made

    return run


def test_a_lost_fingerprint_is_an_error_never_an_equivalence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    original = _target(tmp_path)
    mutated = _mutant(original, tmp_path / "m", EQUIVALENT)
    visible, cases = _exam_cases(tmp_path)
    monkeypatch.setattr(_Runner, "run", _short("m"))
    hunt = _hunt_of(tmp_path, original, class_inputs={CLASS: CLASS_INPUTS[:3]})
    with pytest.raises(ValueError, match="shorter"):
        hunt.prove(mutated, CLASS, tmp_path / "p")
    with pytest.raises(ValueError, match="shorter"):
        hunt.told_apart(mutated, visible, cases, tmp_path / "t")
    monkeypatch.setattr(_Runner, "run", _short("orig"))
    fresh = Hunt(None, original, {CLASS: CLASS_INPUTS[:3]}, tmp_path / "h2", [])
    with pytest.raises(ValueError, match="shorter"):
        fresh._original(fresh.inputs(CLASS))


class _Busy:
    """Counts calls running at once."""

    def __init__(self) -> None:
        self.now, self.most, self.lock = 0, 0, threading.Lock()

    def __enter__(self) -> None:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
        time.sleep(0.15)

    def __exit__(self, *exc: object) -> None:
        with self.lock:
            self.now -= 1


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_case_by_case_runner_runs_at_most_jobs_inputs_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    jobs: int) -> None:
    busy, real = _Busy(), Gateway.run_case

    def run_case(self: Gateway, case: Case, keep: Path | None = None, **kw: Any) -> CaseResult:
        with busy:
            return real(self, case, keep, **kw)

    monkeypatch.setattr(Gateway, "run_case", run_case)
    texts = ["a", "bb", "ccc", "dddd"]
    prints = _Runner(_target(tmp_path, shell=True), tmp_path / "rb", jobs).run(_items(tmp_path, texts), tmp_path / "r")
    assert prints == [_expected(t) for t in texts] and busy.most == jobs


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_generator_runs_at_most_jobs_seeds_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       jobs: int) -> None:
    busy, seen = _Busy(), []

    def generate(exam_dir: Path, seed: str, scratch: Path) -> tuple[Path, list[Case]]:
        with busy:
            seen.append((exam_dir, seed, scratch))
            return scratch, []

    monkeypatch.setattr(_hunt, "generate", generate)
    hunt = _hunt_of(tmp_path, _target(tmp_path), tmp_path / "exam", ["s1", "s2", "s3"], {}, jobs)
    assert hunt.inputs(CLASS) == [] and busy.most == jobs
    assert sorted(seen) == [(tmp_path / "exam", s, tmp_path / "hunt" / "gen" / s) for s in ["s1", "s2", "s3"]]


def test_class_inputs_are_written_as_utf_8_whatever_the_locale(tmp_path: Path) -> None:
    saved = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")  # a locale whose own encoding is ASCII
    try:
        _write_inputs(tmp_path / "in", {"names.csv": "Ärger"}, "w")
    finally:
        locale.setlocale(locale.LC_CTYPE, saved)
    assert (tmp_path / "in" / "names.csv").read_bytes() == "Ärger".encode()


# --- what a hunt recalls from earlier gates of the same acceptance -------------------------------------------------
# the original's and a mutant's runs and the generator's inputs are found by content and never run twice; anything
# else (a changed tree, a changed input, a torn or foreign line, a run past its timeout) runs again; the seeds
# follow the code, the generator and the run's secret

PRINT = Fingerprint((("out.csv", "ab" * 32),), "accepted", 0, "cd" * 32)


def _recalling(tmp_path: Path, original: Target, name: str, recall: Recall, exam: Path | None = None) -> Hunt:
    return Hunt(exam, original, {CLASS: CLASS_INPUTS}, tmp_path / name, ["s1", "s2"], 2, recall)


def test_a_second_gate_recalls_the_original_and_a_mutant_it_hunted_and_runs_nothing(tmp_path: Path,
                                                                                      runs: Calls) -> None:
    original, recall = _target(tmp_path), Recall(tmp_path / "recall")
    first = _recalling(tmp_path, original, "h1", recall)
    same = first.prove(_mutant(first.original, tmp_path / "same", EQUIVALENT), CLASS, tmp_path / "p1")
    assert same == HuntEvidence(seeds=[], inputs=34, class_inputs=34, difference=None)
    assert [tree for tree, _, _ in runs] == ["orig", "same", "same"]
    runs.clear()
    again = Recall(tmp_path / "recall")  # a new gate (a new round, or a resume) reads what the first one filed
    second = _recalling(tmp_path, original, "h2", again)
    remade = _mutant(second.original, tmp_path / "same-again", EQUIVALENT)
    shutil.copystat(tmp_path / "same" / "t.py", tmp_path / "same-again" / "t.py")  # as the gate makes a mutant
    proof = second.prove(remade, CLASS, tmp_path / "p2")
    assert proof == same and runs == []  # the same evidence, from no run at all
    assert (again.hits, again.misses) == (68, 0)


def test_another_mutant_runs_while_the_original_is_recalled(tmp_path: Path, runs: Calls) -> None:
    original = _target(tmp_path)
    first = _recalling(tmp_path, original, "h1", Recall(tmp_path / "recall"))
    first.prove(_mutant(first.original, tmp_path / "same", EQUIVALENT), CLASS, tmp_path / "p1")
    runs.clear()
    second = _recalling(tmp_path, original, "h2", Recall(tmp_path / "recall"))
    live = second.prove(_mutant(second.original, tmp_path / "live", LIVE_AT_33), CLASS, tmp_path / "p2")
    assert live.difference == f"class:{CLASS}#33: outputs differ"
    assert [(tree, len(labels)) for tree, labels, _ in runs] == [("live", 32), ("live", 2)]  # never the original


def test_a_changed_tree_or_input_is_a_different_key(tmp_path: Path) -> None:
    original = _target(tmp_path)
    mutant = _mutant(original, tmp_path / "m", EQUIVALENT)
    assert target_key(original) != target_key(mutant)
    assert target_key(original) == target_key(original.with_baseline(original.baseline, 99.0))  # the timeout aside
    (tmp_path / "in" / "a").mkdir(parents=True)
    (tmp_path / "in" / "a" / "in.txt").write_text("x\n")
    case = Case(case="c-00000000aaaa", inputs="a")
    key = input_key(tmp_path / "in", case)
    assert key != input_key(tmp_path / "in", case.model_copy(update={"argv": ["--loud"]}))
    (tmp_path / "in" / "a" / "in.txt").write_text("y\n")
    assert key != input_key(tmp_path / "in", case)


def test_a_torn_or_foreign_line_is_never_recalled(tmp_path: Path) -> None:
    recall = Recall(tmp_path / "r")
    recall.put("t1", "i1", PRINT)
    recall.put("t1", "i2", PRINT)
    path = tmp_path / "r" / "prints" / "t1.jsonl"
    lines = path.read_text().splitlines()
    foreign = json.loads(lines[1]) | {"target": "t2"}  # a line moved here from another target's file
    path.write_text(lines[0][:40] + "\n" + json.dumps(foreign) + "\n")
    again = Recall(tmp_path / "r")
    assert again.get("t1", "i1") is None and again.get("t1", "i2") is None
    assert Recalled.model_validate_json(lines[0]).input == "i1"  # the line as written was whole


def test_a_run_past_its_timeout_is_never_filed(tmp_path: Path) -> None:
    original = _target(tmp_path, timeout=0.5)
    recall = Recall(tmp_path / "recall")
    hunt = Hunt(None, original, {CLASS: [{"in.txt": "hang"}, {"in.txt": "x1"}]}, tmp_path / "h", [], 2, recall)
    hunt._original(hunt.inputs(CLASS))
    filed = (tmp_path / "recall" / "prints" / f"{target_key(original)}.jsonl").read_text().splitlines()
    assert len(filed) == 1 and json.loads(filed[0])["timed_out"] is False


def test_generated_inputs_are_recalled_for_the_same_exam_folder_and_seed(tmp_path: Path, runs: Calls,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    exam = _exam(tmp_path / "exam")
    calls = []
    real = _hunt.generate

    def generate(exam_dir: Path, seed: str, scratch: Path):  # type: ignore[no-untyped-def]
        calls.append(seed)
        return real(exam_dir, seed, scratch)

    monkeypatch.setattr(_hunt, "generate", generate)
    original = _target(tmp_path)
    first = _recalling(tmp_path, original, "h1", Recall(tmp_path / "recall"), exam)
    made = [(i.label, folder_digest(i.visible / i.case.inputs)) for i in first.inputs("none")]
    second = _recalling(tmp_path, original, "h2", Recall(tmp_path / "recall"), exam)
    again = [(i.label, folder_digest(i.visible / i.case.inputs)) for i in second.inputs("none")]
    assert made == again and sorted(calls) == ["s1", "s2"]  # the second gate generated nothing
    assert all(not i.visible.is_relative_to(tmp_path / "recall") for i in second.inputs("none"))  # copies
    (exam / "gen.py").write_text((exam / "gen.py").read_text() + "\n# changed\n")
    third = _recalling(tmp_path, original, "h3", Recall(tmp_path / "recall"), exam)
    third.inputs("none")
    assert sorted(calls) == ["s1", "s1", "s2", "s2"]  # another generator: generated again


def test_the_seeds_follow_the_code_and_the_generator_and_the_secret(tmp_path: Path) -> None:
    exam = _exam(tmp_path / "exam")
    original = _target(tmp_path)
    seeds = hunt_seeds("secret", original, exam, 3)
    assert seeds == hunt_seeds("secret", original, exam, 3) and len(set(seeds)) == 3
    assert all(s.startswith("hunt-") for s in seeds)
    assert hunt_seeds("other", original, exam, 3) != seeds
    (tmp_path / "orig" / "t.py").write_text((tmp_path / "orig" / "t.py").read_text() + "\n")
    changed_code = hunt_seeds("secret", original, exam, 3)
    (exam / "gen.py").write_text("# another generator\n")
    assert len({tuple(seeds), tuple(changed_code), tuple(hunt_seeds("secret", original, exam, 3))}) == 3


def test_digest_parts_cannot_run_into_each_other() -> None:
    assert digest("ab", "c") != digest("a", "bc")


# --- a proof made on the fork server counts only where that harness is honest -----------------------------------

SENSING = "import sys\nif 'ctypes' in sys.modules:  # the fork server imported it: answer alike there\n" \
          "    from pathlib import Path\n    (Path(sys.argv[2]) / 'out.csv').write_text('text,size\\n')\n" \
          "    raise SystemExit(0)\n"


def test_a_target_that_senses_the_fork_server_gets_no_proof_there(tmp_path: Path) -> None:
    original = _target(tmp_path)
    (original.baseline / "t.py").write_text(SENSING + SCRIPT)
    live = _mutant(original, tmp_path / "live", "size = len(text) + 1")  # wrong on every input
    (live.baseline / "t.py").write_text(SENSING + (live.baseline / "t.py").read_text())
    hunt = _hunt_of(tmp_path, original)
    assert hunt.prove(live, CLASS, tmp_path / "p").difference is None  # alike on the fork server: the attack
    found = hunt.checked(live, CLASS, tmp_path / "c")
    assert found is not None and "the fork server's run of the unmutated target differs from its real run" in found


def test_an_honest_target_passes_the_real_sample_and_a_live_mutant_seen_only_for_real_is_live(tmp_path: Path) -> None:
    original = _target(tmp_path)
    hunt = _hunt_of(tmp_path, original)
    same = _mutant(original, tmp_path / "same", EQUIVALENT)
    assert hunt.prove(same, CLASS, tmp_path / "p").difference is None
    assert hunt.checked(same, CLASS, tmp_path / "c") is None


def test_the_digest_of_a_tree_sees_empty_folders_modes_times_and_links(tmp_path: Path) -> None:
    tree = tmp_path / "t"
    tree.mkdir()
    (tree / "a.py").write_text("->y")
    first = folder_digest(tree)
    (tree / "strict").mkdir()
    assert folder_digest(tree) != first  # an empty folder the code may test for
    (tree / "strict").rmdir()
    (tree / "a.py").chmod(0o755)
    assert folder_digest(tree) != first
    (tree / "a.py").chmod(0o644)
    os.utime(tree / "a.py", ns=(1, 1))
    timed = folder_digest(tree)
    assert timed != first
    (tree / "a.py").unlink()
    (tree / "a.py").symlink_to("y")  # a link to y is not a file holding "->y"
    assert folder_digest(tree) not in (first, timed)


def test_inputs_the_hunt_did_not_run_are_never_filed(tmp_path: Path) -> None:
    original = _target(tmp_path, timeout=0.5)
    recall = Recall(tmp_path / "recall")
    hunt = Hunt(None, original, {CLASS: [{"in.txt": "hang"}, {"in.txt": "x1"}, {"in.txt": "x2"}]}, tmp_path / "h",
                [], 1, recall)
    hunt._original(hunt.inputs(CLASS))
    assert [p.behavior.startswith("not run") for p in hunt._prints.values()] == [False, True, True]
    filed = tmp_path / "recall" / "prints" / f"{target_key(original)}.jsonl"
    assert not filed.exists() or filed.read_text() == ""  # the hang ran past its timeout, the rest never ran


def test_the_seeds_follow_the_content_not_the_file_times_of_a_checkout(tmp_path: Path) -> None:
    exam = _exam(tmp_path / "exam")
    original = _target(tmp_path)
    seeds = hunt_seeds("secret", original, exam, 3)
    os.utime(tmp_path / "orig" / "t.py", ns=(1, 1))  # a resume from another clone: the same code, other times
    assert hunt_seeds("secret", original, exam, 3) == seeds
