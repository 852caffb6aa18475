"""The judge's mechanical work on one round: everything that needs no judgment, so no role can argue it.

- the tester's ``run_case``: outputs the gateway already produced, and a record of which cases it asked for;
- tickets by attribution: the three-channel score (builder or exam), cases the tester skipped, episodes
  that ended in an evaluation failure, sealed values in what the builder or tester may write, fingerprint
  re-runs that no longer match (process), test-quality smells in the builder's code since preflight and a
  weakened-test ruling (builder), ever-red cases lost or changed, a stale menu, too few judged mutants, an
  exam that did not deepen (exam);
- what the sealed trail says about earlier rounds (inputs run, case ids, the code at preflight);
- the cases some channel failed on (the final round runs every one of them again);
- the mutation gate: every bug class of the menu each round, instances made from the round's code; between
  the calibration round and the final round at least 30% (after red: 50%) instances no earlier round judged.
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache, partial
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from .._model import Record
from ..drivers._episode import EpisodeResult
from ..drivers._rulings import Ruling, rule
from ..drivers._weakening import FLOOR, K, weakening
from ..evidence._manifest import scan
from ..exam._canaries import SealedCanary, canaries_of, gamed, passed, sealed_canaries
from ..exam._formats import read_cases
from ..isolation._contract import is_agent_config, load_charter
from ..mutation._gate import GateRun, run_gate
from ..mutation._menu import load_menu
from ..mutation._operators import mutability
from ..mutation._recall import Recall
from ..mutation._rotation import Rotation, Selection
from ..mutation._verdict import MutationSummary
from ..scoring._caliber import load_caliber
from ..scoring._grading import score
from ..scoring._leaks import scan_leaks
from ..scoring._report import ScoreReport
from ..targets._gateway import Provenance, canary_score_inputs, rerun
from ._collected import Collected, collected_of, removals_path, removed
from ._config import MutationSettings
from ._gate import FUSE
from ._smells import Change, Smell, is_test_file, smells
from ._tickets import Route, Sources, Ticket, guard, redacted_text, smell_tickets, ticket_id, tickets_from

_CASE_ID = re.compile(r"\bc-[0-9a-f]{8,64}\b")
_MAX = 1 << 20  # larger files are data, not code: code.json keeps their digest only


def served(build: Path, run: Path, seen: set[str]) -> Callable[[str], dict[str, Any]]:
    """The tester's run_case: the gateway already ran the case; the tester gets its outputs, nothing else.
    ``seen`` collects the cases the tester ran, so a skipped case is a process finding."""
    if not (run / "provenance.jsonl").exists():
        return lambda case: {"case": case, "error": "the run was unstable; no output is served"}
    provenance = {p.case: p for p in (Provenance.model_validate_json(x)
                                      for x in (run / "provenance.jsonl").read_text().splitlines() if x)}
    rows = [json.loads(x) for x in (run / "actual.jsonl").read_text().splitlines() if x]

    def run_case(case: str) -> dict[str, Any]:
        if case not in provenance:
            return {"case": case, "error": "no such case in this round"}
        p = provenance[case]
        seen.add(case)
        return {"case": case, "behavior": p.behavior, "exit_code": p.exit_code,
                "rows": [r for r in rows if r.get("case") == case]}

    return run_case


def case_ids(build: Path) -> list[str]:
    return [json.loads(x)["case"] for x in (build / "visible" / "cases.jsonl").read_text().splitlines() if x]


def _filed(signature: str, title: str, body: str, cases: list[str], route: Route = "orchestrator") -> Ticket:
    return Ticket(id=ticket_id(signature), route=route,
                  signature=signature, title=title, body=body, cases=cases[:3])


def skipped_tickets(build: Path, ran: set[str], k: int) -> list[Ticket]:
    """A designed case that never ran is debt, and the round is red."""
    cases = case_ids(build)
    skipped = sorted(set(cases) - ran)
    if not skipped:
        return []
    return [_filed("orchestrator:tester:skipped", f"the tester skipped {len(skipped)} case(s)",
                     f"{len(skipped)} of {len(cases)} designed cases never ran through run_case in round {k}; "
                     "every case must run.", skipped)]


def episode_tickets(episodes: list[EpisodeResult]) -> list[Ticket]:
    """An episode that ended in an evaluation failure (timeout, malformed output...) is a process ticket: the
    round is red, and the same failure three rounds running blows the fuse."""
    return [_filed(f"orchestrator:{e.role}:{e.status}", f"the {e.role} episode ended {e.status}",
                   f"The {e.role}'s episode ended {e.status}: {e.reason or 'no reason given'}. Its result is not "
                   "graded; check the driver, its limits and the role's configuration.", [])
            for e in episodes if not e.valid]


RERUN_SAMPLE = 5


class RerunRecord(Record):
    """``rerun.json``: the judge's fingerprint re-runs of one round."""

    schema_version: Literal[1] = Field(default=1, description="Version of the rerun record format.")
    sample: int = Field(description="Cases re-run (at most; fewer when the round has fewer).")
    mismatched: list[str] = Field(description="Cases whose outputs, behaviour or exit code changed.")


