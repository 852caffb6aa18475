"""SCOREBOARD.md, ACCEPTANCE.json and REPORT.html open with the verdict and why, name each role's driver and
state their units; built here from small evidence stores written by hand."""

from __future__ import annotations

import html
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import GIT

from tri_agent.acceptance._gate import Verdict
from tri_agent.acceptance._scoreboard import (
    REPORTS,
    UNITS,
    AcceptanceReport,
    RoundSummary,
    acceptance_json,
    headline,
    ignore_reports,
    report_html,
    scoreboard,
    verdict_line,
)
from tri_agent.evidence._trail import EvidenceStore
from tri_agent.scoring._report import ScoreReport

RED = RoundSummary(round=1, seed="ed918104abcdef", final=False, green=False, reasons=["81/147 pass"], passed=81,
                   total=147, channels={"answers": "30/96", "behaviors": "13/13", "relations": "38/38"},
                   kill_rate="8/10 killed (80%); 0 ignored, 0 no coverage", tickets={"builder": 5}, simulation=True,
                   canaries="0/2 passed")
GREEN = RED.model_copy(update={"round": 2, "green": True, "reasons": [], "passed": 140, "total": 140, "streak": 1,
                               "channels": {"answers": "76/76", "behaviors": "17/17", "relations": "47/47"},
                               "tickets": {}})
UNIT_LINES = ["Units:", "", *(f"- **{name}**: {text}" for name, text in UNITS.items())]


def _store(root: Path, rounds: list[RoundSummary], end: str = "", reasons: tuple[str, ...] = ()) -> EvidenceStore:
    store = EvidenceStore(root)
    for r in rounds:
        def fill(folder: Path, r: RoundSummary = r) -> None:
            (folder / "round.json").write_text(r.model_dump_json())
            gamed = ["round 2: c-0123456789ab"] if end == "policy" and r.round == 2 else []
            (folder / "progress.json").write_text(json.dumps({"gamed": gamed}))
            (folder / "episodes.json").write_text(json.dumps([
                {"role": "tester", "attempts": [{"driver": "anthropic"}]},
                {"role": "builder", "attempts": [{"driver": "scripted" if r.round == 1 else "in-session"}]},
                {"role": "judge", "attempts": []}]))

        store.append(f"round-{r.round:04d}", "round", fill)
    if end == "verdict":
        verdict = Verdict(decision="accepted", rounds=len(rounds), gate_n=1, certified=not reasons,
                          reasons=list(reasons), drivers={})
        store.append("verdict", "verdict", lambda f: (f / "verdict.json").write_text(verdict.model_dump_json()))
    if end == "policy":
        text = "# Policy failure in round 2\n\nThe target passed canary cases.\n\n- round 2: c-0123456789ab\n"
        store.append("policy-0002", "policy", lambda f: (f / "POLICY.md").write_text(text))
    if end == "escalation":
        text = ("# Escalation after round 2\n\nprocess ticket t-1 (orchestrator:tester:skipped) failed 3 fix attempts; "
                "a human must decide.\n\nTickets that failed their fix attempts:\n")
        store.append("escalation-0002", "escalation", lambda f: (f / "ESCALATION.md").write_text(text))
    return store


def test_a_run_not_certified_opens_with_the_verdict_why_the_drivers_and_the_units(tmp_path: Path) -> None:
    store = _store(tmp_path, [RED, GREEN], "verdict", ("a simulation", "fixed seeds"))
    assert headline(store) == ("accepted", "PASSED, NOT CERTIFIED after 2 rounds", ["a simulation", "fixed seeds"])
    board = scoreboard(store).splitlines()
    assert board[:20] == ["# Scoreboard", "", "**Verdict**: PASSED, NOT CERTIFIED after 2 rounds: a simulation; "
                          "fixed seeds", "", "Not certified because:", "", "- a simulation", "- fixed seeds", "",
                          "Drivers: builder: in-session, scripted; judge: unknown; tester: anthropic", "", *UNIT_LINES,
                          ""]
    assert board[20] == ("| round | seed | answers (rows) | behaviours (cases) | relations (instances) | drift | "
                         "kill rate (mutants) | canaries (cases) | new cases | tickets | smells | cost (USD) | "
                         "streak | gate | why red |")
    assert board[22].startswith("| 1 | ed918104 | 30/96 | 13/13 | 38/38 | - | 8/10 killed (80%); ")
    assert board[22].split("|")[8].strip() == "0/2 passed"
    assert [n for n in UNITS if n != "all units"] == [c.strip() for c in board[20].split("|")[3:6]] + [
        board[20].split("|")[i].strip() for i in (7, 8)]  # each count's column says its unit, and the legend too


