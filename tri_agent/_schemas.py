"""JSON Schemas of every on-disk format, exported from the pydantic models (never written by hand)."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

from .acceptance._config import AcceptanceConfig
from .acceptance._gate import GateResult, Progress, RoundFacts, Verdict
from .acceptance._judging import CodeSnapshot, RerunRecord
from .acceptance._pages import PageRecord
from .acceptance._preflight import Configuration
from .acceptance._scoreboard import AcceptanceReport, RoundSummary
from .acceptance._smells import Smell
from .acceptance._state import Abandonment, EarlierRun, Pin
from .drivers._command import Request, Response
from .drivers._episode import EpisodeResult
from .drivers._rulings import Ruling
from .drivers._scripted import Script
from .evidence._manifest import Manifest
from .evidence._seal import SealLogEntry, VerifyReport
from .evidence._trail import TrailEntry
from .exam._canaries import Canary, SealedCanary
from .exam._formats import BuildRecord, Case, ExamConfig, Pair
from .isolation._contract import Contract
from .isolation._tools import TOOL_SPECS
from .isolation._workspace import WorkspaceRecord
from .mutation._ledger import VerdictLine
from .mutation._menu import ConcreteMutants, Menu
from .mutation._recall import Recalled
from .mutation._verdict import MutationSummary
from .patchgate import AgentCheckout, GateFile, GateReport, Ledger, TestMap
from .roleeval import CorpusManifest, Expectation, Payload, Resolution
from .roleeval import Provenance as CaseProvenance
from .roleeval._report import AttemptRecord, RoleEvalReport
from .scoring._caliber import Caliber
from .scoring._leaks import LeakReport
from .scoring._report import ScoreReport
from .targets._gateway import Provenance, RunRecord
from .targets._presets import Preset
from .targets._target import TargetConfig
from .targets._trace import Coverage
from .targets.browser._pages import UiPlan
from .targets.service._requests import RequestPlan
from .testsignals._report import EvidenceReport
from .testsignals._spool import SpoolEntry

FORMATS: dict[str, type[BaseModel]] = {
    "caliber": Caliber,
    "manifest": Manifest,
    "seal-log-entry": SealLogEntry,
    "verify-report": VerifyReport,
    "score-report": ScoreReport,
    "leak-report": LeakReport,
    "exam": ExamConfig,
    "case": Case,
    "pair": Pair,
    "canary": Canary,
    "sealed-canary": SealedCanary,
    "build-record": BuildRecord,
    "target": TargetConfig,
    "request-plan": RequestPlan,
    "ui-plan": UiPlan,
    "provenance": Provenance,
    "run-record": RunRecord,
    "coverage": Coverage,
    "mutation-menu": Menu,
    "judge-mutants": ConcreteMutants,
    "mutation-summary": MutationSummary,
    "verdict-line": VerdictLine,
    "recall-line": Recalled,
    "preset": Preset,
    "role-contract": Contract,
    "episode-result": EpisodeResult,
    "scripted-episodes": Script,
    "executor-request-v1": Request,
    "executor-response-v1": Response,
    "workspace-record": WorkspaceRecord,
    "ruling": Ruling,
    "trail-entry": TrailEntry,
    "acceptance": AcceptanceConfig,
    "round-summary": RoundSummary,
    "acceptance-report": AcceptanceReport,
    "page-record": PageRecord,
    "gate-result": GateResult,
    "progress": Progress,
    "smell": Smell,
    "code-snapshot": CodeSnapshot,
    "rerun-record": RerunRecord,
    "round-facts": RoundFacts,
    "verdict": Verdict,
    "configuration": Configuration,
    "pin": Pin,
    "abandonment": Abandonment,
    "earlier-run": EarlierRun,
    "gate-file": GateFile,
    "test-map": TestMap,
    "agent-checkout": AgentCheckout,
    "flake-ledger": Ledger,
    "gate-report": GateReport,
    "spool-entry": SpoolEntry,
    "evidence-report": EvidenceReport,
    "corpus-manifest": CorpusManifest,
    "corpus-payload": Payload,
    "corpus-expectation": Expectation,
    "corpus-provenance": CaseProvenance,
    "corpus-ruling": Resolution,
    "role-attempt": AttemptRecord,
    "role-eval-report": RoleEvalReport,
}


def schema_text(model: type[BaseModel]) -> str:
    return json.dumps(model.model_json_schema(by_alias=True), indent=1, sort_keys=True) + "\n"


def schema_files(out: Path) -> list[Path]:
    """Every file ``export_schemas`` writes into ``out``."""
    return [*(out / f"{name}.schema.json" for name in FORMATS), out / "tools.json"]


def export_schemas(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, model in FORMATS.items():
        path = out / f"{name}.schema.json"
        path.write_text(schema_text(model), encoding="utf-8")
        written.append(path)
    tools = out / "tools.json"  # the engine's tools, as API roles and MCP clients see them
    tools.write_text(json.dumps({name: {"description": text, "input_schema": schema}
                                 for name, (text, schema) in TOOL_SPECS.items()}, indent=1, sort_keys=True) + "\n",
                     encoding="utf-8")
    return [*written, tools]