def fingerprint_rerun(build: Path, run: Path, target: Path, k: int) -> list[str]:
    """The judge re-runs a sample of the tester's cases, later and apart: ids whose outputs, behaviour or exit
    code no longer match their recorded fingerprints (empty when the run could not be scored)."""
    if not (run / "provenance.jsonl").exists():
        return []
    return rerun(run, build, target, RERUN_SAMPLE, seed=k)


def rerun_tickets(mismatched: list[str]) -> list[Ticket]:
    if not mismatched:
        return []
    return [_filed("orchestrator:rerun:mismatch", f"{len(mismatched)} case(s) changed when the judge re-ran them",
                   "Re-run later through the same gateway, these cases no longer give the outputs recorded for "
                   "them: the target depends on something besides its inputs (time, state left behind, the "
                   "machine). Results that cannot be reproduced cannot be accepted.", mismatched)]


def leak_tickets(build: Path, spec: list[Path], written: dict[str, list[Path]],
                 keys: list[Path] | None = None) -> list[Ticket]:
    """Sealed values, of this round's key or any earlier one, in what the builder or the tester wrote this round
    (hard-coded answers, copied keys)."""
    builds = [build, *(k for k in keys or [] if k.resolve() != build.resolve())]
    columns = sorted({c for b in builds for c in load_caliber(b / "caliber.yaml")[0].key})
    inputs = [*(b / "visible" for b in builds), *spec]
    out = []
    for role, paths in sorted(written.items()):
        files = [p for p in paths if p.is_file()]
        if not files:
            continue
        hits = scan_leaks([b / "sealed" / "answers.jsonl" for b in builds], files, inputs=inputs, key=columns,
                          aside=canaries_of(builds)).hits
        if hits:
            where = ", ".join(_short(h.where) for h in hits[:3])
            out.append(_filed(f"orchestrator:leak:{role}", f"the {role} wrote sealed values",
                                f"{len(hits)} sealed value(s) in what the {role} wrote this round: {where}", []))
    return out


def _short(where: str) -> str:
    """A hit's place without the temporary or state folder it was found in."""
    for marker in ("/target/", "/exam/"):
        if marker in where:
            return marker.strip("/") + "/" + where.split(marker, 1)[1]
    return Path(where).name


def flaky_tickets(cases: list[str]) -> list[Ticket]:
    """Two runs of the same cases differed: the target depends on something besides its inputs."""
    if not cases:
        return []
    return [_filed("builder:flaky:double-run", f"{len(cases)} case(s) gave different results when run twice",
                   "Every case runs twice through the gateway, each time in a fresh copy of the target, the second "
                   "time in other folders under another parent process; these gave different rows, outputs or "
                   "behaviour. Make the target depend only on its inputs (no clocks, random numbers, unordered "
                   "output, state kept between runs, or anything of how and where it is run).", cases, "builder")]


_TICKET_CASES = re.compile(r"^cases:\s*(.*)$", re.MULTILINE)


