"""``exam build``: generate the cases twice, compute the answers twice, seal both, prove the scorer sees.

Nothing is trusted until: the generator's two runs are byte-identical, the oracle's two runs are
byte-identical, the answer key scored against itself passes, and a deliberately corrupted key fails.
The oracle runs from a copy of the exam folder with the visible cases beside it: the target's
implementation is never in its workspace. A build folder is evidence and is never overwritten.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from .._errors import InfrastructureFailure, MalformedInput, TamperDetected, UsageError
from ..evidence._manifest import scan
from ..evidence._seal import diff, seal, verify
from ..sandbox._jail import Jail, odd_files, require, require_plain, written
from ..sandbox._process import OUTPUT_CAP, Completed, base_env
from ..scoring._caliber import Caliber, EqualPair, Monotone, load_caliber
from ..scoring._grading import ScoreInputs, score
from ..scoring._tables import ROW, read_table
from ._canaries import (
    ANSWERS,
    BEHAVIORS,
    INDEX,
    Canary,
    SealedCanary,
    canary_inputs,
    changed,
    passed,
    plant,
    sealed_canaries,
)
from ._formats import (
    BuildChecks,
    BuildRecord,
    Case,
    ExamConfig,
    Pair,
    load_exam,
    read_cases,
    read_jsonl,
    read_pairs,
)


def build_exam(exam_dir: Path, seed: str, out: Path) -> BuildRecord:
    """Build ``exam_dir`` for ``seed`` into ``out`` (which must not exist yet)."""
    exam_dir, out = exam_dir.resolve(), out.resolve()  # children run elsewhere: give them absolute paths
    config = load_exam(exam_dir)
    caliber, _ = load_caliber(exam_dir / "caliber.yaml")
    if out.exists() and any(out.iterdir()):
        raise UsageError(f"{out} already holds a build", hint="builds are evidence: choose a new --out folder")
    _no_answer_tables(exam_dir / "TESTPLAN.md", caliber)
    layers = require()  # what every generator and oracle run below gets (exit 7 when nothing may run)
    with tempfile.TemporaryDirectory(prefix="tri-build-") as tmp:
        scratch = Path(tmp)
        generated = _twice(lambda n: _generate(config, exam_dir, seed, scratch, n), "generator")
        cases = read_cases(generated / "cases.jsonl")
        _check_inputs(generated, cases)
        deepens = _deepens(config, exam_dir, seed, scratch, generated, cases)
        pairs, canaries = read_pairs(generated / "pairs.jsonl"), _read_canaries(generated / INDEX)
        _apart(pairs, canaries)
        visible = _publish_visible(generated, out / "visible")
        answers = _twice(lambda n: _oracle(config, exam_dir, visible, scratch, n), "oracle")
        sealed = _publish_sealed(answers, out / "sealed", Planting(canaries, caliber, [c.case for c in cases]))
        built = _with_pairs(caliber, pairs, out / "caliber.yaml")
        checks = _self_checks(out / "caliber.yaml", built, sealed, scratch).model_copy(update={"deepens": deepens})
        checks = checks.model_copy(update={"canaries": _canaries_fail(sealed, answers)})
    record = BuildRecord(
        exam=config.name, seed=seed, cases=len(cases),
        visible_digest=seal(visible, crlf_kept=True),  # chaos inputs may hold CRLF on purpose
        sealed_digest=seal(sealed),
        caliber_sha256=hashlib.sha256((out / "caliber.yaml").read_bytes()).hexdigest(),
        exam_sha256=_exam_digests(exam_dir), checks=checks, isolation=layers,
    )
    (out / "build.json").write_text(record.model_dump_json(indent=1) + "\n", encoding="utf-8")
    return record


def generate(exam_dir: Path, seed: str, scratch: Path) -> tuple[Path, list[Case]]:
    """One run of the exam's generator for ``seed`` in ``scratch`` (no oracle, nothing sealed): the folder it
    wrote and its cases. The mutation gate hunts differences over such inputs."""
    exam_dir = exam_dir.resolve()
    out = _generate(load_exam(exam_dir), exam_dir, seed, scratch.resolve(), 0)
    return out, generated_cases(out)


def generated_cases(out: Path) -> list[Case]:
    """The cases of a folder one generator run wrote, checked as a build checks them."""
    cases = read_cases(out / "cases.jsonl")
    _check_inputs(out, cases)
    return cases


def generator_digest(exam_dir: Path) -> str:
    """SHA-256 of everything a generator run can read: the exam folder as its workspace gets it."""
    h = hashlib.sha256()
    for rel, sha in sorted(_exam_digests(exam_dir.resolve()).items()):
        h.update(f"{rel}\0{sha}\n".encode())
    return h.hexdigest()


@dataclass(frozen=True)
class Part:
    """One build of the exam and the cases taken from it (None: every case)."""

    build: Path
    cases: frozenset[str] | None = None


@dataclass(frozen=True)
class Composed:
    record: BuildRecord
    origin: dict[str, str]  # case -> seed of the build it came from
    missing: dict[str, list[str]]  # seed -> asked-for cases that build no longer holds


def compose_build(parts: list[Part], out: Path, seed: str) -> Composed:
    """One sealed build from cases of several builds of the same exam (the final regression round).

    Each case keeps its inputs and its sealed answers; relation pairs are kept when both cases are in.
    The self-checks run again on the result, and nothing is trusted that they do not pass.
    """
    records = [_verified(p.build) for p in parts]
    origin: dict[str, str] = {}
    missing: dict[str, list[str]] = {}
    chosen: list[tuple[Path, Case]] = []
    for part, record in zip(parts, records, strict=True):
        cases = read_cases(part.build / "visible" / "cases.jsonl")
        if part.cases is not None and part.cases - {c.case for c in cases}:
            missing[record.seed] = sorted(part.cases - {c.case for c in cases})
        for case in cases:
            if (part.cases is None or case.case in part.cases) and case.case not in origin:
                origin[case.case] = record.seed
                chosen.append((part.build, case))
    calibers = [load_caliber(p.build / "caliber.yaml")[0] for p in parts]
    with tempfile.TemporaryDirectory(prefix="tri-compose-") as tmp:
        visible = _compose_visible(chosen, out / "visible")
        sealed = _compose_sealed(chosen, out / "sealed")
        built = _kept_pairs(calibers, set(origin), out / "caliber.yaml")
        checks = _self_checks(out / "caliber.yaml", built, sealed, Path(tmp))
    kept = sealed_canaries(out)
    if kept:  # each was proven to fail the oracle's answers when its own build planted it
        checks = checks.model_copy(update={"canaries": _kinds(kept) + ", kept from the builds that planted them"})
    caliber_sha256 = hashlib.sha256((out / "caliber.yaml").read_bytes()).hexdigest()
    record = records[0].model_copy(update={
        "seed": seed, "cases": len(chosen), "visible_digest": seal(visible, crlf_kept=True),
        "sealed_digest": seal(sealed), "caliber_sha256": caliber_sha256, "checks": checks,
        "isolation": sorted(set.intersection(*(set(r.isolation) for r in records)))})
    (out / "build.json").write_text(record.model_dump_json(indent=1) + "\n", encoding="utf-8")
    return Composed(record, origin, missing)


def _verified(build: Path) -> BuildRecord:
    record = BuildRecord.model_validate_json((build / "build.json").read_text(encoding="utf-8"))
    for folder, digest in (("visible", record.visible_digest), ("sealed", record.sealed_digest)):
        report = verify(build / folder, expect=digest)
        if not report.ok:
            raise TamperDetected(f"{build / folder} does not match its seal: {report.findings[0].kind} "
                                 f"{report.findings[0].path}", hint="rebuild the exam; never edit a build")
    return record


def _compose_visible(chosen: list[tuple[Path, Case]], visible: Path) -> Path:
    lines = []
    for build, case in sorted(chosen, key=lambda bc: bc[1].case):
        shutil.copytree(build / "visible" / case.inputs, visible / "inputs" / case.case)
        lines.append(case.model_copy(update={"inputs": f"inputs/{case.case}"}).model_dump_json(exclude_defaults=True))
    (visible / "cases.jsonl").write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    return visible


def _compose_sealed(chosen: list[tuple[Path, Case]], sealed: Path) -> Path:
    sealed.mkdir(parents=True)
    wanted: dict[Path, set[str]] = {}
    for build, case in chosen:
        wanted.setdefault(build, set()).add(case.case)
    for name in ("answers.jsonl", "behaviors.jsonl", ANSWERS, BEHAVIORS):  # the canaries planted there too
        rows = [line for build, cases in wanted.items() if (build / "sealed" / name).exists()
                for line in (build / "sealed" / name).read_text(encoding="utf-8").splitlines()
                if line.strip() and json.loads(line).get("case") in cases]
        if rows or any((b / "sealed" / name).exists() for b in wanted):
            (sealed / name).write_text("".join(x + "\n" for x in rows), encoding="utf-8")
    kept = [c.model_copy(update={"controls": [x for x in c.controls if x in cases]})  # a control must be run too
            for build, cases in wanted.items() for c in sealed_canaries(build) if c.case in cases]
    if kept:
        _write_index(sealed, kept)
    return sealed


def _kept_pairs(calibers: list[Caliber], cases: set[str], path: Path) -> Caliber:
    """The first build's caliber with the pairs of every build whose two cases are both kept."""
    pairs: dict[str, list[tuple[str, str]]] = {}
    for caliber in calibers:
        for r in caliber.relations:
            if isinstance(r, EqualPair | Monotone):
                kept = pairs.setdefault(r.name, [])
                kept += [p for p in r.pairs if p[0] in cases and p[1] in cases and p not in kept]
    relations = [r.model_copy(update={"pairs": pairs[r.name]}) if isinstance(r, EqualPair | Monotone) else r
                 for r in calibers[0].relations]
    return _write_caliber(calibers[0].model_copy(update={"relations": relations}), path)


