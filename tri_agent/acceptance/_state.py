"""The run's state: a folder outside the project that no role's workspace reaches, and the pinned trail head.

    $XDG_STATE_HOME/tri-agent/            (default ~/.local/state/tri-agent)
      runs/<project>-<id>/                one run's state (``acceptance.yaml`` may name another place)
        TRAIL.jsonl, records/             the evidence store: sealed records, hash-chained
        builds/, runs/                    exam builds and gateway runs (scratch: rebuilt when a round replays)
        work/                             the round's exam, assembled from the sealed records
        secret                            the seed secret (mode 0600): every seed is derived from it
        quarantine/                       workspaces of roles that breached their contract
      pins/<project>-<id>.json            the trail head pinned after every stop
      runs/<project>-<id>.2/, pins/...2.json   the next run, once the one before was abandoned (``--fresh``)

A stopped run is abandoned on the record, never by hand: ``abandon`` seals an ``abandoned`` record with its reason
as the trail's last line (pinned like every line), and from then on ``locate`` passes over that store to the next
generation. The old store and its pin stay where they were, so the abandoned run still verifies; an abandonment
line whose pin does not match is a rewrite (exit 4), never a way past a run.

Nothing of a run lives in the project but the builder's code and the reports. The pin lives apart from
the store, so a consistent rewrite of the store (records resealed, the trail re-chained) no longer reaches
the pinned head: ``--resume`` refuses it (exit 4).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field

from .._errors import TamperDetected, UsageError
from .._model import Record
from ..evidence._trail import EvidenceStore
from ..sandbox._scratch import top
from ._config import AcceptanceConfig

SEED_SECRET_ENV = "TRI_AGENT_SEED_SECRET"  # fixes every seed: for tests and demos, and never certifies


def state_home() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base).resolve() / "tri-agent"


def project_id(project: Path) -> str:
    """A stable, readable name for a project's run state: its folder name and a digest of its path."""
    resolved = project.resolve()
    return f"{resolved.name or 'root'}-{hashlib.sha256(str(resolved).encode()).hexdigest()[:12]}"


@dataclass(frozen=True)
class RunState:
    """Where one run keeps its evidence, scratch work, secret and pin."""

    project: Path
    root: Path
    pin_path: Path

    @property
    def store(self) -> EvidenceStore:
        """The evidence store, every line pinned here before it is appended."""
        return EvidenceStore(self.root, before_append=lambda seq, line, prev: _pin(self, seq, line, prev),
                             after_append=lambda seq: _confirm(self, seq))

    @property
    def builds(self) -> Path:
        return self.root / "builds"

    @property
    def runs(self) -> Path:
        return self.root / "runs"

    @property
    def work(self) -> Path:
        return self.root / "work"

    @property
    def quarantine(self) -> Path:
        return self.root / "quarantine"


ABANDONED = "abandoned"


class Abandonment(Record):
    """``records/abandoned/abandoned.json``: why a stopped run was given up for a fresh one (the trail's last line)."""

    schema_version: Literal[1] = Field(default=1, description="Version of the abandonment format.")
    reason: str = Field(min_length=1, description="Why the run was abandoned, as the person who did it said (no "
                        "clock: like every record, it holds none).")
    records: int = Field(description="Records the trail held before this one.")


EARLIER = "earlier-run"


class EarlierRun(Record):
    """``records/earlier-run/earlier.json``, the first record of a run that replaced an abandoned one: which run it
    was, where it ended and why it was given up, so that no reader of this run mistakes it for a first attempt."""

    schema_version: Literal[1] = Field(default=1, description="Version of the earlier-run format.")
    store: str = Field(description="The abandoned run's evidence store (kept, and still verifiable).")
    head: str = Field(description="SHA-256 of its whole trail, its abandonment line included.")
    reason: str = Field(description="Why it was abandoned.")
    records: int = Field(description="Records it held before its abandonment.")


def succeed(new: RunState, old: RunState, reason: str, records: int) -> None:
    """Open the run that replaces the abandoned ``old`` with a record naming it (the chain stays readable)."""
    record = EarlierRun(store=str(old.root), head=old.store.digest(), reason=reason.strip(), records=records)

    def fill(folder: Path) -> None:
        (folder / "earlier.json").write_text(record.model_dump_json(indent=1) + "\n", encoding="utf-8")

    new.store.append(EARLIER, EARLIER, fill)


def earlier_run(state_store_root: Path) -> EarlierRun | None:
    """The abandoned run a store's run replaced, if any."""
    path = state_store_root / "records" / EARLIER / "earlier.json"
    return EarlierRun.model_validate_json(path.read_text(encoding="utf-8")) if path.is_file() else None


def locate(project: Path, config: AcceptanceConfig) -> RunState:
    """The run state of ``project``: the default state folder, or the one ``acceptance.yaml`` names; past every
    generation that was abandoned on the record, the first that was not."""
    project = project.resolve()
    name = project_id(project)
    base = (project / config.evidence).resolve() if config.evidence else state_home() / "runs" / name
    _refuse_reachable(base, project)
    state, n = RunState(project, base, state_home() / "pins" / f"{name}.json"), 1
    while _abandoned(state):
        n += 1
        state = RunState(project, base.with_name(f"{base.name}.{n}"), state_home() / "pins" / f"{name}.{n}.json")
    return state


def _abandoned(state: RunState) -> bool:
    if not state.store.trail.exists():
        return False
    entries = state.store.entries()
    if not entries or entries[-1].kind != ABANDONED:
        return False
    check_pin(state)  # an abandonment counts only at the head its pin names
    return True


