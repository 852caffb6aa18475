"""The removals file: a reason is words; a bare id, a dot, an invisible character or a link clears nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from signals_repo import Repo, repo  # noqa: F401  (repo: the fixture)

from tri_agent.collection import parse_removals
from tri_agent.testsignals import evidence

ID = "tests/test_calc.py::test_zero"


@pytest.mark.parametrize("reason", ["", " .", "\t-", " ok", " \u200b\u200b\u200b", " \ufeff.", " 1234"])
def test_a_reason_without_words_clears_nothing(reason: str) -> None:
    entries, bare = parse_removals(f"{ID}{reason}\n")
    assert entries == {} and bare == [f".tri-agent/test-removals:1 {ID}"]


def test_a_real_reason_clears_and_a_bom_is_not_part_of_the_first_id() -> None:
    entries, bare = parse_removals(f"\ufeff{ID}\tmerged into test_add\n# a comment\n")
    assert list(entries) == [ID] and entries[ID].reason == "merged into test_add" and bare == []


def test_a_linked_removals_file_is_not_followed(repo: Repo, tmp_path: Path) -> None:
    base = repo.git("rev-parse", "HEAD")
    secret = tmp_path / "elsewhere"
    secret.write_text(f"{ID}\tthe deploy key is hunter2\n")
    repo.write("tests/test_calc.py", "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n")
    (repo.path / ".tri-agent").mkdir()
    (repo.path / ".tri-agent" / "test-removals").symlink_to(secret)
    repo.pytest()
    report = evidence(repo.path, base)
    assert report.reduced.state == "reduced" and "hunter2" not in report.model_dump_json()
