"""``exam build``: generate the cases twice, compute the answers twice, seal both, prove the scorer sees.

Nothing is trusted until: the generator's two runs are byte-identical, the oracle's two runs are
byte-identical, the answer key scored against itself passes, and a deliberately corrupted key fails.
The oracle runs from a copy of the exam folder with the visible cases beside it: the target's
implementation is never in its workspace. A build folder is evidence and is never overwritten.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import yaml

from ._caliber import Caliber, EqualPair, Monotone, load_caliber
from ._errors import InfrastructureFailure, MalformedInput, UsageError
from ._exam import EXAM_FILES, BuildChecks, BuildRecord, Case, ExamConfig, Pair, load_exam, read_cases, read_pairs
from ._grading import ScoreInputs, score
from ._manifest import scan
from ._process import Completed, base_env, run
from ._seal import diff, seal
from ._tables import ROW, read_table
from ._tolerance import EXACT, parse_count, parse_decimal


def build_exam(exam_dir: Path, seed: str, out: Path) -> BuildRecord:
    """Build ``exam_dir`` for ``seed`` into ``out`` (which must not exist yet)."""
    exam_dir, out = exam_dir.resolve(), out.resolve()  # children run elsewhere: give them absolute paths
    config = load_exam(exam_dir)
    caliber, _ = load_caliber(exam_dir / "caliber.yaml")
    if out.exists() and any(out.iterdir()):
        raise UsageError(f"{out} already holds a build", hint="builds are evidence: choose a new --out folder")
    with tempfile.TemporaryDirectory(prefix="tri-build-") as tmp:
        scratch = Path(tmp)
        generated = _twice(lambda n: _generate(config, exam_dir, seed, scratch, n), "generator")
        cases = read_cases(generated / "cases.jsonl")
        _check_inputs(generated, cases)
        visible = _publish_visible(generated, out / "visible")
        answers = _twice(lambda n: _oracle(config, exam_dir, visible, scratch, n), "oracle")
        sealed = _publish_sealed(answers, out / "sealed")
        built = _with_pairs(caliber, read_pairs(generated / "pairs.jsonl"), out / "caliber.yaml")
        checks = _self_checks(out / "caliber.yaml", built, sealed, scratch)
    record = BuildRecord(
        exam=config.name, seed=seed, cases=len(cases),
        visible_digest=seal(visible, crlf_kept=True),  # chaos inputs may hold CRLF on purpose
        sealed_digest=seal(sealed),
        caliber_sha256=hashlib.sha256((out / "caliber.yaml").read_bytes()).hexdigest(),
        exam_sha256={n: hashlib.sha256((exam_dir / n).read_bytes()).hexdigest() for n in EXAM_FILES}, checks=checks,
    )
    (out / "build.json").write_text(record.model_dump_json(indent=1) + "\n", encoding="utf-8")
    return record


def _twice(make: Callable[[int], Path], what: str) -> Path:
    first, second = make(1), make(2)
    differences = diff(scan(first).sorted_entries(), scan(second).sorted_entries())
    if differences:
        shown = "; ".join(f"{d.kind} {d.path}" for d in differences[:5])
        raise InfrastructureFailure(f"the {what} is not deterministic: two runs differ ({len(differences)} "
                                    f"file(s): {shown})", hint=f"make the {what} depend only on its inputs and seed")
    return first


def _workspace(exam_dir: Path, scratch: Path, name: str) -> Path:
    ws = scratch / name
    shutil.copytree(exam_dir, ws, symlinks=True, ignore=shutil.ignore_patterns("build", "builds", ".git"))
    (ws / ".home").mkdir()
    return ws


def _generate(config: ExamConfig, exam_dir: Path, seed: str, scratch: Path, n: int) -> Path:
    ws, out = _workspace(exam_dir, scratch, f"gen-ws-{n}"), scratch / f"generated-{n}"
    out.mkdir()
    argv = [a.replace("{seed}", seed).replace("{out}", str(out)) for a in config.generator]
    _check_run(run(argv, cwd=ws, env=base_env(ws / ".home"), timeout=config.timeout), "generator")
    return out


def _oracle(config: ExamConfig, exam_dir: Path, visible: Path, scratch: Path, n: int) -> Path:
    ws, out = _workspace(exam_dir, scratch, f"oracle-ws-{n}"), scratch / f"answers-{n}"
    out.mkdir()
    argv = [a.replace("{cases}", str(visible)).replace("{out}", str(out)) for a in config.oracle]
    _check_run(run(argv, cwd=ws, env=base_env(ws / ".home"), timeout=config.timeout), "oracle")
    if not (out / "answers.jsonl").is_file():
        raise MalformedInput("the oracle wrote no answers.jsonl", where=" ".join(config.oracle))
    return out


def _check_run(done: Completed, what: str) -> None:
    if done.timed_out:
        raise InfrastructureFailure(f"the {what} timed out after {done.seconds:.0f}s",
                                    hint="make it faster or raise timeout in exam.yaml")
    if done.exit_code != 0:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["(no stderr)"]
        raise InfrastructureFailure(f"the {what} exited {done.exit_code}: {tail[0]}", hint=f"fix the {what}")


def _check_inputs(generated: Path, cases: list[Case]) -> None:
    root = generated.resolve()
    for case in cases:
        folder = (generated / case.inputs).resolve()
        if not folder.is_relative_to(root) or not folder.is_dir():
            raise MalformedInput(f"case {case.case}: inputs {case.inputs!r} is not a folder inside the output",
                                 where=str(generated / "cases.jsonl"))


def _publish_visible(generated: Path, visible: Path) -> Path:
    shutil.copytree(generated, visible, ignore=shutil.ignore_patterns("pairs.jsonl"))
    return visible


def _publish_sealed(answers: Path, sealed: Path) -> Path:
    sealed.mkdir(parents=True)
    for name in ("answers.jsonl", "behaviors.jsonl"):
        if (answers / name).exists():
            shutil.copy2(answers / name, sealed / name)
    return sealed


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
    built = caliber.model_copy(update={"relations": updated})
    data = built.model_dump(mode="json", by_alias=True, exclude_none=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return built


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
    name, spec = next(iter(caliber.fields.items()))
    rows[0][name] = _changed(str(rows[0][name]), spec.cls, spec.values)
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return out


def _changed(value: str, cls: str, values: list[str] | None) -> str:
    if cls in ("amount", "ratio"):
        return format(EXACT.add(parse_decimal(value), 1), "f")
    if cls == "count":
        return str(parse_count(value) + 1)
    if cls == "status":
        return next((v for v in values or [] if v != value), value + "?")
    if cls == "set":
        return f"[{value}]"  # one element, the original list: a different multiset
    if cls == "json":
        return f'{{"corrupted": {value}}}'
    return value + "\u2021"