def abandon(state: RunState, reason: str) -> None:
    """Seal the abandonment of the run at ``state`` (its trail and pin checked by the caller): its last record."""
    if not reason.strip():
        raise UsageError("--fresh needs a reason: it is sealed in the abandoned run's trail",
                         hint='say why, e.g. --fresh "the spec changed"')
    record = Abandonment(reason=reason.strip(), records=len(state.store.entries()))

    def fill(folder: Path) -> None:
        (folder / "abandoned.json").write_text(record.model_dump_json(indent=1) + "\n", encoding="utf-8")

    state.store.append(ABANDONED, ABANDONED, fill)


def _refuse_reachable(root: Path, project: Path) -> None:
    if root.is_relative_to(project):
        raise UsageError(f"the evidence store {root} lies inside the project {project}",
                         hint="remove `evidence:` from acceptance.yaml (the default is outside the project) or "
                              "name a folder outside it")
    temp = top().resolve()  # the machine's temporary folder, not only this command's scratch root
    if root.is_relative_to(temp) and any(part.startswith("tri-") for part in root.relative_to(temp).parts[:1]):
        raise UsageError(f"the evidence store {root} lies where role workspaces are made",
                         hint="name a folder outside the system temporary folder's tri-* workspaces")


class Pin(Record):
    """``pins/<project>-<id>.json``: the trail line the run appended last, written just before appending it."""

    schema_version: Literal[1] = Field(default=1, description="Version of the pin format.")
    store: str = Field(description="The evidence store the pin belongs to.")
    seq: int = Field(description="Sequence number of the pinned line (0 for the first record).")
    line_sha256: str = Field(description="SHA-256 of the pinned line (without its newline).")
    previous_line_sha256: str | None = Field(description="SHA-256 of the line before it; null for the first.")
    appended: bool = Field(default=False, description="The line was appended after it was pinned. Only a pin "
                           "that says it was not (a stop fell in between) lets the trail end one line short.")


def _pin(state: RunState, seq: int, line: bytes, previous: bytes | None) -> None:
    """Pin ``line`` before it is appended: a crash in between leaves the trail one line short of the pin,
    which ``check_pin`` accepts; any other difference is a rewrite."""
    head = Pin(store=str(state.root), seq=seq, line_sha256=hashlib.sha256(line).hexdigest(),
               previous_line_sha256=hashlib.sha256(previous).hexdigest() if previous is not None else None)
    _write_pin(state, head)


def _confirm(state: RunState, seq: int) -> None:
    """The pinned line is in the trail now: from here on, a trail one line short of the pin is a rewrite."""
    pinned = read_pin(state)
    if pinned is not None and pinned.seq == seq:
        _write_pin(state, pinned.model_copy(update={"appended": True}))


def _write_pin(state: RunState, head: Pin) -> None:
    state.pin_path.parent.mkdir(parents=True, exist_ok=True)
    staging = state.pin_path.with_name(state.pin_path.name + ".tmp")
    staging.write_text(head.model_dump_json(indent=1) + "\n", encoding="utf-8")
    os.replace(staging, state.pin_path)


def read_pin(state: RunState) -> Pin | None:
    if not state.pin_path.exists():
        return None
    try:
        return Pin.model_validate_json(state.pin_path.read_bytes())
    except ValueError:
        raise TamperDetected(f"the pin {state.pin_path} is not a pin", hint="restore it, or remove it and the "
                             "store to start a new run") from None


def head(state: RunState) -> str:
    """What to quote to check this run later: the SHA-256 of its whole trail."""
    return state.store.digest()


def check_pin(state: RunState) -> None:
    """The trail must end at the line pinned last (or one line short of it, if a stop came in between)."""
    pinned = read_pin(state)
    lines = state.store.trail.read_bytes().splitlines() if state.store.trail.exists() else []
    if pinned is None:
        if lines:
            raise TamperDetected(f"the trail at {state.root} has no pinned head ({state.pin_path} is missing)",
                                 hint="a trail is continued only from its pin; start a new run in a new store")
        return
    if pinned.store != str(state.root):
        raise TamperDetected(f"the pin {state.pin_path} belongs to {pinned.store}, not {state.root}",
                             hint="point acceptance.yaml back at the store the run used")
    if not _reaches(lines, pinned):
        raise TamperDetected(f"the trail at {state.root} does not end at its pinned head (line {pinned.seq + 1} "
                             f"of {len(lines)})", hint="the evidence was rewritten or extended since the last stop; "
                                                    "it cannot be continued")


def _reaches(lines: list[bytes], pinned: Pin) -> bool:
    def sha(i: int) -> str | None:
        return hashlib.sha256(lines[i]).hexdigest() if 0 <= i < len(lines) else None

    if len(lines) == pinned.seq + 1:
        return sha(pinned.seq) == pinned.line_sha256
    # one line short only where the stop fell between pinning a line and appending it
    return not pinned.appended and len(lines) == pinned.seq and sha(pinned.seq - 1) == pinned.previous_line_sha256


# --- seeds: drawn from a secret, committed by hash before their round, revealed in its sealed record ---------

def secret(state: RunState) -> tuple[bytes, bool]:
    """The run's seed secret, created on first use; ``True`` when the caller fixed it (never certifies)."""
    fixed = os.environ.get(SEED_SECRET_ENV)
    if fixed:
        return fixed.encode("utf-8"), True
    path = state.root / "secret"
    if not path.exists():
        state.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(secrets.token_hex(32) + "\n")
    return path.read_text(encoding="utf-8").strip().encode("utf-8"), False


def seed(key: bytes, label: str) -> str:
    """The seed for ``label`` (``baseline``, ``round-3``): unpredictable without the secret, stable with it."""
    return hmac.new(key, label.encode("utf-8"), hashlib.sha256).hexdigest()[:32]


def commitment(value: str) -> str:
    return hashlib.sha256(f"tri-agent seed commitment:{value}".encode()).hexdigest()