def _twice(make: Callable[[int], Path], what: str) -> Path:
    first, second = make(1), make(2)
    differences = diff(scan(first).sorted_entries(), scan(second).sorted_entries())
    if differences:
        shown = "; ".join(f"{d.kind} {d.path}" for d in differences[:5])
        raise InfrastructureFailure(f"the {what} is not deterministic: two runs differ ({len(differences)} "
                                    f"file(s): {shown})", hint=f"make the {what} depend only on its inputs and seed")
    return first


_NOT_EXAM = ("build", "builds", ".git", "tickets", "judge", "__pycache__")  # round traffic and caches, not the exam


_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{3,}")
_EXPECTING = ("expected", "answer", "result")


def _no_answer_tables(plan: Path, caliber: Caliber) -> None:
    """The test plan says what is tested and why; a table of expected values there (a markdown table with a
    column named after a caliber field or headed expected, CSV rows under a header of caliber fields, JSON
    rows with their values) is refused whatever its values: the tester reads the plan, and values an examiner
    guessed for one seed are the key of an exam whose generator ignores it."""
    if not plan.is_file():
        return
    fields = {f.lower() for f in caliber.fields}
    lines = plan.read_text(encoding="utf-8", errors="replace").splitlines()
    for n, line in enumerate(lines, start=1):
        named = _answer_table(line, lines[n:n + 2], fields)
        if named:
            raise MalformedInput(f"the test plan holds a table of expected values ({', '.join(named[:3])})",
                                 where=f"{plan}:{n}", hint="say what is tested and why; expected values live only "
                                                          "in the oracle's sealed key")


