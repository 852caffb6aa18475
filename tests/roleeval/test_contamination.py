"""The contamination audit finds a private string in any payload, however it is written, before anything starts;
the skill closure travels whole or not at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.roleeval.corpus_files import INCOMPLETE, PLANTED, ROOT_CAUSE, write_corpus
from tri_agent._errors import LeakDetected, MalformedInput
from tri_agent.roleeval._audit import audit, closure
from tri_agent.roleeval._corpus import load_corpus


def test_an_uncontaminated_corpus_passes(tmp_path: Path) -> None:
    audit(load_corpus(write_corpus(tmp_path)))


def _leaky(text: str, formulation: str = "assertion removed") -> dict[str, object]:
    """The last case's payload holding ``text``, and the first case's root cause worded ``formulation``."""
    return {f"payload_{INCOMPLETE}": {"schema_version": 1, "case": INCOMPLETE, "task": "Report weaker tests.",
                                      "files": {"after/tests/test_grades.py": text}},
            f"private_{INCOMPLETE}": {"schema_version": 1, "case": INCOMPLETE, "verdict": "findings",
                                      "root_causes": [{**ROOT_CAUSE, "formulations": [formulation],
                                                       "surface": {"path": "after/tests/test_grades.py"}}]}}


@pytest.mark.parametrize(("text", "formulation"), [
    pytest.param("# assertion removed\n", "assertion removed", id="as written"),
    pytest.param("# the ASSERTION\n#   removed on purpose\n", "assertion removed", id="across a line break"),
    pytest.param("# the grade is “rounded” half-up\n", "grade is \"rounded\" half up", id="quotes and a hyphen"),
    pytest.param("# la note arrondie à l'entier\n", "arrondie à l’entier", id="non-ASCII, another apostrophe"),
    pytest.param("# café moulu\n", "cafe\u0301 moulu", id="NFD against NFC"),
    pytest.param("# removed the assertion\n", "assertion removed", id="another order"),
    pytest.param("# the assertions:\n# removal was needed\n", "assertion removed", id="other word forms, two lines"),
    pytest.param("# asser\u200btion re\u00admoved\n", "assertion removed", id="zero-width space, soft hyphen"),
    pytest.param("# ａｓｓｅｒｔｉｏｎ removed\n", "assertion removed", id="fullwidth letters"),
    pytest.param("<p>assertion&nbsp;removed</p>\n", "assertion removed", id="an HTML entity"),
    pytest.param("url = '/x?q=assertion%20removed'\n", "assertion removed", id="a URL escape"),
    pytest.param("assertionRemoved = True\n", "assertion removed", id="camelCase"),
])
def test_a_private_string_in_the_last_payload_is_found(tmp_path: Path, text: str, formulation: str) -> None:
    corpus = load_corpus(write_corpus(tmp_path, **_leaky(text, formulation)))
    with pytest.raises(LeakDetected, match=f"case {INCOMPLETE}") as raised:
        audit(corpus)
    assert raised.value.exit_code == 6


def test_a_private_string_in_a_file_name_is_found(tmp_path: Path) -> None:
    leak = _leaky("x = 1\n", "grades rounded down")
    leak[f"payload_{INCOMPLETE}"]["files"] = {"after/grades_rounded_down.py": "x = 1\n"}  # type: ignore[index]
    leak[f"private_{INCOMPLETE}"]["root_causes"][0]["surface"] = {"path": "after/grades_rounded_down.py"}  # type: ignore[index]
    with pytest.raises(LeakDetected):
        audit(load_corpus(write_corpus(tmp_path, **leak)))


def test_words_far_apart_are_no_leak(tmp_path: Path) -> None:
    text = "# the assertion\n\n\n\n# was removed\n"  # five lines apart
    audit(load_corpus(write_corpus(tmp_path, **_leaky(text))))


def test_a_task_that_tells_its_case_apart_is_refused(tmp_path: Path) -> None:
    leak = _leaky("x = 1\n")
    leak[f"payload_{INCOMPLETE}"]["task"] = "This packet is incomplete: say so."  # type: ignore[index]
    with pytest.raises(LeakDetected, match="its task says 'incomplete'"):
        audit(load_corpus(write_corpus(tmp_path, **leak)))


def test_a_lone_word_is_not_a_private_string(tmp_path: Path) -> None:
    audit(load_corpus(write_corpus(tmp_path, **_leaky("# total\n", "total"))))


def test_a_payload_key_beyond_the_permitted_ones_is_refused(tmp_path: Path) -> None:
    root = write_corpus(tmp_path)
    corpus = load_corpus(root)
    path = root / "visible" / f"{PLANTED}.json"
    path.write_text(path.read_text()[:-1] + ', "hint": 1}')  # past the loader: the audit reads the raw file
    with pytest.raises(LeakDetected, match="extra \\['hint'\\]"):
        audit(corpus)


def test_the_closure_holds_the_charter_skill_and_every_document_they_name() -> None:
    found = closure("judge", [])
    assert found.members[:2] == ["roles/judge.md", "SKILL.md"]
    assert {"docs/evidence.md", "docs/gate.md"} <= set(found.members)  # named by SKILL.md
    assert all(text for _, text in found.documents)
    assert closure("judge", []).digest == found.digest != closure("judge", ["docs/protocol.md"]).digest


@pytest.mark.parametrize(("declared", "message"), [
    (["docs/protocol.md", "docs/protocol.md"], "listed twice"),
    (["SKILL.md"], "own root"),
    (["roles/judge.md"], "own root"),
    (["docs/no-such-page.md"], "is missing"),
])
def test_a_closure_that_cannot_travel_whole_fails_closed(declared: list[str], message: str) -> None:
    with pytest.raises(MalformedInput, match=message):
        closure("judge", declared)
