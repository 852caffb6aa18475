"""Every situation of the grading table, on one case with two root causes, one clean case and one incomplete one."""

from __future__ import annotations

import pytest

from tri_agent.roleeval._corpus import Expectation, RootCause, Surface
from tri_agent.roleeval._grading import GRADES, Finding, Reply, Resolution, finding_key, grade

TWO = Expectation(schema_version=1, case="c-000000000001", verdict="findings", accepted=["test name is vague"],
                  root_causes=[
                      RootCause(id="rc-1", requirement="r", trigger="t", consequence="c",
                                surface=Surface(path="tests/test_total.py", lines=(10, 12)),
                                formulations=["assertion removed", "no longer checks the sum"]),
                      RootCause(id="rc-2", requirement="r", trigger="t", consequence="c",
                                surface=Surface(path="tests/test_total.py", lines=(30, 30)),
                                formulations=["raises widened to Exception"]),
                  ])
CLEAN = Expectation(schema_version=1, case="c-000000000002", verdict="clean")
INCOMPLETE = Expectation(schema_version=1, case="c-000000000003", verdict="blocked")


def _one(location: str, text: str, expectation: Expectation = TWO) -> tuple[str, str | None]:
    finding = Finding(location=location, text=text)
    [graded] = grade(expectation.case, expectation, Reply(findings=[finding])).findings
    assert graded.finding == finding and graded.key == finding_key(expectation.case, finding)
    assert len(graded.key) == 16
    return graded.grade, graded.root_cause


@pytest.mark.parametrize(("location", "text", "expected"), [
    pytest.param("tests/test_total.py:11", "The assertion removed here hides a wrong sum", ("match", "rc-1"),
                 id="match"),
    pytest.param("tests/test_total.py:13", "It removes the assertion", ("paraphrase", "rc-1"),
                 id="paraphrase: another order and inflection, two lines off"),
    pytest.param("tests/test_total.py:11", "the assertion is weaker now", ("partial", "rc-1"),
                 id="partial: half the words at the place"),
    pytest.param("tests/test_total.py", "an assertion removed", ("partial", "rc-1"), id="partial: no line"),
    pytest.param("tests/test_total.py:1-400", "an assertion removed", ("partial", "rc-1"), id="partial: a wide range"),
    pytest.param("tests/other.py:3", "an assertion removed", ("unexpected", None), id="the words in another file"),
    pytest.param("tests/test_total.py:11", "the assertion was not removed", ("partial", "rc-1"),
                 id="a negated formulation names nothing"),
    pytest.param("./tests/test_total.py:11:5", "assertion removed", ("match", "rc-1"), id="./ and a column"),
    pytest.param("tests/test_total.py:11", "Removal of the assertion", ("paraphrase", "rc-1"),
                 id="another word form"),
    pytest.param("src/total.py:3", "SQL injection in the query builder here; also the test name is vague",
                 ("unexpected", None), id="an accepted phrase tacked on a false alarm"),
    pytest.param("tests/test_total.py:11", "this line looks suspicious", ("ambiguous", None),
                 id="ambiguous: at the place in other words"),
    pytest.param("tests/test_total.py:10-30", "assertion removed and raises widened to Exception",
                 ("partial", None), id="two root causes over a wide range"),
    pytest.param("tests/test_total.py:1", "the test name is vague", ("accepted", None), id="accepted non-finding"),
    pytest.param("src/total.py:4", "the loop is slow", ("unexpected", None), id="unexpected"),
    pytest.param("tests/test_total.py:20", "assertion removed", ("partial", "rc-1"),
                 id="the words, too far from the lines"),
    # the place's bounds: two lines either side, a range no wider than the lines and four more
    pytest.param("tests/test_total.py:14", "assertion removed", ("match", "rc-1"), id="two lines after"),
    pytest.param("tests/test_total.py:15", "assertion removed", ("partial", "rc-1"), id="three lines after"),
    pytest.param("tests/test_total.py:8", "assertion removed", ("match", "rc-1"), id="two lines before"),
    pytest.param("tests/test_total.py:7", "assertion removed", ("partial", "rc-1"), id="three lines before"),
    pytest.param("tests/test_total.py:8-14", "assertion removed", ("match", "rc-1"), id="as wide as allowed"),
    pytest.param("tests/test_total.py:8-15", "assertion removed", ("partial", "rc-1"), id="one line wider"),
    pytest.param("tests/test_total.py:13-16", "assertion removed", ("match", "rc-1"), id="a range that ends past"),
    pytest.param("tests\\test_total.py:11", "assertion removed", ("match", "rc-1"), id="backslashes"),
    pytest.param("tests/test_total.py:11", "nothing is wrong here but the assertion removed", ("match", "rc-1"),
                 id="a negator four words away negates nothing"),
    pytest.param("tests/test_total.py:11", "the sum is odd", ("ambiguous", None),
                 id="two of five words is less than half"),
    pytest.param("tests/test_total.py:1", "sadly the test name is vague and quite unclear", ("accepted", None),
                 id="an accepted phrase with three more words"),
    pytest.param("tests/test_total.py:1", "sadly the test name is vague and quite unclear overall",
                 ("unexpected", None), id="four more words is no accepted phrase"),
])
def test_each_grade(location: str, text: str, expected: tuple[str, str | None]) -> None:
    assert _one(location, text) == expected


