"""The corpus contract: three locations validated apart, opaque references, names that tell nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.roleeval.corpus_files import CLEAN, PLANTED, ROOT_CAUSE, write_corpus
from tri_agent._errors import MalformedInput
from tri_agent.roleeval._corpus import case_ref, load_corpus, telling_word


def test_a_corpus_loads_its_three_parts_apart(tmp_path: Path) -> None:
    corpus = load_corpus(write_corpus(tmp_path))
    assert corpus.manifest.cases == [PLANTED, CLEAN, corpus.manifest.cases[2]]
    assert corpus.expectations[PLANTED].root_causes[0].id == "rc-1"
    assert corpus.provenance[CLEAN].program == "totals"
    assert "verdict" not in corpus.payloads[PLANTED].model_dump()  # the payload has no field for the answer


def test_case_references_are_opaque_hashes() -> None:
    assert case_ref("x") == case_ref("x") != case_ref("y")
    assert len(case_ref("x")) == 14 and case_ref("x").startswith("c-")


@pytest.mark.parametrize(("change", "message"), [
    pytest.param({"manifest": {"schema_version": 1, "name": "t", "version": "1", "role": "judge",
                               "cases": ["c-planted-bug01"]}}, "is not opaque", id="a telling reference"),
    pytest.param({"manifest": {"schema_version": 1, "name": "t", "version": "1", "role": "judge",
                               "cases": [PLANTED, PLANTED]}}, "listed twice", id="a case twice"),
    pytest.param({"manifest": {"schema_version": 1, "name": "t", "version": "1", "role": "judge",
                               "cases": [case_ref("nowhere")]}}, "has no visible part", id="a part missing"),
    pytest.param({f"payload_{PLANTED}": {"schema_version": 1, "case": CLEAN, "task": "t", "files": {}}},
                 "names case", id="a part filed under another case"),
    pytest.param({f"payload_{PLANTED}": {"schema_version": 1, "case": PLANTED, "task": "t",
                                         "files": {"tests/test_buggy.py": ""}}}, "says 'buggy'",
                 id="a file name that tells a disposition"),
    pytest.param({f"payload_{PLANTED}": {"schema_version": 1, "case": PLANTED, "task": "t",
                                         "files": {"src/field_dropped.py": ""}}}, "says 'field-dropped'",
                 id="a file name that tells a bug class"),
    pytest.param({f"payload_{PLANTED}": {"schema_version": 1, "case": PLANTED, "task": "t",
                                         "files": {"../outside.py": ""}}}, "leaves the case", id="a path out"),
    pytest.param({f"private_{CLEAN}": {"schema_version": 1, "case": CLEAN, "verdict": "findings"}},
                 "verdict findings with 0 root cause", id="findings without root causes"),
    pytest.param({f"private_{PLANTED}": {"schema_version": 1, "case": PLANTED, "verdict": "findings",
                                         "root_causes": [ROOT_CAUSE, ROOT_CAUSE]}}, "id is used twice",
                 id="two root causes with one id"),
    pytest.param({f"private_{PLANTED}": {"schema_version": 1, "case": PLANTED, "verdict": "findings",
                                         "root_causes": [{**ROOT_CAUSE, "surface": {"path": "nowhere.py"}}]}},
                 "no file of the payload", id="a surface outside the payload"),
    pytest.param({f"private_{PLANTED}": {"schema_version": 1, "case": PLANTED, "verdict": "findings",
                                         "root_causes": [{**ROOT_CAUSE, "surface": {
                                             "path": "after/tests/test_total.py", "lines": [9, 2]}}]}},
                 "end before they start", id="lines in the wrong order"),
    pytest.param({f"private_{PLANTED}": {"schema_version": 1, "case": PLANTED, "verdict": "findings",
                                         "root_causes": [{**ROOT_CAUSE, "formulations": ["!!"]}]}},
                 "holds no word", id="a formulation of no word"),
    pytest.param({f"payload_{PLANTED}": {"schema_version": 1, "case": PLANTED, "task": "t",
                                         "files": {"..\\..\\etc\\passwd": ""}}}, "leaves the case",
                 id="a Windows path out"),
    pytest.param({f"payload_{PLANTED}": {"schema_version": 1, "case": PLANTED, "task": "t", "files": {},
                                         "verdict": "findings"}}, "verdict", id="a payload key for the answer"),
])
def test_a_corpus_that_breaks_the_contract_is_refused(tmp_path: Path, change: dict[str, object],
                                                      message: str) -> None:
    with pytest.raises(MalformedInput, match=message) as raised:
        load_corpus(write_corpus(tmp_path, **change))
    assert raised.value.exit_code == 3


@pytest.mark.parametrize(("name", "told"), [
    ("tests/test_total.py", None), ("src/Severity_High.py", "severity"), ("a/CLEAN.txt", "clean"),
    ("lib/page_off_by_one.py", "off-by-one"), ("lib/off_by.py", None), ("docs/encoding.md", "encoding"),
    ("tests/testBuggyTotal.py", "buggy"), ("src/offByOne.py", "off-by-one"), ("ＢＵＧ.py", "bug"),
    ("src/flawed_sum.py", "flawed"), ("v2fixed.py", "fixed"), ("lib/errors.py", None), ("lib/fixtures.py", None),
])
def test_telling_words_are_read_as_words(name: str, told: str | None) -> None:
    assert telling_word(name) == told
