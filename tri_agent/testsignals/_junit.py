"""JUnit XML in: a test report another tool wrote (CI, ``pytest --junitxml``), read into outcomes by test id.

Hostile input is refused, never half read: a file over 256 MiB, a document type (entity expansion), a root that is
neither ``testsuites`` nor ``testsuite``, or XML that does not parse is *not a report*, with the reason.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from xml.parsers import expat

_MAX = 256 << 20
_SHA = re.compile(r"\b[0-9a-f]{40}\b")
_RANK = {"passed": 0, "skipped": 1, "xfailed": 1, "failed": 2, "error": 3}


@dataclass(frozen=True)
class JUnitReport:
    """Outcomes by test id (``classname::name``), the report's properties, and the file's time."""

    path: Path
    outcomes: dict[str, str]
    files: dict[str, str]  # test id -> the file it came from, where the report says or its classname implies
    properties: dict[str, str] = field(default_factory=dict)
    mtime: float = 0.0

    def commit(self) -> str | None:
        """The commit the report names: its ``commit`` property, else a full commit id in its file name."""
        named = self.properties.get("commit") or self.properties.get("tri_agent.commit")
        found = _SHA.search(self.path.name)
        return named or (found.group(0) if found else None)


def read_junit(path: Path) -> JUnitReport | str:
    """The report at ``path``, or why it is not one."""
    try:
        if path.is_symlink() or not path.is_file():
            return "not a plain file"
        if path.stat().st_size > _MAX:
            return "larger than 256 MiB"
        data = path.read_bytes()
        if _declares(data):
            return "holds a document type (entities are refused)"
        root = ET.fromstring(data)
    except (OSError, ET.ParseError, expat.ExpatError, ValueError) as exc:
        return f"does not parse as XML ({str(exc)[:80]})"
    if root.tag not in ("testsuites", "testsuite"):
        return f"its root is <{root.tag}>, not <testsuites> or <testsuite>"
    outcomes: dict[str, str] = {}
    files: dict[str, str] = {}
    props: dict[str, str] = {}
    for prop in root.iter("property"):
        props[prop.get("name", "")] = prop.get("value", "")
    for case in root.iter("testcase"):
        test = f"{case.get('classname', '')}::{case.get('name', '')}"
        found = _outcome(case)
        outcomes[test] = max(found, outcomes.get(test, found), key=_RANK.__getitem__)  # one id twice: the worse
        files[test] = case.get("file") or case.get("classname", "").replace(".", "/")
    return JUnitReport(path, outcomes, files, props, path.stat().st_mtime)


class _Declared(Exception):
    pass


def _declares(data: bytes) -> bool:
    """Whether the document declares a type or an entity, in whatever encoding it is written (a byte search
    misses ``<!DOCTYPE`` in UTF-16): the parser itself is asked, and stopped at the first declaration."""
    parser = expat.ParserCreate()

    def refuse(*_args: object) -> None:
        raise _Declared

    parser.StartDoctypeDeclHandler = refuse  # an entity can only be declared inside a document type
    try:
        parser.Parse(data, True)
    except _Declared:
        return True
    return False


def _outcome(case: ET.Element) -> str:
    kinds = {child.tag for child in case}
    if "error" in kinds:
        return "error"
    if "failure" in kinds:
        return "failed"
    if "skipped" in kinds:
        skipped = case.find("skipped")
        return "xfailed" if skipped is not None and "xfail" in str(skipped.get("type")) else "skipped"
    return "passed"
