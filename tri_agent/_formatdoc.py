"""``docs/formats.md``: the reference of every on-disk format, rendered from the pydantic models.

The field tables come from the models (names, types, defaults, descriptions), so they cannot drift from
the code; each format's example is validated against its model while rendering, so an example that stops
being valid fails the rendering (and the test that compares the committed file with a fresh one).
"""

from __future__ import annotations

import json
import types
import typing
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined, to_jsonable_python

from . import _yamldoc
from ._schemas import FORMATS

HEADER = """# On-disk formats

Every file tri-agent reads or writes is one of the formats below, each a pydantic model with a
`schema_version` (or, for the executor protocol, a `protocol` string). This page is generated from those
models by `tri-agent schema --docs docs/formats.md --force`; do not edit it by hand. The JSON Schemas of the same
models come from `tri-agent schema --out DIR`. [protocol.md](protocol.md) explains where each format fits.

Types read as Python: `list[str]` is a list of strings, `dict[str, int]` a mapping, `"a" | "b"` one of the
listed values, `null` an absent value.

One rule holds for every format: an unknown key is refused. In a file a person or a role writes (the formats
"written by" you, the examiner, the builder, an agent), a misspelt key is exit 3 naming the key, the file, its
line and the nearest known name (`timout: unknown key 'timout' (did you mean 'timeout'?)`), never a setting
silently dropped. A record the engine writes is refused too when it holds a key the engine never writes: someone
else wrote it. (The models derive from `Written` or `Record` in `tri_agent/_model.py`; `tests/test_model.py`
walks this registry and checks it.)
"""


@dataclass(frozen=True)
class Doc:
    """Where a format lives, who writes it, and a short valid example (``yaml`` or ``json``)."""

    where: str
    writer: str
    syntax: str
    example: str