def _answer_table(line: str, after: list[str], fields: set[str]) -> list[str]:
    """The answer columns a table starting at ``line`` names (``after``: the next two lines); empty: no table."""
    low = line.lower()
    json_keys = [k for k, value in re.findall(r'"([^"]+)"\s*:\s*("?[-+0-9.])', low) if k in fields]
    if len(json_keys) >= 2:
        return json_keys
    if line.count("|") >= 2 and after and _SEPARATOR.match(after[0]) and after[1:] and after[1].count("|") >= 2 \
            and any(ch.isdigit() for ch in after[1]):  # a table of values, not of scenarios and the behaviour wanted
        cells = [c.strip(" `*_\t") for c in low.split("|")]
        return [c for c in cells if c and (c in fields or any(w in c for w in _EXPECTING))]
    cells = [c.strip(" `*_\t") for c in low.split(",")]
    data = bool(after) and after[0].count(",") == line.count(",") and any(ch.isdigit() for ch in after[0])
    named = [c for c in cells if c in fields]
    return named if len(named) >= 2 and data else []


_DEEPENS = 4  # at least one case in four must have inputs another seed does not generate


def _deepens(config: ExamConfig, exam_dir: Path, seed: str, scratch: Path, generated: Path, cases: list[Case]) -> str:
    """Cases whose inputs the generator does not also write at another seed, of all: a generator that ignores its
    seed (or moves only a few of its cases with it) writes the same exam every round, whose answers an examiner
    could paste anywhere, and which never deepens. Refused below one case in four."""
    other_seed = hashlib.sha256(f"another seed than {seed}".encode()).hexdigest()[:16]
    other = _generate(config, exam_dir, other_seed, scratch, 3)
    theirs = {_inputs_digest(other / c.inputs) for c in generated_cases(other)}
    new = sum(1 for c in cases if _inputs_digest(generated / c.inputs) not in theirs)
    if new * _DEEPENS < len(cases) or (cases and new == 0):
        raise MalformedInput(f"the generator does not draw its cases from the seed: {len(cases) - new} of "
                             f"{len(cases)} case(s) have the same inputs at another seed ({other_seed})",
                             where=f"{exam_dir / 'exam.yaml'}: generator",
                             hint=f"draw the inputs from {{seed}}: at least one case in {_DEEPENS} must change with it")
    return f"{new}/{len(cases)}"