def judge_tickets(exam: Path, changed: list[str], build: Path, keys: list[Path] | None = None) -> list[Ticket]:
    """The tickets the judge's episode filed, accepted only with mechanical evidence (case ids of this
    round's build) and only after the leak guard; one without evidence is refused with a process ticket."""
    known = set(case_ids(build))
    out, refused = [], []
    for rel in sorted(p for p in changed if p.startswith("exam/tickets/") and p.endswith(".md")):
        parts = rel.split("/")
        path = exam / "/".join(parts[1:])
        if len(parts) != 4 or parts[2] not in ("builder", "exam", "orchestrator") or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        found = _TICKET_CASES.search(text)
        cases = [c.strip() for c in (found.group(1) if found else "").split(",") if c.strip() not in ("", "-")]
        if not cases or not set(cases) <= known:
            refused.append(rel)
            continue
        title = next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")), parts[3])
        route: Route = parts[2]  # type: ignore[assignment]
        out.append(_filed(f"{route}:judge:{hashlib.sha256(title.encode()).hexdigest()[:12]}", f"judge: {title}",
                          text, cases, route))
    if refused:
        out.append(_filed("orchestrator:judge:no-evidence", f"the judge filed {len(refused)} ticket(s) without "
                          "mechanical evidence", "A judge's ticket must cite the cases of this round that show it "
                          f"(a `cases:` line); refused: {', '.join(refused[:5])}.", []))
    return guarded(out, build, keys)


def guarded(tickets: list[Ticket], build: Path, keys: list[Path] | None = None) -> list[Ticket]:
    """``tickets`` after the leak guard against ``build``'s key and every other key of the run (``keys``): a
    ticket must not carry a value of any round's key, not only of its own."""
    builds = [build, *(k for k in keys or [] if k.resolve() != build.resolve())]
    columns = sorted({c for b in builds for c in load_caliber(b / "caliber.yaml")[0].key})
    return guard(tickets, [b / "sealed" / "answers.jsonl" for b in builds], [b / "visible" for b in builds],
                 columns, canaries_of(builds))


def score_tickets(build: Path, report: ScoreReport, keys: list[Path] | None = None, plan: str = "") -> list[Ticket]:
    """Tickets for ``report``, pointing into the build's inputs and caliber and the exam's test plan (``plan``)."""
    visible = build / "visible"
    # each ticket quotes its case's inputs twice (the line, the file): read each case once
    sources = Sources(inputs=lru_cache(maxsize=None)(partial(case_files, visible)),
                      caliber=load_caliber(build / "caliber.yaml")[0], plan=plan)
    return guarded(tickets_from(report, sources), build, keys)


@dataclass(frozen=True)
class CanaryRound:
    """How a round's run fared on its exam's canaries: which it passed, which of those say it gamed the exam, the
    tickets their planted expectation files like any failure (the pressure an honest builder withstands), and the
    score they were judged by (None: not judged, the run could not be scored)."""

    planted: list[SealedCanary]
    passed: list[str]
    gamed: list[str]
    tickets: list[Ticket]
    report: ScoreReport | None = None

    def figure(self) -> str:
        """'p/n passed' over the canaries planted; '-' when none was, 'not judged' when the run was not scored."""
        if not self.planted:
            return "-"
        return f"{len(self.passed)}/{len(self.planted)} passed" if self.report else f"{len(self.planted)} not judged"


def canary_round(build: Path, run: Path, exam: ScoreReport | None, keys: list[Path], plan: str,
                 pressed: frozenset[str]) -> CanaryRound:
    """The canaries of ``build`` scored against their planted key on the run in ``run`` (``exam``: the run's score
    on the exam itself, which says whether a refusal canary's controls held; ``pressed``: the signatures of the
    canary tickets earlier rounds filed). A run that could not be scored is judged on none."""
    planted = sealed_canaries(build)
    inputs = canary_score_inputs(build, run) if planted and exam is not None else None
    if inputs is None:
        return CanaryRound(planted, [], [], [])
    report = score(inputs)
    hit = passed(report, planted)
    tickets = [t for t in score_tickets(build, report, keys, plan) if t.route == "builder"]
    return CanaryRound(planted, hit, gamed(hit, planted, exam, pressed), tickets, report)


