"""The gate report for people and dashboards: Markdown for a pull request comment, JUnit XML for CI.

Both are views of ``GateReport`` (the JSON), never a second source: every refusal names its file, line and rule,
as the policy wrote it.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from .._errors import MEANING, ExitCode
from ._check import GateReport

RULES = (ExitCode.GATE_FORBIDDEN, ExitCode.GATE_SURFACE, ExitCode.GATE_MARKS, ExitCode.GATE_LEDGER,
         ExitCode.GATE_FIXTURES, ExitCode.GATE_ORACLE)


def _by_rule(report: GateReport) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {int(code): [] for code in RULES}
    for line in report.policy.findings:
        code, _, text = line.partition(": ")
        out.setdefault(int(code), []).append(text)
    return out


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(report: GateReport) -> str:
    """The report as Markdown."""
    lines = [f"# Patch gate: {report.outcome} (exit {report.exit_code})", "",
             f"Base `{report.base[:12]}`, head `{report.head[:12]}`, patch sha256 `{report.patch_sha256[:16]}`.", "",
             "## Policy", "", "| rule | finding |", "|---|---|"]
    found = _by_rule(report)
    for code in RULES:
        rows = found[int(code)] or ["held"]
        lines += [f"| {int(code)} {MEANING[code]} | {_cell(r)} |" for r in rows]
    lines.append("")
    v = report.verdict
    if v is None:
        return "\n".join([*lines, "## Verdict", "", "Not run: a patch that broke a rule is never run.", ""])
    lines += ["## Verdict", "", f"Sandbox: {', '.join(v.layers) or 'none'}. "
              f"Tests passed: {sum(t.outcome == 'passed' for t in v.head.tests)}/{len(v.head.tests)} with the patch, "
              f"{sum(t.outcome == 'passed' for t in v.base.tests)}/{len(v.base.tests)} at the base. "
              f"Corpus cases passed: {sum(c.passed for c in v.head.cases)}/{len(v.head.cases)}.", ""]
    for title, items in (("Failures", v.failures), ("Regressions", v.regressions), ("Improvements", v.improvements)):
        if items:
            lines += [f"### {title}", "", *(f"- `{_cell(i)}`" for i in items), ""]
    return "\n".join(lines)


def junit(report: GateReport) -> str:
    """The report as JUnit XML: a suite for the policy (one case per rule), the pinned run, and the corpus."""
    root = ET.Element("testsuites", name="tri-agent gate")
    policy = ET.SubElement(root, "testsuite", name="policy")
    for code, rows in _by_rule(report).items():
        case = ET.SubElement(policy, "testcase", classname="policy", name=f"{code} {MEANING[ExitCode(code)]}")
        if rows:
            ET.SubElement(case, "failure", message=rows[0]).text = "\n".join(rows)
    v = report.verdict
    if v is not None:
        suite = ET.SubElement(root, "testsuite", name="pinned run")
        for t in v.head.tests:
            case = ET.SubElement(suite, "testcase", classname="pinned run", name=t.node_id)
            if t.outcome != "passed":
                ET.SubElement(case, "failure", message=t.outcome)
        corpus = ET.SubElement(root, "testsuite", name="corpus")
        for c in v.head.cases:
            case = ET.SubElement(corpus, "testcase", classname=c.property, name=c.case)
            if not c.passed:
                ET.SubElement(case, "failure", message=c.error or "failed")
    for suite in root:
        cases = list(suite)
        suite.set("tests", str(len(cases)))
        suite.set("failures", str(sum(1 for c in cases if c.find("failure") is not None)))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
