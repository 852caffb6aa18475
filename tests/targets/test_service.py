"""Service targets over SQLite: a fresh restored instance per case in its own jail, request plans, step rows
and side-effect rows read from the database by the orchestrator."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tri_agent import MalformedInput, NotDeterministic, UsageError
from tri_agent.exam._formats import Case
from tri_agent.targets._gateway import Gateway, _compare_runs, first_difference, require_plans
from tri_agent.targets._target import Target
from tri_agent.targets.service._client import _NOTHING, jsonpath, substitute
from tri_agent.targets.service._serve import FIXED_PORT

# a small stdlib service: notes in SQLite; APP_MODE makes it misbehave on purpose
APP = r'''
import json, os, sqlite3, sys, time
from http.server import BaseHTTPRequestHandler, HTTPServer
DB, MODE = os.environ["APP_DB"], os.environ.get("APP_MODE", "")
CLOCK = {"now": os.environ.get("APP_NOW")}
if MODE == "never-ready":
    print("config file missing: /etc/app.conf", file=sys.stderr)
    sys.exit(1)
if MODE == "silent":
    time.sleep(60)


class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def _send(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/health":
            return self._send(200, {"ok": True})
        if self.path.startswith("/echo"):  # what it was asked, and a listing
            return self._send(200, {"path": self.path, "items": [{"id": "b", "v": 2}, {"id": "a", "v": 1}, {"v": 3}]})
        if MODE == "crash":
            os._exit(3)
        if MODE == "link":
            return self._send(200, {})
        if MODE == "echo":  # its own base URL (the port the engine gave it) and a timing: what real APIs answer
            return self._send(200, {"self": f"http://127.0.0.1:{sys.argv[1]}/", "took_ns": time.time_ns()})
        if MODE == "surrogate":  # plain ASCII, valid JSON: a lone surrogate once parsed
            data = b'{"count": "\\ud800", "now": "ok"}'
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            return self.wfile.write(data)
        with sqlite3.connect(DB) as c:
            n = c.execute("select count(*) from notes").fetchone()[0]
        self._send(200, {"count": n, "now": CLOCK["now"], "items": [{"n": 1}, {"n": 2}]})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path == "/_clock":
            CLOCK["now"] = body["now"]
            return self._send(204 if False else 200, {})
        if MODE == "forge":  # answer for the driver: a line for a step never sent, then the driver killed
            try:
                with open(f"/proc/{os.getppid()}/fd/1", "w") as out:
                    out.write(json.dumps({"step": "count", "n": 0, "status": 299, "body": "{}"}) + "\n")
            except OSError:
                pass
            os.kill(os.getppid(), 9)
        if MODE == "forge-any":  # a forged answer into every pipe of every other process it can open
            import glob
            for fd in glob.glob("/proc/[0-9]*/fd/*"):
                if fd.startswith(f"/proc/{os.getpid()}/"):
                    continue
                try:
                    if not os.readlink(fd).startswith("pipe:"):
                        continue
                    out = os.open(fd, os.O_WRONLY | os.O_NONBLOCK)
                    os.write(out, (json.dumps({"step": "count", "n": 0, "status": 299, "body": "{}"}) + "\n").encode())
                    os.close(out)
                    with sqlite3.connect(DB) as c:
                        c.execute("insert into notes(text) values (?)", ("forged into " + fd,))
                except OSError:
                    pass
        if MODE == "log-flood":
            sys.stdout.write("x" * 200000)
            sys.stdout.flush()
        if MODE == "link":
            os.remove(DB)
            os.symlink(os.environ["APP_SECRET"], DB)
            return self._send(201, {"id": 0})
        with sqlite3.connect(DB) as c:
            cur = c.execute("insert into notes(text) values (?)", (body["text"],))
        self._send(201, {"id": cur.lastrowid})


HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
'''

TARGET = """schema_version: 1
kind: service
baseline: target
timeout: 30
service:
  start: [{python}, "{{target}}/app.py", "{{port}}"]
  env: {{APP_DB: "{{db}}", APP_MODE: "{mode}", APP_SECRET: "{secret}"}}
  ready: {{path: /health, deadline: 5}}
  database: {{kind: sqlite, file: notes.db}}
  clock: {clock}
