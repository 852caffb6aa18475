"""The role tool set never ends a run: every odd call is a tool error returned to the role, with the reason,
and names no user's file system could hold are refused at the call, not found later by the write audit."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tri_agent import MalformedInput, UsageError
from tri_agent.isolation._contract import load_charter
from tri_agent.isolation._tools import ToolBox, ToolError
from tri_agent.isolation._workspace import audit, snapshot


def _box(tmp: Path, **engine: Any) -> ToolBox:
    ws = tmp / "ws"
    (ws / "exam" / "judge").mkdir(parents=True)
    (ws / "exam" / "judge" / "notes.md").write_text("notes\n")
    return ToolBox(load_charter("tester").contract, ws, engine=engine)


@pytest.mark.parametrize("call,said", [
    (("read", {"path": "exam"}), "is a folder"),
    (("read", {"path": ""}), "is a folder"),
    (("read", {}), "argument 'path' is missing"),
    (("read", {"path": "exam/judge/" + "n" * 300}), "over 255 bytes"),
    (("write", {"path": "exam/judge/notes.md/below.md", "content": "x"}), "is a file, so nothing"),
    (("write", {"path": "exam/judge/lone.md", "content": "\ud800"}), "unpaired surrogate"),
    (("write", {"path": "exam/judge/\ud800.md", "content": "x"}), "unpaired surrogate"),
    (("write", {"path": "exam/judge/bell\x07.md", "content": "x"}), "control character"),
    (("write", {"path": "exam/judge/new\nline.md", "content": "x"}), "control character"),
    (("write", {"path": "exam/judge/CON.txt", "content": "x"}), "reserved device name"),
    (("write", {"path": "exam/judge", "content": "x"}), "may not write"),
    (("list", {"path": "exam/judge/notes.md"}), "is not a folder"),
    (("search", {"pattern": "("}), "bad regular expression"),
    (("read", []), "arguments must be an object"),
])
def test_an_odd_call_is_a_tool_error_with_the_reason(tmp_path: Path, call: tuple[str, Any], said: str) -> None:
    box = _box(tmp_path)
    before = snapshot(box.workspace)
    with pytest.raises(ToolError, match=said):
        box.call(*call)
    assert audit(box.contract, before, snapshot(box.workspace)) == []  # nothing was written


def test_an_engine_tool_given_bad_input_answers_the_role() -> None:
    def build(_args: dict[str, Any]) -> str:
        raise MalformedInput("exam.yaml: generator is missing", where="exam/exam.yaml:1")

    box = ToolBox(load_charter("judge").contract, Path("/nonexistent"), engine={"score": build})
    with pytest.raises(ToolError, match="generator is missing"):
        box.call("score", {})


_name = st.text(st.characters(codec="utf-8", exclude_categories=()), max_size=12) | st.sampled_from(
    ["", ".", "..", "exam", "exam/judge", "exam/judge/notes.md", "/etc", "a" * 300, "exam/judge/x.md"])
_args = st.dictionaries(st.sampled_from(["path", "content", "pattern", "case", "x"]),
                        st.one_of(_name, st.integers(), st.none(), st.lists(st.integers(), max_size=2)), max_size=3)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(["list", "read", "search", "write", "run_case", "submit", "nope"]), args=_args)
def test_no_tool_call_raises_anything_but_a_tool_error(tmp_path_factory: pytest.TempPathFactory, name: str,
                                                        args: dict[str, Any]) -> None:
    box = _box(tmp_path_factory.mktemp("tools"))
    try:
        box.call(name, args)
    except ToolError as exc:
        assert str(exc) and "Traceback" not in str(exc)
    assert not (box.workspace.parent / "escape").exists()


# --- what each tool answers, exactly: the role acts on these words --------------------------------------------

def _role_box(tmp: Path, role: str, files: dict[str, str] | None = None, **kw: Any) -> ToolBox:
    ws = tmp / "ws"
    ws.mkdir(parents=True)
    for rel, text in (files or {}).items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    return ToolBox(load_charter(role).contract, ws, **kw)


def test_each_role_is_offered_only_its_contracts_tools(tmp_path: Path) -> None:
    assert list(_role_box(tmp_path, "judge").specs()) == ["list", "read", "search", "write", "score", "rerun",
                                                          "file_ticket", "submit"]
    box = _role_box(tmp_path / "b", "builder")
    assert list(box.specs()) == ["list", "read", "search", "write", "submit"]
    with pytest.raises(ToolError) as err:
        box.call("run_case", {"case": "c-1"})
    assert str(err.value) == "tool 'run_case' is not available to the builder"
    with pytest.raises(ToolError, match="tool 'format_disk' is not available to the builder"):
        box.call("format_disk", {})


def test_list_walks_the_folder_in_order_and_says_when_it_cuts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    box = _role_box(tmp_path, "builder", {"target/b.py": "", "target/a/z.py": "", "target/a/y.py": "", "spec.md": ""})
    assert box.call("list", {}) == "spec.md\ntarget/b.py\ntarget/a/y.py\ntarget/a/z.py"
    assert box.call("list", {"path": "target/a"}) == "target/a/y.py\ntarget/a/z.py"
    monkeypatch.setattr("tri_agent.isolation._tools.LIST_CAP", 2)
    assert box.call("list", {"path": "target"}) == "target/b.py\ntarget/a/y.py\n(listing cut at 2 files)"
    assert box.call("list", {"path": "target/a"}) == "target/a/y.py\ntarget/a/z.py\n(listing cut at 2 files)"


def test_read_returns_the_text_and_cuts_large_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    box = _role_box(tmp_path, "builder", {"spec.md": "Grüße\n"})
    (box.workspace / "bin.dat").write_bytes(b"ok\xff\n")
    assert box.call("read", {"path": "spec.md"}) == "Grüße\n"
    assert box.call("read", {"path": "./spec.md"}) == "Grüße\n"
    assert box.call("read", {"path": "bin.dat"}) == "ok\ufffd\n"
    monkeypatch.setattr("tri_agent.isolation._tools.READ_CAP", 4)
    assert box.call("read", {"path": "spec.md"}) == "Grü\n(cut at 4 bytes)"
    (box.workspace / "four").write_bytes(b"1234")
    assert box.call("read", {"path": "four"}) == "1234"
    with pytest.raises(ToolError, match=r"^read failed: |^cannot read missing\.md: No such file or directory$"):
        box.call("read", {"path": "missing.md"})


def test_search_names_file_and_line_and_caps_the_hits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    box = _role_box(tmp_path, "builder", {"a.md": "alpha\nbeta\nalphabet\n", "b/c.md": "gamma alpha\n",
                                          "d.md": "x" * 300 + "alpha\n"})
    assert box.call("search", {"pattern": "alpha"}).splitlines()[:4] == [
        "a.md:1: alpha", "a.md:3: alphabet", f"d.md:1: {'x' * 200}", "b/c.md:1: gamma alpha"]
    assert box.call("search", {"pattern": "alpha", "path": "b"}) == "b/c.md:1: gamma alpha"
    assert box.call("search", {"pattern": "^zeta$"}) == "(no match)"
    monkeypatch.setattr("tri_agent.isolation._tools.SEARCH_CAP", 2)
    assert box.call("search", {"pattern": "a"}) == "a.md:1: alpha\na.md:2: beta\n(cut at 2 hits)"
    monkeypatch.setattr("tri_agent.isolation._tools.LIST_CAP", 1)
    assert box.call("search", {"pattern": "beta"}) == "a.md:2: beta"  # the listing's cut note is no file
    with pytest.raises(ToolError) as err:
        box.call("search", {"pattern": "(", "path": "b"})
    assert str(err.value).startswith("bad regular expression: missing ), unterminated subpattern")


def test_write_creates_folders_says_what_it_wrote_and_caps_the_size(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    box = _role_box(tmp_path, "builder")
    assert box.call("write", {"path": "target/pkg/new.py", "content": "é\n"}) == "wrote 3 bytes to target/pkg/new.py"
    written = box.workspace / "target" / "pkg" / "new.py"
    assert written.read_bytes() == "é\n".encode() and stat.S_IMODE(written.stat().st_mode) == 0o644 & ~_umask()
    assert box.call("write", {"path": "target/pkg/new.py", "content": "x"}) == "wrote 1 bytes to target/pkg/new.py"
    assert written.read_text() == "x"
    monkeypatch.setattr("tri_agent.isolation._tools.WRITE_CAP", 3)
    assert box.call("write", {"path": "target/three.txt", "content": "abc"}) == "wrote 3 bytes to target/three.txt"
    with pytest.raises(ToolError) as err:
        box.call("write", {"path": "target/four.txt", "content": "abcd"})
    assert str(err.value) == "content of 4 bytes is over the 3-byte cap"
    (box.workspace / "target" / "dir").mkdir()
    with pytest.raises(ToolError, match=r"^target/dir is a folder; name a file$"):
        box.call("write", {"path": "target/dir", "content": "x"})
    assert box.attempts == []


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_write_outside_the_contract_is_refused_and_recorded(tmp_path: Path) -> None:
    box = _role_box(tmp_path, "builder")
    with pytest.raises(ToolError) as err:
        box.call("write", {"path": "exam/answers.jsonl", "content": "x"})
    assert str(err.value) == "the builder may not write exam/answers.jsonl"
    assert box.attempts == ["write to exam/answers.jsonl outside the writable globs"]
    assert not (box.workspace / "exam").exists()


@pytest.mark.parametrize(("path", "why"), [
    ("/etc/passwd", "path '/etc/passwd' is not relative to your workspace"),
    ("target\\x.py", "path 'target\\\\x.py' is not relative to your workspace"),
    ("target/\0x", "path 'target/\\x00x' is not relative to your workspace"),
    ("target/../../x", "path 'target/../../x' leaves your workspace"),
    ("../x", "path '../x' leaves your workspace"),
    ("link/x.py", "path 'link/x.py' goes through a symlink"),
    ("target/link.py", "path 'target/link.py' goes through a symlink"),
])
def test_an_escape_is_refused_and_recorded_as_a_breach_attempt(tmp_path: Path, path: str, why: str) -> None:
    box = _role_box(tmp_path, "builder", {"target/a.py": ""})
    (box.workspace / "link").symlink_to(tmp_path)
    (box.workspace / "target" / "link.py").symlink_to(box.workspace / "target" / "a.py")
    with pytest.raises(ToolError) as err:
        box.call("read", {"path": path})
    assert str(err.value) == why and box.attempts == [why]


def test_a_path_resolves_to_its_plain_relative_form(tmp_path: Path) -> None:
    box = _role_box(tmp_path, "builder")
    assert box.resolve("") == (".", box.root) and box.resolve("./target/./a.py") == ("target/a.py",
                                                                                     box.root / "target" / "a.py")


@pytest.mark.parametrize(("path", "said"), [
    ("a\x7f.md", "path 'a\\x7f.md' holds a control character (0x7f); use printable names"),
    ("a\x1f.md", "path 'a\\x1f.md' holds a control character (0x1f); use printable names"),
    ("lpt9.txt", "name 'lpt9.txt' is a reserved device name on some systems; choose another"),
    ("Com1", "name 'Com1' is a reserved device name on some systems; choose another"),
    ("x" * 256, f"name {'x' * 40!r}... is over 255 bytes"),
    ("d/" * 2049, "path of 4098 bytes is over the 4096-byte limit"),
])
def test_names_no_file_system_could_hold_are_refused_with_the_reason(tmp_path: Path, path: str, said: str) -> None:
    box = _role_box(tmp_path, "builder")
    with pytest.raises(ToolError) as err:
        box.call("read", {"path": path})
    assert str(err.value) == said and box.attempts == []


@pytest.mark.parametrize("path", ["x" * 255, "é" * 127 + "x", "d/" * 2047 + "dd", "com10.txt", "console.md",
                                  "a\x80b"])
def test_names_at_the_limits_are_fine(tmp_path: Path, path: str) -> None:
    box = _role_box(tmp_path, "builder")
    with pytest.raises(ToolError) as err:  # the name passes; the file system then has its say
        box.call("read", {"path": path})
    assert str(err.value).endswith(("No such file or directory", "File name too long")), str(err.value)


def test_run_case_returns_the_gateways_json_and_needs_a_running_exam(tmp_path: Path) -> None:
    seen: list[str] = []

    def run(case: str) -> dict[str, Any]:
        seen.append(case)
        return {"case": case, "rows": [{"name": "Zoë"}]}

    box = _role_box(tmp_path, "tester", run_case=run)
    assert box.call("run_case", {"case": 7}) == '{"case": "7", "rows": [{"name": "Zoë"}]}' and seen == ["7"]
    idle = _role_box(tmp_path / "idle", "tester")
    with pytest.raises(ToolError) as err:
        idle.call("run_case", {"case": "c-1"})
    assert str(err.value) == "no exam is running: run_case is unavailable"


def test_engine_tools_answer_or_say_no_round_is_running(tmp_path: Path) -> None:
    box = _role_box(tmp_path, "judge", engine={"score": lambda args: f"scored {sorted(args)}"})
    assert box.call("score", {"x": 1}) == "scored ['x']"
    with pytest.raises(ToolError) as err:
        box.call("rerun", {"sample": 2})
    assert str(err.value) == "rerun is unavailable: no round is running"


def test_a_ticket_is_filed_under_its_route_with_a_content_id(tmp_path: Path) -> None:
    box = _role_box(tmp_path, "judge")
    text = "# avg wrong\n\nroute: builder\ncases: c-1, c-2\n\nRounding.\n"
    ticket = "t-" + hashlib.sha256(text.encode()).hexdigest()[:10]
    said = box.call("file_ticket", {"route": "builder", "title": "avg wrong", "body": "Rounding.",
                                    "cases": ["c-1", "c-2"]})
    assert said == f"filed {ticket} for the builder"
    assert (box.workspace / "exam" / "tickets" / "builder" / f"{ticket}.md").read_text() == text
    assert box.call("file_ticket", {"route": "exam", "title": "t", "body": "b"}).endswith("for the exam")
    assert "cases: -\n" in next((box.workspace / "exam" / "tickets" / "exam").iterdir()).read_text()
    with pytest.raises(ToolError) as err:
        box.call("file_ticket", {"route": "target", "title": "t", "body": "b"})
    assert str(err.value) == "route 'target' is not builder, exam or orchestrator"
    with pytest.raises(ToolError, match="route 'None' is not builder"):
        box.call("file_ticket", {"title": "t", "body": "b"})


def test_submit_keeps_a_copy_of_the_result(tmp_path: Path) -> None:
    box = _role_box(tmp_path, "builder")
    args = {"summary": "done", "blocked": False}
    assert box.call("submit", args) == "submitted" and box.submitted == args
    args["summary"] = "changed later"
    assert box.submitted == {"summary": "done", "blocked": False}


def test_what_goes_wrong_inside_a_tool_reaches_the_role_as_one_line(tmp_path: Path) -> None:
    def broken(_args: dict[str, Any]) -> str:
        raise OSError(28, "No space\n left   on device")

    def typed(_args: dict[str, Any]) -> str:
        raise TypeError("x" * 400)

    def usage(_args: dict[str, Any]) -> str:
        raise UsageError("seed must be digits", hint="pass a number")

    box = _role_box(tmp_path, "judge", engine={"score": broken, "rerun": typed})
    with pytest.raises(ToolError) as err:
        box.call("score", {})
    assert str(err.value) == "score failed: OSError: No space left on device"
    with pytest.raises(ToolError) as err:
        box.call("rerun", {})
    assert str(err.value) == "rerun failed: TypeError: " + "x" * 300
    examiner = _role_box(tmp_path / "e", "examiner", engine={"exam_build": usage})
    with pytest.raises(ToolError) as err:
        examiner.call("exam_build", {"seed": "x"})
    assert str(err.value) == "exam_build: seed must be digits; pass a number"


def test_more_odd_calls_answer_exactly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def silent(_args: dict[str, Any]) -> str:
        raise ValueError()

    box = _role_box(tmp_path, "judge", {"exam/judge/a b.md": "x\n"}, engine={"score": silent})
    with pytest.raises(ToolError) as err:
        box.call("read", [])  # type: ignore[arg-type]
    assert str(err.value) == "read: arguments must be an object, not list"
    with pytest.raises(ToolError) as err:
        box.call("score", {})
    assert str(err.value) == "score failed: ValueError: ValueError"
    assert box.call("read", {"path": "exam/judge/a b.md"}) == "x\n"  # a space is no control character
    with pytest.raises(ToolError) as err:
        box.call("write", {"path": "exam/tickets/x.md", "content": "\udcff"})
    assert str(err.value) == "content holds an unpaired surrogate: it is not text; write UTF-8 text"
    assert box.call("file_ticket", {"route": "orchestrator", "title": "t", "body": "b"}).endswith(
        "for the orchestrator")


def test_list_never_walks_into_a_linked_folder(tmp_path: Path) -> None:
    box = _role_box(tmp_path, "builder", {"target/a.py": ""})
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("s\n")
    (box.workspace / "target" / "link").symlink_to(tmp_path / "outside")
    assert box.call("list", {"path": "target"}) == "target/a.py"


def test_read_refuses_a_link_even_past_the_path_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A link made between the check and the open (a race) is still not followed."""
    box = _role_box(tmp_path, "builder")
    (tmp_path / "secret.txt").write_text("s\n")
    (box.workspace / "x").symlink_to(tmp_path / "secret.txt")
    monkeypatch.setattr(ToolBox, "resolve", lambda self, path: (path, self.root / path))
    with pytest.raises(ToolError) as err:
        box.call("read", {"path": "x"})
    assert str(err.value) == "cannot read x: Too many levels of symbolic links"


def test_search_cuts_only_when_there_are_more_hits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    box = _role_box(tmp_path, "builder", {"a.md": "hit\nhit\n", "b.md": "none\n"})
    monkeypatch.setattr("tri_agent.isolation._tools.SEARCH_CAP", 2)
    assert box.call("search", {"pattern": "hit"}) == "a.md:1: hit\na.md:2: hit"
    (box.workspace / "b.md").write_text("hit\n")
    assert box.call("search", {"pattern": "hit"}) == "a.md:1: hit\na.md:2: hit\n(cut at 2 hits)"