def test_a_run_stopped_for_gaming_says_so_first_and_names_the_canaries(tmp_path: Path) -> None:
    gamed = RED.model_copy(update={"round": 2, "canaries": "1/2 passed", "reasons": ["policy: the target passed"]})
    store = _store(tmp_path, [RED, gamed], "policy")
    why = ["passed a canary planted against the spec: round 2: c-0123456789ab"]
    assert headline(store) == ("policy", "STOPPED, the exam was gamed (policy)", why)
    board = scoreboard(store)
    assert board.splitlines()[2:7] == ["**Verdict**: STOPPED, the exam was gamed (policy): " + why[0], "",
                                       "Stopped because:", "", "- " + why[0]]
    assert "| 1/2 passed |" in board and "# Policy failure in round 2" in board
    data = json.loads(acceptance_json(store))
    assert (data["decision"], data["gamed"], data["escalation"]) == ("policy", why, None)
    assert "Stopped because:" in report_html(store)


def test_a_certified_run_gives_no_reasons(tmp_path: Path) -> None:
    store = _store(tmp_path, [GREEN], "verdict")
    assert verdict_line(store) == "ACCEPTED after 1 rounds, certified"
    assert scoreboard(store).splitlines()[2:5] == ["**Verdict**: ACCEPTED after 1 rounds, certified", "",
                                                   "Drivers: builder: in-session; judge: unknown; tester: anthropic"]
    data = json.loads(acceptance_json(store))
    assert (data["decision"], data["certified"], data["reasons"], data["escalation"]) == ("accepted", True, [], None)
    assert "because" not in report_html(store)


def test_an_escalated_run_says_why(tmp_path: Path) -> None:
    store = _store(tmp_path, [RED, RED.model_copy(update={"round": 2})], "escalation")
    reason = "process ticket t-1 (orchestrator:tester:skipped) failed 3 fix attempts"
    assert headline(store) == ("escalated", "ESCALATED, a human must decide", [reason])
    assert verdict_line(store) == f"ESCALATED, a human must decide: {reason}"
    assert scoreboard(store).splitlines()[2:8] == [f"**Verdict**: ESCALATED, a human must decide: {reason}", "",
                                                   "Escalated because:", "", f"- {reason}", ""]
    data = json.loads(acceptance_json(store))
    assert (data["decision"], data["certified"], data["reasons"], data["escalation"]) == ("escalated", False, [],
                                                                                          reason)
    assert f"<p>Escalated because:</p><ul><li>{reason}</li></ul>" in report_html(store)


def test_an_open_run_has_no_verdict_yet(tmp_path: Path) -> None:
    store = _store(tmp_path, [RED])
    assert headline(store) == ("open", "NO VERDICT YET after 1 round(s)", [])
    assert scoreboard(store).splitlines()[2:4] == ["**Verdict**: NO VERDICT YET after 1 round(s)", ""]
    data = json.loads(acceptance_json(store))
    assert (data["decision"], data["escalation"], data["verdict"]) == ("open", None, "NO VERDICT YET after 1 round(s)")


def test_acceptance_json_opens_with_the_verdict_and_explains_its_units(tmp_path: Path) -> None:
    store = _store(tmp_path, [RED, GREEN], "verdict", ("a simulation",))
    text = acceptance_json(store)
    data = json.loads(text)
    assert list(data)[:8] == ["verdict", "decision", "certified", "reasons", "escalation", "gamed", "drivers",
                              "units"]
    assert data["verdict"] == "PASSED, NOT CERTIFIED after 2 rounds: a simulation" and data["units"] == UNITS
    assert data["drivers"] == {"builder": "in-session, scripted", "judge": "unknown", "tester": "anthropic"}
    assert data["schema_version"] == 1 and data["trail_digest"] == store.digest()
    assert [r["name"] for r in data["records"]] == ["round-0001", "round-0002", "verdict"]
    assert [r["passed"] for r in data["rounds"]] == [81, 140]
    assert AcceptanceReport.model_validate(data).rounds == [RED, GREEN] and acceptance_json(store) == text


