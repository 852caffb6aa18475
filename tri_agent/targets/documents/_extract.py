"""A document output read for scoring: the reader (``_reader``) run in a jail of its own over the case's output
folder, after the case's run, and what it printed turned into the case's rows.

The orchestrator never parses the document: a PDF bomb, a zip bomb, a page nested ten thousand deep or a PNG named
``.pdf`` ends the reader under the target's limits and deadline, and the case is left without rows, with the reason
(its behaviour is still its run's). What the reader printed is read no further than the output cap.
"""

from __future__ import annotations

import base64
import binascii
import json
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ...exam._formats import Extract
from ...sandbox._jail import Jail
from ...sandbox._limits import Limits
from ...sandbox._process import Completed, base_env
from . import _reader

Cell = str | None
COLUMNS = ("part", "n", "value")
ALWAYS = ("volatile", "hidden")  # kept whatever the rule's parts: what was replaced, what no one can see


def reader_argv(work: Path, extract: Extract, document: Path) -> tuple[list[str], Path]:
    """The argv that reads ``document`` as ``extract`` says, and the folder the reader was copied into (the jail
    must show it, read-only)."""
    folder = work / "reader"
    folder.mkdir()
    shutil.copyfile(_reader.__file__, folder / "reader.py")
    volatile = json.dumps([[v.name, v.pattern, v.replace] for v in extract.volatile])
    return [sys.executable, "-I", str(folder / "reader.py"), extract.format, str(document), volatile], folder


@dataclass(frozen=True)
class Read:
    """What the reader gave for a case: its rows, why there are none, and the file's SHA-256 with its volatile
    parts replaced (None: none declared, or the reader failed)."""

    rows: list[dict[str, Cell]]
    error: str | None = None
    steady: str | None = None


def reader_rows(done: Completed, extract: Extract, case: str) -> Read:
    """The case's rows from what the reader printed (each with a leading ``case`` column, only the ``parts``
    asked for, the volatile counts always), or why there are none."""
    why = _failed(done, extract.file)
    if why is not None:
        return Read([], why)
    try:
        lines = [json.loads(line) for line in done.stdout.decode("utf-8").splitlines() if line.strip()]
    except ValueError:  # a reader the document took over may print anything: it is read as no rows
        lines = [None]
    if not all(isinstance(r, dict) for r in lines):
        return Read([], f"unreadable {extract.file}: the document reader printed something other than rows")
    rows = [{c: r[c] for c in COLUMNS} for r in lines if all(isinstance(r.get(c), str) for c in COLUMNS)]
    steady = next((r["steady_sha256"] for r in lines if isinstance(r.get("steady_sha256"), str)), None)
    return Read([{"case": case, **r} for r in rows if _kept(r, extract.parts)], None, steady)


def _failed(done: Completed, file: str) -> str | None:
    if done.timed_out:
        return f"unreadable {file}: the document reader ran out of time"
    if done.limit is not None:
        return f"unreadable {file}: the document reader went past its {done.limit} limit"
    if done.truncated:
        return f"unreadable {file}: the document reader printed more than the output cap"
    if done.exit_code == _reader.UNREADABLE:
        return f"unreadable {file}: {_error(done.stdout)}"
    if done.exit_code != _reader.READ:
        return f"unreadable {file}: the document reader ended with exit {done.exit_code}"
    return None


def _error(stdout: bytes) -> str:
    try:
        return str(json.loads(stdout.decode("utf-8").splitlines()[0])["error"])
    except (ValueError, IndexError, KeyError, TypeError):
        return "not a readable document"


def _kept(row: dict[str, str], parts: list[str] | None) -> bool:
    part = row["part"]
    return parts is None or part in ALWAYS or part in parts or f"{part}:{row['n']}" in parts


PAGE_CAP = 4 << 20  # bytes of a first page's picture (base64): 72 dots an inch is 1.5 MB raw at most


def first_page(document: Path, *, timeout: float, limits: Limits) -> bytes | None:
    """The PDF's first page as a PNG, rendered by the reader in a jail of its own (the document folder
    read-only, the target's limits and deadline); None when the reader could not (a hostile file costs only its
    picture)."""
    with tempfile.TemporaryDirectory(prefix="tri-page-") as work:
        argv, folder = reader_argv(Path(work), Extract(file=document.name, format="pdf"), document)
        (Path(work) / "home").mkdir()
        done, _ = Jail(readable=(document.parent, folder)).run(
            [*argv[:3], "png", str(document)], cwd=folder, env=base_env(Path(work) / "home"), timeout=timeout,
            cap=PAGE_CAP, limits=limits)
    if done.exit_code != _reader.READ or done.timed_out or done.truncated:
        return None
    try:
        png = base64.b64decode(json.loads(done.stdout)["png"], validate=True)
    except (ValueError, KeyError, TypeError, binascii.Error):
        return None
    return png if png.startswith(_reader.PNG) else None
