"""Target presets: what changes between kinds of target while the protocol stays the same.

A preset names how the target is driven, the oracle's shape, the tolerance classes it scores with,
its chaos menu and mutation bug classes, how its baseline is restored and its relative cost. Preset
files ship inside the wheel (``tri_agent/_data/presets``); from a source checkout they are read from
the top-level ``presets/`` folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import ConfigDict, Field, field_validator

from .. import _yamldoc
from .._errors import UsageError
from .._model import Written
from .._resources import shipped
from ..scoring._tolerance import CLASSES
from ._specs import Kind


class _Strict(Written):
    model_config = ConfigDict(frozen=True)


class MenuItem(_Strict):
    """One entry of a preset's chaos menu or bug-class list."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$", description="Short id, lower case with hyphens.")
    description: str = Field(min_length=1, description="What the entry covers, in words.")


class Preset(_Strict):
    """One preset file."""

    schema_version: Literal[1] = Field(default=1, description="Version of the preset format.")
    name: str = Field(pattern=r"^[a-z][a-z0-9-]*$", description="Preset name; equals the file name without .yaml.")
    title: str = Field(description="Human title, for listings.")
    driven_by: str = Field(description="How the target is run and what it writes, in words.")
    target_kind: Kind = Field(description="How the gateway drives the target "
                                                                 "(the target file's kind).")
    oracle_shape: str = Field(description="What the oracle computes for this kind of target, in words.")
    tolerance_classes: list[str] = Field(min_length=1, description="Tolerance classes this kind of target is "
                                                                   "scored with; each a known class.")
    baseline_restore: Literal["file-copies", "db-snapshot-restart", "session-reset-snapshot"] = Field(
        description="How the target's baseline is restored before each case.")
    relative_cost: float = Field(gt=0, description="Cost of a round relative to the warehouse preset.")
    chaos_menu: list[MenuItem] = Field(min_length=1, description="Kinds of hostile input an exam for this kind "
                                                                  "of target should include.")
    mutation_bug_classes: list[MenuItem] = Field(min_length=3, description="Bug classes the mutation menu's "
                                                                           "mutants are drawn from.")

    @field_validator("tolerance_classes")
    @classmethod
    def _known_classes(cls, value: list[str]) -> list[str]:
        unknown = [c for c in value if c not in CLASSES]
        if unknown:
            raise ValueError(f"unknown tolerance class {unknown[0]!r}; known: {', '.join(CLASSES)}")
        return value


def presets_dir() -> Path:
    return shipped("presets")


def preset_names() -> list[str]:
    """The shipped presets' names (their file names: ``load_presets`` refuses a file named otherwise), without
    parsing any: for help texts and questions."""
    return sorted(p.stem for p in presets_dir().glob("*.yaml"))


def load_presets(folder: Path | None = None) -> dict[str, Preset]:
    """Every preset, validated; a file whose name differs from its ``name`` is malformed."""
    folder = folder or presets_dir()
    out = {}
    for path in sorted(folder.glob("*.yaml")):
        preset = _yamldoc.load(path, Preset)
        if preset.name != path.stem:
            raise UsageError(f"{path}: preset name {preset.name!r} differs from the file name")
        out[preset.name] = preset
    return out


def get_preset(name: str) -> Preset:
    presets = load_presets()
    if name not in presets:
        raise UsageError(f"no preset {name!r}", hint=f"known presets: {', '.join(presets) or 'none'}")
    return presets[name]
