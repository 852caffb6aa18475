"""``verify-trail``: the chain and the seals, the pinned head, and what the sealed records claim.

A trail that merely verifies against itself proves little: a consistent rewrite re-chains cleanly. So
beyond every seal and link, this checks that the trail still ends at its pin, that every round's gate
follows from its sealed facts, that every revealed seed matches the commitment sealed before its round,
and that a verdict of acceptance stands on N green rounds in a row followed by a green final round.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from pydantic import Field

from .. import _yamldoc
from .._errors import MalformedInput, TamperDetected, UsageError
from .._model import Record
from ..evidence._trail import EvidenceStore, TrailEntry, TrailFinding
from ._config import CONFIG, AcceptanceConfig, load_config
from ._gate import Certification, Played, Progress, RoundFacts, Verdict, advance, certify, gate
from ._scoreboard import TIMINGS, acceptance_json, report_html, scoreboard
from ._state import Pin, RunState, check_pin, commitment, locate, state_home

# what only an acceptance writes, by the name or the kind its readers find it by: a store holding any of it had a pin
_ACCEPTANCE = frozenset({"preflight", "round", "verdict"})


def resolve(target: Path) -> tuple[EvidenceStore, RunState | None]:
    """The store ``target`` names (a store folder, or a project with an acceptance.yaml) and, when it can be
    found, the run state whose pin guards it."""
    if (target / CONFIG).is_file():
        state = locate(target, load_config(target))
        return state.store, state
    if not (target / "TRAIL.jsonl").exists():
        raise UsageError(f"{target} holds no TRAIL.jsonl and no {CONFIG}", hint="pass a run's evidence store or its "
                         "project folder")
    return EvidenceStore(target), _state_of(target.resolve())


def _state_of(root: Path) -> RunState | None:
    for path in sorted((state_home() / "pins").glob("*.json")):
        try:
            pin = Pin.model_validate_json(path.read_bytes())
        except ValueError:
            continue
        if pin.store == str(root):
            return RunState(project=Path("/"), root=root, pin_path=path)
    return None


class TrailReport(Record):
    """What ``verify-trail`` found about one run's evidence store: ``ok`` only without findings."""

    schema_version: int = Field(default=1, description="Version of this report format.")
    store: str = Field(description="The evidence store verified (its folder).")
    digest: str = Field(description="The trail's digest now (SHA-256 of TRAIL.jsonl).")
    records: int = Field(description="Records the trail lists.")
    findings: list[TrailFinding] = Field(description="Every break found: the chain, a seal, the pin, a claim, "
                                                     "a report; empty when the run verifies.")

    @property
    def ok(self) -> bool:
        return not self.findings


def verify_trail(target: Path, expect: str | None = None) -> TrailReport:
    """``verify_run`` as a report."""
    store, findings = verify_run(target, expect=expect)
    entries = store.entries() if not findings else []
    return TrailReport(store=str(store.root), digest=store.digest(), records=len(entries), findings=findings)


def verify_run(target: Path, expect: str | None = None) -> tuple[EvidenceStore, list[TrailFinding]]:
    """Every finding about the run at ``target`` (empty: it verifies)."""
    store, state = resolve(target)
    findings = store.verify_trail(expect=expect)
    if findings:
        return store, findings  # nothing a broken chain says can be read as a claim
    if state is not None:  # findings is empty here
        findings = _caught(lambda: check_pin(state), "pin")
    elif any({e.name, e.kind} & _ACCEPTANCE for e in store.entries()):  # a plain store never had a pin
        findings.append(TrailFinding(where="pin", detail=f"no pin for this store under {state_home() / 'pins'}: "
                                                         "nothing shows it was not rewritten since its last stop"))
    findings += claims(store)
    if state is not None and (target / CONFIG).is_file():
        findings += report_findings(target, state)
    return store, findings


def report_findings(project: Path, state: RunState) -> list[TrailFinding]:
    """The project's reports against what its trail says now: people read the reports, not the records, so an
    edited (or stale) ACCEPTANCE.json, SCOREBOARD.md or REPORT.html is a finding."""
    store = state.store
    made: dict[str, Callable[[], str]] = {
        "ACCEPTANCE.json": lambda: acceptance_json(store), "REPORT.html": lambda: report_html(store),
        "SCOREBOARD.md": lambda: scoreboard(store, state.root / TIMINGS)}
    out = []
    for name, render in made.items():
        path = project / name
        if path.is_file() and path.read_bytes() != render().encode("utf-8"):
            out.append(TrailFinding(where=name, detail=f"differs from what the trail says ({len(store.entries())} "
                                    "records): edited by hand, or left from another state of the run; "
                                    "`tri-agent accept --resume` on a finished run writes it again from the trail"))
    return out


def claims(store: EvidenceStore) -> list[TrailFinding]:
    """What the records claim, checked against what they hold. A sealed record tri-agent could not have written
    (a file gone, not JSON, not the model) is a finding: someone resealed it."""
    findings: list[TrailFinding] = []
    try:
        progress = Progress(gate_n=_gate_n(store))
    except _UNREADABLE as exc:
        return [_unreadable(f"records/preflight/{CONFIG}", exc)]
    commitments: dict[str, str] = {}
    for entry in store.entries():
        try:
            progress = _record_claims(store, entry, progress, commitments, findings)
        except _UNREADABLE as exc:
            findings.append(_unreadable(f"records/{entry.name}", exc))
    return findings


