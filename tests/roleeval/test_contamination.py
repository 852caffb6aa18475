"""The contamination audit finds a private string in any payload, however it is written, before anything starts;
the skill closure travels whole or not at all."""

from __future__ import annotations

import json
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


@pytest.mark.parametrize(("raw", "error", "message"), [
    ("[1, 2]", LeakDetected, "payload keys are not the permitted ones (extra [], missing ['case', 'files', "
                             "'schema_version', 'task']); a payload holds exactly ['case', 'files', "
                             "'schema_version', 'task']; fix {path}"),
    ('{"schema_version": 1, "case": "c", "task": "t", "files": ["a"]}', LeakDetected,
     "payload files must map names to texts, and its task be a text; fix {path}"),
    ('{"schema_version": 1, "case": "c", "task": "t", "files": {"a": 1}}', LeakDetected,
     "payload files must map names to texts, and its task be a text; fix {path}"),
    ('{"schema_version": 1, "case": "c", "task": 7, "files": {}}', LeakDetected,
     "payload files must map names to texts, and its task be a text; fix {path}"),
    ("{not json", MalformedInput, "{path}: not a JSON payload (JSONDecodeError); write the payload as UTF-8 JSON"),
    ("{\"t\u00e9\": 1}".encode("latin-1").decode("latin-1"), LeakDetected, "payload keys are not the permitted"),
])
def test_a_payload_file_of_another_shape_is_refused(tmp_path: Path, raw: str, error: type[Exception],
                                                   message: str) -> None:
    root = write_corpus(tmp_path)
    corpus = load_corpus(root)
    path = root / "visible" / f"{PLANTED}.json"
    path.write_text(raw, encoding="utf-8")
    with pytest.raises(error) as raised:
        audit(corpus)
    assert str(raised.value).startswith(message.format(path=path))


def test_the_closure_names_what_is_wrong_exactly() -> None:
    with pytest.raises(MalformedInput) as twice:
        closure("judge", ["docs/protocol.md", "docs/protocol.md"])
    assert str(twice.value) == ("corpus.yaml: skill dependency 'docs/protocol.md' is listed twice; list each "
                                "document once")
    with pytest.raises(MalformedInput) as root:
        closure("judge", ["SKILL.md"])
    assert str(root.value) == ("corpus.yaml: skill dependency 'SKILL.md' lists the closure's own root; the charter "
                               "and SKILL.md are always included")
    with pytest.raises(MalformedInput) as missing:
        closure("judge", ["docs/no-such-page.md"])
    assert str(missing.value).startswith("corpus.yaml: skill dependency 'docs/no-such-page.md' is missing (")
    assert str(missing.value).endswith("docs/no-such-page.md); ship the document or drop it from "
                                       "skill_dependencies; nothing was started")
    found = closure("judge", ["docs/protocol.md"])
    assert found.members.count("docs/protocol.md") == 1 and found.members[2] == "docs/protocol.md"
    assert dict(found.documents)["SKILL.md"] == Path("SKILL.md").read_text(encoding="utf-8")


def test_the_leak_is_named_with_its_case_its_string_and_what_to_do(tmp_path: Path) -> None:
    corpus = load_corpus(write_corpus(tmp_path, **_leaky("# assertion removed\n")))
    with pytest.raises(LeakDetected) as raised:
        audit(corpus)
    path = tmp_path / "visible" / f"{INCOMPLETE}.json"
    assert str(raised.value) == (f"case {INCOMPLETE}: the payload holds the private string 'assertion removed'; "
                                 f"rewrite {path} (or the expectation) so the role cannot read the answer; no attempt "
                                 "was started")


@pytest.mark.parametrize(("text", "leaks"), [
    ("# the assertion\n\n# was removed\nx = 1\n", True),   # within three lines
    ("x = 1\n# the assertion\n\n# was removed\n", True),   # the last three lines
    ("# the assertion\n\n\n# was removed\n", False),        # four lines apart
])
def test_a_window_is_three_lines(tmp_path: Path, text: str, leaks: bool) -> None:
    corpus = load_corpus(write_corpus(tmp_path, **_leaky(text)))
    if leaks:
        with pytest.raises(LeakDetected):
            audit(corpus)
    else:
        audit(corpus)


def test_the_task_is_searched_and_a_word_every_task_says_tells_nothing(tmp_path: Path) -> None:
    leak = _leaky("x = 1\n")
    leak[f"payload_{INCOMPLETE}"]["task"] = "Report weaker tests: an assertion removed?"  # type: ignore[index]
    with pytest.raises(LeakDetected, match="private string"):
        audit(load_corpus(write_corpus(tmp_path / "a", **leak)))
    root = write_corpus(tmp_path / "b")
    for path in (root / "visible").iterdir():
        payload = json.loads(path.read_text())
        path.write_text(json.dumps({**payload, "task": "Find the bug, if there is one."}))
    audit(load_corpus(root))