def test_the_html_opens_with_the_verdict_and_counts_in_the_scoreboards_units(tmp_path: Path) -> None:
    store = _store(tmp_path, [RED, GREEN], "verdict", ("a simulation", "fixed <seeds>"))
    page = report_html(store)
    body = page.split("<body>", 1)[1]
    assert body.startswith('\n<h1 id="verdict">PASSED, NOT CERTIFIED after 2 rounds</h1>\n<p>Not certified because:'
                           "</p><ul><li>a simulation</li><li>fixed &lt;seeds&gt;</li></ul>\n<p>Drivers: builder: "
                           "in-session, scripted; judge: unknown; tester: anthropic</p>")
    assert "<title>tri-agent acceptance: PASSED, NOT CERTIFIED after 2 rounds</title>" in page
    assert "".join(f"<li><b>{n}</b>: {html.escape(t)}</li>" for n, t in UNITS.items()) in page
    assert ("<tr><td>1</td><td>30/96</td><td>13/13</td><td>38/38</td><td>81/147</td><td>8/10 killed (80%); 0 ignored, "
            "0 no coverage</td><td>0/2 passed</td><td>0</td><td>red</td><td>81/147 pass</td></tr>") in page
    assert "<tr><td>2</td><td>76/76</td><td>17/17</td><td>47/47</td><td>140/140</td>" in page
    assert "<th>answers (rows)</th><th>behaviours (cases)</th><th>relations (instances)</th>" in page
    assert "<th>all units</th><th>kill rate (mutants)</th>" in page
    assert page.count("<rect") == 2 and "<script" not in page and "2 round(s)." in page
    final = GREEN.model_copy(update={"round": 3, "final": True, "channels": {"answers": "9/9"}})
    assert "<tr><td>3 (final)</td><td>9/9</td><td>-</td><td>-</td>" in report_html(_store(tmp_path / "f", [final]))


# --- the page in a real browser: Debian's chromium, driven by Playwright, with every request recorded -----------

CHROMIUM = Path(shutil.which("chromium") or "/usr/bin/chromium")


@pytest.mark.skipif(not CHROMIUM.is_file(), reason="no chromium here: `python3 dev.py test` installs it (apt-get, "
                                                    "as root); Playwright never downloads a browser for this suite")
def test_the_report_shows_its_verdict_in_a_real_browser_and_asks_for_nothing_outside(tmp_path: Path) -> None:
    from playwright.sync_api import Route, sync_playwright

    page_file = tmp_path / "REPORT.html"
    page_file.write_text(report_html(_store(tmp_path / "store", [RED, GREEN], "verdict", ("a simulation",))))
    seen: list[str] = []

    def gate(route: Route) -> None:  # anything but the page itself or an inline data: URI is refused
        seen.append(route.request.url)
        allowed = route.request.url in (page_file.as_uri(),) or route.request.url.startswith("data:")
        route.continue_() if allowed else route.abort()

    with sync_playwright() as play:
        # the system chromium, never a downloaded one; --no-sandbox (chromium_sandbox=False): Chromium refuses to
        # start as root with its own sandbox, and the page is our own static file; background networking is off and
        # every host name resolves to nothing, so not even the browser itself can reach the network
        browser = play.chromium.launch(executable_path=str(CHROMIUM), chromium_sandbox=False, args=[
            "--disable-background-networking", "--disable-component-update", "--no-first-run",
            "--host-resolver-rules=MAP * ~NOTFOUND"])
        try:
            page = browser.new_page()
            page.on("request", lambda request: seen.append(request.url))
            page.route("**/*", gate)
            page.goto(page_file.as_uri())
            verdict = page.locator("h1#verdict")
            assert verdict.is_visible() and verdict.inner_text() == "PASSED, NOT CERTIFIED after 2 rounds"
            assert page.locator("li", has_text="a simulation").first.is_visible()
            assert page.locator("table tr").count() == 3 and page.locator("svg rect").count() == 2
            assert page.title() == "tri-agent acceptance: PASSED, NOT CERTIFIED after 2 rounds"
        finally:
            browser.close()
    assert page_file.as_uri() in seen  # requests were recorded
    assert [url for url in seen if url != page_file.as_uri() and not url.startswith("data:")] == []