DOCS: dict[str, Doc] = {
    "caliber": Doc("`exam/caliber.yaml`", "the examiner", "yaml", """\
schema_version: 1
key: [case, group]
fields:
  count: count
  total: amount
  state: {class: status, values: [ok, late]}
behaviors: {values: [accepted, rejected]}
relations:
  - {name: totals-add-up, kind: sum_of_parts, field: total, by: [case],
     parts: {where_not: {group: "*ALL*"}}, total: {where: {group: "*ALL*"}}}
drift: {min_cases: 3, direction_share: 0.9, gate: true}
"""),
    "manifest": Doc("`DIR/MANIFEST.sha256` (text; shown here as its parsed form)", "`tri-agent seal`", "json", """\
{"schema_version": 1, "entries": [
  {"path": "answers.jsonl", "sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
   "size": 4}]}
"""),
    "seal-log-entry": Doc("`DIR/SEAL-LOG.jsonl`, one line each", "`tri-agent seal`", "json", """\
{"schema_version": 1, "seq": 2, "action": "reseal",
 "digest": "1b4f0e9851971998e732078544c96b36c3d01cedf7caa332359d6f1d83567014",
 "previous_digest": "60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752",
 "reason": "oracle fix for ticket 12", "at": "2026-11-30T10:00:00Z",
 "previous_line_sha256": "fd61a03af4f77d870fc21e05e7e80678095c92d808cfb3b5c279ee04c74aca13"}
"""),
    "verify-report": Doc("`tri-agent verify --json`", "`tri-agent verify`", "json", """\
{"schema_version": 1, "digest": "1b4f0e9851971998e732078544c96b36c3d01cedf7caa332359d6f1d83567014",
 "expected_digest": null, "files": 3,
 "findings": [{"kind": "modified", "path": "answers.jsonl", "detail": "sha256 differs from the manifest"}]}
"""),
    "score-report": Doc("`score.json` (any name given to `--json`)", "`tri-agent score`, `exam score`, the judge",
                        "json", """\
{"schema_version": 1, "verdict": "fail", "blockers": [],
 "caliber_sha256": "a3", "answers_sha256": "b4", "actual_sha256": "c5",
 "inputs": [{"role": "answers", "name": "answers.jsonl", "format": "jsonl", "sha256": "b4", "rows": 2}],
 "answers": {"verdict": "fail", "passed": 3, "total": 4, "rows_expected": 2, "rows_actual": 2,
             "rows_missing": 0, "rows_unexpected": 0,
             "fields": {"total": {"cls": "amount", "passed": 1, "failed": 1, "within_tolerance_nonzero": 0}},
             "failures": [{"key": {"case": "c-1", "group": "A"}, "field": "total", "cls": "amount",
                           "expected": "10.00", "actual": "10.05", "reason": "out_of_tolerance"}],
             "drift": []}}
"""),
    "leak-report": Doc("`tri-agent leaks --json`", "`tri-agent leaks`, the judge", "json", """\
{"schema_version": 1, "distinctive_values": 12, "files_scanned": 4,
 "hits": [{"where": "target/grades.py:14", "kind": "value", "detail": "field total of row case=c-1, group=A"}]}
"""),
    "exam": Doc("`exam/exam.yaml`", "the examiner", "yaml", """\
schema_version: 1
name: toy-grades
generator: [python3, generator/generate.py, "{seed}", "{out}"]
oracle: [python3, oracle/oracle.py, "{cases}", "{out}"]
timeout: 60
"""),
    "case": Doc("`builds/<id>/visible/cases.jsonl`, one line each", "`exam build` (from the generator)", "json", """\
{"case": "c-5d41402abc4b", "inputs": "inputs/c-5d41402abc4b"}
"""),
    "pair": Doc("the generator's `pairs.jsonl`, one line each (never published: the pairs go into the built "
                "`caliber.yaml`)", "the examiner's generator", "json", """\
{"relation": "row-order-changes-nothing", "a": "c-5d41402abc4b", "b": "c-7d793037a076"}
"""),
    "canary": Doc("the generator's `canaries.jsonl`, one line each (never published)", "the examiner's generator",
                  "json", """\
{"case": "c-5d41402abc4b", "kind": "refuse", "behavior": "accepted"}
"""),
    "sealed-canary": Doc("`builds/<id>/sealed/canaries.jsonl`, one line each", "`exam build`", "json", """\
{"schema_version": 1, "case": "c-5d41402abc4b", "kind": "refuse", "behavior": "accepted",
 "refused_as": "rejected", "controls": ["c-7d793037a076"]}
"""),
    "gate-file": Doc("`tri-agent-gate.yaml` at a repository's root", "the repository's people, on the base branch",
                     "yaml", """\
schema_version: 1
classes:
  scoring_properties: ["tests/scoring/properties/**/*.py"]
  scoring_fixtures: ["tests/scoring/fixtures/**"]
  diagnostic: ["tests/diagnostic/**/*.py"]
  ledger: tests/scoring/flake_ledger.json
held_out: ["tests/held_out/**"]
spec: SPEC.md
fixtures: {schema: tests/scoring/fixtures.schema.json, lock: tests/scoring/fixtures.lock}
agents: ["*@agents.example.com"]
forbidden: ["tests/scoring/**"]
invocation: {pytest: ["-q", "tests/scoring", "tests/held_out"], seed: 1234}
corpus: tests/scoring/corpus
"""),
    "test-map": Doc("`tri-agent gate map --json OUT`", "`gate map`", "json", """\
{"schema_version": 1, "revision": "working tree", "entries": [
 {"path": "tests/diagnostic/test_ui.py", "cls": "diagnostic", "glob": "tests/diagnostic/**/*.py", "held_out": false},
 {"path": "tests/scoring/properties/test_totals.py", "cls": "scoring_properties",
  "glob": "tests/scoring/properties/**/*.py", "held_out": false},
 {"path": "tests/test_misc.py", "cls": "diagnostic", "glob": null, "held_out": false}]}
"""),
    "agent-checkout": Doc("`tri-agent gate workspace BASE DEST --json OUT`", "`gate workspace`", "json", """\
{"schema_version": 1, "base": "3f4e0b9c2d1a", "commit": "8a7b6c5d4e3f", "files": 6, "omitted": 8,
 "omitted_sha256": "b1c2", "not_written": ["link"]}
"""),
    "flake-ledger": Doc("the path the gate file's `classes.ledger` names", "the repository's people (never an agent)",
                        "json", """\
{"schema_version": 1,
 "entries": [{"test_id": "tests/diagnostic/test_poll.py::test_settles", "flake_class": "timing",
              "evidence": "sha256:8f3c1a0b9d2e4c77a1b0c3d4e5f60718293a4b5c6d7e8f90123456789abcdef0",
              "moved_from": "tests/scoring/test_poll.py", "moved_at": "2026-11-02", "owner": "payments",
              "note": "passes alone; fails when the poll window is 50 ms"}],
 "removed": []}
"""),
    "gate-report": Doc("`tri-agent gate check BASE HEAD --json OUT`", "`gate check`", "json", """\
{"schema_version": 1, "base": "3f4e0b9c2d1a", "head": "8a7b6c5d4e3f", "patch_sha256": "9c1d",
 "policy": {"schema_version": 1, "base": "3f4e0b9c2d1a", "head": "8a7b6c5d4e3f", "surface_sha256": "c3d4",
            "findings": []},
 "verdict": {"schema_version": 1, "layers": ["bubblewrap"],
             "base": {"tests": [{"node_id": "tests/held_out/test_cap.py::test_cap", "outcome": "failed"}],
                      "exit_status": 1, "finished": true,
                      "cases": [{"property": "test_totals.test_total", "case": "2026-11-30/0001.json",
                                 "input_sha256": "77aa", "passed": false, "error": "AssertionError: 12 != 11"}]},
             "head": {"tests": [{"node_id": "tests/held_out/test_cap.py::test_cap", "outcome": "passed"}],
                      "exit_status": 0, "finished": true,
                      "cases": [{"property": "test_totals.test_total", "case": "2026-11-30/0001.json",
                                 "input_sha256": "77aa", "passed": true}]},
             "failures": [], "regressions": [],
             "improvements": ["test_totals.test_total/2026-11-30/0001.json", "tests/held_out/test_cap.py::test_cap"]},
 "exit_code": 0, "outcome": "pass"}
"""),
    "spool-entry": Doc("`<git dir>/tri-agent/spool/<time>-<pid>-<random>.json`", "the pytest plugin", "json", """\
{"schema_version": 1, "tree_sha256": "59d1", "tree_sha256_end": "59d1", "files": 3, "rootdir": ".",
 "invocation": ["-q"], "started": 1796285374.87, "finished": 1796285374.9,
 "collected": ["tests/test_calc.py::test_add"], "outcomes": {"tests/test_calc.py::test_add": "passed"},
 "collect_errors": [], "exit_status": 0, "hooks": {"tests/conftest.py": ["pytest_runtest_makereport"]},
 "plugin": "0.1.0"}
"""),
    "evidence-report": Doc("`tri-agent evidence BASE [HEAD] --json OUT`", "`evidence`", "json", """\
{"schema_version": 1, "base": "98bbc3f6", "head": null, "tree_sha256": "9cfe", "changed_tests": [],
 "changed_infrastructure": [],
 "passed": {"state": "passed", "assurance": "tree-bound", "source": ".git/tri-agent/spool/0017.json",
            "collected": 2, "counts": {"passed": 2}, "failing": [], "notes": []},
 "reduced": {"state": "none", "removed": [], "disclosed": [], "bare": [], "added": [], "base_collected": 2,
             "head_collected": 2, "collect_errors": {"base": [], "head": []}},
 "weakened": {"state": "not_judged", "samples": null, "k": 5, "floor": 0.8, "flags": [], "forged": [],
              "dropped": [], "judge": null, "files": [], "reason": "no test file changed"},
 "exit_code": 0}
"""),
    "corpus-manifest": Doc("`CORPUS/corpus.yaml`", "the corpus's maker", "yaml", """\
schema_version: 1
name: weakened-tests
version: "1"
role: judge
skill_dependencies: [docs/protocol.md]
cases: [c-3f2a9d0e41b7, c-91c0d2e8a4f6]
"""),
    "corpus-payload": Doc("`CORPUS/visible/<case>.json`", "the corpus's maker", "json", """\
{"schema_version": 1, "case": "c-3f2a9d0e41b7", "task": "Report every test the change made weaker.",
 "files": {"before/tests/test_total.py": "def test_total():\\n    assert total([1, 2]) == 3\\n",
           "after/tests/test_total.py": "def test_total():\\n    total([1, 2])\\n"}}
"""),
    "corpus-expectation": Doc("`CORPUS/private/<case>.json`", "the corpus's maker", "json", """\
{"schema_version": 1, "case": "c-3f2a9d0e41b7", "verdict": "findings",
 "root_causes": [{"id": "rc-1", "requirement": "every test checks the value it computes",
                  "trigger": "any call of total", "consequence": "a wrong sum passes the suite",
                  "surface": {"path": "after/tests/test_total.py", "lines": [1, 2]},
                  "formulations": ["assertion removed", "no longer checks"]}],
 "accepted": ["test name is vague"]}
"""),
    "corpus-provenance": Doc("`CORPUS/provenance/<case>.json`", "the corpus's maker", "json", """\
{"schema_version": 1, "case": "c-3f2a9d0e41b7", "program": "totals", "kind": "command",
 "planted_by": "corpus build 1", "source_commit": "6dc48f2", "tool": "assertion deleted", "bug_class": ""}
"""),
    "corpus-ruling": Doc("`CORPUS/private/adjudications.jsonl` (one per line)", "a person, from the queue", "json",
                         """\
{"schema_version": 1, "case": "c-3f2a9d0e41b7", "key": "5be0c0d3a1f2e4b6", "grade": "match",
 "root_cause": "rc-1", "by": "reviewer", "note": "'dropped the check' names the removed assertion"}
"""),
    "role-attempt": Doc("`OUT/attempts.jsonl` of `tri-agent eval-roles` (one per line)", "`eval-roles`", "json", """\
{"schema_version": 1, "case": "c-3f2a9d0e41b7", "index": 0,
 "attempt": {"driver": "command", "driver_version": "0.1.0", "model": "model-x", "status": "ok",
             "usage": {"input_tokens": 812, "output_tokens": 95, "cache_read_tokens": 18400, "cache_write_tokens": 0},
             "cost_usd": 0.0123, "cost_basis": "reported by the agent", "seconds": 14.2, "error": null},
 "closure_digest": "bd36", "closure_members": ["roles/judge.md", "SKILL.md", "docs/gate.md", "docs/evidence.md"],
 "given": "findings", "right": true,
 "findings": [{"location": "after/tests/test_total.py:2", "text": "the assertion was removed", "key": "40a117dd",
               "grade": "match", "root_cause": "rc-1"}]}
"""),
    "role-eval-report": Doc("`OUT/report.json` of `tri-agent eval-roles`", "`eval-roles`", "json", """\
{"schema_version": 1, "corpus": "weakened-tests", "corpus_version": "1", "role": "judge", "driver": "command",
 "models": ["model-x"], "simulated": false, "suite_commit": "6dc48f2", "grader_version": "1",
 "closure_digest": "bd36", "closure_members": ["roles/judge.md", "SKILL.md"], "attempts_per_case": 3,
 "metrics": {"recall": {"k": 41.0, "n": 120, "value": 0.3417, "low": 0.24, "high": 0.46, "clusters": 10,
                        "design_effect": 1.4,
                        "trial": "a root cause of a planted case, in a valid attempt that did not block: named"}},
 "statuses": {"ok": {"k": 350.0, "n": 360, "value": 0.9722, "low": 0.94, "high": 0.99, "clusters": 10,
                     "design_effect": 1.1, "trial": "an attempt: ended ok"}},
 "latency_median_s": 14.2, "usage": {"input_tokens": 290000, "output_tokens": 34000, "cache_read_tokens": 6600000,
 "cache_write_tokens": 0}, "cost_usd": 4.41, "cost_bases": ["reported by the agent"], "pending": [],
 "cases": [{"case": "c-3f2a9d0e41b7", "program": "totals", "expected": "findings",
            "attempts": ["right", "wrong", "right"]}]}
"""),
    "build-record": Doc("`builds/<id>/build.json`", "`exam build`", "json", """\
{"schema_version": 1, "exam": "toy-grades", "seed": "1", "cases": 16,
 "visible_digest": "d1", "sealed_digest": "e2", "caliber_sha256": "a3",
 "exam_sha256": {"exam.yaml": "f4", "generator/generate.py": "a5", "oracle/oracle.py": "b6"},
 "checks": {"generator_deterministic": true, "oracle_deterministic": true, "gold_passes": true,
            "corrupted_key_fails": true, "deepens": "16/16",
            "canaries": "2 (1 impossible, 1 refuse); the oracle's answers fail each"}}
"""),
    "target": Doc("`target.yaml`", "the user, at setup", "yaml", """\
schema_version: 1
kind: command
preset: warehouse
baseline: target
run: [python3, "{target}/grades.py", "{input}/scores.csv", "{output}/summary.csv"]
timeout: 20
extract: {file: summary.csv, format: csv}
behaviors:
  - {exit: timeout, behavior: timeout}
  - {exit: 0, behavior: accepted}
  - {exit: nonzero, stderr: "bad score", behavior: rejected}
"""),
    "ui-plan": Doc("`<case inputs>/ui.json` of a browser target's case", "the exam's generator", "json", """\
{"schema_version": 1, "clock": "2026-03-02T09:00:00Z",
 "steps": [{"id": "open", "do": "goto", "path": "/book", "read": {"where": "url"}},
           {"id": "name", "do": "fill", "target": "label:Name", "value": "Zoë"},
           {"id": "workshop", "do": "select", "target": "role:combobox:Workshop", "value": "weaving"},
           {"id": "off", "do": "unguard", "target": "role:form:Booking form"},
           {"id": "book", "do": "click", "target": "role:button:Book", "replay": 1, "clock": "2026-03-02T09:05:00Z",
            "read": {"where": "url", "booking": "tree:role:region:Booking", "problems": "text:role:alert"}},
           {"id": "back", "do": "back", "read": {"where": "url"}},
           {"id": "api", "do": "request", "path": "/api/bookings", "select": {"ids": "$.bookings[*].id"}}],
 "volatile": [{"pattern": "[0-9a-f]{24}", "as": "<token>"}],
 "queries": [{"name": "bookings", "sql": "SELECT id, name, seats FROM bookings ORDER BY id"}]}
"""),
    "request-plan": Doc("`<case inputs>/requests.json` of a service target's case", "the exam's generator", "json",
                        """\
{"schema_version": 1, "clock": "2026-03-01T09:00:00Z",
 "steps": [{"id": "login", "method": "POST", "path": "/login", "json": {"user": "ana"},
            "capture": {"token": "$.token"}},
           {"id": "pay", "method": "POST", "path": "/payments", "repeat": 2,
            "headers": {"Authorization": "Bearer {{token}}", "Idempotency-Key": "k-1"},
            "json": {"amount": "10.00"}, "select": {"balance": "$.balance", "where": "header:Location"}}],
 "queries": [{"name": "payments", "sql": "SELECT id, amount FROM payments ORDER BY id"}]}
"""),
    "provenance": Doc("`runs/<id>/provenance.jsonl`, one line per case", "the gateway", "json", """\
{"schema_version": 1, "case": "c-5d41402abc4b", "argv": ["python3", "grades.py", "scores.csv", "summary.csv"],
 "exit_code": 0, "timed_out": false, "seconds": 0.02, "behavior": "accepted", "extract_error": null,
 "inputs": {"scores.csv": "a1"}, "outputs": {"summary.csv": "b2"},
 "stdout_sha256": "c3", "stderr_sha256": "c3", "env_sha256": "d4"}
"""),
    "run-record": Doc("`runs/<id>/run.json`", "the gateway", "json", """\
{"schema_version": 1, "build_visible_digest": "d1", "target_sha256": "e2", "cases": 16, "twice": true,
 "actual_sha256": "f3", "behaviors_sha256": "a4"}
"""),
    "coverage": Doc("`runs/<id>/coverage.json`", "the gateway (a run's traced second pass)", "json", """\
{"schema_version": 1, "cases": {"c-5d41402abc4b": {"grades.py": [17, 18, 19, 33, 44]}, "c-7e2f0b1a9c3d": null}}
"""),
    "mutation-menu": Doc("`exam/mutations.yaml`", "the examiner", "yaml", """\
schema_version: 2
classes:
  - id: rounding-mode
    clause: "average (total / count, rounded HALF_UP to 2 places)"
    inputs: [{scores.csv: "student,group,score\\ns1,A,80.00\\ns2,A,80.01\\n"}]
  - id: missing-total
    clause: "a last row for the group *ALL*"
"""),
    "judge-mutants": Doc("`exam/judge/config/mutants.yaml`", "the judge", "yaml", """\
schema_version: 1
mutants:
  - id: clamp-high-scores
    bug_class: bounds
    file: grades.py
    find: "score = Decimal(row[col[\\"score\\"]].strip())"
    replace: "score = min(Decimal(row[col[\\"score\\"]].strip()), Decimal(100))"
"""),
    "mutation-summary": Doc("`mutation/summary.json`", "`tri-agent mutate`, the judge", "json", """\
{"schema_version": 2, "clean_run": "pass", "target_digest": "3f2a9c0d1e4b5a67",
 "mutants": [{"id": "row-dropped:grades.py:96049a5919", "bug_class": "missing-total", "operator": "row-dropped",
              "status": "Killed", "reason": "case c-5d41402abc4b: missing_row on average",
              "killed_by": ["c-5d41402abc4b"], "cases_run": 1, "seconds": 0.2},
             {"id": "validation-skipped:grades.py:1eeda14db0", "bug_class": "validation-skipped",
              "operator": "validation-skipped", "status": "Ignored",
              "reason": "equivalent: no difference over 260 hunted inputs", "cases_run": 13, "confirmed": true,
              "hunt": {"seeds": ["hunt-ac72368a586a"], "inputs": 260, "class_inputs": 0, "difference": null}}],
 "counts": {"Ignored": 1, "Killed": 1}, "killed": 1, "judged": 1, "kill_rate": 1.0, "threshold": 1.0,
 "minimum": 1, "unexpressed": [], "verdict": "pass", "reasons": []}
"""),
    "verdict-line": Doc("`<mutate --out>/verdicts.jsonl`, one per line", "`tri-agent mutate`, as each verdict is "
                        "reached", "json", """\
{"schema_version": 1, "tree": "3f2a9c0d1e4b5a67", "exam": "9b1a5e0d4c3f2a1b",
 "outcome": {"id": "row-dropped:grades.py:96049a5919", "bug_class": "missing-total", "operator": "row-dropped",
             "status": "Killed", "reason": "case c-5d41402abc4b: missing_row on average",
             "killed_by": ["c-5d41402abc4b"], "cases_run": 1, "seconds": 0.2}}
"""),
    "preset": Doc("`presets/<name>.yaml` (shipped)", "tri-agent", "yaml", """\
schema_version: 1
name: warehouse
title: Data warehouse and reports
driven_by: a command over input files, writing report tables
target_kind: command
oracle_shape: answer rows, one per (case, report key)
tolerance_classes: [amount, ratio, count]
baseline_restore: file-copies
relative_cost: 1.0
chaos_menu:
  - {id: bom, description: "a UTF-8 byte-order mark before the header"}
mutation_bug_classes:
  - {id: rounding-mode, description: "HALF_EVEN or HALF_DOWN where HALF_UP is specified"}
  - {id: strip-dropped, description: "keys or values no longer trimmed"}
  - {id: off-by-one, description: "a count, index or date bound off by one"}
"""),
    "role-contract": Doc("the YAML front matter of `roles/<role>.md` (shipped)", "tri-agent", "yaml", """\
schema_version: 1
role: tester
readable: ["builds/*/visible/**", "exam/TESTPLAN.md", "exam/judge/**"]
hidden: ["builds/*/sealed/**", "target/**", "exam/oracle/**"]
writable: ["exam/judge/**"]
memory: fresh
tools: [list, read, search, write, run_case, submit]
"""),
    "episode-result": Doc("inside each round's record (`episodes.json`)", "every driver", "json", """\
{"schema_version": 1, "role": "tester", "status": "ok", "summary": "ran 16 cases", "reason": null,
 "simulation": false,
 "attempts": [{"driver": "anthropic", "driver_version": "0.1.0", "model": "claude-sonnet-4-5", "status": "ok",
               "usage": {"input_tokens": 5200, "output_tokens": 800, "cache_read_tokens": 0,
                         "cache_write_tokens": 0},
               "cost_usd": 0.0276, "cost_basis": "list price per token", "seconds": 41.2, "error": null}],
 "tool_calls": 18, "breach_attempts": [], "isolation": ["physical-omission", "write-audit", "tool-confinement"]}
"""),
    "scripted-episodes": Doc("the file `acceptance.yaml` names as `script`", "the user (recordings)", "yaml", """\
schema_version: 1
episodes:
  - role: builder
    round: 2
    calls:
      - {tool: list, args: {path: exam/tickets/builder}}
      - {tool: write, args: {path: target/grades.py}, content_file: fixed-grades.py}
    submit: {summary: "fixed: HALF_UP rounding, trimmed group keys"}
  - role: tester
    round: 1
    calls:
      - {tool: run_case, each_case: true}
    submit: {summary: "ran every case"}
"""),
    "executor-request-v1": Doc("the command driver's stdin", "the engine", "json", """\
{"protocol": "tri-agent-executor/1", "role": "builder", "charter": "You are the builder...",
 "task": "Round 2. Play your role as your charter says, then submit.", "workspace": "/tmp/tri-builder-x/ws",
 "tools": ["list", "read", "search", "write", "submit"],
 "limits": {"turns": 40, "seconds": 900, "budget_usd": 2.0, "output_bytes": 1048576}}
"""),
    "executor-response-v1": Doc("the command driver's stdout", "the CLI agent (or its profile)", "json", """\
{"protocol": "tri-agent-executor/1", "status": "ok", "summary": "fixed the rounding mode", "reason": null,
 "model": "claude-sonnet-4-5", "usage": {"input_tokens": 10000, "output_tokens": 1200},
 "cost_usd": 0.048, "denials": []}
"""),
    "workspace-record": Doc("`tri-agent workspace` output folder (`workspace.json`)", "`tri-agent workspace`",
                            "json", """\
{"schema_version": 1, "role": "tester", "files": 38, "omitted": 12, "stripped": ["CLAUDE.md"],
 "symlinks_skipped": []}
"""),
    "ruling": Doc("`ruling-weakened.json` in a round's record", "the judge's model", "json", """\
{"schema_version": 1, "question": "Did these test changes weaken what the tests check?", "samples": 3,
 "readable_samples": 3, "floor": 0.67, "verdict": "flagged",
 "flags": [{"category": "weakened", "location": "target/test_grades.py:12",
            "reason": "the rounding assertion was removed"}],
 "dropped": []}
"""),
    "trail-entry": Doc("`TRAIL.jsonl` in the evidence store, one line per record", "the engine", "json", """\
{"schema_version": 1, "seq": 3, "name": "round-0001", "kind": "round",
 "digest": "60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752",
 "previous_line_sha256": "fd61a03af4f77d870fc21e05e7e80678095c92d808cfb3b5c279ee04c74aca13"}
"""),
    "acceptance": Doc("`acceptance.yaml`", "`tri-agent init` (the survey)", "yaml", """\
schema_version: 1
scope: the grades CLI (per-group score summary)
spec: [spec/README.md]
depth: standard
gate_n: 3
target_kind: warehouse
drivers: {examiner: anthropic, builder: in-session, tester: anthropic, judge: anthropic}
models:
  examiner: {model: claude-sonnet-4-5}
  tester: {model: claude-haiku-4-5}
  judge: {model: claude-sonnet-4-5}
budget_usd: 20
consent: {given_at: "2026-11-30T10:00:00Z", cost_note: "about $1.20 per round at depth standard"}
"""),
    "round-summary": Doc("`summary.json` in a round's record", "the engine", "json", """\
{"schema_version": 1, "round": 2, "seed": "2", "final": false, "green": true, "reasons": [],
 "passed": 142, "total": 142, "channels": {"answers": "120/120", "behaviors": "12/12", "relations": "10/10"},
 "drift": [], "kill_rate": "5/5", "tickets": {}, "smells": 0, "streak": 1,
 "deepening": {"new_cases": 16, "exam_files_changed": [], "new_mutants": ["m-tab-padded"]},
 "simulation": false, "cost_usd": {"tester": 0.03}, "isolation": {"tester": ["physical-omission"]}}
"""),
    "page-record": Doc("`pages/CASE.json` in a round's record, beside `pages/CASE.png` (a failing case's first "
                       "PDF page)", "the engine", "json", """\
{"schema_version": 1, "case": "c-00000003", "golden": ["INVOICE A-7", "1. A description that wraps over", "two lines"],
 "seen": ["INVOICE A-7", "1. A description that wraps over"]}
"""),
    "acceptance-report": Doc("`ACCEPTANCE.json` in the project, rewritten after every round and at the end",
                             "the engine (from the trail alone)", "json", """\
{"verdict": "PASSED, NOT CERTIFIED after 5 rounds: a simulation: the builder replayed recorded actions (scripted)",
 "decision": "accepted", "certified": false,
 "reasons": ["a simulation: the builder replayed recorded actions (scripted)"], "escalation": null,
 "drivers": {"builder": "scripted", "examiner": "anthropic", "judge": "anthropic", "tester": "anthropic"},
 "units": {"answers": "rows: expected rows whose every field passed / expected rows plus unexpected rows"},
 "schema_version": 1, "trail_digest": "7acb1c998eddef22c59db7a8f6cb4724b4db5ea4e32fed35e08a18e1d9772ce3",
 "records": [{"schema_version": 1, "seq": 0, "name": "preflight", "kind": "preflight", "digest": "1b80d796",
              "previous_line_sha256": null}],
 "rounds": []}
"""),
    "gate-result": Doc("`gate.json` in a round's record", "the engine", "json", """\
{"schema_version": 1, "round": 1, "green": false, "reasons": ["140/142 pass"]}
"""),
    "progress": Doc("`progress.json` in a round's record", "the engine", "json", """\
{"schema_version": 1, "gate_n": 3, "green_streak": 1, "rounds": 2, "final_round": false,
 "attempts": {"builder:total:out_of_tolerance": 1}, "ever_red": ["builder:total:out_of_tolerance"],
 "red_cases": {"1": ["c-5d41402abc4b"]}, "mutants_used": ["m-half-even"], "mutants_retired": [],
 "last_green": true, "decision": "next_round"}
"""),
    "smell": Doc("`smells.json` in a round's record", "the judge (mechanical)", "json", """\
{"schema_version": 1, "name": "skip-added", "severity": "blocker", "path": "target/test_grades.py", "line": 9,
 "detail": "pytest.mark.skip added to test_rounding"}
"""),
    "code-snapshot": Doc("`code.json` in the preflight and round records", "the engine", "json", """\
{"schema_version": 1, "files": {"target/grades.py": {"sha256": "a1", "text": "import csv\\n"}}}
"""),
    "rerun-record": Doc("`rerun.json` in a round's record", "the judge (mechanical)", "json", """\
{"schema_version": 1, "sample": 5, "mismatched": []}
"""),
    "round-facts": Doc("`facts.json` in a round's record", "the engine", "json", """\
{"schema_version": 1, "round": 2, "stable": true, "passed": 142, "total": 142, "blockers": [], "mutants_judged": 5,
 "mutants_detected": 5, "min_mutants": 3, "seals_ok": true, "failing_tickets": [], "red_cases": {},
 "mutants_used_ids": ["m-half-even"], "mutants_equivalent": []}
"""),
    "verdict": Doc("`verdict.json` in the run's last record", "the engine", "json", """\
{"schema_version": 1, "decision": "accepted", "rounds": 5, "gate_n": 3, "certified": false,
 "reasons": ["the tester (command) lacked bubblewrap in round(s) 2"],
 "drivers": {"builder": "in-session", "examiner": "anthropic", "judge": "anthropic", "tester": "anthropic"}}
"""),
    "configuration": Doc("`configuration.json` in the preflight record", "the engine", "json", """\
{"schema_version": 1, "files": {"charter:tester": "a1", "project:acceptance.yaml": "b2",
 "project:spec/README.md": "c3", "project:target.yaml": "d4"}}
"""),
    "recall-line": Doc("`$XDG_STATE_HOME/tri-agent/runs/<run>/recall/prints/<target key>.jsonl`, one per line",
                       "the mutation gate's hunts, read back by later rounds' gates", "json", """\
{"schema_version": 1, "target": "0c6577dc5ef5d1cb3b26322e92430ec199fb5a80c5c094a0f69cca4ae584b3ba",
 "input": "9b1a5e0d4c3f2a1b0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f",
 "outputs": [["out.csv", "1f2e3d4c5b6a79880f1e2d3c4b5a69780f1e2d3c4b5a69780f1e2d3c4b5a6978"]],
 "behavior": "accepted", "exit_code": 0,
 "stdout_sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "timed_out": false}
"""),
    "abandonment": Doc("`<store>/records/abandoned/abandoned.json`", "`tri-agent accept --fresh REASON`", "json",
                       """\
{"schema_version": 1, "reason": "the spec changed: refunds are now partial", "records": 7}
"""),
    "earlier-run": Doc("`<store>/records/earlier-run/earlier.json`", "`tri-agent accept --fresh REASON`, as the new "
                       "run's first record", "json", """\
{"schema_version": 1, "store": "/home/me/.local/state/tri-agent/runs/shop-3f2a9c81d0e4",
 "head": "5f05f5cd0e4a0058e0c00b68dc0198633d0219dff15dae1d60cd3d9beff6bad6",
 "reason": "the spec changed: refunds are now partial", "records": 7}
"""),
    "pin": Doc("`$XDG_STATE_HOME/tri-agent/pins/<project>-<id>.json`", "the engine, before each trail line",
               "json", """\
{"schema_version": 1, "store": "/home/me/.local/state/tri-agent/runs/shop-3f2a9c81d0e4", "seq": 12,
 "line_sha256": "5f05f5cd0e4a0058e0c00b68dc0198633d0219dff15dae1d60cd3d9beff6bad6",
 "previous_line_sha256": "40df3038e7c2854ba8878a902200d99d97e781ac3a82f7e66e07e38aeeb2bd21"}
"""),
}


