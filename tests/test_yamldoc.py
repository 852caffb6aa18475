"""Every YAML format the project reads is bounded: an alias bomb, a recursive alias, deep nesting, a huge
number or value is malformed input with file:line, at once, in every loader."""

from __future__ import annotations

import locale
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from conftest import deadline
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict

from tri_agent import MalformedInput, TriAgentError, UsageError, _yamldoc
from tri_agent._yamldoc import LIMITS, Limits, data, load
from tri_agent.acceptance._config import load_config
from tri_agent.drivers._scripted import ScriptedDriver
from tri_agent.exam._formats import load_exam
from tri_agent.mutation._menu import load_concrete, load_menu
from tri_agent.scoring._caliber import load_caliber
from tri_agent.targets._presets import load_presets
from tri_agent.targets._target import Target


def _bomb(levels: int = 9) -> str:
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"a{k}: &a{k} [{', '.join([f'*a{k - 1}'] * 9)}]" for k in range(1, levels)]
    return "\n".join(lines) + "\n"


HOSTILE = {
    "alias bomb": (_bomb(), "alias bomb"),
    "recursive alias": ("a: &a [1, *a]\n", "refers to itself"),
    "deep nesting": ("a: " + "[" * 200 + "]" * 200 + "\n", "deeper than"),
    "5000-digit integer": ("schema_version: " + "9" * 5000 + "\n", "number literal"),
    "huge value": ("a: '" + "x" * (LIMITS.scalar_chars + 1) + "'\n", "characters"),
    "huge document": ("# " + "x" * LIMITS.document_bytes + "\n", "larger than"),
    "impossible date": ("a: 2020-13-45\n", "cannot read '2020-13-45' as timestamp"),
}
# where each format lives, and how the project reads it
LOADERS: dict[str, tuple[str, Callable[[Path], object]]] = {
    "caliber": ("caliber.yaml", lambda p: load_caliber(p / "caliber.yaml")),
    "exam": ("exam.yaml", lambda p: _exam(p)),
    "target": ("target.yaml", lambda p: Target.load(p / "target.yaml")),
    "menu": ("mutations.yaml", lambda p: load_menu(p / "mutations.yaml")),
    "judge's mutants": ("mutants.yaml", lambda p: load_concrete(p / "mutants.yaml")),
    "acceptance": ("acceptance.yaml", lambda p: load_config(p)),
    "scripted episodes": ("script.yaml", lambda p: ScriptedDriver(p / "script.yaml")),
    "preset": ("warehouse.yaml", lambda p: load_presets(p)),
}


def _exam(folder: Path) -> object:
    for other in ("SPEC.md", "TESTPLAN.md", "caliber.yaml"):  # the exam's other files, so exam.yaml is read
        (folder / other).write_text("key: [k]\n" if other.endswith("yaml") else "# x\n")
    return load_exam(folder)


@pytest.mark.parametrize("attack", sorted(HOSTILE))
@pytest.mark.parametrize("fmt", sorted(LOADERS))
def test_hostile_yaml_is_one_line_of_malformed_input_in_every_format(tmp_path: Path, fmt: str, attack: str) -> None:
    name, load = LOADERS[fmt]
    text, said = HOSTILE[attack]
    (tmp_path / name).write_text(text)
    with deadline(20), pytest.raises(MalformedInput) as caught:
        load(tmp_path)
    line = caught.value.line()
    assert said in line and "\n" not in line and name in line and caught.value.exit_code == 3
    if attack not in ("huge document",):
        assert f"{name}:" in line  # file:line


def test_aliases_within_bounds_still_work_and_the_bomb_is_refused_fast() -> None:
    assert data("d: &d {e: 1}\nf: *d\ng: [*d, *d]\n", "ok.yaml") == {"d": {"e": 1}, "f": {"e": 1},
                                                                       "g": [{"e": 1}, {"e": 1}]}
    start = time.monotonic()
    with pytest.raises(MalformedInput):
        data(_bomb(12), "bomb.yaml")  # 9**12 nodes expanded: refused from its shape alone
    assert time.monotonic() - start < 5


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_any_text_is_data_or_one_line_of_our_error(text: str) -> None:
    try:
        data(text, "fuzz.yaml")
    except TriAgentError as exc:
        assert exc.exit_code == 3 and "\n" not in exc.line()


