"""``tri-agent new PROJECT --preset NAME``: a complete, working acceptance project to start from.

Each preset whose target the gateway drives (a command, or a service over a database) has a skeleton
(``skeletons/<preset>/``, shipped in the wheel like the presets): a spec stub, an exam (deterministic generator,
pure-Decimal oracle, caliber, test plan, the examiner's SPEC.md, a bug-class menu drawn from the preset), a target
file with a placeholder target that
already meets the stub spec, the scripted roles of a dry run and ``acceptance.yaml``. Every file says what to
replace. The skeleton is copied verbatim but for its placeholders (project, scope, consent), and committed as
the first commit of a new git repository, so ``tri-agent check PROJECT`` passes at once.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import yaml

from .._errors import UsageError
from .._resources import shipped
from ..targets._presets import Preset, load_presets
from ..targets._specs import KINDS
from ._config import CONFIG, AcceptanceConfig, cost_note, load_config

DRIVEN = KINDS  # the target kinds a skeleton may drive: every kind the gateway drives
SKIPPED = ("__pycache__", ".mypy_cache", ".ruff_cache")  # caches a checkout may hold beside the templates
FALLBACK_IDENTITY = ["-c", "user.name=tri-agent new", "-c", "user.email=tri-agent@localhost"]


@dataclass(frozen=True)
class Scaffold:
    """What ``new`` wrote: the files, the cost note recorded as consent, and what became of git."""

    project: Path
    preset: str
    files: list[str]
    cost_note: str
    git: str


def skeletons_dir() -> Path:
    return shipped("skeletons")


def available(presets: dict[str, Preset], skeletons: Path) -> list[str]:
    """Presets a project can start from: driven by a command, with a skeleton folder."""
    return sorted(n for n, p in presets.items() if p.target_kind in DRIVEN and (skeletons / n).is_dir())


def choose(name: str, presets: dict[str, Preset], skeletons: Path) -> Preset:
    """The preset named, or one line saying why not and what there is."""
    offer = f"available: {', '.join(available(presets, skeletons)) or 'none'}"
    if name not in presets:
        raise UsageError(f"no preset {name!r}", hint=offer)
    if presets[name].target_kind not in DRIVEN:
        raise UsageError(f"preset {name!r} drives a {presets[name].target_kind} target, which has no skeleton yet",
                         hint=offer)
    if not (skeletons / name).is_dir():
        raise UsageError(f"preset {name!r} has no skeleton in {skeletons}", hint=offer)
    return presets[name]


def refuse_occupied(project: Path) -> None:
    """A skeleton goes into a new or empty folder only: it never mixes with, or replaces, files of yours."""
    if project.is_symlink() or (project.exists() and not project.is_dir()):
        raise UsageError(f"{project} exists and is not a folder", hint="choose a new folder name")
    if project.is_dir() and any(project.iterdir()):
        raise UsageError(f"{project} exists and is not empty", hint="choose a new folder name, or empty it first")


def render(text: str, values: dict[str, str], yaml_file: bool) -> str:
    """Fill ``{{name}}`` placeholders; in YAML as double-quoted scalars (JSON strings are valid YAML)."""
    for name, value in values.items():
        text = text.replace("{{" + name + "}}", json.dumps(value, ensure_ascii=False) if yaml_file else value)
    return text


def templates(folder: Path) -> list[Path]:
    """The skeleton's files, relative to it, sorted; caches left out."""
    return sorted(p.relative_to(folder) for p in folder.rglob("*")
                  if p.is_file() and not any(part in SKIPPED for part in p.relative_to(folder).parts))


def note_for(config_text: str, preset: Preset) -> str:
    """The cost note of the skeleton's own settings (its depth and drivers), as init would show it."""
    config = AcceptanceConfig.model_validate(yaml.safe_load(config_text))
    return cost_note(config.depth, preset.relative_cost, config.drivers)


def scaffold(project: Path, preset_name: str, *, presets: dict[str, Preset] | None = None,
             skeletons: Path | None = None, now: Callable[[], datetime] = lambda: datetime.now(UTC)) -> Scaffold:
    """Write the preset's skeleton into ``project`` (new or empty) and commit it; see the module docstring."""
    skeletons = skeletons or skeletons_dir()
    preset = choose(preset_name, load_presets() if presets is None else presets, skeletons)
    refuse_occupied(project)
    source = skeletons / preset.name
    values = {"project": project.resolve().name, "given_at": now().strftime("%Y-%m-%dT%H:%M:%SZ"),
              "scope": f"{project.resolve().name}: replace with what is being accepted, in one line",
              "cost_note": ""}
    values["cost_note"] = note_for(render((source / CONFIG).read_text("utf-8"), values, True), preset)
    files = templates(source)
    project.mkdir(parents=True, exist_ok=True)
    for rel in files:
        _copy(source / rel, project / rel, values)
    load_config(project)  # the written config must be one a run accepts
    return Scaffold(project, preset.name, [p.as_posix() for p in files], values["cost_note"],
                    commit(project, f"tri-agent new: the {preset.name} skeleton"))


def _copy(src: Path, dest: Path, values: dict[str, str]) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    if src.suffix in (".yaml", ".md"):
        dest.write_text(render(src.read_text("utf-8"), values, src.suffix == ".yaml"), "utf-8")
    else:
        shutil.copyfile(src, dest)


def commit(project: Path, message: str) -> str:
    """Make the skeleton the first commit of a new repository, so that preflight's clean-tree check holds.
    A folder inside a work tree already is left to its repository's owner."""
    def git(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", *args], cwd=project, capture_output=True, text=True, check=False)

    try:
        if git("rev-parse", "--is-inside-work-tree").returncode == 0:
            return "inside a git work tree already: commit the new files before tri-agent check"
    except FileNotFoundError:
        return "git is not installed: install it, then git init, add and commit the files"
    identity = [] if git("config", "user.email").stdout.strip() else FALLBACK_IDENTITY
    for args in (["init", "-q"], ["add", "-A"], [*identity, "commit", "-q", "-m", message]):
        done = git(*args)
        if done.returncode != 0:
            step = "commit" if "commit" in args else args[0]
            return f"git {step} failed ({done.stderr.strip()[:200]}): commit the files by hand"
    return "committed as the first commit of a new git repository"
