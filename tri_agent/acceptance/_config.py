"""The acceptance config a survey writes, the survey itself with its cost note, and preflight.

``tri-agent init`` asks: scope and spec, depth, gate N, target kind (and which driver plays each role).
Every question has a flag for non-interactive use. The cost note (calls, tokens and money per round,
from depth, the preset's relative cost and the drivers) is shown inline; answering is consent, recorded
with its time. Preflight then checks that the spec is readable, that the baseline runs twice
byte-identically, and that the project is a clean git work tree, each failure saying what to do.
"""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import Field, ValidationError

from .. import _yamldoc
from .._errors import UsageError
from .._model import Written
from ..drivers._episode import Limits
from ..drivers._weakening import FLOOR, K
from ..targets._presets import preset_names

Depth = Literal["quick", "standard", "deep"]
Role = Literal["examiner", "builder", "tester", "judge"]
DriverName = Literal["scripted", "in-session", "command", "anthropic", "openai"]
CONFIG = "acceptance.yaml"
# depth -> (model turns per role episode, mutants per round); rough, and said to be rough in the note
DEPTHS: dict[Depth, tuple[int, int]] = {"quick": (10, 3), "standard": (25, 6), "deep": (50, 12)}
# mutants of every bug class in the calibration and the final round (the rounds between sample DEPTHS' number)
PER_CLASS: dict[Depth, int] = {"quick": 1, "standard": 2, "deep": 4}
TOKENS_PER_TURN = (4000, 600)  # input, output: an estimate for the cost note only


class Consent(Written):
    """The consent a survey records: when it was answered, and the cost note shown with it."""


    given_at: str = Field(description="UTC time the survey was answered (answering is consent).")
    cost_note: str = Field(description="The note shown with the questions.")


def _all_scripted() -> dict[str, DriverName]:
    return {role: "scripted" for role in ("examiner", "builder", "tester", "judge")}


class ModelSpec(Written):
    """How an API-driven role reaches its model."""


    model: str = Field(description="Model name sent to the provider.")
    base_url: str | None = Field(default=None, description="For OpenAI-compatible servers and local fakes.")
    api: Literal["responses", "chat"] = Field(default="responses", description="openai only.")
    api_key_env: str | None = Field(default=None, description="Variable holding the key (default per provider).")
    temperature: float | None = Field(default=0.0, description="Pinned sampling temperature; null sends none "
                                      "(reasoning models reject the parameter).")


class MutationSettings(Written):
    """How the mutation gate of every round runs."""


    mutmut: int = Field(default=0, ge=0, le=500, description="Syntactic mutants sampled from mutmut per round, on "
                                                              "top of the operators' (Python targets).")
    hunt_seeds: int = Field(default=20, ge=1, le=500, description="Fresh generator seeds a surviving mutant is "
                            "hunted over before it may be called equivalent; fewer makes the proof weaker.")
    jobs: int = Field(default=2, ge=1, le=64, description="Mutants judged side by side.")


class WeakeningSettings(Written):
    """How the judge rules on the builder's own test changes: the same sampling as ``tri-agent evidence``."""

    samples: int = Field(default=K, ge=1, le=20, description="Times the judge's model is asked (K).")
    floor: float = Field(default=FLOOR, gt=0, le=1, description="Share of the samples a flag needs (0.8: 4 of 5).")


class AcceptanceConfig(Written):
    """``acceptance.yaml`` at the project root."""


    schema_version: Literal[1] = Field(default=1, description="Version of the acceptance config format.")
    scope: str = Field(min_length=1, description="What is being accepted.")
    spec: list[str] = Field(min_length=1, description="Spec files, relative to the project.")
    depth: Depth = Field(default="standard", description="quick, standard or deep: mutants sampled per round (3, 6, "
                                                         "12) and model turns the cost note assumes.")
    gate_n: int = Field(default=3, ge=1, le=20, description="Consecutive green rounds required.")
    target_kind: str = Field(description="Preset name (`tri-agent presets` lists them).")
    target: str = Field(default="target.yaml", description="The target file, relative to the project.")
    exam: str = Field(default="exam", description="The exam folder, relative to the project.")
    evidence: str | None = Field(default=None, description="The run's state folder (evidence store, builds, "
                                 "runs); null: under $XDG_STATE_HOME/tri-agent/runs. Refused inside the project.")
    drivers: dict[str, DriverName] = Field(default_factory=lambda: _all_scripted(),
                                           description="role -> driver that plays it; a role not named is scripted.")
    script: str | None = Field(default=None, description="Recorded role actions, for scripted drivers.")
    models: dict[str, ModelSpec] = Field(default_factory=dict, description="role -> model, for API drivers.")
    commands: dict[str, list[str]] = Field(default_factory=dict, description="role -> argv, for command drivers.")
    budget_usd: float = Field(default=20.0, ge=0, description="Cap on the whole run's model spend.")
    limits: dict[Role, Limits] = Field(default_factory=dict, description="role -> what one episode may spend: "
                                       "turns, seconds, budget_usd, output_bytes, write_bytes (defaults: 40 turns, "
                                       "900 s, $2, 1 MiB out, 64 MiB written).")
    mutation: MutationSettings = Field(default_factory=MutationSettings, description="The mutation gate: mutmut "
                                       "volume, the hunt's fresh seeds, mutants judged side by side.")
    weakening: WeakeningSettings = Field(default_factory=WeakeningSettings, description="The judge's ruling on "
                                         "the builder's test changes: samples (K) and the floor a flag needs.")
    consent: Consent = Field(description="When the survey was answered, and the cost note it showed.")


