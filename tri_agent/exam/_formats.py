"""The exam: what an examiner writes, what a build makes of it, and the cases a tester runs.

An exam folder holds::

    exam.yaml      generator and oracle commands (ExamConfig)
    SPEC.md        the examiner's restatement of the spec
    TESTPLAN.md    what is tested and why (never an answer)
    caliber.yaml   the scoring contract
    mutations.yaml the mutation menu (optional until a mutation gate runs)

``tri-agent exam build`` turns it into a build folder::

    visible/cases.jsonl, visible/inputs/<case>/...   what the target and the tester may see (sealed)
    sealed/answers.jsonl, sealed/behaviors.jsonl     the answer key (sealed, never shown to them)
    caliber.yaml                                      the caliber with generated relation pairs filled in
    build.json                                        digests and self-checks (BuildRecord)
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .. import _yamldoc
from .._errors import MalformedInput, UsageError
from .._model import Record, Written
from ..sandbox._limits import Limits

CASE_ID = re.compile(r"c-[0-9a-f]{8,64}")
M = TypeVar("M", bound=BaseModel)
EXAM_FILES = ("exam.yaml", "SPEC.md", "TESTPLAN.md", "caliber.yaml")


class _Strict(Written):
    model_config = ConfigDict(frozen=True)


class ExamConfig(_Strict):
    """``exam.yaml``: how to generate the cases and compute their answers.

    Commands are argv lists run from a copy of the exam folder. Placeholders: ``{seed}`` and ``{out}``
    for the generator (it writes ``{out}/cases.jsonl`` and ``{out}/inputs/<case>/``, and may write
    ``{out}/pairs.jsonl``); ``{cases}`` (the visible folder) and ``{out}`` for the oracle (it writes
    ``{out}/answers.jsonl`` and may write ``{out}/behaviors.jsonl``).
    """

    schema_version: Literal[1] = Field(default=1, description="Version of the exam format.")
    name: str = Field(min_length=1, description="Exam name, for reports.")
    generator: list[str] = Field(min_length=1, description="argv of the deterministic case generator.")
    oracle: list[str] = Field(min_length=1, description="argv of the independent oracle.")
    timeout: float = Field(default=120, gt=0, description="Seconds each generator or oracle run may take.")
    write_cap: int = Field(default=256 << 20, ge=1 << 16, description="Bytes each generator or oracle run may "
                           "write: no single file may grow past it, nor all it wrote together (apparent size).")
    limits: Limits = Field(default_factory=Limits, description="Resource limits of each generator or oracle run: "
                           "memory, processes, open files, CPU seconds (a run past one fails the build).")


class FixedField(_Strict):
    """One column of a fixed-width output: its name and its width in characters."""

    name: str = Field(min_length=1, description="Column name (the caliber's, or renamed by `rename`).")
    width: int | None = Field(default=None, ge=1, description="Characters it spans; null only for the last field, "
                              "which then takes the rest of the line.")


DOCUMENT_FORMATS = ("pdf", "html", "markdown", "docx", "sha256")  # read by the document reader, in a jail


class Volatile(_Strict):
    """A part of a document output that differs from run to run (a creation date, a producer string, a random id):
    every match is replaced before the document is hashed or its text scored, and the number of matches is a row
    of its own (part ``volatile``, n the name), so a volatile part that vanishes or multiplies is seen."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$", description="Name of the volatile part (its row's n).")
    pattern: str = Field(min_length=1, description="Python regular expression; for sha256 matched against the "
                         "file's bytes (the pattern's UTF-8), else against each value read.")
    replace: str = Field(default="", description="What each match becomes.")

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            compiled = re.compile(value)
        except re.error as exc:
            raise ValueError(f"pattern {value!r} is not a regular expression ({exc})") from None
        if compiled.fullmatch(""):
            raise ValueError(f"pattern {value!r} matches the empty string: it would match everywhere")
        return value