def test_two_root_causes_at_one_place_are_ambiguous_only_when_both_are_named() -> None:
    both = TWO.model_copy(update={"root_causes": [
        TWO.root_causes[0], TWO.root_causes[1].model_copy(update={"surface": Surface(path="tests/test_total.py",
                                                                                     lines=(10, 12))})]})
    assert _one("tests/test_total.py:11", "assertion removed", both) == ("match", "rc-1")
    assert _one("tests/test_total.py:11", "assertion removed; raises widened to Exception", both) == \
        ("ambiguous", None)


def test_a_surface_without_lines_is_the_whole_file() -> None:
    anywhere = TWO.model_copy(update={"root_causes": [TWO.root_causes[0].model_copy(update={
        "surface": Surface(path="tests/test_total.py")})]})
    assert _one("tests/test_total.py:400", "assertion removed", anywhere) == ("match", "rc-1")


def test_the_table_names_every_grade_the_tests_reach() -> None:
    assert set(GRADES) == {"match", "paraphrase", "duplicate", "partial", "ambiguous", "accepted", "unexpected"}


def test_a_duplicate_symptom_is_counted_once() -> None:
    reply = Reply(findings=[Finding(location="tests/test_total.py:10", text="assertion removed"),
                            Finding(location="tests/test_total.py:12", text="no longer checks the sum"),
                            Finding(location="tests/test_total.py:30", text="raises widened to Exception")])
    graded = grade(TWO.case, TWO, reply)
    assert [g.grade for g in graded.findings] == ["match", "duplicate", "match"]
    assert graded.named == {"rc-1", "rc-2"} and graded.right is True


def test_an_attempt_is_right_only_with_every_root_cause_and_nothing_false() -> None:
    found = Finding(location="tests/test_total.py:10", text="assertion removed")
    assert grade(TWO.case, TWO, Reply(findings=[found])).right is False  # rc-2 missed
    both = [found, Finding(location="tests/test_total.py:30", text="raises widened to Exception")]
    assert grade(TWO.case, TWO, Reply(findings=both)).right is True
    assert grade(TWO.case, TWO, Reply(findings=[*both, Finding(location="x.py:1", text="slow")])).right is False
    assert grade(TWO.case, TWO, Reply(findings=[*both, Finding(location="tests/test_total.py:1",
                                                               text="test name is vague")])).right is True
    waiting = grade(TWO.case, TWO, Reply(findings=[*both, Finding(location="tests/test_total.py:11", text="odd")]))
    assert waiting.pending == 1 and waiting.right is None


@pytest.mark.parametrize(("expectation", "reply", "given", "right"), [
    (CLEAN, Reply(), "clean", True),
    (CLEAN, Reply(findings=[Finding(location="a.py:1", text="slow")]), "findings", False),  # a false alarm
    (CLEAN, Reply(blocked=True), "blocked", False),
    (INCOMPLETE, Reply(blocked=True), "blocked", True),
    (INCOMPLETE, Reply(), "clean", False),  # a verdict on a packet that cannot carry one
    (TWO, Reply(blocked=True), "blocked", False),
    (TWO, Reply(), "clean", False),  # false clean
])
def test_verdicts(expectation: Expectation, reply: Reply, given: str, right: bool) -> None:
    graded = grade(expectation.case, expectation, reply)
    assert (graded.given, graded.right) == (given, right)


def test_dumping_findings_everywhere_is_never_right() -> None:
    words = "assertion removed no longer checks the sum raises widened to Exception"
    dump = [Finding(location=f"tests/test_total.py:{n}", text=words) for n in range(1, 200)]
    graded = grade(TWO.case, TWO, Reply(findings=dump))
    assert graded.right is False
    assert sum(g.grade == "partial" for g in graded.findings) > 100


def test_a_ruling_decides_an_ambiguous_finding_in_every_later_run() -> None:
    odd = Finding(location="tests/test_total.py:11", text="this line looks suspicious")
    key = finding_key(TWO.case, odd)
    assert key == finding_key(TWO.case, Finding(location=" tests/test_total.py:11", text="This line, looks suspicious"))
    ruled = {key: Resolution(case=TWO.case, key=key, grade="match", root_cause="rc-1", by="reviewer")}
    [graded] = grade(TWO.case, TWO, Reply(findings=[odd]), ruled).findings
    assert (graded.grade, graded.root_cause) == ("match", "rc-1")
    assert finding_key("c-000000000009", odd) != key  # a ruling is per case
