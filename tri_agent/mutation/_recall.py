"""What the difference hunts of one acceptance already ran: fingerprints and generated inputs, by content.

A round whose code and generator did not change hunts over the same inputs as the round before it (the hunt's
seeds are drawn from the code's and the generator's digests, see ``hunt_seeds``), so the original's runs, the
generator's runs and every run of a mutant judged before are known already. They are looked up here, never
trusted by name: every entry is filed under the SHA-256 of what it is about (the target as it ran: tree,
settings, harness; the input: case and files; the generator: exam folder and seed) and holds that key, so an
entry moved, renamed or torn is simply not found, and the run happens again. A hunt's outcome is the same
whether its runs were recalled or made: the evidence records the keys, not where the runs came from.

The store lives in the run's state folder, which no role and no jail ever sees; without one (a standalone
``tri-agent mutate``) it lives for one gate run, in memory.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
from pathlib import Path
from threading import Lock

from pydantic import ConfigDict, Field, ValidationError

from .._model import Record
from ..targets._batch import Fingerprint

SCHEMA_VERSION = 1


class Recalled(Record):
    """One line of a recall file: the fingerprint of one input run against one target."""

    model_config = ConfigDict(frozen=True)

    schema_version: int = Field(default=SCHEMA_VERSION, description="Format version of this line.")
    target: str = Field(description="SHA-256 of the target as it ran: its tree, its settings, the harness.")
    input: str = Field(description="SHA-256 of the input: the case as the target is given it, and its files.")
    outputs: list[tuple[str, str]] = Field(description="Each output file and the SHA-256 of its bytes.")
    behavior: str = Field(description="The behaviour category the run ended in.")
    exit_code: int | None = Field(description="The run's exit code; null: it did not end by itself.")
    stdout_sha256: str = Field(description="SHA-256 of what the run printed.")
    timed_out: bool = Field(description="The run went past its timeout.")


class Recall:
    """Fingerprints by (target key, input key), and generated folders by generator key; thread-safe."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root
        self._prints: dict[str, dict[str, Fingerprint]] = {}
        self._lock = Lock()
        self.hits = self.misses = 0

    def get(self, target: str, key: str) -> Fingerprint | None:
        with self._lock:
            found = self._loaded(target).get(key)
            self.hits, self.misses = self.hits + (found is not None), self.misses + (found is None)
            return found

    def put(self, target: str, key: str, print_: Fingerprint) -> None:
        with self._lock:
            known = self._loaded(target)
            if key in known:
                return
            known[key] = print_
            if self.root is not None:
                line = Recalled(target=target, input=key, outputs=list(print_.outputs), behavior=print_.behavior,
                                exit_code=print_.exit_code, stdout_sha256=print_.stdout_sha256,
                                timed_out=print_.timed_out)
                with (self.root / "prints" / f"{target}.jsonl").open("a", encoding="utf-8") as f:
                    f.write(line.model_dump_json() + "\n")

    def generated(self, key: str) -> Path | None:
        """The folder a generator run filed under ``key`` wrote, or None."""
        if self.root is None:
            return None
        folder, whole = self.root / "generated" / key, self.root / "generated" / f"{key}.complete"
        return folder if whole.is_file() and whole.read_text(encoding="utf-8").strip() == key else None

    def keep_generated(self, key: str, folder: Path) -> None:
        """File a copy of what a generator run wrote; the mark that it is whole lies beside it (never inside, where
        the generator's own files are), written last: a torn copy is never found."""
        if self.root is None or self.generated(key) is not None:
            return
        dest = self.root / "generated" / key
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(folder, dest, symlinks=True)
        dest.with_name(f"{key}.complete").write_text(key + "\n", encoding="utf-8")

    def _loaded(self, target: str) -> dict[str, Fingerprint]:
        if target not in self._prints:
            self._prints[target] = self._read(target)
        return self._prints[target]

    def _read(self, target: str) -> dict[str, Fingerprint]:
        if self.root is None:
            return {}
        (self.root / "prints").mkdir(parents=True, exist_ok=True)
        path = self.root / "prints" / f"{target}.jsonl"
        known: dict[str, Fingerprint] = {}
        if path.is_file() and not path.is_symlink():
            for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
                line = _line(raw)
                if line is not None and line.target == target:  # a line filed under another key is not this one
                    known[line.input] = Fingerprint(tuple(map(tuple, line.outputs)), line.behavior,  # type: ignore[arg-type]
                                                    line.exit_code, line.stdout_sha256, timed_out=line.timed_out)
        return known


def _line(raw: str) -> Recalled | None:
    try:  # a line torn by a killed run, or any line that is not one of ours, is no evidence: run again
        return Recalled.model_validate_json(raw)
    except (ValidationError, ValueError):
        return None


def digest(*parts: str | bytes) -> str:
    """SHA-256 over ``parts``, each length-prefixed (no two lists of parts share a digest)."""
    h = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        h.update(f"{len(data)}:".encode() + data)
    return h.hexdigest()


def folder_digest(folder: Path, skip: tuple[str, ...] = (), *, stamps: bool = True) -> str:
    """SHA-256 over every entry below ``folder``, in order: its relative path, its type (a file, a link, a folder:
    an empty one counts), its mode and modification time (the copies a run gets keep both, and a target can read
    them), and a file's bytes or a link's target. Two trees a run could tell apart never share a digest. Without
    ``stamps``, the type alone of each entry: the same content in another checkout gets the same digest."""
    parts: list[str | bytes] = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if any(part in skip for part in rel.parts):
            continue
        info = path.lstat()
        kind = f"{info.st_mode:o}:{info.st_mtime_ns}" if stamps else f"{stat.S_IFMT(info.st_mode):o}"
        parts += [rel.as_posix(), kind]
        if stat.S_ISLNK(info.st_mode):
            parts.append(os.readlink(path).encode())
        elif stat.S_ISREG(info.st_mode):
            parts.append(path.read_bytes())
    return digest(*parts)


def settings_digest(settings: object) -> str:
    """SHA-256 of settings given as JSON-able data (keys sorted)."""
    return digest(json.dumps(settings, sort_keys=True, default=str))