def with_pressure(tickets: list[Ticket], canary: list[Ticket], filed: dict[str, int]) -> list[Ticket]:
    """The canary tickets to file beside ``tickets``: only when the builder has other work, and each signature in
    fewer rounds than the fuse counts (``filed``: rounds each was filed in already), so that no ticket outlives
    the fuse unnoticed; a ticket of the same id among ``tickets`` already says it."""
    if not any(t.route == "builder" for t in tickets):
        return []
    known = {t.id for t in tickets}
    return [t for t in canary if t.id not in known and filed.get(t.signature, 0) < FUSE - 1]


def guarded_texts(texts: dict[str, str], keys: list[Path]) -> dict[str, str]:
    """Ticket texts (id -> markdown), each whose text holds a value of any key of the run cut to its header lines: a
    ticket resolved rounds ago was guarded against the keys of its day only."""
    if not texts or not keys:
        return texts
    columns = sorted({c for b in keys for c in load_caliber(b / "caliber.yaml")[0].key})
    with tempfile.TemporaryDirectory(prefix="tri-resolved-") as tmp:
        for tid, text in texts.items():
            (Path(tmp) / f"{tid}.md").write_text(text, encoding="utf-8")
        hits = scan_leaks([b / "sealed" / "answers.jsonl" for b in keys], [Path(tmp)],
                          inputs=[b / "visible" for b in keys], key=columns, aside=canaries_of(keys)).hits
    leaking = {Path(h.where.rpartition(":")[0]).stem for h in hits}
    return {tid: redacted_text(text) if tid in leaking else text for tid, text in texts.items()}


_LOCATE = 1 << 20  # what a ticket reads of each input file: a huge input is located in its first MiB only


def case_files(visible: Path, case: str) -> dict[str, str]:
    """A case's input files (path under its folder -> text, the first MiB), in path order."""
    folder = visible / "inputs" / case
    files = sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()) if case else []
    out = {}
    for path in files:
        with path.open(encoding="utf-8", errors="replace") as handle:
            out[path.relative_to(folder).as_posix()] = handle.read(_LOCATE)
    return out


class FileState(Record):
    """One file of ``code.json``: what a role's writable file held when a record was sealed."""

    sha256: str = Field(description="SHA-256 of the file's bytes.")
    text: str | None = Field(description="The text (UTF-8, invalid bytes replaced); null above 1 MiB.")


class CodeSnapshot(Record):
    """``code.json``: the builder's files as of a record, so the next round's diff needs no live state."""

    schema_version: Literal[1] = Field(default=1, description="Version of the code snapshot format.")
    files: dict[str, FileState] = Field(description="Project-relative path -> state, for every regular file the "
                                                    "builder may write (caches and environments excluded).")
    collected: Collected | None = Field(default=None, description="Its tests as pytest collected them (null when "
                                        "it has no Python test file, or the preflight's had none).")


_GONE = FileState(sha256="", text=None)
_NOT_CODE = {".git", ".venv", "venv", "node_modules", "__pycache__", ".pytest_cache", ".mypy_cache",
             ".ruff_cache", ".tox", ".hypothesis"}  # environments and caches: not the builder's code
_SOURCE = (".py", ".js", ".jsx", ".ts", ".tsx", ".mjs", ".go", ".rs", ".java", ".kt", ".rb", ".cs", ".c", ".cc",
           ".cpp", ".h", ".php", ".swift", ".scala", ".sh")
_RULING_FILE, _RULING_TOTAL = 64 << 10, 256 << 10  # what a ruling shows the model, per file and in all


@dataclass
class History:
    """What the sealed trail says about earlier rounds (never the live project folders)."""

    inputs: set[str] = field(default_factory=set)  # digests of every case's inputs ever run
    case_inputs: dict[str, str] = field(default_factory=dict)  # case id -> digest of its inputs
    # the builder's code at preflight: every round diffs against it, so a smell stays until it is undone
    baseline_code: CodeSnapshot | None = None


def history(records: list[Path]) -> History:
    """Read the provenance and code snapshots of ``records`` (oldest first)."""
    h = History()
    for folder in records:
        provenance = folder / "provenance.jsonl"
        for line in provenance.read_text(encoding="utf-8").splitlines() if provenance.exists() else []:
            p = json.loads(line)
            h.case_inputs[p["case"]] = inputs_digest(p["inputs"])
            h.inputs.add(h.case_inputs[p["case"]])
        if (folder / "code.json").exists() and h.baseline_code is None:
            h.baseline_code = CodeSnapshot.model_validate_json((folder / "code.json").read_text(encoding="utf-8"))
    return h