def formats_markdown() -> str:
    """The whole reference, deterministic: the same models give the same bytes."""
    missing = sorted(set(FORMATS) - set(DOCS)) + sorted(set(DOCS) - set(FORMATS))
    if missing:
        raise ValueError(f"formats without documentation (or documentation without a format): {missing}")
    anchors = {model: name for name, model in FORMATS.items()}
    parts = [HEADER, _index(), *(_section(name, model, anchors) for name, model in FORMATS.items())]
    return "\n".join(parts).rstrip("\n") + "\n"


def _index() -> str:
    rows = ["| format | where | written by |", "|---|---|---|"]
    rows += [f"| [{name}](#{name}) | {doc.where} | {doc.writer} |" for name, doc in DOCS.items()]
    return "\n".join(rows) + "\n"


def _section(name: str, model: type[BaseModel], anchors: dict[type[BaseModel], str]) -> str:
    doc = DOCS[name]
    _validate(name, model, doc)
    out = [f"## {name}", "", f"{doc.where}, written by {doc.writer}.", "", _docstring(model), "",
           _fields(model, anchors)]
    for nested in _nested(model, set(anchors)):
        anchors.setdefault(nested, nested.__name__.lower())
        out += [f"### {nested.__name__}", "", _docstring(nested), "", _fields(nested, anchors)]
    out += ["Example:", "", f"```{doc.syntax}", doc.example.rstrip("\n"), "```", ""]
    return "\n".join(out)


