"""Equivalence proven by difference-hunting, never claimed.

A mutant the exam did not kill is either a blind spot of the exam (it stays in the denominator) or an
equivalent mutant (no input can tell it apart). It is reported equivalent only when original and mutant give
the same outputs, behaviour, exit code and standard output over every input of the hunt: the bug class's own
inputs from the menu, then the exam's generator at fresh seeds (20 by default). The first differing input,
when one turns up, is the evidence that the mutant is live.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from threading import Lock

from pydantic import ConfigDict, Field

from .. import _progress as progress
from .._errors import MalformedInput
from .._model import Record
from ..exam._build import generate, generated_cases, generator_digest
from ..exam._formats import Case
from ..sandbox._jail import strongest
from ..sandbox._process import base_env
from ..targets._batch import Fingerprint, batchable, run_batch
from ..targets._gateway import Gateway
from ..targets._target import Target
from ._recall import Recall, digest, folder_digest, settings_digest

SEEDS = 20
_NAME = re.compile(r"^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$")
_FIRST = 32  # inputs in a mutant's first batch
_WRITTEN = 946_684_800 * 10**9  # every class input's time (2000-01-01): each gate writes the same inputs, to the
# timestamp, so a run cannot tell them apart and a later gate recalls their runs
SAMPLE = 2  # hunted inputs run for real on both sides before a proof made on the fork server counts


class HuntEvidence(Record):
    """What the difference hunt ran for one mutant, and what it found."""

    model_config = ConfigDict(frozen=True)

    seeds: list[str] = Field(description="Generator seeds whose inputs were run (fresh: never an exam seed).")
    inputs: int = Field(description="Input sets run on both original and mutant.")
    class_inputs: int = Field(description="Of those, input sets from the bug class's menu entry.")
    difference: str | None = Field(description="The first input on which original and mutant differ, and what "
                                               "differs; null: none found, the mutant is equivalent.")


@dataclass(frozen=True)
class _Input:
    label: str  # where it came from: class:<id>#n or seed:<seed>/<case>
    visible: Path
    case: Case


@dataclass(frozen=True)
class Told:
    """The exam's cases under the fork server: which differ between original and mutant, and both sides' runs."""

    differs: list[str]
    original: list[Fingerprint]
    mutant: list[Fingerprint]


@dataclass
class Hunt:
    """The hunt inputs of one gate run and the original's fingerprints on them (computed once, when needed)."""

    exam_dir: Path | None
    original: Target
    class_inputs: dict[str, list[dict[str, str]]]
    scratch: Path
    seeds: list[str]
    jobs: int = 2
    recall: Recall = field(default_factory=Recall)  # runs earlier gates of the same acceptance already made
    _generated: list[_Input] | None = None
    _runner: _Runner | None = None
    _prints: dict[str, Fingerprint] = field(default_factory=dict)
    _lock: Lock = field(default_factory=Lock)  # the hunt's inputs and the original's runs on them
    _exam_lock: Lock = field(default_factory=Lock)  # the original's runs of the exam's cases (a quick, apart job)
    _runner_lock: Lock = field(default_factory=Lock)
    _batches: int = 0

    def told_apart(self, mutated: Target, visible: Path, cases: list[Case], scratch: Path) -> Told | None:
        """The exam's cases run under the fork server on original and mutant (their rows read too), or None
        when the target cannot run there. Orders the real runs; the gate scores it only once the original's
        fork-server findings are shown to equal its real ones."""
        if not batchable(self.original):
            return None
        items = [_Input(f"exam:{c.case}", visible, c) for c in cases]
        with self._exam_lock:  # never behind a hunt's generator runs: they take far longer
            self._original(items, rows=True)
        prints = _Runner(mutated, scratch / "build", 1).run(items, scratch / "runs", rows=True)
        original = [self._prints[i.label] for i in items]
        return Told([i.case.case for i, o, p in zip(items, original, prints, strict=True) if o.differs(p)],
                    original, prints)

    def inputs(self, bug_class: str) -> list[_Input]:
        return [*self._class_inputs(bug_class), *self._generator_inputs()]

    def prove(self, mutated: Target, bug_class: str, scratch: Path) -> HuntEvidence:
        """Hunt for an input on which ``mutated`` differs from the original."""
        with self._lock:  # hunts share the original's fingerprints: compute them once
            inputs = self.inputs(bug_class)
            self._original(inputs)
        mutant = _Runner(mutated, scratch / "mutant-build", self.jobs)
        n_class = sum(1 for i in inputs if i.label.startswith("class:"))
        progress.expect("hunted", len(inputs))
        for start, stop in _chunks(len(inputs)):
            chunk = inputs[start:stop]
            progress.advance("hunted", len(chunk))
            for item, print_ in zip(chunk, self._recalled(mutant, chunk, scratch / f"m{start}"), strict=True):
                what = self._prints[item.label].differs(print_)
                if what:
                    return HuntEvidence(seeds=self._seeds_run(), inputs=start + chunk.index(item) + 1,
                                        class_inputs=n_class, difference=f"{item.label}: {what} differ")
        return HuntEvidence(seeds=self._seeds_run(), inputs=len(inputs), class_inputs=n_class, difference=None)

    def checked(self, mutated: Target, bug_class: str, scratch: Path, k: int = SAMPLE) -> str | None:
        """Run ``k`` of the hunt's inputs for real (through the gateway, one jail each) on original and mutant,
        after a hunt on the fork server found them alike: None when the real runs agree with each other and
        with the fork server's run of the original, else what differs. The sample is drawn from the seeds, so
        a target cannot know which of its fork-server runs will be checked."""
        inputs = self.inputs(bug_class)
        if not inputs or not batchable(self.original):
            return None
        picks = sorted({int(hashlib.sha256(f"{self.seeds}:{bug_class}:{n}".encode()).hexdigest(), 16) % len(inputs)
                        for n in range(k)})
        # both sides under the target's own timeout, not the mutant's tight one: a busy machine must not turn a
        # slow real run into a difference, and a round replayed must come to the same outcome
        generous = mutated.with_baseline(mutated.baseline, self.original.config.timeout)
        original, mutant = _Runner(self.original, scratch / "o", 1), _Runner(generous, scratch / "m", 1)
        for item in (inputs[n] for n in picks):
            real = original._one(item)
            what = self._prints[item.label].differs(real)
            if what:
                return (f"{item.label}: the fork server's run of the unmutated target differs from its real run "
                        f"({what}): no proof made there counts")
            what = real.differs(mutant._one(item))
            if what:
                return f"{item.label}: {what} differ (run for real)"
        return None

    def _seeds_run(self) -> list[str]:
        return list(self.seeds) if self.exam_dir is not None else []

    def _original(self, inputs: list[_Input], rows: bool = False) -> None:
        todo = [i for i in inputs if i.label not in self._prints]
        if todo:
            with self._runner_lock:
                if self._runner is None:
                    self._runner = _Runner(self.original, self.scratch / "original-build", self.jobs)
                runner, self._batches = self._runner, self._batches + 1
            scratch = self.scratch / f"o{self._batches}"
            made = runner.run(todo, scratch, rows=True) if rows else self._recalled(runner, todo, scratch)
            for item, print_ in zip(todo, made, strict=True):
                self._prints[item.label] = print_

    def _recalled(self, runner: _Runner, items: list[_Input], scratch: Path) -> list[Fingerprint]:
        """``runner``'s fingerprints of ``items``: those an earlier gate made, recalled by content; the rest run
        now and are filed (never one that ran past its timeout, which another timeout could end otherwise, nor
        one that did not run at all)."""
        keys = [input_key(i.visible, i.case) for i in items]
        known = [self.recall.get(runner.key, k) for k in keys]
        todo = [i for i, k in zip(items, known, strict=True) if k is None]
        made = iter([p for _, p in zip(todo, runner.run(todo, scratch) if todo else [], strict=True)])
        out = [k if k is not None else next(made) for k in known]  # a runner that lost a run raised above
        for key, print_, was in zip(keys, out, known, strict=True):
            if was is None and not print_.timed_out and not print_.skipped:
                self.recall.put(runner.key, key, print_)
        return out

    def _class_inputs(self, bug_class: str) -> list[_Input]:
        out = []
        for n, files in enumerate(self.class_inputs.get(bug_class, []), start=1):
            visible = self.scratch / "class" / bug_class / str(n)
            if not visible.exists():
                _write_inputs(visible / "inputs", files, f"class {bug_class} input {n}")
            case = Case(case="c-" + hashlib.sha256(f"{bug_class}:{n}".encode()).hexdigest()[:12], inputs="inputs")
            out.append(_Input(f"class:{bug_class}#{n}", visible, case))
        return out

    def _generator_inputs(self) -> list[_Input]:
        if self._generated is None:
            self._generated = []
            exam_dir = self.exam_dir
            if exam_dir is not None:
                exam = generator_digest(exam_dir) if self.recall.root is not None else ""  # "": nothing kept
                with ThreadPoolExecutor(max_workers=self.jobs) as pool:
                    made = list(pool.map(lambda s: self._generate(exam_dir, exam, s), self.seeds))
                seen: set[str] = set()
                for seed, (folder, cases) in zip(self.seeds, made, strict=True):
                    for case in cases:
                        same = _inputs_digest(folder / case.inputs, case)
                        if same not in seen:  # the same input twice proves nothing more
                            seen.add(same)
                            self._generated.append(_Input(f"seed:{seed}/{case.case}", folder, case))
        return self._generated


    def _generate(self, exam_dir: Path, exam: str, seed: str) -> tuple[Path, list[Case]]:
        """The generator's inputs at ``seed``: recalled when this very exam folder ran at this seed before (the
        build proved the generator deterministic), else generated now and filed."""
        key, scratch = digest("generated", exam, seed), self.scratch / "gen" / seed
        known = self.recall.generated(key) if exam else None
        if known is None:
            folder, cases = generate(exam_dir, seed, scratch)
            self.recall.keep_generated(key, folder)
            return folder, cases
        folder = scratch / "recalled"
        shutil.copytree(known, folder, symlinks=True)
        return folder, generated_cases(folder)