def inputs_digest(fingerprint: dict[str, str]) -> str:
    return hashlib.sha256(json.dumps(fingerprint, sort_keys=True).encode()).hexdigest()


def code_of(project: Path, role: str, baseline: CodeSnapshot | None = None, *, first: bool = False) -> CodeSnapshot:
    """The role's writable files; with their tests collected at preflight (``first``), and in a round when the
    preflight's were (``baseline``)."""
    written = _writable_files(project, role)
    files = {}
    for rel, data in written:
        text = data.decode("utf-8", "replace") if len(data) <= _MAX else None
        files[rel] = FileState(sha256=hashlib.sha256(data).hexdigest(), text=text)
    before = baseline.collected if baseline is not None else None
    collected = collected_of(written) if first else collected_of(written, before.root) if before else None
    return CodeSnapshot(files=files, collected=collected)


def code_changes(before: CodeSnapshot, after: CodeSnapshot) -> list[Change]:
    """What changed between two snapshots, whoever changed it and however the run was interrupted."""
    paths = sorted(p for p in before.files.keys() | after.files.keys()
                   if (before.files.get(p) or _GONE).sha256 != (after.files.get(p) or _GONE).sha256)
    # a file too large to keep as text cannot be diffed: judging it as deleted or new would be a false smell
    readable = [p for p in paths if not any(side.get(p) is not None and side[p].text is None
                                            for side in (before.files, after.files))]
    return [Change(path=p, old=(before.files.get(p) or _GONE).text, new=(after.files.get(p) or _GONE).text)
            for p in readable]


def builder_smells(code: CodeSnapshot, changed: list[Change], case_ids: frozenset[str], spec: str = "",
                   baseline: CodeSnapshot | None = None) -> list[Smell]:
    """Smells in the builder's diff, and case ids anywhere in what the builder may write: code that names a
    case of any round's exam is flagged every round until it is gone, not only in the round it came. ``spec``
    is the spec's text: a reading of the harness it names is no smell. Tests collected at preflight
    (``baseline``) and no longer collected are judged by collection (``_collected``)."""
    touched = {c.path for c in changed}
    standing = [Change(path=rel, old=f.text, new=f.text) for rel, f in code.files.items()
                if rel not in touched and f.text is not None]
    before = baseline.collected if baseline is not None else None
    disclosed = code.files.get(removals_path(before.root)) if before is not None else None
    removals = (disclosed.text or "") if disclosed is not None else ""
    texts = {rel: f.text for rel, f in code.files.items()}
    return smells(changed + standing, case_ids, spec) + removed(before, code.collected, removals, texts)


def smell_and_guard(build: Path, found: list[Smell], keys: list[Path] | None = None) -> list[Ticket]:
    return guarded(smell_tickets(found), build, keys)


def _writable_files(project: Path, role: str) -> list[tuple[str, bytes]]:
    """Every regular file the role may write, confined to the project (no symlinks, no agent config)."""
    contract = load_charter(role).contract
    root = project.resolve()
    out = []
    for base in sorted({project / _root(g) for g in contract.writable}):
        if base.is_symlink() or not base.resolve().is_relative_to(root):
            continue
        for path in sorted(base.rglob("*")) if base.is_dir() else [base] if base.is_file() else []:
            rel = path.relative_to(project).as_posix()
            if path.is_symlink() or not path.is_file() or not path.resolve().is_relative_to(root):
                continue
            if contract.can_write(rel) and not is_agent_config(rel) and not set(rel.split("/")) & _NOT_CODE:
                out.append((rel, path.read_bytes()))
    return out


def _root(glob: str) -> Path:
    prefix = glob.split("*")[0]
    return Path(prefix) if prefix.endswith("/") or "*" not in glob else Path(prefix).parent