QUESTIONS = (  # (field, question, flag)
    ("scope", "What is being accepted (one line)?", "--scope"),
    ("spec", "Spec file(s), relative to the project (comma-separated)?", "--spec"),
    ("depth", "Depth: quick, standard or deep?", "--depth"),
    ("gate_n", "How many consecutive green rounds make acceptance (gate N)?", "--gate-n"),
    ("target_kind", "Target kind (a preset: {presets})?", "--target-kind"),
)


def cost_note(depth: Depth, relative_cost: float, drivers: dict[str, DriverName]) -> str:
    turns, mutants = DEPTHS[depth]
    live = [r for r, d in drivers.items() if d in ("anthropic", "openai", "command")]
    calls = len(live) * turns
    tokens_in, tokens_out = (int(n * calls * relative_cost) for n in TOKENS_PER_TURN)
    money = "no model spend (scripted or in-session roles)" if not live else (
        f"about {calls} model calls, {tokens_in:,} input and {tokens_out:,} output tokens per round; the price "
        "depends on the models configured for " + ", ".join(live))
    return (f"Cost per round at depth {depth}: {money}; {mutants} mutants replay every case "
            f"(relative cost {relative_cost:g}x of the warehouse preset). Answering is consent.")


ROLES: tuple[Role, ...] = ("examiner", "builder", "tester", "judge")
NONE_WORDS = ("none", "null")  # a model option given as one of these is sent as no value (temperature: none)


def _split(item: str, flag: str, shape: str) -> tuple[str, str]:
    head, eq, value = item.partition("=")
    if not eq or not head or not value:
        raise UsageError(f"{flag} {item!r} is not {shape}", hint=f"roles: {', '.join(ROLES)}")
    return head, value


def _role(role: str, flag: str, item: str) -> str:
    if role not in ROLES:
        raise UsageError(f"{flag} {item!r} names no role", hint=f"roles: {', '.join(ROLES)}")
    return role


def _by_role(items: list[str], flag: str) -> dict[str, str]:
    """``ROLE=VALUE`` items, the last one of a role winning."""
    pairs = [(_split(i, flag, "ROLE=VALUE"), i) for i in items]
    return {_role(role, flag, i): value for (role, value), i in pairs}


def _by_role_key(items: list[str], flag: str) -> dict[str, dict[str, str]]:
    """``ROLE.KEY=VALUE`` items, grouped by role."""
    out: dict[str, dict[str, str]] = {}
    for item in items:
        path, value = _split(item, flag, "ROLE.KEY=VALUE")
        role, dot, key = path.partition(".")
        if not dot or not key:
            raise UsageError(f"{flag} {item!r} is not ROLE.KEY=VALUE", hint=f"roles: {', '.join(ROLES)}")
        out.setdefault(_role(role, flag, item), {})[key] = value
    return out


def _argv(line: str, role: str) -> list[str]:
    try:
        return shlex.split(line)
    except ValueError as exc:
        raise UsageError(f"--command {role}={line!r}: {exc}", hint="quote it like a shell line") from None


def flag_settings(flags: dict[str, Any]) -> dict[str, object]:
    """The fields of acceptance.yaml beyond the survey's questions, from init's flags (argparse's names; --command
    is ``commands``, apart from the subcommand's name); a flag not given keeps the field's default. Values stay
    text: the config model validates and converts them."""
    out: dict[str, object] = {k: flags[k] for k in ("target", "exam", "evidence", "script", "budget_usd")
                              if flags.get(k) is not None}
    models: dict[str, dict[str, str | None]] = {r: {"model": m} for r, m in _by_role(flags.get("model") or [],
                                                                                   "--model").items()}
    for role, options in _by_role_key(flags.get("model_option") or [], "--model-option").items():
        models.setdefault(role, {}).update({k: None if v.lower() in NONE_WORDS else v for k, v in options.items()})
    commands = {r: _argv(line, r) for r, line in _by_role(flags.get("commands") or [], "--command").items()}
    mutation = {k: flags[k] for k in ("mutmut", "hunt_seeds", "jobs") if flags.get(k) is not None}
    weakening = {k: flags[k] for k in ("samples", "floor") if flags.get(k) is not None}
    limits = _by_role_key(flags.get("limit") or [], "--limit")
    extra = {"models": models, "commands": commands, "limits": limits, "mutation": mutation, "weakening": weakening}
    return out | {k: v for k, v in extra.items() if v}


