"""The judge's mechanical work on one round: everything that needs no judgment, so no role can argue it.

- the tester's ``run_case``: outputs the gateway already produced, and a record of which cases it asked for;
- tickets by attribution: the three-channel score (builder or exam), cases the tester skipped (process),
  sealed values in what the builder or tester wrote (process), test-quality smells in the builder's diff
  (builder), ever-red cases the exam no longer generates and a stale mutation menu (exam);
- the cases some channel failed on (the final round runs every one of them again);
- the mutation gate: the whole menu in the calibration round and the final round, a rotated sample with
  at least 30% (after red: 50%) mutants no earlier round judged in between.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._caliber import load_caliber
from ._contract import load_charter
from ._gateway import Provenance
from ._leaks import scan_leaks
from ._mutation import MutationSummary, Rotation, load_menu, mutate, rotation
from ._report import ScoreReport
from ._smells import Change, Smell, smells
from ._tickets import Route, Ticket, guard, smell_tickets, tickets_from

_CASE_ID = re.compile(r"\bc-[0-9a-f]{8,64}\b")
_MAX = 1 << 20  # larger files are data, not code


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


def _process(signature: str, title: str, body: str, cases: list[str], route: Route = "orchestrator") -> Ticket:
    return Ticket(id="t-" + hashlib.sha256(signature.encode()).hexdigest()[:10], route=route,
                  signature=signature, title=title, body=body, cases=cases[:3])


def skipped_tickets(build: Path, ran: set[str], k: int) -> list[Ticket]:
    """A designed case that never ran is debt, and the round is red."""
    cases = case_ids(build)
    skipped = sorted(set(cases) - ran)
    if not skipped:
        return []
    return [_process("orchestrator:tester:skipped", f"the tester skipped {len(skipped)} case(s)",
                     f"{len(skipped)} of {len(cases)} designed cases never ran through run_case in round {k}; "
                     "every case must run.", skipped)]


def leak_tickets(project: Path, build: Path, spec: list[str], written: dict[str, list[str]]) -> list[Ticket]:
    """Sealed values in what the builder or the tester wrote this round (hard-coded answers, copied keys)."""
    caliber, _ = load_caliber(build / "caliber.yaml")
    inputs = [build / "visible", *(project / s for s in spec)]
    out = []
    for role, paths in sorted(written.items()):
        files = [project / p for p in paths if (project / p).is_file()]
        if not files:
            continue
        hits = scan_leaks([build / "sealed" / "answers.jsonl"], files, inputs=inputs, key=list(caliber.key)).hits
        if hits:
            where = ", ".join(h.where.removeprefix(str(project) + "/") for h in hits[:3])
            out.append(_process(f"orchestrator:leak:{role}", f"the {role} wrote sealed values",
                                f"{len(hits)} sealed value(s) in what the {role} wrote this round: {where}", []))
    return out


def score_tickets(build: Path, report: ScoreReport) -> list[Ticket]:
    visible = build / "visible"

    def case_input(case: str) -> str | None:
        files = sorted((visible / "inputs" / case).glob("*")) if case else []
        return files[0].read_text(encoding="utf-8", errors="replace") if files else None

    key = report.answers.failures[0].key if report.answers.failures else {}
    return guard(tickets_from(report, case_input), build / "sealed" / "answers.jsonl", [visible], list(key))


def builder_smells(project: Path, build: Path, changed: list[Change]) -> list[Smell]:
    """Smells in the builder's diff, and case ids anywhere in what the builder may write: code that names a
    case of any round's exam is flagged every round until it is gone, not only in the round it came."""
    ids = frozenset(c for cases in (project / "builds").glob("*/visible/cases.jsonl")
                    for c in case_ids(cases.parent.parent)) | frozenset(case_ids(build))
    touched = {c.path for c in changed}
    standing = [Change(path=rel, old=text, new=text) for rel, text in _writable_texts(project, "builder")
                if rel not in touched]
    return smells(changed + standing, ids)


def _writable_texts(project: Path, role: str) -> list[tuple[str, str]]:
    contract = load_charter(role).contract
    roots = {_root(g) for g in contract.writable}  # walk only where the globs can match
    out = []
    for root in sorted(roots):
        base = project / root
        for path in sorted(base.rglob("*")) if base.is_dir() else [base] if base.is_file() else []:
            rel = path.relative_to(project).as_posix()
            if path.is_file() and not path.is_symlink() and contract.can_write(rel) and path.stat().st_size < _MAX:
                out.append((rel, path.read_bytes().decode("utf-8", "replace")))
    return out


def smell_and_guard(build: Path, found: list[Smell]) -> list[Ticket]:
    caliber, _ = load_caliber(build / "caliber.yaml")
    return guard(smell_tickets(found), build / "sealed" / "answers.jsonl", [build / "visible"], list(caliber.key))


def _root(glob: str) -> Path:
    prefix = glob.split("*")[0]
    return Path(prefix) if prefix.endswith("/") or "*" not in glob else Path(prefix).parent


def missing_tickets(missing: dict[str, list[str]]) -> list[Ticket]:
    """Cases that were red under a seed and that the exam no longer generates under it."""
    lost = sorted(c for cases in missing.values() for c in cases)
    if not lost:
        return []
    return [_process("exam:regression:lost-cases", f"{len(lost)} ever-red case(s) are no longer generated",
                     "The final round re-runs every case that was ever red, rebuilt from the current exam at the "
                     f"seed it failed under; seeds {', '.join(sorted(missing))} no longer produce them. Keep red "
                     "cases reproducible: a generator may add cases, never drop or rename them.", lost, "exam")]


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


def sample(menu: Path, *, k: int, final: bool, size: int, used: list[str], retired: list[str],
           last_green: bool) -> Rotation | None:
    """The mutants this round judges: None (the whole menu) in round 1 and the final round."""
    if k == 1 or final:
        return None
    ids = [m.id for m in load_menu(menu).mutants if m.id not in retired]
    return rotation(ids, used, red=not last_green, size=size, seed=str(k))


def shallow_ticket(new_cases: int, k: int, final: bool) -> list[Ticket]:
    if final or k == 1 or new_cases > 0:
        return []
    return [_process("exam:deepen:no-new-cases", "the exam did not deepen", "Every round needs cases no earlier "
                     "round ran: a new seed, new chaos, new bounds.", [], "exam")]


def stale_ticket(rot: Rotation | None) -> list[Ticket]:
    if rot is None or not rot.short:
        return []
    return [_process("exam:mutations:stale", f"the mutation menu has {len(rot.new)} new mutant(s), the round "
                     f"needs {rot.need}", "Every round judges mutants no earlier round judged (at least 30%, "
                     "50% after a red round). Add realistic mutants of the preset's bug classes to mutations.yaml, "
                     "each with an anchor and a witness.", [], "exam")]


def mutation(target: Path, build: Path, menu: Path, out: Path, report: ScoreReport | None,
             rot: Rotation | None) -> MutationSummary | None:
    if report is None or not menu.is_file():
        return None
    return mutate(target, build, menu, out, differential=report.verdict != "pass", skip_drifted=True,
                  threshold=1.0, minimum=3, only=None if rot is None else rot.chosen)