def hunt_seeds(secret: str, target: Target, exam_dir: Path | None, n: int) -> list[str]:
    """The hunt's seeds in an acceptance: drawn from the run's secret and the digests of the code and the
    generator, so a round whose code and generator did not change hunts the same inputs (and recalls its runs),
    while a change of either brings seeds nobody could know in advance."""
    exam = generator_digest(exam_dir) if exam_dir is not None else ""
    # by content alone: a resumed run (another checkout, other file times) must hunt the same inputs
    return fresh_seeds(digest("hunt", secret, folder_digest(target.baseline, stamps=False), exam), n)


def target_key(target: Target) -> str:
    """SHA-256 of a target as a hunt runs it: its tree, its settings (the timeout aside: a run past it is never
    filed), and the harness and layer it runs under."""
    settings = target.config.model_dump(mode="json", exclude={"timeout"})
    harness = f"{'fork-server' if batchable(target) else 'jail'}:{strongest()}"
    passed = {k: v for k, v in base_env(Path("/")).items() if k != "HOME"}  # PATH decides the interpreter
    return digest("target", folder_digest(target.baseline), settings_digest(settings), harness,
                  settings_digest(passed))


def input_key(visible: Path, case: Case) -> str:
    """SHA-256 of one input as the target gets it: the case (its id can be an argument) and its files."""
    return digest("input", case.model_dump_json(), folder_digest(visible / case.inputs))