def survey(answers: dict[str, str | None], ask: Callable[[str], str] | None, relative_cost: Callable[[str], float],
           drivers: dict[str, DriverName], now: Callable[[], datetime] = lambda: datetime.now(UTC),
           settings: dict[str, object] | None = None) -> AcceptanceConfig:
    """Fill the config from flags, asking ``ask`` for the rest (None: non-interactive, all flags needed);
    ``settings`` holds the other fields (``flag_settings``)."""
    missing = [flag for name, _, flag in QUESTIONS if not answers.get(name)]
    if missing and ask is None:
        raise UsageError(f"the survey needs answers: {', '.join(missing)}",
                         hint="pass them as flags, or run in a terminal")
    filled = dict(answers)
    for name, question, _ in QUESTIONS:
        if not filled.get(name):
            assert ask is not None
            asked = question.format(presets=", ".join(preset_names()))
            filled[name] = ask(f"{asked}\n  ({_note(filled, relative_cost, drivers)})\n> ").strip()
    note = _note(filled, relative_cost, drivers)  # of the settings as answered: the note recorded and printed
    data = {"scope": filled["scope"], "spec": [s.strip() for s in str(filled["spec"]).split(",") if s.strip()],
            "depth": filled["depth"], "gate_n": filled["gate_n"], "target_kind": filled["target_kind"],
            "drivers": drivers, **(settings or {}),
            "consent": {"given_at": now().strftime("%Y-%m-%dT%H:%M:%SZ"), "cost_note": note}}
    try:
        return AcceptanceConfig.model_validate(data)
    except ValidationError as exc:
        why = _yamldoc.explained(exc, AcceptanceConfig, "")
        raise UsageError(f"survey answer rejected: {why.message}",
                         hint="fix that flag or answer (tri-agent init --help)") from None


def _note(filled: dict[str, str | None], relative_cost: Callable[[str], float], drivers: dict[str, DriverName]) -> str:
    depth: Depth = filled.get("depth") if filled.get("depth") in DEPTHS else "standard"  # type: ignore[assignment]
    return cost_note(depth, relative_cost(str(filled.get("target_kind") or "warehouse")), drivers)


def write_config(project: Path, config: AcceptanceConfig) -> Path:
    path = project / CONFIG
    if path.exists():
        raise UsageError(f"{path} exists", hint="edit it, or remove it to run the survey again")
    path.write_text(yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False, allow_unicode=True), "utf-8")
    return path


def load_config(project: Path) -> AcceptanceConfig:
    path = project / CONFIG
    if not path.is_file():
        raise UsageError(f"{path} does not exist", hint="run: tri-agent init " + str(project))
    return _yamldoc.load(path, AcceptanceConfig)


class PreflightCheck(Written):
    name: str
    ok: bool
    detail: str


def check_spec(project: Path, config: AcceptanceConfig) -> PreflightCheck:
    for rel in config.spec:
        path = (project / rel).resolve()
        if not path.is_relative_to(project.resolve()) or not path.is_file():
            return PreflightCheck(name="spec readable", ok=False, detail=f"{rel} does not exist in the project; "
                                  "point --spec at the spec files")
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            return PreflightCheck(name="spec readable", ok=False, detail=f"{rel} is not UTF-8 text; convert it")
        if not text.strip():
            return PreflightCheck(name="spec readable", ok=False, detail=f"{rel} is empty; write the spec first")
    return PreflightCheck(name="spec readable", ok=True, detail=", ".join(config.spec))


def check_git(project: Path) -> PreflightCheck:
    def git(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", *args], cwd=project, capture_output=True, text=True, check=False)

    try:
        inside = git("rev-parse", "--is-inside-work-tree")
    except FileNotFoundError:
        return PreflightCheck(name="git ready", ok=False, detail="git is not installed; install it")
    if inside.returncode != 0:
        return PreflightCheck(name="git ready", ok=False,
                              detail="not a git work tree; run: git init && git add -A && git commit -m baseline")
    dirty = git("status", "--porcelain", "--untracked-files=no").stdout.strip()
    if dirty:
        first = dirty.splitlines()[0]
        return PreflightCheck(name="git ready", ok=False, detail=f"uncommitted changes ({first}); commit them so "
                              "every builder change is attributable")
    return PreflightCheck(name="git ready", ok=True, detail="clean work tree")


def require(checks: list[PreflightCheck]) -> None:
    failed = [c for c in checks if not c.ok]
    if failed:
        raise UsageError(f"preflight: {failed[0].name}: {failed[0].detail}",
                         hint=f"{len(failed)} check(s) failed" if len(failed) > 1 else "")
