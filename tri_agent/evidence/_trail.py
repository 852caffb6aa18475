"""The evidence store: append-only, every record sealed, the records hash-chained.

    STORE/TRAIL.jsonl          one line per record: sequence, name, seal digest, and the SHA-256 of the
                               line before it (the chain); no clock, so re-running the same rounds gives
                               the same trail, byte for byte
    STORE/records/<name>/      a sealed folder (MANIFEST.sha256) per record

A record is staged in ``.staging-<name>``, sealed there, renamed into place (atomic on one file system)
and only then appended to the trail, with an fsync. A crash leaves at most a staging folder, which is
never part of the evidence: ``resume`` removes it and the next attempt starts that record again.
Nothing is ever overwritten. ``verify_trail`` re-checks every record against its digest and the chain.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import Field

from .._errors import TamperDetected, UsageError
from .._model import Record
from ._seal import exact_lines, seal, verify

TRAIL = "TRAIL.jsonl"
RECORDS = "records"
STAGING = ".staging-"


class TrailEntry(Record):
    """One line of ``TRAIL.jsonl``."""

    schema_version: Literal[1] = Field(default=1, description="Version of the trail entry format.")
    seq: int = Field(description="0 for the first record, then +1 per line.")
    name: str = Field(description="Record folder name under records/.")
    kind: str = Field(description="What the record holds: preflight, round, final, escalation...")
    digest: str = Field(description="Seal digest of the record folder.")
    previous_line_sha256: str | None = Field(description="SHA-256 of the previous trail line (the chain).")


class TrailFinding(Record):
    where: str
    detail: str


PinHook = Callable[[int, bytes, bytes | None], None]  # (seq, the line about to be appended, the line before it)


class EvidenceStore:
    """The store at ``root``; ``before_append`` is told each line before it is written (to pin it elsewhere),
    ``after_append`` once it is."""

    def __init__(self, root: Path, before_append: PinHook | None = None,
                 after_append: Callable[[int], None] | None = None) -> None:
        self.root = root
        self.before_append = before_append
        self.after_append = after_append  # told once the line is written (the pin then says so)

    @property
    def trail(self) -> Path:
        return self.root / TRAIL

    def entries(self) -> list[TrailEntry]:
        """Every line of the trail; a line that is not a trail entry is tamper (exit 4), never a crash."""
        lines, findings = _lines(self._bytes())
        if findings:
            raise TamperDetected(f"{self.trail}: {findings[0].where}: {findings[0].detail}",
                                 hint="the trail was edited; run tri-agent verify-trail on it")
        return [TrailEntry.model_validate_json(line) for line in lines]

    def digest(self) -> str:
        """The trail's digest: it names every record, so it names the whole history."""
        return hashlib.sha256(self._bytes()).hexdigest()

    def _bytes(self) -> bytes:
        return self.trail.read_bytes() if self.trail.exists() else b""

    def has(self, name: str) -> bool:
        return any(e.name == name for e in self.entries())

    def append(self, name: str, kind: str, fill: Callable[[Path], None], *, crlf_kept: bool = False) -> TrailEntry:
        """Stage ``fill(folder)``, seal it, move it into place, then chain it into the trail. ``crlf_kept``
        admits CRLF text (a record that copies an exam whose inputs hold it on purpose)."""
        _check_name(name)
        if self.has(name) or (self.root / RECORDS / name).exists():
            raise UsageError(f"evidence record {name!r} already exists", hint="evidence is never overwritten")
        staging = self.root / f"{STAGING}{name}"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        fill(staging)
        digest = seal(staging, crlf_kept=crlf_kept)
        (self.root / RECORDS).mkdir(exist_ok=True)
        os.rename(staging, self.root / RECORDS / name)
        lines = [_line(e) for e in self.entries()]
        entry = TrailEntry(seq=len(lines), name=name, kind=kind, digest=digest,
                           previous_line_sha256=hashlib.sha256(lines[-1]).hexdigest() if lines else None)
        line = _line(entry)
        if self.before_append is not None:
            self.before_append(entry.seq, line, lines[-1] if lines else None)
        _append_line(self.trail, line + b"\n")
        if self.after_append is not None:
            self.after_append(entry.seq)
        return entry

    def resume(self) -> list[str]:
        """Remove what a killed run left half done; returns what was removed."""
        removed = []
        for leftover in sorted(self.root.glob(f"{STAGING}*")):
            shutil.rmtree(leftover)
            removed.append(leftover.name)
        recorded = {e.name for e in self.entries()}
        for folder in sorted((self.root / RECORDS).glob("*")):  # no records folder: nothing to glob
            if folder.name not in recorded:  # renamed into place but never chained: not evidence yet
                shutil.rmtree(folder)
                removed.append(f"{RECORDS}/{folder.name}")
        return removed

    def verify_trail(self, expect: str | None = None) -> list[TrailFinding]:
        """Every break in the chain, every record that no longer matches its digest, every stray record."""
        lines, findings = _lines(self._bytes())
        previous: bytes | None = None
        for i, line in enumerate(lines):
            findings += _line_findings(i, line, previous)
            previous = line
        findings += self._record_findings()
        if expect is not None and expect != self.digest():
            findings.append(TrailFinding(where=TRAIL, detail=f"trail digest {self.digest()} != expected {expect}"))
        return findings

    def _record_findings(self) -> list[TrailFinding]:
        findings = []
        entries = {e.name: e for e in _safe_entries(self)}
        for name, entry in entries.items():
            folder = self.root / RECORDS / name
            if not _plain(name):  # a rewritten line may name anything: never a path outside records/, never looked up
                findings.append(TrailFinding(where=f"{RECORDS}/{name[:80]!r}", detail="not a plain record folder name"))
                continue
            if not folder.is_dir():
                findings.append(TrailFinding(where=f"{RECORDS}/{name}", detail="recorded but missing"))
                continue
            try:
                report = verify(folder, expect=entry.digest)
            except TamperDetected as exc:
                findings.append(TrailFinding(where=f"{RECORDS}/{name}", detail=exc.line()))
                continue
            findings += [TrailFinding(where="/".join(filter(None, (RECORDS, name, f.path))),
                                      detail=f"{f.kind}: {f.detail}") for f in report.findings]
        if (self.root / RECORDS).exists():
            findings += [TrailFinding(where=f"{RECORDS}/{p.name}", detail="not in the trail")
                         for p in sorted((self.root / RECORDS).iterdir()) if p.name not in entries]
        return findings