def _inputs_digest(folder: Path) -> str:
    """One digest of a case's input folder: its files by name and content."""
    return hashlib.sha256("".join(f"{e.path}\0{e.sha256}\n" for e in scan(folder).sorted_entries()).encode()
                          ).hexdigest()


def _exam_digests(exam_dir: Path) -> dict[str, str]:
    """SHA-256 of every exam file the generator and the oracle can read: their code included."""
    return {e.path: e.sha256 for e in scan(exam_dir).sorted_entries()
            if not set(Path(e.path).parts) & set(_NOT_EXAM)}


def _workspace(exam_dir: Path, scratch: Path, name: str) -> Path:
    ws = scratch / name
    require_plain(exam_dir, "the exam folder", _NOT_EXAM)
    shutil.copytree(exam_dir, ws, symlinks=True, ignore=shutil.ignore_patterns(*_NOT_EXAM))
    (ws / ".home").mkdir()
    return ws


def _generate(config: ExamConfig, exam_dir: Path, seed: str, scratch: Path, n: int) -> Path:
    ws, out = _workspace(exam_dir, scratch, f"gen-ws-{n}"), scratch / f"generated-{n}"
    out.mkdir()
    argv = [a.replace("{seed}", seed).replace("{out}", str(out)) for a in config.generator]
    done, _ = Jail(writable=(ws, out)).run(argv, cwd=ws, env=_env(ws), timeout=config.timeout,
                                           file_cap=config.write_cap, limits=config.limits)
    _check_run(done, "generator", out)
    _check_written(config, exam_dir, ws, out, "generator")
    return out


def _oracle(config: ExamConfig, exam_dir: Path, visible: Path, scratch: Path, n: int) -> Path:
    ws, out = _workspace(exam_dir, scratch, f"oracle-ws-{n}"), scratch / f"answers-{n}"
    out.mkdir()
    argv = [a.replace("{cases}", str(visible)).replace("{out}", str(out)) for a in config.oracle]
    done, _ = Jail(readable=(visible,), writable=(ws, out)).run(argv, cwd=ws, env=_env(ws), timeout=config.timeout,
                                                                file_cap=config.write_cap, limits=config.limits)
    _check_run(done, "oracle", out)
    _check_written(config, exam_dir, ws, out, "oracle")
    if not (out / "answers.jsonl").is_file():
        raise MalformedInput("the oracle wrote no answers.jsonl", where=" ".join(config.oracle))
    return out


def _env(ws: Path) -> dict[str, str]:
    (ws / ".tmp").mkdir(exist_ok=True)
    return {**base_env(ws / ".home"), "TMPDIR": str(ws / ".tmp")}


_LIMIT_KEYS = {"memory": "memory", "processes": "processes", "cpu": "cpu_seconds"}