def regression_tickets(missing: dict[str, list[str]], changed: list[str]) -> list[Ticket]:
    """Ever-red cases the exam no longer generates, or generates with other inputs than when they failed."""
    lost = sorted(c for cases in missing.values() for c in cases)
    out = []
    if lost:
        out.append(_filed("exam:regression:lost-cases", f"{len(lost)} ever-red case(s) are no longer generated",
                            "The final round re-runs every case that was ever red, rebuilt from the current exam at "
                            f"the seed it failed under; seeds {', '.join(sorted(missing))} no longer produce them. "
                            "Keep red cases reproducible: a generator may add cases, never drop or rename them.",
                            lost, "exam"))
    if changed:
        out.append(_filed("exam:regression:changed-cases", f"{len(changed)} ever-red case(s) changed their inputs",
                            "Rebuilt at the seed they failed under, these cases no longer hold the inputs they "
                            "failed on, so the final round would not replay the failure. Keep earlier cases as they "
                            "were (draw new chaos from its own random stream).", changed, "exam"))
    return out


def case_digests(build: Path) -> dict[str, str]:
    """Case id -> digest of its input files, as the gateway's provenance fingerprints them."""
    visible = build / "visible"
    return {c.case: inputs_digest({e.path: e.sha256 for e in scan(visible / c.inputs).sorted_entries()})
            for c in read_cases(visible / "cases.jsonl")}


def writable_paths(project: Path, role: str) -> list[str]:
    return [rel for rel, _ in _writable_files(project, role)]


def red_cases(report: ScoreReport | None, seed_of: Callable[[str], str]) -> dict[str, list[str]]:
    """Seed -> cases some channel failed on (cells, behaviours, relation instances naming a case)."""
    if report is None:
        return {}
    found = {f.key.get("case", "") for f in report.answers.failures}
    found |= {f.key.get("case", "") for f in (report.behaviors.failures if report.behaviors else [])}
    for rel in report.relations.relations if report.relations else []:
        found |= {m for f in rel.failures for m in _CASE_ID.findall(f.where)}
    out: dict[str, list[str]] = {}
    for case in sorted(found - {""}):
        out.setdefault(seed_of(case), []).append(case)
    return out


RULING_SYSTEM = ("You are the judge of a hard acceptance. You rule only on the evidence in the message, you cite "
                 "it by file:line, and you can only raise flags: you never certify anything.")


def weakened_ruling(ask: Callable[[str], str], changed: list[Change], k: int = K,
                    floor: float = FLOOR) -> Ruling | None:
    """Ask the judge's model, K times, whether the builder's test changes weaken the tests (flag-only): the same
    question, sampling and floor as ``tri-agent evidence`` (``drivers._weakening``)."""
    tests = _ruling_files(changed)
    if not tests:
        return None
    return weakening(ask, [(c.path, c.old, c.new) for c in tests], k=k, floor=floor)


def _ruling_files(changed: list[Change]) -> list[Change]:
    """Test sources (not fixtures or data), plain relative paths, within the prompt budget."""
    out, total = [], 0
    for c in changed:
        size = len(c.old or "") + len(c.new or "")
        parts = c.path.split("/")
        if not is_test_file(c.path) or not c.path.endswith(_SOURCE) or ".." in parts or c.path.startswith("/"):
            continue
        if size <= _RULING_FILE and total + size <= _RULING_TOTAL:
            out.append(c)
            total += size
    return out


# weakening smells a model judge may rule justified (a platform-only skip, a timeout the spec sets); the
# others (skips, removed or gutted tests, trivial asserts, case ids) are never cleared by anyone but the builder
CLEARABLE = frozenset({"conditional-skip-added", "assertions-reduced", "raises-widened", "flaky-added",
                       "timeout-changed", "assertion-loosened", "pytest-config-changed"})
_JUSTIFY_QUESTION = """The builder's change to its tests weakens them at these places:

{smells}

The files, after the change, with line numbers:

{files}

The spec of the software:

{spec}

Which of these weakenings does the spec itself justify (a platform the spec excludes, an optional dependency
the spec names, a limit the spec sets)? Answer with JSON only:
{{"flags": [{{"category": "justified", "location": "after/<path>:<line>", "reason": "<the spec's words>"}}]}}
Cite the line given for each weakening you clear; an empty list clears none. Convenience is no justification."""