def _chunks(n: int) -> list[tuple[int, int]]:
    """A small first batch (a live mutant usually shows at once), then everything else in one go."""
    return [(0, min(n, _FIRST))] + ([(_FIRST, n)] if n > _FIRST else [])


def fresh_seeds(seed: str, n: int) -> list[str]:
    """``n`` hunt seeds derived from the gate's seed; never equal to an exam seed, which is drawn apart."""
    return [f"hunt-{hashlib.sha256(f'{seed}:{k}'.encode()).hexdigest()[:12]}" for k in range(n)]


class _Runner:
    """Runs inputs against one target: all in one jail (a fork server) for Python targets, else case by case."""

    def __init__(self, target: Target, scratch: Path, jobs: int) -> None:
        scratch.mkdir(parents=True, exist_ok=True)
        self.target, self.jobs = target, jobs
        self.key, self._scratch = target_key(target), scratch
        self._gateway: Gateway | None = None
        self._lock = Lock()

    @property
    def gateway(self) -> Gateway:
        """Built on first use (a runner whose every input is recalled builds nothing); the visible folder is
        unused."""
        with self._lock:
            if self._gateway is None:
                self._gateway = Gateway(self.target, self._scratch, self._scratch)
            return self._gateway

    def run(self, items: list[_Input], scratch: Path, rows: bool = False) -> list[Fingerprint]:
        scratch.mkdir(parents=True)
        if batchable(self.target):
            halves = [items[k::self.jobs] for k in range(self.jobs)]
            with ThreadPoolExecutor(max_workers=self.jobs) as pool:
                parts = list(pool.map(lambda kv: self._batch(kv[1], scratch / f"b{kv[0]}", rows), enumerate(halves)))
            merged: list[Fingerprint] = [None] * len(items)  # type: ignore[list-item]
            for k, part in enumerate(parts):
                merged[k::self.jobs] = part
            return merged
        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            return list(pool.map(self._one, items))

    def _batch(self, items: list[_Input], scratch: Path, rows: bool) -> list[Fingerprint]:
        return run_batch(self.target, self.gateway.built, [(i.visible, i.case) for i in items], scratch, rows=rows)

    def _one(self, item: _Input) -> Fingerprint:
        p = self.gateway.run_case(item.case, visible=item.visible).provenance
        return Fingerprint(tuple(sorted(p.compared().items())), p.behavior, p.exit_code, p.stdout_sha256,
                           timed_out=p.timed_out)


def _write_inputs(folder: Path, files: dict[str, str], what: str) -> None:
    folder.mkdir(parents=True)
    for name, content in files.items():
        path = (folder / name).resolve()
        if not _NAME.match(name) or ".." in name.split("/") or not path.is_relative_to(folder.resolve()):
            raise MalformedInput(f"{what}: file name {name!r} must be a plain relative path inside the input folder",
                                 where="mutations.yaml", hint="use names like scores.csv or data/part-1.csv")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    for path in sorted(folder.rglob("*"), reverse=True):  # files before their folders
        os.utime(path, ns=(_WRITTEN, _WRITTEN), follow_symlinks=False)


def _inputs_digest(folder: Path, case: Case) -> str:
    h = hashlib.sha256(repr(case.argv).encode())
    for p in sorted(folder.rglob("*")):
        if p.is_file() and not p.is_symlink():
            h.update(p.relative_to(folder).as_posix().encode() + b"\0" + p.read_bytes())
    return h.hexdigest()