def _record_claims(store: EvidenceStore, entry: TrailEntry, progress: Progress, commitments: dict[str, str],
                   findings: list[TrailFinding]) -> Progress:
    folder = store.root / "records" / entry.name
    if progress.decision == "policy" and entry.kind in ("round", "verdict", "escalation"):
        findings.append(TrailFinding(where=f"records/{entry.name}", detail=f"a {entry.kind} after the run was "
                                     "stopped for gaming the exam (policy): no run goes on from there"))
    if entry.kind == "policy" and progress.decision != "policy":
        findings.append(TrailFinding(where=f"records/{entry.name}", detail="a policy stop that no round's facts call "
                                     "for (no canary was gamed)"))
    seeds = json.loads((folder / "seeds.json").read_text()) if (folder / "seeds.json").exists() else {}
    for label, value in seeds.get("revealed", {}).items():
        if commitments.get(label) != commitment(value):
            findings.append(TrailFinding(where=f"records/{entry.name}/seeds.json",
                                         detail=f"the seed of {label} does not match its commitment"))
    commitments.update(seeds.get("commitments", {}))
    if entry.kind == "round" and not (folder / "facts.json").is_file():
        findings.append(TrailFinding(where=f"records/{entry.name}", detail="a round record without facts.json: "
                                     "not written by tri-agent accept"))
    elif entry.kind == "round":
        facts = RoundFacts.model_validate_json((folder / "facts.json").read_text())
        result = gate(facts)
        if json.loads((folder / "gate.json").read_text()) != json.loads(result.model_dump_json()):
            findings.append(TrailFinding(where=f"records/{entry.name}/gate.json",
                                         detail="the gate does not follow from the round's facts"))
        progress, _ = advance(progress, result, facts)
    if entry.kind == "round" and f"round-{int(entry.name.rsplit('-', 1)[1])}" not in seeds.get("revealed", {}):
        findings.append(TrailFinding(where=f"records/{entry.name}/seeds.json",
                                     detail="the round does not reveal the seed committed for it"))
    if entry.name == "verdict":  # by its name, as every reader of a verdict finds it, whatever its kind says
        findings += _verdict_findings(store, folder, progress)
    return progress


# what reading a record tri-agent did not write can raise (a ValidationError is a ValueError)
_UNREADABLE = (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError, MalformedInput)


def _unreadable(where: str, exc: BaseException) -> TrailFinding:
    said = " ".join(str(exc).split())[:200]
    return TrailFinding(where=where, detail=f"not as tri-agent writes it ({type(exc).__name__}: {said}): the sealed "
                                            "record was rewritten")


def _verdict_findings(store: EvidenceStore, folder: Path, progress: Progress) -> list[TrailFinding]:
    verdict = Verdict.model_validate_json((folder / "verdict.json").read_text())
    where = "records/verdict/verdict.json"
    if progress.decision != "accepted" or verdict.rounds != progress.rounds:
        return [TrailFinding(where=where, detail=(
            f"the verdict claims acceptance after {verdict.rounds} rounds, but the sealed rounds decide "
            f"{progress.decision or 'nothing'} after {progress.rounds} (acceptance needs {progress.gate_n} green "
            "rounds in a row, then a green final round)"))]
    if verdict.gate_n != progress.gate_n:
        return [TrailFinding(where=where, detail=f"the verdict claims gate N = {verdict.gate_n}, but the run was "
                                                 f"sealed with gate N = {progress.gate_n}")]
    cert = certification_of(store)
    if (verdict.certified, verdict.reasons) != (cert.certified, cert.reasons):
        return [TrailFinding(where=where, detail="the verdict's certification does not follow from the sealed "
                                                 f"episodes and runs (they say certified={cert.certified})")]
    if verdict.drivers != cert.drivers:
        return [TrailFinding(where=where, detail="the verdict's drivers do not follow from the sealed episodes (they "
                                                 f"say {'; '.join(f'{r}: {d}' for r, d in cert.drivers.items())})")]
    return []


def certification_of(store: EvidenceStore, *, fixed_now: bool = False) -> Certification:
    """Certification from the sealed records alone: every episode of every round, every run, build and mutation
    gate of role-written code, the seeds' provenance and what an in-session builder could read."""
    played, code = [], []
    for entry in store.entries():
        folder = store.root / "records" / entry.name
        if entry.kind == "round":
            k = int(entry.name.rsplit("-", 1)[1])
            for e in json.loads((folder / "episodes.json").read_text()):  # volatile fields are scrubbed
                driver = e["attempts"][0]["driver"] if e["attempts"] else "unknown"
                played.append(Played(round=k, role=e["role"], driver=driver, simulation=e["simulation"],
                                     isolation=e["isolation"]))
        for name in ("run.json", "build.json", "mutation-summary.json"):
            if (folder / name).exists():
                code.append(json.loads((folder / name).read_text()).get("isolation", []))
    preflight = store.root / "records" / "preflight"
    seeds = json.loads((preflight / "seeds.json").read_text()) if (preflight / "seeds.json").exists() else {}
    exposure = preflight / "exposure.json"
    exposed = json.loads(exposure.read_text())["exam_readable_by_the_session"] if exposure.exists() else []
    return certify(played, code, unsafe_contract=False, fixed_seeds=fixed_now or seeds.get("fixed_by_caller", True),
                   exposed=exposed)


def _gate_n(store: EvidenceStore) -> int:
    """Gate N as the run was configured: from the acceptance.yaml sealed at preflight."""
    sealed = store.root / "records" / "preflight" / CONFIG
    if not sealed.exists():
        return 1
    return AcceptanceConfig.model_validate(_yamldoc.data(sealed.read_text(encoding="utf-8"), str(sealed))).gate_n


def _caught(check: Callable[[], None], where: str) -> list[TrailFinding]:
    try:
        check()
    except TamperDetected as exc:
        return [TrailFinding(where=where, detail=exc.message)]
    return []