def _line(entry: TrailEntry) -> bytes:
    """The one byte sequence a trail entry is written as."""
    return json.dumps(entry.model_dump(), sort_keys=True).encode()  # every field is a str, int or None


def _lines(raw: bytes) -> tuple[list[bytes], list[TrailFinding]]:
    """The trail's lines and every way its bytes differ from what ``append`` writes."""
    lines, problems = exact_lines(raw, lambda line: _line(TrailEntry.model_validate_json(line)))
    said = {"not an entry": "is not a trail entry"}
    return lines, [TrailFinding(where=f"{TRAIL}:{n}" if n else TRAIL, detail=said.get(p, p)) for n, p in problems]


def _line_findings(i: int, line: bytes, previous: bytes | None) -> list[TrailFinding]:
    try:
        entry = TrailEntry.model_validate_json(line)
    except ValueError:
        return [TrailFinding(where=f"{TRAIL}:{i + 1}", detail="not a trail entry")]
    want = hashlib.sha256(previous).hexdigest() if previous is not None else None
    if entry.seq != i or entry.previous_line_sha256 != want:
        return [TrailFinding(where=f"{TRAIL}:{i + 1}", detail="chain broken (a line removed, reordered or rewritten)")]
    return []


def _safe_entries(store: EvidenceStore) -> list[TrailEntry]:
    out = []
    for line in _lines(store._bytes())[0]:
        try:
            out.append(TrailEntry.model_validate_json(line))
        except ValueError:
            continue
    return out


def _check_name(name: str) -> None:
    if not _plain(name):
        raise UsageError(f"evidence record name {name!r} is not a plain folder name")


def _plain(name: str) -> bool:
    """One folder name a file system takes: not empty, no separator or NUL, not hidden, no surrounding space, at
    most 255 bytes."""
    return (bool(name) and "/" not in name and "\0" not in name and not name.startswith(".") and name == name.strip()
            and len(name.encode("utf-8", "surrogatepass")) <= 255)


def _append_line(path: Path, line: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)