# a small model for load(), and the one line a refusal shows

class Inner(BaseModel):
    n: int


class Doc(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = "x"
    items: list[int] = []
    inner: Inner | None = None
    either: int | list[int] = 0


class Named(BaseModel):
    name: str


@pytest.fixture(autouse=True)
def _uncached() -> None:
    data.cache_clear()  # data() is cached by its text: a bound changed by a test must be met afresh


def _bounds(monkeypatch: pytest.MonkeyPatch, **bounds: int) -> None:
    monkeypatch.setattr(_yamldoc, "LIMITS", Limits(**bounds))


def _refused(text: str) -> str:
    """The one line data() refuses ``text`` with, as ``x.yaml``; malformed input, exit 3."""
    with deadline(10), pytest.raises(MalformedInput) as caught:
        data(text, "x.yaml")
    assert caught.value.exit_code == 3
    return caught.value.line()


def _load(tmp_path: Path, text: str | bytes, model: type[BaseModel] = Doc) -> tuple[Path, Callable[[], object]]:
    path = tmp_path / "doc.yaml"
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path, lambda: load(path, model)


def _load_refused(tmp_path: Path, text: str | bytes, model: type[BaseModel] = Doc) -> str:
    """The one line load() refuses ``text`` with, ``doc.yaml`` standing for its path; malformed input, exit 3."""
    path, read = _load(tmp_path, text, model)
    with pytest.raises(MalformedInput) as caught:
        read()
    assert caught.value.exit_code == 3
    return caught.value.line().replace(str(path), "doc.yaml")


# ---- each bound at its edge and one past it, the exact line users see ---------------------------------------------

def test_a_document_of_exactly_the_byte_bound_loads_and_one_byte_more_is_refused(monkeypatch: pytest.MonkeyPatch,
                                                                                 tmp_path: Path) -> None:
    _bounds(monkeypatch, document_bytes=10)
    assert data("a: ééé\n", "x.yaml") == {"a": "ééé"}  # 7 characters, 10 bytes in UTF-8
    assert _refused("a: ééé \n") == ("x.yaml: the document is larger than 10 bytes; "  # 8 characters, 11 bytes
                                     "a YAML file here is configuration: keep data in the exam's inputs")
    assert _load_refused(tmp_path, "a: ééé \n").startswith("doc.yaml: the document is larger than 10 bytes;")


def test_exactly_the_node_bound_with_aliases_expanded_loads_and_one_node_more_is_refused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    _bounds(monkeypatch, nodes=13)
    # the mapping, its 2 keys, &a (a list of 2) and y's list of two *a (1 + 2 x 3): 13 nodes once expanded
    assert data("# at the bound\nx: &a [1, 2]\ny: [*a, *a]\n", "x.yaml") == {"x": [1, 2], "y": [[1, 2], [1, 2]]}
    assert _refused("# one more\nx: &a [1, 2]\ny: [*a, *a, 3]\n") == (
        "x.yaml:2: YAML expands to more than 13 nodes (aliases expanded): an alias bomb?; "
        "write the values out; aliases may not multiply")
    assert _refused("a: 1\nb:\n  - [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]\n").startswith(
        "x.yaml:3: YAML expands to more than 13 nodes")  # the first node past the bound is named, at its line


def test_exactly_the_depth_bound_loads_and_one_level_more_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    _bounds(monkeypatch, depth=3)
    assert data("# three levels\nlist: [1]\n", "x.yaml") == {"list": [1]}  # the mapping, the list, the 1
    assert _refused("# four levels\nlist: [[1]]\n") == "x.yaml:2: YAML nests deeper than 3 levels"
    assert _refused("top:\n  a: [[1]]\n") == "x.yaml:2: YAML nests deeper than 3 levels"  # the first too deep


def test_a_value_of_exactly_the_scalar_bound_loads_and_one_character_more_is_refused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    _bounds(monkeypatch, scalar_chars=5)
    assert data("a: abcde\n", "x.yaml") == {"a": "abcde"}
    assert _refused("a: ok\nb: abcdef\n") == "x.yaml:2: a value of 6 characters (at most 5)"
    assert _refused("a: ok\nabcdef: 1\n") == "x.yaml:2: a value of 6 characters (at most 5)"  # a key is one too


def test_a_number_of_exactly_the_literal_bound_loads_and_one_digit_more_is_refused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    _bounds(monkeypatch, number_chars=3)
    assert data("i: 123\nf: 1.5\ns: '1234'\nt: abcd\n", "x.yaml") == {"i": 123, "f": 1.5, "s": "1234", "t": "abcd"}
    hint = "; quote it if it is text; no setting needs a number that long"
    assert _refused("i: 1234\n") == "x.yaml:1: a number literal of 4 characters (at most 3)" + hint
    assert _refused("i: 1\nf: 1.25\n") == "x.yaml:2: a number literal of 4 characters (at most 3)" + hint


def test_a_recursive_alias_is_refused_at_its_line() -> None:
    assert _refused("b: 0\na: &a [1, *a]\n") == "x.yaml:2: YAML refers to itself (a recursive alias)"
    assert _refused("b: 0\n\na: &m {b: [*m]}\n") == "x.yaml:3: YAML refers to itself (a recursive alias)"


def test_an_alias_met_twice_is_counted_twice_but_read_once() -> None:
    assert data("a: &a [1]\nb: [&b [*a], *b, *a]\n", "x.yaml") == {"a": [1], "b": [[[1]], [[1]], [1]]}


@pytest.mark.parametrize(("text", "said"), [
    ("ok: 1\na: b: c\n", "x.yaml:2: not valid YAML (mapping values are not allowed in this context)"),  # libyaml's
    ("a: [1\n", "x.yaml:2: not valid YAML (did not find expected ',' or ']')"),
    ("a: 1\nb: *nope\n", "x.yaml:2: not valid YAML (found undefined alias)"),
    ("x\n\x00\n", 'x.yaml: not valid YAML (unacceptable character #x0000: control characters are not allowed '
                  'in "<unicode string>", position 2)'),  # a reader error has no line: its text, on one line
])
def test_not_yaml_is_one_line_with_the_parsers_problem(text: str, said: str) -> None:
    assert _refused(text) == said


@pytest.mark.parametrize(("text", "said"), [
    ("a: 1\nwhen: 2020-13-45\n", "x.yaml:2: cannot read '2020-13-45' as timestamp (month must be in 1..12)"),
    ("n: 0x_\n", "x.yaml:1: cannot read '0x_' as int (invalid literal for int() with base 16: '')"),
    ("f: !!float x\n", "x.yaml:1: cannot read 'x' as float (could not convert string to float: 'x')"),
    ("b: !!bool maybe\n", "x.yaml:1: cannot read 'maybe' as bool"),  # a KeyError's text says nothing more
    ("t: !!timestamp x\n", "x.yaml:1: cannot read 'x' as timestamp"),
    ("i: !!int ''\n", "x.yaml:1: cannot read '' as int"),
])
def test_a_value_its_tag_cannot_read_is_malformed_input_at_its_line(text: str, said: str) -> None:
    assert _refused(text) == said + "; quote it if it is text"  # was an internal error (ValueError, KeyError...)


def test_a_lone_surrogate_in_text_is_malformed_input() -> None:
    assert _refused("ok: 1\na: \ud800\n") == "x.yaml: not Unicode text (a lone surrogate at character 9)"


def test_without_libyaml_a_nesting_too_deep_for_python_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_yamldoc, "_LOADER", yaml.SafeLoader)  # the pure-Python parser recurses as it composes
    assert data("ok: [[1]]\n", "x.yaml") == {"ok": [[1]]}
    assert _refused("a: " + "[" * 900 + "]" * 900 + "\n") == "x.yaml: YAML nests too deeply (a recursive alias?)"


