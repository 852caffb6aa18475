"""The gate's HTML page says what it is about (target, round, seed, exam digest) before its verdict's details."""

from __future__ import annotations

from tri_agent.mutation._report import render_html
from tri_agent.mutation._verdict import MutantOutcome, MutationSummary

REPORT = {"files": {"grades.py": {"mutants": [{"id": "m-1", "mutatorName": "rounding/half-even", "status": "Killed",
                                                "statusReason": "case c-1 <differs>",
                                                "location": {"start": {"line": 7, "column": 1}}}]}}}
SUMMARY = MutationSummary(mutants=[MutantOutcome(id="m-1", bug_class="rounding", operator="half-even", status="Killed",
                                                 reason="case c-1")], counts={"Killed": 1}, killed=1, judged=1,
                          kill_rate=1.0, threshold=1.0, minimum=1, verdict="pass", reasons=[])


def test_the_page_names_its_target_round_seed_and_exam_before_the_mutants() -> None:
    about = {"target": "/p/target (tree digest 0ca7)", "round": "round 2", "seed": "a55c", "exam": "toy <v1>"}
    page = render_html(REPORT, SUMMARY, about)
    head = ('<h1>Mutation gate: PASS</h1>\n<table class="about"><tr><th>target</th><td>/p/target (tree digest 0ca7)'
            '</td></tr><tr><th>round</th><td>round 2</td></tr><tr><th>seed</th><td>a55c</td></tr><tr><th>exam</th>'
            '<td>toy &lt;v1&gt;</td></tr></table>\n<p>Kill rate <b>1/1 killed (100%); 0 ignored, 0 no coverage</b>')
    assert head in page
    assert page.index("round 2") < page.index("<td>m-1</td>")
    assert "<tr class='Killed'><td>m-1</td><td>rounding/half-even</td><td>grades.py:7</td><td>Killed</td><td>case " \
           "c-1 &lt;differs&gt;</td></tr>" in page
    assert '<table class="about"></table>' in render_html(REPORT, SUMMARY)  # a caller that says nothing
