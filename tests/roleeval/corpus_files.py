"""A small corpus written into a folder, for the role-evaluation tests: two programs, a planted, a clean and an
incomplete case."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tri_agent.roleeval._corpus import case_ref

PLANTED, CLEAN, INCOMPLETE = case_ref("planted"), case_ref("clean"), case_ref("incomplete")
TEST_BEFORE = "def test_total():\n    assert total([1, 2]) == 3\n"
TEST_AFTER = "def test_total():\n    total([1, 2])\n"
ROOT_CAUSE = {"id": "rc-1", "requirement": "every test checks the value it computes",
              "trigger": "any call of total", "surface": {"path": "after/tests/test_total.py", "lines": [1, 2]},
              "consequence": "a wrong sum passes the suite", "formulations": ["assertion removed", "no longer checks"]}


def write_corpus(root: Path, **overrides: Any) -> Path:
    """The corpus at ``root``; ``overrides`` replace parts: ``payload_<ref>``, ``private_<ref>``, ``manifest``."""
    cases = {
        PLANTED: ({"before/tests/test_total.py": TEST_BEFORE, "after/tests/test_total.py": TEST_AFTER},
                  {"verdict": "findings", "root_causes": [ROOT_CAUSE], "accepted": ["test name is vague"]},
                  {"program": "totals", "kind": "command", "tool": "assertion deleted", "bug_class": "weakened"}),
        CLEAN: ({"before/tests/test_total.py": TEST_BEFORE,
                 "after/tests/test_total.py": TEST_BEFORE.replace("test_total", "test_sum_of_two")},
                {"verdict": "clean"}, {"program": "totals", "kind": "command", "tool": "", "bug_class": ""}),
        INCOMPLETE: ({"after/tests/test_grades.py": "def test_grade():\n    assert grade(\n"},
                     {"verdict": "blocked"}, {"program": "grades", "kind": "command", "tool": "", "bug_class": ""}),
    }
    manifest = {"schema_version": 1, "name": "tiny", "version": "1", "role": "judge", "cases": list(cases)}
    _json(root / "corpus.yaml", overrides.get("manifest", manifest))
    for ref, (files, private, provenance) in cases.items():
        _json(root / "visible" / f"{ref}.json", overrides.get(f"payload_{ref}", {
            "schema_version": 1, "case": ref, "task": "Report every test the change made weaker.", "files": files}))
        _json(root / "private" / f"{ref}.json", overrides.get(f"private_{ref}",
                                                              {"schema_version": 1, "case": ref, **private}))
        _json(root / "provenance" / f"{ref}.json", {"schema_version": 1, "case": ref, "planted_by": "tests",
                                                    "source_commit": "", **provenance})
    return root


def _json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