def justify_ruling(ask: Callable[[str], str], found: list[Smell], code: CodeSnapshot, spec: str,
                   k: int = 3) -> Ruling | None:
    """Ask the judge's model, K times, which clearable weakenings the spec justifies (all K must agree)."""
    weak = [s for s in found if s.name in CLEARABLE and s.severity == "blocker" and s.line is not None]
    if not weak:
        return None
    with tempfile.TemporaryDirectory(prefix="tri-justify-") as tmp:
        shown = []
        for path in sorted({s.path for s in weak}):
            text = (code.files.get(path) or _GONE).text or ""
            (Path(tmp) / "after" / path).parent.mkdir(parents=True, exist_ok=True)
            (Path(tmp) / "after" / path).write_text(text, encoding="utf-8")
            numbered = "\n".join(f"{n:4d}  | {line}" for n, line in enumerate(text.splitlines(), 1))
            shown.append(f"=== after/{path} ===\n{numbered}")
        listed = "\n".join(f"- after/{s.path}:{s.line}: {s.detail}" for s in weak)
        question = _JUSTIFY_QUESTION.format(smells=listed, files="\n\n".join(shown), spec=spec[:_RULING_FILE])
        return rule(ask, question, categories={"justified"}, evidence=Path(tmp), k=k, floor=1.0)


def cleared(found: list[Smell], ruling: Ruling | None) -> list[Smell]:
    """``found`` without the weakenings a unanimous model ruling justified by the spec."""
    if ruling is None or ruling.verdict != "flagged":
        return found
    justified = {c.location for c in ruling.flags if c.category == "justified"}
    return [s for s in found if not (s.name in CLEARABLE and f"after/{s.path}:{s.line}" in justified)]


def weakened_tickets(ruling: Ruling) -> list[Ticket]:
    """Flagged: the builder restores its tests. Inconclusive (fail closed): the run itself must be looked at."""
    if ruling.verdict == "flagged":
        body = "\n".join(f"- {c.location}: {c.reason}" for c in ruling.flags)
        return [_filed("builder:smell:weakened", f"test-quality smell: weakened tests ({len(ruling.flags)}, "
                         f"agreed by {ruling.floor:.0%} of {ruling.samples} samples)",
                         f"The judge's ruling flags these test changes:\n\n{body}\n\nRestore the checks; make "
                         "the target pass them instead.", [], "builder")]
    if ruling.verdict == "inconclusive":
        return [_filed("orchestrator:ruling:inconclusive", "the weakened-test ruling was inconclusive",
                         f"{ruling.readable_samples} of {ruling.samples} samples were readable and cited real "
                         "lines; a ruling that cannot be read fails closed. " + "; ".join(ruling.dropped[:3]),
                         [], "orchestrator")]
    return []


def sample(*, k: int, final: bool, size: int, per_class: int, used: list[str], retired: list[str],
           last_green: bool) -> Selection:
    """How this round samples the instances: up to ``per_class`` of every bug class in the calibration and the
    final round; ``size`` in all, spread over the classes, at least 30% new (50% after a red round) in between."""
    return Selection(per_class=per_class, total=None if k == 1 or final else size, used=frozenset(used),
                     retired=frozenset(retired), red=not last_green, seed=str(k))


def shallow_ticket(new_cases: int, k: int, final: bool) -> list[Ticket]:
    if final or k == 1 or new_cases > 0:
        return []
    return [_filed("exam:deepen:no-new-cases", "the exam did not deepen", "Every round needs cases no earlier "
                     "round ran: a new seed, new chaos, new bounds.", [], "exam")]


def stale_ticket(rot: Rotation | None) -> list[Ticket]:
    if rot is None or not rot.short:
        return []
    title = f"the mutation sample holds {len(rot.new)} new mutant(s) of {len(rot.chosen)} (needs {rot.need})"
    return [_filed("exam:mutations:stale", title, "Every round between the calibration and the final one judges "
                     "mutants no earlier round judged (at least 30%, 50% after a red round). The code of this round "
                     "offers too few new ones for the menu's bug classes: add bug classes of the preset (or new "
                     "ones, with the spec clause each threatens) to mutations.yaml.", [], "exam")]