def _validate(name: str, model: type[BaseModel], doc: Doc) -> None:
    data = _yamldoc.data(doc.example, f"the {name} example") if doc.syntax == "yaml" else json.loads(doc.example)
    try:
        model.model_validate(data)
    except ValueError as exc:
        raise ValueError(f"the example of format {name!r} is not valid: {exc}") from None


def _docstring(model: type[BaseModel]) -> str:
    text = model.__doc__ or ""
    lines = [line.strip() for line in text.strip().splitlines()]
    return " ".join(line for line in lines if line) or "(no description)"


def _fields(model: type[BaseModel], anchors: dict[type[BaseModel], str]) -> str:
    rows = ["| field | type | default | meaning |", "|---|---|---|---|"]
    for field, info in model.model_fields.items():
        shown = info.alias or field
        rows.append(f"| `{shown}` | {_type(info.annotation, anchors)} | {_default(info)} | "
                    f"{_cell(info.description or '')} |")
    return "\n".join(rows) + "\n"


def _nested(model: type[BaseModel], documented: set[type[BaseModel]]) -> list[type[BaseModel]]:
    """Models reachable from ``model`` that no earlier section documented, in field order."""
    found: list[type[BaseModel]] = []
    stack = [model]
    while stack:
        current = stack.pop(0)
        for info in current.model_fields.values():
            for sub in _models_in(info.annotation):
                if sub not in documented and sub not in found and sub is not model:
                    found.append(sub)
                    stack.append(sub)
    documented.update(found)
    return found


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]