def test_with_the_depth_bound_raised_a_nesting_past_pythons_stack_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    _bounds(monkeypatch, depth=5000)  # libyaml takes 1000 levels; indexing their lines then recurses past the stack
    assert _refused("[" * 1000 + "]" * 1000 + "\n") == "x.yaml: YAML nests too deeply (a recursive alias?)"


# ---- load(): the file, repeated keys and pydantic's errors at file:line ------------------------------------------

def test_an_empty_document_validates_as_an_empty_mapping(tmp_path: Path) -> None:
    assert _load(tmp_path, "")[1]() == Doc()
    assert _load(tmp_path, "# only a comment\n")[1]() == Doc()
    assert _load_refused(tmp_path, "", Named) == "doc.yaml:1: name: Field required"  # no node: line 1


def test_a_repeated_key_names_both_lines(tmp_path: Path) -> None:
    assert _load_refused(tmp_path, "a: 1\nb:\n  c: 1\n  c: 2\n") == "doc.yaml:4: key 'c' repeated (first at line 3)"
    assert _load_refused(tmp_path, "- k: 1\n- k: 2\n\n  k: 3\n") == "doc.yaml:4: key 'k' repeated (first at line 2)"


@pytest.mark.parametrize(("text", "said"), [
    ("name: a\nitems:\n  - 1\n  - x\n",
     "doc.yaml:4: items.1: Input should be a valid integer, unable to parse string as an integer (value 'x')"),
    ("name: a\nbogus: [1]\n",
     "doc.yaml:2: bogus: unknown key 'bogus'; the keys known here: either, inner, items, name"),
    # a union's member is no node: the longest known prefix of the location gives the line
    ("name: a\n\neither:\n  - 1\n  - y\n", "doc.yaml:4: either.int: Input should be a valid integer (value [1, 'y'])"),
    # a missing field has no line of its own, and its value is the mapping around it: not shown
    ("name: a\ninner:\n\n  m: 1\n", "doc.yaml:4: inner.n: Field required"),
    # the document itself is the wrong thing: at the line it starts
    ("# a list\n- 1\n", "doc.yaml:2: (document): Input should be a valid dictionary or instance of Doc (value [1])"),
])
def test_a_validation_error_names_the_field_its_line_and_its_value(tmp_path: Path, text: str, said: str) -> None:
    assert _load_refused(tmp_path, text) == said