# --- screenshots of browser cases: kept in the sealed round records, shown from there, never from the runs -----------

def _report(failing: list[str]) -> ScoreReport:
    from tri_agent.scoring._report import AnswersChannel, CellFailure

    failures = [CellFailure(key={"case": c, "step": "s", "n": "0"}, field="f", cls="text", expected="a",
                            actual="b", reason="not_equal") for c in failing]
    channel = AnswersChannel.model_construct(verdict="fail" if failures else "pass", failures=failures)
    return ScoreReport.model_construct(verdict="fail" if failures else "pass", answers=channel, behaviors=None)


def test_a_round_record_keeps_the_last_screenshot_of_each_failing_case_and_only_real_pngs(tmp_path: Path) -> None:
    from tri_agent.acceptance._scoreboard import keep_screenshots, report_html, screenshots

    outputs, record = tmp_path / "outputs", tmp_path / "record"
    record.mkdir()
    png = b"\x89PNG\r\n\x1a\n" + b"\0" * 16
    for case, files in {"c-a": {"end.png": png, "03-book-stuck.png": png + b"s"}, "c-b": {"end.png": b"<script>"},
                        "c-d": {"end.png": png}}.items():
        (outputs / case / "screenshots").mkdir(parents=True)
        for name, data in files.items():
            (outputs / case / "screenshots" / name).write_bytes(data)
    (outputs / "c-c" / "screenshots").mkdir(parents=True)
    (outputs / "c-c" / "screenshots" / "end.png").symlink_to(outputs / "c-d" / "screenshots" / "end.png")
    keep_screenshots(outputs, _report(["c-a", "c-b", "c-c", "c-a"]), False, record)
    # c-a: its stuck step first; c-b: not a PNG; c-c: a link; c-d: passed, so not kept
    assert sorted(p.name for p in (record / "screenshots").iterdir()) == ["c-a.03-book-stuck.png"]
    keep_screenshots(outputs, _report([]), False, tmp_path / "green")  # a green round keeps none
    assert not (tmp_path / "green").exists()
    store = EvidenceStore(tmp_path / "store")

    def fill(folder: Path) -> None:
        (folder / "round.json").write_text(RED.model_dump_json())
        (folder / "episodes.json").write_text("[]")
        shutil.copytree(record / "screenshots", folder / "screenshots")

    store.append("round-0001", "round", fill)
    assert [(s.round, s.case, s.name, s.png) for s in screenshots(store)] == [(1, "c-a", "03-book-stuck.png",
                                                                             png + b"s")]
    assert 'src="data:image/png;base64,' in report_html(store)  # rebuilt from the trail alone


def test_the_reports_are_ignored_by_git_so_they_are_never_committed_and_found_stale(tmp_path: Path) -> None:
    """A user who commits SCOREBOARD.md, ACCEPTANCE.json or REPORT.html is later told by verify-trail that they
    were edited (they are rewritten every round). So writing them first tells git to ignore them, in the repository's
    exclude file: the work tree gets no new file, and `git status` stays clean."""
    repo = tmp_path / "repo"
    project = repo / "sub"
    project.mkdir(parents=True)
    (project / "code.py").write_text("x = 1\n")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run([*GIT, *args], cwd=repo, check=True, capture_output=True)
    exclude = repo / ".git" / "info" / "exclude"
    exclude.write_text("# mine\n*.bak")  # the user's own lines, the last one without its line break
    for _ in range(2):
        ignore_reports(project)
    assert exclude.read_text().splitlines()[:2] == ["# mine", "*.bak"]
    assert [line for line in exclude.read_text().splitlines() if line.startswith("/")] == [
        "/sub/SCOREBOARD.md", "/sub/ACCEPTANCE.json", "/sub/REPORT.html"]  # once each, under the project
    for name in REPORTS:
        (project / name).write_text("a report\n")
    status = subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True, check=True)
    assert status.stdout == ""
    (project / "other.md").write_text("not a report\n")  # nothing else is hidden
    status = subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True, check=True)
    assert status.stdout == "?? sub/other.md\n"
    plain = tmp_path / "plain"
    plain.mkdir()
    ignore_reports(plain)  # no repository: nothing to do, and no error
    assert list(plain.iterdir()) == []
