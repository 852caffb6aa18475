"""Browser targets: a web app restored and started per case, driven by Debian's chromium through Playwright inside
the case's jail; rows read from the page, the app's API and its database; screenshots kept, never scored."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tri_agent import InfrastructureFailure, MalformedInput
from tri_agent.exam._formats import Case
from tri_agent.sandbox import _jail
from tri_agent.targets._gateway import Gateway, require_plans
from tri_agent.targets._target import Target
from tri_agent.targets.browser._drive import CHROMIUM

APP = Path(__file__).parent / "browser_app" / "app.py"
HAS_CHROMIUM = any(Path(c).is_file() for c in CHROMIUM)
pytestmark = pytest.mark.skipif(not HAS_CHROMIUM, reason="no chromium here: `python3 dev.py test` installs it "
                                                         "(apt-get, as root); Playwright never downloads a browser")
CASE = "c-0123456789"

TARGET = """schema_version: 1
kind: browser
baseline: target
timeout: 40
service:
  start: [{python}, "{{target}}/app.py", "{{port}}"]
  env: {{APP_DB: "{{db}}"}}
  ready: {{path: /health, deadline: 10}}
  database: {{kind: sqlite, file: notes.db}}
  clock: {{env: APP_NOW}}
browser: {{step_timeout: {step_timeout}, shots: {shots}}}
"""

SAVE = [{"id": "open", "do": "goto", "path": "/", "read": {"clock": "text:label:Clock"}},
        {"id": "name", "do": "fill", "target": "label:Name", "value": "Zoë 🎨"},
        {"id": "colour", "do": "select", "target": "role:combobox:Colour", "value": "Blue"},
        {"id": "agree", "do": "check", "target": "label:Agree"},
        {"id": "attach", "do": "upload", "target": "label:Attachment", "file": "note.txt",
         "read": {"file": "text:label:File", "shown": "text:css:#f"}},
        {"id": "late", "do": "wait", "target": "text:Ready", "read": {"late": "text:css:#late"}},
        {"id": "save", "do": "click", "target": "role:button:Save",
         "read": {"where": "url", "saved": "tree:role:region:Saved", "items": "count:role:listitem"}}]


def _project(tmp: Path, plans: dict[str, dict[str, Any]], *, step_timeout: float = 3, shots: str = "reads") -> Target:
    (tmp / "target").mkdir()
    shutil.copyfile(APP, tmp / "target" / "app.py")
    with sqlite3.connect(tmp / "target" / "notes.db") as db:
        db.execute("create table notes(id integer primary key, name text, colour text, agree text)")
    (tmp / "target.yaml").write_text(TARGET.format(python=sys.executable, step_timeout=step_timeout, shots=shots))
    for name, plan in plans.items():
        (tmp / "visible" / name).mkdir(parents=True)
        (tmp / "visible" / name / "ui.json").write_text(json.dumps(plan, ensure_ascii=False))
        (tmp / "visible" / name / "note.txt").write_text("an attachment\n")
    return Target.load(tmp / "target.yaml")


def _run(tmp: Path, target: Target, inputs: str = "c1", case: str = CASE) -> Any:
    scratch = tmp / f"scratch-{case}"
    scratch.mkdir()
    return Gateway(target, tmp / "visible", scratch).run_case(Case(case=case, inputs=inputs),
                                                              keep=tmp / "keep" / case)


QUERIES = [{"name": "notes", "sql": "select name, colour, agree from notes order by id"}]


def test_the_pinned_playwright_drives_debians_chromium(tmp_path: Path) -> None:
    """The pairing the docs promise: Playwright (pinned) launches the system's chromium binary, opens a context,
    reads an accessibility snapshot and takes a screenshot (a pairing that breaks fails here, not in a run)."""
    from importlib.metadata import version

    from playwright.sync_api import sync_playwright

    from tri_agent.targets._specs import BrowserSpec
    from tri_agent.targets.browser._drive import executable

    with sync_playwright() as play:
        browser = play.chromium.launch(executable_path=executable(BrowserSpec()), chromium_sandbox=False,
                                       args=["--disable-dev-shm-usage", "--disable-gpu"])
        page = browser.new_context().new_page()
        page.set_content('<main><h1>Hi</h1><label>Name <input value="Zoë"></label></main>')
        assert page.locator("main").aria_snapshot() == '- main:\n  - heading "Hi" [level=1]\n  - text: Name\n' \
                                                       '  - textbox "Name": Zoë'
        page.screenshot(path=str(tmp_path / "shot.png"))
        major = int(browser.version.split(".")[0])
        browser.close()
    assert version("playwright") == "1.65.2" and major >= 120
    assert (tmp_path / "shot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_case_drives_the_page_and_reads_the_page_the_api_and_the_database(tmp_path: Path) -> None:
    plan = {"clock": "2026-03-01T09:00:00Z", "steps": [
        *SAVE,
        {"id": "back", "do": "back", "read": {"where": "url", "name": "value:label:Name"}},
        {"id": "reload", "do": "reload", "clock": "2026-03-02T10:00:00Z",
         "read": {"clock": "text:label:Clock"}},
        {"id": "enter", "do": "fill", "target": "label:Name", "value": "Ada"},
        {"id": "press", "do": "press", "target": "label:Name", "key": "Enter", "read": {"where": "url"}},
        {"id": "api", "do": "request", "path": "/api/count", "select": {"count": "$.count"}}],
        "queries": QUERIES}
    result = _run(tmp_path, _project(tmp_path, {"c1": plan}))
    assert (result.provenance.behavior, result.provenance.extract_error) == ("completed", None)
    rows = {r["step"]: r for r in result.rows if r["step"] != "notes"}
    assert rows["open"]["clock"] == "2026-03-01T09:00:00Z"
    assert (rows["attach"]["file"], rows["attach"]["shown"]) == ("note.txt", "note.txt")
    assert rows["late"]["late"] == "Ready"  # appeared 300 ms after the page: the wait step waited for it
    assert rows["save"]["where"] == "/saved" and rows["save"]["items"] == "1"
    assert json.loads(rows["save"]["saved"]) == [{"role": "region", "name": "Saved", "children": [
        {"role": "heading", "name": "Saved", "level": "2"},
        {"role": "list", "children": [{"role": "listitem", "text": "Zoë 🎨 blue yes"}]}]}]
    assert rows["back"]["where"] == "/"
    assert rows["reload"]["clock"] == "2026-03-02T10:00:00Z"  # the clock moved: the app restarted under it
    assert rows["press"]["where"] == "/saved"  # Enter in a field submits its form
    assert (rows["api"]["status"], rows["api"]["count"]) == ("200", "2")
    assert [r for r in result.rows if r["step"] == "notes"] == [  # read from the database after the case
        {"case": CASE, "step": "notes", "n": "0", "name": "Zoë 🎨", "colour": "blue", "agree": "yes"},
        {"case": CASE, "step": "notes", "n": "1", "name": "Ada", "colour": "red", "agree": "no"}]
    assert result.isolation == ("bubblewrap",) or result.isolation == ()


def test_screenshots_and_the_console_are_kept_as_evidence_and_never_fingerprinted(tmp_path: Path) -> None:
    result = _run(tmp_path, _project(tmp_path, {"c1": {"steps": SAVE}}))
    keep = tmp_path / "keep" / CASE
    shots = sorted(p.name for p in (keep / "screenshots").iterdir())
    assert shots == ["01-open.png", "05-attach.png", "06-late.png", "07-save.png", "end.png"]
    assert all((keep / "screenshots" / s).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for s in shots)
    console = [json.loads(line) for line in (keep / "service-logs" / "console.jsonl").read_text().splitlines()]
    assert {"type": "log", "text": "form shown"} in console
    assert set(result.provenance.outputs) == {"responses.jsonl"}  # evidence is never part of the fingerprint


def test_a_double_submit_sends_the_very_form_request_again(tmp_path: Path) -> None:
    steps = [*SAVE[:4], {"id": "save", "do": "click", "target": "role:button:Save", "replay": 2}]
    result = _run(tmp_path, _project(tmp_path, {"c1": {"steps": steps, "queries": QUERIES}}))
    notes = [r for r in result.rows if r["step"] == "notes"]
    assert [(r["name"], r["colour"]) for r in notes] == [("Zoë 🎨", "blue")] * 3  # the click, then two replays


def test_the_pages_own_checks_stop_a_submit_until_a_step_switches_them_off(tmp_path: Path) -> None:
    long = "far too long a name"
    plan = {"steps": [{"id": "open", "do": "goto", "path": "/"},
                      {"id": "name", "do": "fill", "target": "label:Name", "value": long},
                      {"id": "save", "do": "click", "target": "role:button:Save", "read": {"where": "url"}},
                      {"id": "open2", "do": "goto", "path": "/"},
                      {"id": "empty", "do": "click", "target": "role:button:Save", "read": {"where": "url"}},
                      {"id": "off", "do": "unguard", "target": "role:form:Note"},
                      {"id": "long", "do": "fill", "target": "label:Name", "value": long},
                      {"id": "again", "do": "click", "target": "role:button:Save", "read": {"where": "url"}}],
            "queries": QUERIES}
    result = _run(tmp_path, _project(tmp_path, {"c1": plan}))
    rows = {r["step"]: r for r in result.rows}
    # maxlength cut the typed name in the page; an empty required field kept the form from being sent at all;
    # with the page's checks off, the whole name reached the server
    assert (rows["save"]["where"], rows["empty"]["where"], rows["again"]["where"]) == ("/saved", "/", "/saved")
    assert [r["name"] for r in result.rows if r["step"] == "notes"] == ["far too lo", long]


def test_an_element_that_is_not_there_reads_null_and_a_step_on_it_is_stuck(tmp_path: Path) -> None:
    plan = {"steps": [{"id": "open", "do": "goto", "path": "/", "read": {"gone": "tree:role:region:Nowhere",
                                                                         "none": "count:role:table"}},
                      {"id": "press", "do": "click", "target": "role:button:Nowhere"},
                      {"id": "after", "do": "pause", "read": {"where": "url"}}]}
    result = _run(tmp_path, _project(tmp_path, {"c1": plan}, step_timeout=2))
    assert result.rows == [{"case": CASE, "step": "open", "n": "0", "gone": None, "none": "0"}]
    assert result.provenance.behavior == "stuck"
    error = result.provenance.extract_error
    assert error is not None and error.startswith("step press: click")
    assert (tmp_path / "keep" / CASE / "screenshots" / "02-press-stuck.png").is_file()


def test_a_bad_ui_plan_is_refused_before_any_case_naming_the_file_and_field(tmp_path: Path) -> None:
    target = _project(tmp_path, {"c1": {"steps": [{"id": "x", "do": "fill", "target": "label:Name"}]}})
    with pytest.raises(MalformedInput, match=r"ui\.json.*fill needs value"):
        require_plans(target, tmp_path / "visible", [Case(case=CASE, inputs="c1")])


def test_under_the_landlock_fallback_a_browser_target_is_refused_not_run_with_less(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_jail, "strongest", lambda: _jail.LANDLOCK)
    target = _project(tmp_path, {"c1": {"steps": SAVE}})
    with pytest.raises(InfrastructureFailure, match="Landlock fallback: chromium needs /proc") as caught:
        Gateway(target, tmp_path / "visible", tmp_path)
    assert caught.value.exit_code == 7


def test_only_the_screenshots_the_pilot_vouched_for_are_kept(tmp_path: Path) -> None:
    """The app can write the pilot's screenshot folder too: a planted 'stuck' shot, a replaced end shot and a
    flood of files are all dropped; what is kept matches the digests the pilot printed."""
    from tri_agent.targets.browser._drive import evidence

    work = tmp_path / "work"
    (work / "log" / "shots").mkdir(parents=True)
    png = b"\x89PNG\r\n\x1a\n" + b"real"
    (work / "log" / "shots" / "end.png").write_bytes(png)
    (work / "log" / "shots" / "0-all-green-stuck.png").write_bytes(b"\x89PNG\r\n\x1a\nfake")
    (work / "log" / "shots" / "02-book.png").write_bytes(b"\x89PNG\r\n\x1a\nreplaced")
    answers = [{"evidence": {"end.png": hashlib.sha256(png).hexdigest(), "02-book.png": "0" * 64,
                             "../../secret.png": hashlib.sha256(png).hexdigest()}}]
    assert evidence(work, answers) == (work / "log" / "shots" / "end.png",)
    assert evidence(work, []) == ()  # a pilot that vouched for nothing (killed, crashed): nothing is kept


def test_a_volatile_pattern_that_backtracks_forever_costs_the_case_not_the_orchestrator(tmp_path: Path) -> None:
    plan = {"clock": "a" * 40 + "!", "volatile": [{"pattern": "(a+)+$"}],
            "steps": [{"id": "open", "do": "goto", "path": "/", "read": {"clock": "text:label:Clock"}}]}
    target = _project(tmp_path, {"c1": plan})
    (tmp_path / "target.yaml").write_text((tmp_path / "target.yaml").read_text().replace("timeout: 40", "timeout: 8"))
    started = time.monotonic()
    result = _run(tmp_path, Target.load(tmp_path / "target.yaml"))
    assert result.provenance.behavior == "timeout" and result.rows == []
    assert time.monotonic() - started < 30 and target.config.timeout == 40
