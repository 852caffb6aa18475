"""The project's own documents: generated references are current, and every link stays in the repository."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tri_agent._formatdoc import DOCS, Doc, formats_markdown
from tri_agent._schemas import FORMATS

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _markdown_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "*.md"], cwd=ROOT, capture_output=True, text=True, check=True)
    return [ROOT / line for line in listed.stdout.splitlines()]


def test_formats_md_is_current() -> None:
    committed = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8")
    assert committed == formats_markdown(), \
        "docs/formats.md is stale: run tri-agent schema --docs docs/formats.md --force"


def test_every_format_is_documented_with_a_section() -> None:
    text = formats_markdown()
    for name in FORMATS:
        assert f"\n## {name}\n" in text


def test_every_documented_field_has_a_meaning() -> None:
    empty = [line for line in formats_markdown().splitlines() if line.startswith("| `") and line.endswith("|  |")]
    assert empty == []


def test_an_invalid_example_fails_the_rendering(monkeypatch: pytest.MonkeyPatch) -> None:
    broken = dict(DOCS, exam=Doc("`exam/exam.yaml`", "the examiner", "yaml", "schema_version: 1\nname: x\n"))
    monkeypatch.setattr("tri_agent._formatdoc.DOCS", broken)
    with pytest.raises(ValueError, match="example of format 'exam' is not valid"):
        formats_markdown()


def test_a_format_without_documentation_fails_the_rendering(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tri_agent._formatdoc.DOCS", {k: v for k, v in DOCS.items() if k != "smell"})
    with pytest.raises(ValueError, match="smell"):
        formats_markdown()


def test_the_cli_writes_the_reference(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "formats.md"
    code, _, _ = cli("schema", "--docs", out)
    assert code == 0
    assert out.read_text(encoding="utf-8") == formats_markdown()


def test_links_resolve_inside_the_repository() -> None:
    broken = []
    for md in _markdown_files():
        for target in LINK.findall(md.read_text(encoding="utf-8")):
            path = target.split("#", 1)[0]
            if target.startswith(("http://", "https://", "mailto:")):
                broken.append(f"{md.relative_to(ROOT)}: {target} leaves the repository")
            elif path and not (md.parent / path).resolve().is_relative_to(ROOT):
                broken.append(f"{md.relative_to(ROOT)}: {target} points outside the repository")
            elif path and not (md.parent / path).exists():
                broken.append(f"{md.relative_to(ROOT)}: {target} does not exist")
    assert broken == []


def test_no_document_sends_readers_outside_the_repository() -> None:
    outside = [f"{md.relative_to(ROOT)}:{n}" for md in _markdown_files()
               for n, line in enumerate(md.read_text(encoding="utf-8").splitlines(), 1)
               if "../shared" in line or "DESIGN.md" in line]
    assert outside == []