def _type(annotation: Any, anchors: dict[type[BaseModel], str]) -> str:
    return _cell(_name(annotation, anchors))


def _name(t: Any, anchors: dict[type[BaseModel], str]) -> str:
    origin, args = typing.get_origin(t), typing.get_args(t)
    if t is type(None):
        return "null"
    if t is Any:
        return "any"
    if isinstance(t, type) and issubclass(t, BaseModel):
        return f"[{t.__name__}](#{anchors.get(t, t.__name__.lower())})"
    if origin is typing.Annotated:
        return _name(args[0], anchors)
    if origin is typing.Literal:
        return " | ".join(json.dumps(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_name(a, anchors) for a in args)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return f"list[{_name(args[0], anchors)}]"
    if origin is not None:
        inner = ", ".join(_name(a, anchors) for a in args)
        return f"{getattr(origin, '__name__', str(origin))}[{inner}]"
    return getattr(t, "__name__", str(t))


def _default(info: FieldInfo) -> str:
    if info.is_required():
        return "required"
    if info.default_factory is not None:
        value = info.default_factory()  # type: ignore[call-arg]
    elif info.default is PydanticUndefined:
        return "required"
    else:
        value = info.default
    return f"`{json.dumps(to_jsonable_python(value), sort_keys=True)}`"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")