"""

PLAN: dict[str, Any] = {"clock": "2026-01-01", "steps": [
    {"id": "add", "method": "POST", "path": "/notes", "json": {"text": "héllo"}, "capture": {"nid": "$.id"},
     "select": {"id": "$.id"}},
    {"id": "again", "method": "POST", "path": "/notes", "json": {"text": "{{nid}}"}, "repeat": 2,
     "select": {"id": "$.id"}},
    {"id": "count", "path": "/", "clock": "2026-02-02",
     "select": {"count": "$.count", "now": "$.now", "ct": "header:Content-Type", "ns": "$.items[*].n",
                "has_now": "exists:$.now", "has_next": "exists:$.next"}}],
    "queries": [{"name": "notes", "sql": "select id, text from notes order by id"}]}


def _project(tmp: Path, mode: str = "", clock: str = "{env: APP_NOW}", plans: dict[str, Any] | None = None) -> Target:
    import sqlite3

    (tmp / "target").mkdir()
    (tmp / "target" / "app.py").write_text(APP)
    with sqlite3.connect(tmp / "target" / "notes.db") as db:
        db.execute("create table notes(id integer primary key, text text)")
    secret = tmp / "secret.db"
    with sqlite3.connect(secret) as db:
        db.execute("create table notes(id integer primary key, text text)")
        db.execute("insert into notes(text) values ('the orchestrator-only secret')")
    (tmp / "target.yaml").write_text(TARGET.format(python=sys.executable, mode=mode, secret=secret, clock=clock))
    for name, plan in (plans or {"c1": PLAN}).items():
        (tmp / "visible" / name).mkdir(parents=True)
        (tmp / "visible" / name / "requests.json").write_text(json.dumps(plan))
    return Target.load(tmp / "target.yaml")


def _run(tmp: Path, target: Target, inputs: str = "c1", case: str = "c-0123456789") -> Any:
    scratch = tmp / f"scratch-{case}"
    scratch.mkdir()
    gateway = Gateway(target, tmp / "visible", scratch)
    return gateway.run_case(Case(case=case, inputs=inputs), keep=tmp / "keep" / case)


def test_a_case_gives_one_row_per_answer_and_the_database_rows_after_it(tmp_path: Path) -> None:
    result = _run(tmp_path, _project(tmp_path))
    c = "c-0123456789"
    assert result.rows == [
        {"case": c, "step": "add", "n": "0", "status": "201", "id": "1"},
        {"case": c, "step": "again", "n": "0", "status": "201", "id": "2"},
        {"case": c, "step": "again", "n": "1", "status": "201", "id": "3"},  # the replay is sent again, as is
        {"case": c, "step": "count", "n": "0", "status": "200", "count": "3", "now": "2026-02-02",
         "ct": "application/json", "ns": "[1,2]", "has_now": "true", "has_next": "false"},
        {"case": c, "step": "notes", "n": "0", "id": "1", "text": "héllo"},
        {"case": c, "step": "notes", "n": "1", "id": "2", "text": "1"},  # {{nid}} was the first answer's id
        {"case": c, "step": "notes", "n": "2", "id": "3", "text": "1"},
    ]
    assert (result.provenance.behavior, result.provenance.extract_error) == ("answered", None)
    assert result.isolation in (("bubblewrap",), ("landlock",))
    kept = sorted(p.name for p in (tmp_path / "keep" / c).iterdir())
    assert kept == ["responses.jsonl", "service-logs"]
    assert sorted(p.name for p in (tmp_path / "keep" / c / "service-logs").iterdir()) == ["service.err", "service.out"]
    assert set(result.provenance.outputs) == {"responses.jsonl"}  # logs are evidence, never fingerprinted


def test_every_case_starts_from_the_snapshot(tmp_path: Path) -> None:
    target = _project(tmp_path)
    first, second = _run(tmp_path, target, case="c-0000000001"), _run(tmp_path, target, case="c-0000000002")
    assert [r["id"] for r in first.rows if r["step"] == "add"] == ["1"]
    assert [r["id"] for r in second.rows if r["step"] == "add"] == ["1"]
    assert (tmp_path / "target" / "notes.db").stat().st_size > 0


def test_an_endpoint_clock_is_set_by_request(tmp_path: Path) -> None:
    target = _project(tmp_path, clock="{path: /_clock}")
    rows = _run(tmp_path, target).rows
    assert [r["now"] for r in rows if r["step"] == "count"] == ["2026-02-02"]


def test_a_service_that_never_gets_ready_is_unready_with_no_rows_and_says_why(tmp_path: Path) -> None:
    result = _run(tmp_path, _project(tmp_path, mode="never-ready"))
    assert result.provenance.behavior == "unready" and result.rows == []
    assert result.provenance.extract_error == ("the service exited with code 1 before it was ready; its stderr "
                                               "ended: config file missing: /etc/app.conf")


def test_a_service_that_never_answers_its_ready_probe_says_which_probe_and_how_long(tmp_path: Path) -> None:
    target = _project(tmp_path, mode="silent")
    (tmp_path / "target.yaml").write_text((tmp_path / "target.yaml").read_text().replace("deadline: 5", "deadline: 1"))
    result = _run(tmp_path, Target.load(tmp_path / "target.yaml"))
    assert result.provenance.behavior == "unready" and target.config.service is not None
    assert result.provenance.extract_error == "the service did not become ready: GET /health never answered 200 " \
                                              "within 1.0 s"


def test_a_service_whose_program_cannot_be_started_names_it_and_the_errno(tmp_path: Path) -> None:
    """A program the jail does not show (installed elsewhere) or that does not exist: one line with the argv's
    program and the errno, where every case used to end "the driver did not end as it ends (exit 1)"."""
    _project(tmp_path)
    (tmp_path / "target.yaml").write_text((tmp_path / "target.yaml").read_text().replace(
        f"start: [{sys.executable},", "start: [/nonexistent/bin/app,"))
    result = _run(tmp_path, Target.load(tmp_path / "target.yaml"))
    assert result.provenance.behavior == "unready" and result.rows == []
    assert result.provenance.extract_error.startswith(
        "the service could not be started: '/nonexistent/bin/app': No such file or directory (errno 2)")


def test_a_service_that_dies_on_a_request_is_crashed_and_keeps_the_rows_before(tmp_path: Path) -> None:
    result = _run(tmp_path, _project(tmp_path, mode="crash"))
    assert result.provenance.behavior == "crashed"
    assert [r["step"] for r in result.rows] == ["add", "again", "again", "notes", "notes", "notes"]
    assert result.provenance.extract_error == "step count: no answer: RemoteDisconnected"


def test_a_database_swapped_for_a_link_is_never_read(tmp_path: Path) -> None:
    result = _run(tmp_path, _project(tmp_path, mode="link"))
    assert not any("secret" in json.dumps(r) for r in result.rows)
    assert not any(r["step"] == "notes" for r in result.rows)
    assert "missing, a link or a special file" in str(result.provenance.extract_error)


def test_a_plan_that_moves_the_clock_needs_a_target_that_can(tmp_path: Path) -> None:
    target = _project(tmp_path, clock="null")
    with pytest.raises(MalformedInput) as err:
        require_plans(target, tmp_path / "visible", [Case(case="c-0123456789", inputs="c1")])
    assert err.value.where.endswith("c1/requests.json: clock")


@pytest.mark.parametrize(("plan", "field"), [
    ({"steps": []}, "steps"),
    ({"steps": [{"id": "a", "path": "no-slash"}]}, "steps.0.path"),
    ({"steps": [{"id": "a", "path": "/", "json": {}, "text": "x"}]}, "steps.0"),
    ({"steps": [{"id": "a", "path": "/", "select": {"x": "$..deep"}}]}, "steps.0.select"),
    ({"steps": [{"id": "a", "path": "/", "select": {"status": "$.s"}}]}, "steps.0.select"),
    ({"steps": [{"id": "a", "path": "/"}], "queries": [{"name": "a", "sql": "select 1"}]}, "document"),
    ({"steps": [{"id": "a", "path": "/a b"}]}, "steps.0.path"),
    ({"steps": [{"id": "a", "path": "/", "headers": {"X": "a\r\nInjected: 1"}}]}, "steps.0.headers"),
    ({"steps": [{"id": "a", "path": "/", "headers": {"X Y": "1"}}]}, "steps.0.headers"),
    ({"steps": [{"id": "a", "path": "/", "text": "0123456789abcdef", "times": 67108864}]}, "steps.0"),
])
def test_a_bad_plan_is_refused_naming_the_file_and_field(tmp_path: Path, plan: dict[str, Any], field: str) -> None:
    target = _project(tmp_path, plans={"c1": plan})
    with pytest.raises(MalformedInput) as err:
        require_plans(target, tmp_path / "visible", [Case(case="c-0123456789", inputs="c1")])
    assert "requests.json" in err.value.where and field.split(".")[0] in err.value.where + err.value.message


def test_a_target_is_command_or_service_never_both(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "t.yaml").write_text("schema_version: 1\nkind: service\nbaseline: b\nrun: [x]\n")
    with pytest.raises(MalformedInput, match="needs 'service'"):
        Target.load(tmp_path / "t.yaml")
    (tmp_path / "t.yaml").write_text("schema_version: 1\nbaseline: b\nservice: {start: [x]}\n")
    with pytest.raises(MalformedInput, match="needs 'run'"):
        Target.load(tmp_path / "t.yaml")


def test_a_missing_snapshot_is_refused_before_any_case(tmp_path: Path) -> None:
    target = _project(tmp_path)
    (tmp_path / "target" / "notes.db").unlink()
    (tmp_path / "scratch").mkdir()
    with pytest.raises(UsageError, match=r"notes\.db"):
        Gateway(target, tmp_path / "visible", tmp_path / "scratch")


DOC = {"a": {"b": [10, {"c": "x"}]}, "odd key": 1, "items": [{"id": 1}, {"id": 2}, {"other": 3}]}


@pytest.mark.parametrize(("path", "value"), [
    ("$", DOC), ("$.a.b[0]", 10), ("$.a.b[1].c", "x"), ("$['odd key']", 1), ("$.items[*].id", [1, 2]),
    ("$.a.b[5]", _NOTHING), ("$.nope", _NOTHING), ("$.a[0]", _NOTHING), ("$.a[*]", _NOTHING),
])
def test_jsonpath_selects_what_its_subset_names(path: str, value: Any) -> None:
    assert jsonpath(DOC, path) == value if value is not _NOTHING else jsonpath(DOC, path) is _NOTHING


@pytest.mark.parametrize("path", ["a.b", "$..a", "$.a[?(@.x)]", "$[-1]"])
def test_jsonpath_refuses_what_it_does_not_support(path: str) -> None:
    with pytest.raises(ValueError):
        jsonpath(DOC, path)


@given(st.recursive(st.integers() | st.text(max_size=3),
                    lambda inner: st.dictionaries(st.from_regex(r"[a-z]{1,3}", fullmatch=True), inner, max_size=3)
                    | st.lists(inner, max_size=3), max_leaves=8))
def test_every_leaf_is_reached_by_its_own_path(document: Any) -> None:
    def leaves(value: Any, path: str) -> Any:
        if isinstance(value, dict):
            for k, v in value.items():
                yield from leaves(v, f"{path}.{k}")
        elif isinstance(value, list):
            for i, v in enumerate(value):
                yield from leaves(v, f"{path}[{i}]")
        else:
            yield path, value

    for path, leaf in leaves(document, "$"):
        assert jsonpath(document, path) == leaf


def test_captures_are_substituted_everywhere_and_unknown_ones_are_empty() -> None:
    step = {"path": "/a/{{id}}", "headers": {"Authorization": "Bearer {{token}}"}, "json": {"{{id}}": ["{{x}}", 3]}}
    assert substitute(step, {"id": "7", "token": "t"}) == {
        "path": "/a/7", "headers": {"Authorization": "Bearer t"}, "json": {"7": ["", 3]}}


def test_a_service_case_runs_under_landlock_on_the_jails_own_loopback(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import tri_agent.sandbox._jail as jail
    from tri_agent.sandbox._confine import landlock_abi

    if landlock_abi() <= 0:
        pytest.skip("no Landlock on this kernel")
    monkeypatch.setattr(jail, "strongest", lambda: jail.LANDLOCK)  # as where bubblewrap cannot start
    result = _run(tmp_path, _project(tmp_path))
    assert result.isolation == ("landlock",) and result.provenance.behavior == "answered"
    assert [r["id"] for r in result.rows if r["step"] == "add"] == ["1"]


def test_a_case_run_twice_prints_the_same_answers_whatever_the_date_header(tmp_path: Path) -> None:
    """The driver reports only the headers a row reads: Date and Server would make every run differ, and a hunt
    for a mutant's difference would find one in every case."""
    import time

    target = _project(tmp_path)
    first = _run(tmp_path, target, case="c-0000000001").provenance
    time.sleep(1.1)  # the service's Date header moves on
    second = _run(tmp_path, target, case="c-0000000001".replace("1", "2", 1)).provenance
    assert first.stdout_sha256 == second.stdout_sha256 and first.outputs == second.outputs


