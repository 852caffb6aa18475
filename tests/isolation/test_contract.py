"""Role contracts: globs, the shipped charters, and the iron rules refusing a bad charter."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tri_agent import MalformedInput, PolicyViolation
from tri_agent.isolation._contract import ROLES, Contract, glob_regex, load_charter, roles_dir, violations


@pytest.mark.parametrize("pattern,path,hit", [
    ("target/**", "target/a/b.py", True), ("target/**", "target", False), ("target/**", "targets/x", False),
    ("builds/*/sealed/**", "builds/r1/sealed/a.jsonl", True), ("builds/*/sealed/**", "builds/a/b/sealed/x", False),
    ("**/CLAUDE.md", "CLAUDE.md", True), ("**/CLAUDE.md", "a/b/CLAUDE.md", True), ("exam/*.md", "exam/x/y.md", False),
])
def test_globs(pattern: str, path: str, hit: bool) -> None:
    assert (glob_regex(pattern).match(path) is not None) is hit


@given(st.text(alphabet="ab/.*?[]()+", max_size=12), st.text(alphabet="ab/.", max_size=12))
def test_globs_never_crash_and_literals_match_themselves(pattern: str, path: str) -> None:
    glob_regex(pattern).match(path)
    literal = pattern.replace("*", "").replace("?", "")
    assert glob_regex(literal).match(literal)


def test_shipped_charters_hold_the_iron_rules() -> None:
    for role in ROLES:
        charter = load_charter(role)
        assert violations(charter.contract) == [] and charter.body.startswith("#")
    tester = load_charter("tester").contract
    assert tester.memory == "fresh" and not tester.can_read("target/app.py") and tester.can_write("exam/judge/r.md")
    assert not load_charter("judge").contract.can_write("target/app.py")


T_HIDDEN = 'hidden: ["builds/*/sealed/**", "target/**", "exam/oracle/**", "exam/judge/config/**"]'
B_HIDDEN = 'hidden: ["builds/**", "exam/oracle/**", "exam/generator/**", "evidence/**"]'


@pytest.mark.parametrize("role,changes,rule", [
    ("tester", [('readable: ["builds/*/visible/**"', 'readable: ["builds/**"'), (T_HIDDEN, 'hidden: ["target/**"]')],
     "tester-never-sees-answers"),
    ("tester", [(T_HIDDEN, 'hidden: ["builds/*/sealed/**"]'),
                ('readable: ["builds', 'readable: ["target/**", "builds')],
     "tester-never-sees-implementation"),
    ("tester", [("memory: fresh", "memory: kept")], "the-tester-has-no-memory"),
    ("judge", [('writable: ["exam/tickets/**"', 'writable: ["target/**", "exam/tickets/**"')],
     "only-the-builder-writes-the-target"),
    ("builder", [('readable: ["spec/**"', 'readable: ["builds/**", "spec/**"'), (B_HIDDEN, "hidden: []")],
     "builder-never-sees-answers"),
    ("examiner", [('readable: ["spec/**"', 'readable: ["target/**", "spec/**"')], "examiner-never-sees-impl"),
    ("judge", [('writable: ["exam/tickets/**"', 'writable: ["evidence/**", "exam/tickets/**"')],
     "nobody-writes-evidence"),
])
def test_a_charter_breaking_an_iron_rule_is_refused(tmp_path: Path, role: str, changes: list[tuple[str, str]],
                                                     rule: str) -> None:
    shutil.copytree(roles_dir(), tmp_path / "roles")
    path = tmp_path / "roles" / f"{role}.md"
    text = path.read_text()
    for old, new in changes:
        assert old in text
        text = text.replace(old, new)
    path.write_text(text)
    with pytest.raises(PolicyViolation, match=rule):
        load_charter(role, tmp_path / "roles")
    unsafe = load_charter(role, tmp_path / "roles", unsafe=True)
    assert any(v.startswith(rule) for v in violations(unsafe.contract))


def test_a_charter_without_front_matter_is_malformed(tmp_path: Path) -> None:
    (tmp_path / "tester.md").write_text("# Tester\n")
    with pytest.raises(MalformedInput, match="front matter"):
        load_charter("tester", tmp_path)


def test_hidden_beats_readable_and_protected_beats_writable() -> None:
    c = Contract(role="examiner", readable=["exam/**"], hidden=["exam/judge/**"], writable=["exam/**"],
                 protected=["exam/tickets/**"], memory="kept", tools=["read"])
    assert not c.can_read("exam/judge/a") and c.can_read("exam/tickets/exam/t.md")
    assert not c.can_write("exam/tickets/exam/t.md") and c.can_write("exam/SPEC.md")


def test_the_tester_neither_sees_nor_writes_the_judges_folder() -> None:
    """exam/judge/config/ is the judge's (its notes, its concrete mutants) and is kept from round to round: a
    tester that could write there would leave itself a memory, and one that could read it could be handed
    sealed values by the judge."""
    tester = load_charter("tester").contract
    for path in ("exam/judge/config/memo.md", "exam/judge/config/mutants.yaml"):
        assert not tester.can_read(path) and not tester.can_write(path)
    assert tester.can_write("exam/judge/notes.md") and tester.can_read("exam/judge/notes.md")
    assert load_charter("judge").contract.can_write("exam/judge/config/mutants.yaml")