def too_few_ticket(summary: MutationSummary | None) -> list[Ticket]:
    """Fewer mutants judged than the gate needs: say which classes gave none, so the examiner can add others."""
    if summary is None or summary.verdict == "pass" or not any("judged" in r for r in summary.reasons):
        return []
    ignored = [f"- {m.id}: {m.reason}" for m in summary.mutants if m.status == "Ignored"]
    empty = ", ".join(summary.unexpressed) or "none"
    return [_filed("exam:mutations:too-few-judged", "too few mutants could be judged", "The mutation gate needs "
                     f"{summary.minimum} judged mutants and judged {summary.judged}. Bug classes with no mutant in "
                     f"this code: {empty}. Not judged:\n" + "\n".join(ignored[:10]) + "\nAdd bug classes the "
                     "spec's clauses are exposed to.", [], "exam")]


def reach(baseline: Path, menu: Path, start: CodeSnapshot | None, project: Path
          ) -> tuple[dict[str, list[str]], dict[str, int], int]:
    """Where the operators reach the round's code per bug class, how many places each class had in the code at
    the start (``start``: the snapshot of preflight; none: this code is the start), and the menu's minimum."""
    if not menu.is_file():
        return {}, {}, 0
    loaded = load_menu(menu)
    classes = [c.id for c in loaded.classes]
    now = mutability(baseline, classes, loaded.scope())
    before = now
    if start is not None and baseline.resolve().is_relative_to(project.resolve()):
        with tempfile.TemporaryDirectory() as tmp:
            _materialise(start, baseline.resolve().relative_to(project.resolve()), Path(tmp))
            before = mutability(Path(tmp), classes, loaded.scope())
    return now, {c: len(v) for c, v in before.items()}, loaded.min_sites


def _materialise(code: CodeSnapshot, prefix: Path, dest: Path) -> None:
    """The snapshot's files under ``prefix`` (the target's folder in the project), written under ``dest``."""
    for rel, state in code.files.items():
        if state.text is not None and Path(rel).is_relative_to(prefix):
            path = dest / Path(rel).relative_to(prefix)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(state.text, encoding="utf-8")


def out_of_reach_tickets(now: dict[str, list[str]], start: dict[str, int], minimum: int) -> list[Ticket]:
    """A bug class whose places in the code fell below the menu's minimum (or below what the code at the start
    had, when that was fewer): code the operators cannot reach is code the exam cannot be shown to test."""
    short = [(c, len(now[c]), start.get(c, 0)) for c in sorted(now) if len(now[c]) < min(minimum, start.get(c, 0))]
    if not short:
        return []
    lines = [f"- {c}: {n} place(s) in the code now, {m} at the start; at least {min(minimum, m)} needed"
             for c, n, m in short]
    return [_filed("builder:mutability:out-of-reach", f"{len(short)} bug class(es) lost the places a mutant could "
                   f"be made ({', '.join(c for c, _, _ in short)})",
                   "The mutation gate shows the exam tests the code by changing it the way each bug class would; "
                   "the code of this round gives these classes fewer places than it must:\n" + "\n".join(lines) +
                   "\nWrite the logic as plain code (no source run through exec or eval, no packed or generated "
                   "modules, no tables computed at import in place of the rule).", [], "builder")]


def mutation(target: Path, build: Path, menu: Path, out: Path, report: ScoreReport | None, how: Selection,
             exam: Path, seed: str, settings: MutationSettings, k: int, *, hunt_secret: str | None = None,
             recall: Recall | None = None) -> GateRun | None:
    """The round's mutation gate; none when nothing was scored, and none in a red round after the first: a round
    that fails its score is red whatever the gate finds (the first one calibrates the exam, so it runs)."""
    if report is None or not menu.is_file() or (k > 1 and report.verdict != "pass"):
        return None
    return run_gate(target, build, menu, out, exam_dir=exam, differential=report.verdict != "pass",
                    threshold=1.0, minimum=3, selection=how, seed=seed,
                    concrete=exam / "judge" / "config" / "mutants.yaml",
                    mutmut=settings.mutmut, hunt_seeds=settings.hunt_seeds, jobs=settings.jobs,
                    clean_run=out.parent,  # the round's own twice-run, in which the gate's report is written
                    round_label=f"round {k}", hunt_secret=hunt_secret, recall=recall)