def _check_run(done: Completed, what: str, out: Path) -> None:
    odd = odd_files(out)
    if odd:  # never read through them: a link can point at any file the orchestrator can read
        raise MalformedInput(f"the {what} wrote a link or a special file ({', '.join(odd[:3])}); an exam's "
                             "output holds regular files only", where=str(out))
    if done.truncated:
        raise InfrastructureFailure(f"the {what} printed more than {OUTPUT_CAP} bytes (oversized_output)",
                                    hint=f"write results to files; keep the {what}'s own output short")
    if done.timed_out:
        raise InfrastructureFailure(f"the {what} timed out after {done.seconds:.0f}s",
                                    hint="make it faster or raise timeout in exam.yaml")
    if done.limit is not None and done.exit_code != 0:
        raise InfrastructureFailure(f"the {what} hit its {done.limit} limit and exited {done.exit_code}",
                                    hint=f"make it take less, or raise limits.{_LIMIT_KEYS[done.limit]} in exam.yaml")
    if done.exit_code != 0:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["(no stderr)"]
        raise InfrastructureFailure(f"the {what} exited {done.exit_code}: {tail[0]}", hint=f"fix the {what}")


def _check_written(config: ExamConfig, exam_dir: Path, ws: Path, out: Path, what: str) -> None:
    size = written([out]) + max(written([ws]) - written([exam_dir]), 0)
    if size > config.write_cap:
        raise InfrastructureFailure(f"the {what} wrote {size} bytes, past the write cap of {config.write_cap}",
                                    hint="write less, or raise write_cap in exam.yaml")


def _check_inputs(generated: Path, cases: list[Case]) -> None:
    root = generated.resolve()
    for case in cases:
        folder = (generated / case.inputs).resolve()
        if not folder.is_relative_to(root) or not folder.is_dir():
            raise MalformedInput(f"case {case.case}: inputs {case.inputs!r} is not a folder inside the output",
                                 where=str(generated / "cases.jsonl"))


def _publish_visible(generated: Path, visible: Path) -> Path:
    def unpublished(folder: str, names: list[str]) -> list[str]:  # beside the cases only: an input may be so named
        return [n for n in names if n in ("pairs.jsonl", INDEX)] if Path(folder) == generated else []

    shutil.copytree(generated, visible, ignore=unpublished)
    return visible


def _read_canaries(path: Path) -> list[Canary]:
    return read_jsonl(path, Canary, "case") if path.exists() else []


def _apart(pairs: list[Pair], canaries: list[Canary]) -> None:
    """A canary is in no relation pair: its expectation is planted, and a pair would compare it to a real one."""
    line = {c.case: n for n, c in enumerate(canaries, start=1)}
    for n, p in enumerate(pairs, start=1):
        named = sorted({p.a, p.b} & set(line))
        if named:
            raise MalformedInput(f"line {n} of pairs.jsonl pairs canary case {named[0]} in relation {p.relation!r}",
                                 where=f"{INDEX}:{line[named[0]]}", hint="keep canary cases out of relation pairs")


@dataclass(frozen=True)
class Planting:
    """The generator's canaries and what planting them needs (the caliber, the ids of every case)."""

    canaries: list[Canary]
    caliber: Caliber
    cases: list[str]


def _publish_sealed(answers: Path, sealed: Path, planting: Planting) -> Path:
    """The oracle's key, and beside it the canaries planted on it (none: the key alone)."""
    sealed.mkdir(parents=True)
    for name in ("answers.jsonl", "behaviors.jsonl"):
        if (answers / name).exists():
            shutil.copy2(answers / name, sealed / name)
    if not planting.canaries:
        return sealed
    behaviors = answers / "behaviors.jsonl"
    planted = plant(planting.canaries, (answers / "answers.jsonl").read_text(encoding="utf-8"),
                    behaviors.read_text(encoding="utf-8") if behaviors.exists() else None, planting.caliber,
                    planting.cases, INDEX)
    (sealed / ANSWERS).write_text(planted.answers, encoding="utf-8")
    if planted.behaviors is not None:
        (sealed / BEHAVIORS).write_text(planted.behaviors, encoding="utf-8")
    _write_index(sealed, planted.index)
    return sealed