@pytest.mark.parametrize(("sql", "why"), [
    ("ATTACH DATABASE '{secret}' AS s", "not authorized"),  # another file of the host
    ("VACUUM INTO '{out}'", "authorization denied"),
    ("PRAGMA query_only = OFF", "not authorized"),
    ("WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 8) SELECT zeroblob(50000000) AS t "
     "FROM c", "too big"),
    ("SELECT text AS step FROM notes", "not named case, step or n"),
    ("CREATE TABLE x(y)", "not authorized"),
])
def test_an_sqlite_side_effect_query_reads_the_copy_and_nothing_else(tmp_path: Path, sql: str, why: str) -> None:
    import sqlite3

    from tri_agent.targets.service._databases import _run_sqlite
    from tri_agent.targets.service._requests import Query

    secret, copy, out = tmp_path / "secret.db", tmp_path / "case.db", tmp_path / "out.db"
    with sqlite3.connect(secret) as db:
        db.execute("create table k(v text)")
        db.execute("insert into k values ('ORCHESTRATOR SECRET')")
    with sqlite3.connect(copy) as db:
        db.execute("create table notes(id integer primary key, text text)")
        db.execute("insert into notes(text) values ('a')")
    found = _run_sqlite(copy, [Query(name="q", sql=sql.format(secret=secret, out=out))])
    assert isinstance(found, str) and why in found, found
    assert not out.exists()
    assert _run_sqlite(copy, [Query(name="q", sql="select id, text from notes")]) == [
        {"case": "", "step": "q", "n": "0", "id": "1", "text": "a"}]