class Extract(_Strict):
    """Where a case's actual rows come from, in its output folder."""

    file: str = Field(description="Output file relative to the case's output folder.")
    format: Literal["csv", "tsv", "jsonl", "json", "fixed", "pdf", "html", "markdown", "docx", "sha256"] = Field(
        description="json: a list of objects; tsv: a header line, then a record a line, fields split at tabs, no "
                    "quoting; fixed: a record a line, cut into `fields` by character widths, each value stripped of "
                    "the spaces that pad it (lines of spaces only are skipped; a tab, or a line longer than the "
                    "fields, makes the file unreadable). pdf, html, markdown, docx: the file read by a real parser "
                    "in a jail of its own, as rows (part, n, value): pages, lines, headings, blocks, table rows, "
                    "links, metadata, fonts, active content (docs/documents.md); sha256: one row (sha256, 1, the "
                    "file's SHA-256 after the volatile parts are replaced).")
    parts: list[str] | None = Field(default=None, min_length=1, description="Documents only: the rows kept, by part "
                                    "(page, line, h1, block, table, link, meta, font, script, pages...; 'meta:title' "
                                    "keeps one metadata field); null: every row. Volatile and hidden-text rows are "
                                    "always kept.")
    volatile: list[Volatile] = Field(default_factory=list, description="Documents only: the parts that differ from "
                                     "run to run, replaced before hashing or scoring and counted.")
    fields: list[FixedField] | None = Field(default=None, min_length=1, description="fixed only: the columns, "
                                            "left to right.")
    skip: int = Field(default=0, ge=0, description="fixed only: lines skipped at the top (a header, a ruler).")
    rename: dict[str, str] | None = Field(default=None, description="Output column -> the name the caliber uses, "
                                          "all at once (a swap works); a column the output lacks, or a new name it "
                                          "already has, leaves the case without rows, with the reason.")
    failed_output: Literal["score", "none"] = Field(default="score", description="What a failed run (timed out or "
                                                    "exited non-zero) writes: 'score' reads and scores it like any "
                                                    "other; 'none' expects nothing (an empty file is nothing): its "
                                                    "rows are not read, and a row it wrote is a finding that fails "
                                                    "the score.")

    @model_validator(mode="after")
    def _fixed_has_fields(self) -> Extract:
        if (self.format == "fixed") != (self.fields is not None):
            raise ValueError("format: fixed needs fields (name and width of each column), and only it takes them")
        if self.skip and self.format != "fixed":
            raise ValueError("skip is for format: fixed (a header of CSV or TSV is its first line)")
        document = self.format in DOCUMENT_FORMATS
        if not document and (self.parts is not None or self.volatile):
            raise ValueError("parts and volatile are for documents (pdf, html, markdown, docx, sha256)")
        if document and self.rename:
            raise ValueError("rename is for tables: a document's rows are always part, n, value")
        volatile = [v.name for v in self.volatile]
        if len(set(volatile)) != len(volatile):
            raise ValueError("volatile: each name once")
        names = [f.name for f in self.fields or []]
        if len(set(names)) != len(names) or any(f.width is None for f in (self.fields or [])[:-1]):
            raise ValueError("fixed fields: each name once, and every width given (only the last may be null)")
        return self

    @field_validator("rename")
    @classmethod
    def _one_to_one(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        for old, new in (value or {}).items():
            if not new or new == "case":
                raise ValueError(f"rename {old!r} -> {new!r}: the new name must be non-empty and not 'case' (the "
                                 "gateway writes the case id there)")
        targets = list((value or {}).values())
        twice = sorted({n for n in targets if targets.count(n) > 1})
        if twice:
            raise ValueError(f"rename maps two columns onto {twice[0]!r}")
        return value


class Case(_Strict):
    """One line of ``cases.jsonl``: an opaque id, its inputs and how to read its result."""

    case: str = Field(description="Opaque id c-<hex>; it must never name an expected verdict.")
    inputs: str = Field(description="Folder of the case's input files, relative to the visible folder.")
    argv: list[str] = Field(default_factory=list, description="Extra arguments appended to the target's run.")
    extract: Extract | None = Field(default=None, description="Overrides the target's extraction.")

    @field_validator("case")
    @classmethod
    def _opaque(cls, value: str) -> str:
        if not CASE_ID.fullmatch(value):
            raise ValueError(f"case id {value!r} is not opaque: use c-<8 to 64 hex digits>")
        return value


class Pair(_Strict):
    """One line of ``pairs.jsonl``: a generated case pair for a caliber relation."""

    relation: str = Field(description="Name of an equal_pair or monotone relation of the caliber.")
    a: str = Field(description="First case id; for monotone, the subset case.")
    b: str = Field(description="Second case id; for monotone, the superset case.")


class BuildChecks(Record):
    """The self-checks of a build; a build that fails one raises and writes no record, so each is true."""

    generator_deterministic: bool = Field(description="Two generator runs wrote byte-identical output.")
    oracle_deterministic: bool = Field(description="Two oracle runs wrote byte-identical output.")
    gold_passes: bool = Field(description="The answer key scored against itself passes.")
    corrupted_key_fails: bool = Field(description="The answer key with its first row's first field changed beyond "
                                                  "tolerance fails channel 1.")
    deepens: str = Field(default="", description="Cases whose inputs the generator does not also write at another "
                         "seed, of all (n/m): at least one in four, or the build is refused.")
    canaries: str = Field(default="", description="Canary cases planted, by kind, each shown to fail with the "
                          "oracle's own answers in the target's place; empty: the generator planted none.")


class BuildRecord(Record):
    """``build.json``: what was built, from what, and the self-checks that passed before it counts."""

    schema_version: Literal[1] = Field(default=1, description="Version of the build record format.")
    exam: str = Field(description="Exam name from exam.yaml.")
    seed: str = Field(description="Seed the generator ran with; for a composed build, a label naming the seeds "
                                  "its cases came from.")
    cases: int = Field(description="Cases in visible/cases.jsonl.")
    visible_digest: str = Field(description="Seal digest of visible/.")
    sealed_digest: str = Field(description="Seal digest of sealed/ (the answer key).")
    caliber_sha256: str = Field(description="SHA-256 of the built caliber.yaml.")
    exam_sha256: dict[str, str] = Field(description="SHA-256 of each exam file the generator and oracle could "
                                                    "read (code included; tickets and judge notes excluded).")
    checks: BuildChecks = Field(description="The self-checks the build passed.")
    isolation: list[str] = Field(default_factory=list, description="OS isolation layers around the generator and "
                                 "oracle runs; empty: none, they ran with the orchestrator's own access.")


def load_exam(folder: Path) -> ExamConfig:
    if not folder.is_dir():
        raise UsageError(f"{folder} is not an exam folder", hint="pass the folder holding exam.yaml")
    missing = [name for name in EXAM_FILES if not (folder / name).is_file()]
    if missing:
        raise MalformedInput(f"exam is missing {', '.join(missing)}", where=str(folder),
                             hint="an exam needs " + ", ".join(EXAM_FILES))
    return _yamldoc.load(folder / "exam.yaml", ExamConfig)


def read_cases(path: Path) -> list[Case]:
    """Every case in a ``cases.jsonl``, refusing malformed lines and duplicate ids with file:line."""
    return read_jsonl(path, Case, "case")


def read_pairs(path: Path) -> list[Pair]:
    return read_jsonl(path, Pair, None) if path.exists() else []


def read_jsonl(path: Path, model: type[M], unique: str | None) -> list[M]:
    """Every line of a JSONL file as ``model``, refusing malformed lines (and repeated ``unique`` values) with
    file:line."""
    if not path.is_file():
        raise MalformedInput(f"{path.name} was not written", where=str(path.parent))
    out: list[M] = []
    seen: dict[str, int] = {}
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = model.model_validate(json.loads(line))
        except ValidationError as exc:
            raise _yamldoc.explained(exc, model, f"{path}:{lineno}") from None
        except ValueError as exc:
            raise MalformedInput(str(exc), where=f"{path}:{lineno}") from None
        key = getattr(item, unique) if unique else None
        if key is not None and key in seen:
            raise MalformedInput(f"{unique} {key!r} repeated (first at line {seen[key]})", where=f"{path}:{lineno}")
        if key is not None:
            seen[key] = lineno
        out.append(item)
    return out
