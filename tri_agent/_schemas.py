"""JSON Schemas of every on-disk format, exported from the pydantic models (never written by hand)."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

from ._acceptance import AcceptanceConfig
from ._caliber import Caliber
from ._contract import Contract
from ._driver import EpisodeResult, Script
from ._evidence import TrailEntry
from ._exam import BuildRecord, Case, ExamConfig, Pair
from ._executor import Request, Response
from ._gate import GateResult, Progress
from ._gateway import Provenance, RunRecord
from ._judging import CodeSnapshot, RerunRecord
from ._leaks import LeakReport
from ._manifest import Manifest
from ._mutation import Menu, MutationSummary
from ._presets import Preset
from ._report import ScoreReport
from ._rulings import Ruling
from ._scoreboard import RoundSummary
from ._seal import SealLogEntry, VerifyReport
from ._smells import Smell
from ._target import TargetConfig
from ._workspace import WorkspaceRecord

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
    "build-record": BuildRecord,
    "target": TargetConfig,
    "provenance": Provenance,
    "run-record": RunRecord,
    "mutation-menu": Menu,
    "mutation-summary": MutationSummary,
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
    "gate-result": GateResult,
    "progress": Progress,
    "smell": Smell,
    "code-snapshot": CodeSnapshot,
    "rerun-record": RerunRecord,
}


def schema_text(model: type[BaseModel]) -> str:
    return json.dumps(model.model_json_schema(by_alias=True), indent=1, sort_keys=True) + "\n"


def export_schemas(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, model in FORMATS.items():
        path = out / f"{name}.schema.json"
        path.write_text(schema_text(model), encoding="utf-8")
        written.append(path)
    return written