def test_a_service_can_neither_write_for_the_driver_nor_kill_it(tmp_path: Path) -> None:
    """The driver is not dumpable, so its output is closed to the service beside it; it is the jail's init,
    which no process inside may kill; only the answers it really got are rows."""
    result = _run(tmp_path, _project(tmp_path, mode="forge"))
    answers = [(r["step"], r["status"]) for r in result.rows if r["step"] != "notes"]
    assert answers == [("add", "201"), ("again", "201"), ("again", "201"), ("count", "200")]
    assert result.provenance.behavior == "answered"


def test_a_driver_that_did_not_end_as_it_ends_vouches_for_no_line(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from tri_agent.targets.service import _client

    monkeypatch.setattr(_client, "READY", 7)  # a driver whose every exit is unknown to the gateway
    result = _run(tmp_path, _project(tmp_path))
    assert [r for r in result.rows if r["step"] != "notes"] == []
    assert "did not end as it ends (exit" in str(result.provenance.extract_error)


def test_no_process_of_the_jail_lends_the_service_a_pipe_to_forge_answers_through(tmp_path: Path) -> None:
    """The driver is the jail's first process (no bubblewrap process holding the case's pipes shares its
    namespace) and not dumpable: the service finds no pipe of another process to write an answer into."""
    result = _run(tmp_path, _project(tmp_path, mode="forge-any"))
    notes = [r["text"] for r in result.rows if r["step"] == "notes"]
    assert not [n for n in notes if n and n.startswith("forged into")], notes
    count = [r for r in result.rows if r["step"] == "count"]
    assert [r["status"] for r in count] == ["200"], result.rows  # the real answer, and no other


def test_a_lone_surrogate_in_an_answer_is_a_replacement_character_not_a_crash(tmp_path: Path) -> None:
    result = _run(tmp_path, _project(tmp_path, mode="surrogate"))
    count = next(r for r in result.rows if r["step"] == "count")
    assert (count["count"], count["now"]) == ("\ufffd", "ok")
    json.dumps(result.rows, ensure_ascii=False).encode("utf-8")  # what the run writes: every row encodes


def test_what_a_service_logs_counts_against_the_write_cap(tmp_path: Path) -> None:
    target = _project(tmp_path, mode="log-flood")
    (tmp_path / "target.yaml").write_text((tmp_path / "target.yaml").read_text() + "write_cap: 65536\n")
    result = _run(tmp_path, Target.load(tmp_path / "target.yaml"))
    assert result.rows == [] and "past the write cap of 65536" in str(result.provenance.extract_error)
    assert target.config.write_cap != 65536  # the cap came from the file written above


ECHO: dict[str, Any] = {"steps": [{"id": "home", "path": "/", "select": {"self": "$.self"}}]}


def test_a_service_echoing_its_url_and_a_timing_is_deterministic_once_the_timing_is_volatile(tmp_path: Path) -> None:
    """The port is the same in every case (each has a network of its own), so an absolute URL is too; a timing
    differs every run until the plan says it is volatile. Unsandboxed, ports are drawn afresh (shared network)."""
    volatile = {**ECHO, "volatile": [{"pattern": '"took_ns": [0-9]+', "as": '"took_ns": 0'}]}
    target = _project(tmp_path, mode="echo", plans={"raw": ECHO, "clean": volatile})
    raw = [_run(tmp_path, target, "raw", case=f"c-00000000{n}a") for n in (1, 2)]
    clean = [_run(tmp_path, target, "clean", case=f"c-00000000{n}b") for n in (1, 2)]
    assert raw[0].rows[0]["self"] == raw[1].rows[0]["self"] == f"http://127.0.0.1:{FIXED_PORT}/"
    assert raw[0].provenance.outputs != raw[1].provenance.outputs
    assert clean[0].provenance.outputs == clean[1].provenance.outputs
    assert b'"took_ns\\": 0' in (clean[0].output / "responses.jsonl").read_bytes()
    where = first_difference(raw[0], raw[1])
    assert where.startswith("responses.jsonl line 1 (step home), byte ") and "took_ns" in where


def test_a_twice_run_that_differs_keeps_both_runs_and_names_case_step_and_bytes(tmp_path: Path) -> None:
    target = _project(tmp_path, mode="echo", plans={"raw": ECHO})
    first, second = (_run(tmp_path, target, "raw", case=f"c-00000000{n}c") for n in (1, 2))
    second = replace(second, provenance=second.provenance.model_copy(update={"case": first.provenance.case}))
    out = tmp_path / "run"
    out.mkdir()
    with pytest.raises(NotDeterministic) as err:
        _compare_runs([first], [second], out)
    assert f"first: case {first.provenance.case}, responses.jsonl line 1 (step home), byte " in err.value.message
    assert f"both runs are kept in {out}" in err.value.message and "volatile rules" in err.value.hint
    kept = json.loads((out / "not-deterministic.json").read_text())
    assert list(kept) == [first.provenance.case] and "took_ns" in kept[first.provenance.case]
    assert (out / "second" / first.provenance.case / "responses.jsonl").read_bytes() == (
        second.output / "responses.jsonl").read_bytes()


def test_listed_items_explode_into_rows_and_a_repeated_parameter_is_sent_per_value(tmp_path: Path) -> None:
    """Before: a selection could be neither counted nor exploded, and a query value could only be one string."""
    listing = {"id": "list", "path": "/echo", "query": {"tag": ["a", "b"], "q": "x y"}, "repeat": 2,
               "explode": "$.items[*]", "item_key": "id",
               "select": {"v": "@.v", "path": "$.path", "items": "count:$.items", "has_v": "exists:@.v"}}
    by_position = {"id": "pos", "path": "/echo", "explode": "$.items", "select": {"v": "@.v"}}
    counted = {"id": "count", "path": "/echo",
               "select": {"items": "count:$.items[*]", "one": "count:$.path", "none": "count:$.nothing"}}
    plan = {"steps": [listing, by_position, counted]}
    result = _run(tmp_path, _project(tmp_path, plans={"c1": plan}))
    path = "/echo?tag=a&tag=b&q=x+y"
    rows = [{k: v for k, v in r.items() if k != "case"} for r in result.rows]
    assert rows[:6] == [
        {"step": "list", "n": f"{n}.{key}", "status": "200", "v": v, "path": path, "items": "3", "has_v": "true"}
        for n in ("0", "1") for key, v in (("b", "2"), ("a", "1"), ("#2", "3"))]
    assert [(r["n"], r["v"]) for r in rows[6:9]] == [("0.0", "2"), ("0.1", "1"), ("0.2", "3")]
    assert rows[9] == {"step": "count", "n": "0", "status": "200", "items": "3", "one": "1", "none": "0"}


@pytest.mark.parametrize("step, why", [
    ({"id": "s", "path": "/", "select": {"v": "@.v"}}, "for an exploded step"),
    ({"id": "s", "path": "/", "item_key": "id"}, "for an exploded step"),
    ({"id": "s", "path": "/", "explode": "items"}, "starts with"),
    ({"id": "s", "path": "/", "select": {"k": "count:$.a["}}, "unsupported JSONPath"),
])
def test_an_item_path_outside_an_exploded_step_is_refused(step: dict[str, Any], why: str) -> None:
    from tri_agent.targets.service._requests import Step

    with pytest.raises(ValueError, match=why):
        Step.model_validate(step)


def test_a_python_service_is_traced_so_code_no_case_reaches_is_no_coverage(tmp_path: Path) -> None:
    """Before: a service target was never traced, so a mutant in code no case could reach was Survived (a blind
    spot) instead of NoCoverage. Traced, it answers the same, and its lines say what each case reached."""
    target = _project(tmp_path)
    plain = _run(tmp_path, target, case="c-00000000a1")
    scratch = tmp_path / "scratch-traced"
    scratch.mkdir()
    traced = Gateway(target, tmp_path / "visible", scratch).run_case(Case(case="c-00000000a1", inputs="c1"),
                                                                     keep=tmp_path / "keep" / "traced", trace=True)
    assert traced.rows == plain.rows and traced.provenance.outputs == plain.provenance.outputs
    assert traced.lines is not None and set(traced.lines) == {"app.py"}
    source = APP.splitlines()  # as app.py holds it: its first line is empty
    line_of = {text.strip(): n for n, text in enumerate(source, start=1)}
    reached = traced.lines["app.py"]
    assert line_of['cur = c.execute("insert into notes(text) values (?)", (body["text"],))'] in reached
    assert line_of["os._exit(3)"] not in reached  # the crash branch: no case of this exam reaches it
    assert plain.lines is None


def test_a_relation_holds_over_the_items_of_a_listing(tmp_path: Path) -> None:
    """Exploded items are rows like any other: their totals must add up to the listing's sum (sum_of_parts)."""
    from conftest import write_jsonl

    from tri_agent import ScoreInputs, score
    from tri_agent.targets.service._requests import RequestPlan, step_rows

    plan = RequestPlan.model_validate({"steps": [
        {"id": "invoices", "path": "/invoices", "explode": "$.items[*]", "item_key": "no",
         "select": {"total": "@.total"}},
        {"id": "sum", "path": "/invoices", "select": {"total": "$.sum", "count": "count:$.items"}}]})

    def answers(sum_: str) -> list[dict[str, Any]]:
        body = json.dumps({"items": [{"no": "A-1", "total": "10.50"}, {"no": "A-2", "total": "4.25"}], "sum": sum_})
        return [{"step": step, "n": 0, "status": 200, "body": body} for step in ("invoices", "sum")]

    caliber = ("schema_version: 1\nkey: [case, step, n]\nfields:\n  status: {class: status}\n"
               "  total: {class: amount}\n  count: {class: count, nullable: true}\n"
               "relations:\n  - {name: items-add-up, kind: sum_of_parts, field: total, by: [case],\n"
               "     parts: {where: {step: [invoices]}}, total: {where: {step: [sum]}}}\n")
    (tmp_path / "c.yaml").write_text(caliber)
    right = step_rows("c-1", plan, answers("14.75"))
    assert [r["n"] for r in right] == ["0.A-1", "0.A-2", "0"] and right[2]["count"] == "2"
    write_jsonl(tmp_path / "a.jsonl", right)
    for sum_, failed in (("14.75", 0), ("15.75", 1)):
        write_jsonl(tmp_path / "x.jsonl", step_rows("c-1", plan, answers(sum_)))
        report = score(ScoreInputs(tmp_path / "c.yaml", tmp_path / "a.jsonl", tmp_path / "x.jsonl"))
        assert report.relations is not None and [r.failed for r in report.relations.relations] == [failed]


def test_the_first_difference_of_two_big_outputs_is_found_chunk_by_chunk(tmp_path: Path) -> None:
    """A target decides how big its outputs are: the comparison reads them a chunk at a time."""
    from tri_agent.targets._gateway import _first_split

    same = b'{"step": "s", "n": 0}\n' * 200_000  # 4.4 MB: several chunks alike
    (tmp_path / "a").write_bytes(same + b'{"step": "last", "body": "took 5"}\n')
    (tmp_path / "b").write_bytes(same + b'{"step": "last", "body": "took 7"}\n')
    at, line, near_a, near_b, text = _first_split(tmp_path / "a", tmp_path / "b")
    assert (at, line) == (len(same) + len(b'{"step": "last", "body": "took '), 200_001)
    assert b'"took 5"}' in near_a and b'"took 7"}' in near_b
    assert text == b'{"step": "last", "body": "took 5"}'
    (tmp_path / "c").write_bytes(b"abc")
    assert _first_split(tmp_path / "c", tmp_path / "c")[:2] == (3, 1)  # the same: the end
    (tmp_path / "d").write_bytes(b"ab")
    assert _first_split(tmp_path / "c", tmp_path / "d")[:2] == (2, 1)  # one is a prefix of the other