def _write_index(sealed: Path, index: list[SealedCanary]) -> None:
    (sealed / INDEX).write_text("".join(c.model_dump_json() + "\n" for c in index), encoding="utf-8")


def _canaries_fail(sealed: Path, answers: Path) -> str:
    """Each canary, scored with the oracle's own answers in the target's place, fails (an honest target cannot
    pass one): the kinds planted, or "" when the generator planted none."""
    canaries = sealed_canaries(sealed.parent)
    if not canaries:
        return ""
    behaviors = answers / "behaviors.jsonl"
    inputs = canary_inputs(sealed.parent, answers / "answers.jsonl", behaviors if behaviors.exists() else None)
    assert inputs is not None
    honest = passed(score(replace(inputs, actual_text=False)), canaries)
    if honest:
        line = 1 + [c.case for c in canaries].index(honest[0])
        raise MalformedInput(f"canary case {honest[0]} passes with the oracle's own answers: an honest target would "
                             "pass it", where=f"{INDEX}:{line}", hint="plant an expectation the spec rules out")
    return _kinds(canaries) + "; the oracle's answers fail each"


def _kinds(canaries: list[SealedCanary]) -> str:
    kinds = {k: sum(1 for c in canaries if c.kind == k) for k in ("impossible", "refuse")}
    return f"{len(canaries)} ({', '.join(f'{n} {k}' for k, n in kinds.items() if n)})"


def _with_pairs(caliber: Caliber, pairs: list[Pair], path: Path) -> Caliber:
    relations = {r.name: r for r in caliber.relations}
    extra: dict[str, list[tuple[str, str]]] = {}
    for p in pairs:
        if not isinstance(relations.get(p.relation), EqualPair | Monotone):
            raise MalformedInput(f"pairs.jsonl names relation {p.relation!r}, which is not a pair relation "
                                 "of the caliber", where="pairs.jsonl")
        extra.setdefault(p.relation, []).append((p.a, p.b))
    updated = [r.model_copy(update={"pairs": [*r.pairs, *extra.get(r.name, [])]})
               if isinstance(r, EqualPair | Monotone) else r for r in caliber.relations]
    return _write_caliber(caliber.model_copy(update={"relations": updated}), path)


def _write_caliber(caliber: Caliber, path: Path) -> Caliber:
    data = caliber.model_dump(mode="json", by_alias=True, exclude_none=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return caliber


def _self_checks(caliber_path: Path, caliber: Caliber, sealed: Path, scratch: Path) -> BuildChecks:
    answers = sealed / "answers.jsonl"
    behaviors = sealed / "behaviors.jsonl"
    b = behaviors if behaviors.exists() and caliber.behaviors is not None else None
    gold = score(ScoreInputs(caliber_path, answers, answers, b, b, answers))
    if gold.verdict != "pass":
        raise InfrastructureFailure("the answer key does not pass against itself: " + "; ".join(gold.blockers),
                                    hint="the oracle and the caliber disagree (key columns, classes or relations)")
    corrupted = _corrupt(answers, caliber, scratch / "corrupted.jsonl")
    bad = score(ScoreInputs(caliber_path, answers, corrupted, b, b, corrupted))
    if bad.answers.verdict != "fail":
        raise InfrastructureFailure("a corrupted answer key still passes: the scorer cannot see this exam's values",
                                    hint="check the caliber's fields and tolerance classes")
    return BuildChecks(generator_deterministic=True, oracle_deterministic=True, gold_passes=True,
                       corrupted_key_fails=True)


def _corrupt(answers: Path, caliber: Caliber, out: Path) -> Path:
    """The answer key with its first row's first field changed beyond any tolerance."""
    rows = read_table(answers).frame.drop(ROW).collect().to_dicts()
    if not rows:
        raise InfrastructureFailure("the oracle wrote an empty answer key", hint="every exam needs answer rows")
    # the first row's first field holding a value (a nullable field's null is no value to change)
    row, name, spec = next(((r, n, s) for r in rows for n, s in caliber.fields.items() if r.get(n) is not None),
                           (rows[0], *next(iter(caliber.fields.items()))))
    value = str(row[name])
    row[name] = changed(spec, value)
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return out