def test_a_file_not_utf8_names_the_byte(tmp_path: Path) -> None:
    assert _load_refused(tmp_path, b"a: 1\nb: \xff\n") == "doc.yaml: not UTF-8 at byte 8"


def test_a_file_is_read_as_utf8_whatever_the_locale(tmp_path: Path) -> None:
    read = _load(tmp_path, "name: café\n")[1]
    before = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")  # ASCII, unless Python runs in UTF-8 mode
    try:
        assert read() == Doc(name="café")
    finally:
        locale.setlocale(locale.LC_CTYPE, before)


def test_a_missing_or_unreadable_file_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as missing:
        load(tmp_path / "nope.yaml", Doc)
    assert missing.value.line() == f"{tmp_path / 'nope.yaml'} does not exist; check the path"
    assert missing.value.exit_code == 2
    with pytest.raises(UsageError) as folder:
        load(tmp_path, Doc)
    assert folder.value.line() == f"cannot read {tmp_path}: Is a directory" and folder.value.exit_code == 2


def test_a_long_unreadable_value_is_still_one_short_line(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text("b: !!bool " + "x" * 5000 + "\n")
    with pytest.raises(MalformedInput) as err:
        _yamldoc.data(path.read_text(), str(path))
    assert err.value.line() == f"{path}:1: cannot read '{'x' * 57}...' as bool; quote it if it is text"
