"""Service targets over a real PostgreSQL server, started here: every case a clone of the template database with
a role of its own, dropped afterwards; the service never reaches the snapshot or another case."""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tri_agent import UsageError
from tri_agent.exam._formats import Case
from tri_agent.targets._gateway import CaseResult, Gateway
from tri_agent.targets._target import Target

PORT = 54329
PASSWORD = "tri-agent-test-admin"
APP = r'''
import json, os, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
import psycopg
URL = os.environ["DATABASE_URL"]


def attempt(**kw):
    try:
        with psycopg.connect(URL, **kw) as c:
            return c.execute(os.environ.get("PROBE_SQL", "select 1")).fetchone()[0] and "yes"
    except psycopg.Error as exc:
        return type(exc).__name__


def as_admin():  # the administrator's name on the socket the jail sees, without its password
    try:
        with psycopg.connect(URL, user="postgres", dbname="postgres", password=""):
            return "yes"
    except psycopg.Error as exc:
        return type(exc).__name__


class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def _send(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/health":
            return self._send(200, {})
        # what the case's role may reach besides its own database
        self._send(200, {"template": attempt(dbname="ledger_template"), "program": attempt_program(),
                         "admin": as_admin()})

    def do_POST(self):
        text = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["text"]
        with psycopg.connect(URL) as c:
            new = c.execute("insert into notes(text) values (%s) returning id", (text,)).fetchone()[0]
        self._send(201, {"id": new})


def attempt_program():
    try:
        with psycopg.connect(URL) as c:
            c.execute("copy (select 1) to program 'true'")
            return "yes"
    except psycopg.Error as exc:
        return type(exc).__name__


HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
'''


def _bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


@pytest.fixture(scope="module")
def server() -> Iterator[Path]:  # the data folder is the socket folder's parent
    """A PostgreSQL cluster of our own: initdb in a temporary folder, as a non-root user, Unix socket only."""
    binaries = _bin()
    if binaries is None:
        pytest.skip("PostgreSQL is not installed (python3 dev.py test installs Debian's postgresql)")
    root = Path(tempfile.mkdtemp(prefix="tri-pg-"))
    root.chmod(0o755)
    data, sockets = root / "data", root / "sock"
    sockets.mkdir(mode=0o755)
    (root / "pw").write_text(PASSWORD + "\n")
    as_user: list[str] = []
    if os.geteuid() == 0:  # initdb refuses root: the cluster belongs to Debian's postgres user
        for path in (root, sockets, root / "pw"):
            shutil.chown(path, "postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "check": True}
    # passwords on the socket: every case's jail sees it (a trusting server is refused, see below)
    subprocess.run([*as_user, str(binaries / "initdb"), "-D", str(data), "--auth=scram-sha-256", "-U", "postgres",
                    f"--pwfile={root / 'pw'}", "--no-sync", "-E", "UTF8"], **quiet)  # type: ignore[call-overload]
    options = f"-k {sockets} -c listen_addresses='' -p {PORT} -c fsync=off"
    subprocess.run([*as_user, str(binaries / "pg_ctl"), "-D", str(data), "-o", options, "-w", "-l",
                    str(root / "log"), "start"], **quiet)  # type: ignore[call-overload]
    saved = os.environ.get("PGPASSWORD")
    os.environ["PGPASSWORD"] = PASSWORD  # the orchestrator's: libpq reads it, no jail sees it (scrubbed env)
    try:
        import psycopg

        with psycopg.connect(host=str(sockets), port=PORT, user="postgres", dbname="postgres",
                             autocommit=True) as admin:
            admin.execute("CREATE ROLE ledger_app NOLOGIN")
            admin.execute("CREATE DATABASE ledger_template")
        with psycopg.connect(host=str(sockets), port=PORT, user="postgres", dbname="ledger_template",
                             autocommit=True) as template:
            template.execute("CREATE TABLE notes(id serial primary key, text text not null)")
            template.execute("ALTER TABLE notes OWNER TO ledger_app")
            template.execute("INSERT INTO notes(text) VALUES ('seeded')")
        yield sockets
    finally:
        if saved is None:
            os.environ.pop("PGPASSWORD", None)
        else:
            os.environ["PGPASSWORD"] = saved
        subprocess.run([*as_user, str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(root, ignore_errors=True)


def _target(tmp: Path, sockets: Path, owner: str = "ledger_app", template: str = "ledger_template") -> Target:
    (tmp / "target").mkdir(exist_ok=True)
    (tmp / "target" / "app.py").write_text(APP)
    (tmp / "target.yaml").write_text(f"""schema_version: 1
kind: service
baseline: target
timeout: 30
service:
  start: [{sys.executable}, "{{target}}/app.py", "{{port}}"]
  env: {{DATABASE_URL: "{{db}}"}}
  ready: {{path: /health, deadline: 10}}
  database: {{kind: postgresql, socket_dir: {sockets}, port: {PORT}, owner: {owner}, template: {template}}}
""")
    plan: dict[str, Any] = {"steps": [
        {"id": "add", "method": "POST", "path": "/notes", "json": {"text": "ünïcode"}, "select": {"id": "$.id"}},
        {"id": "reach", "path": "/", "select": {"template": "$.template", "program": "$.program",
                                                "admin": "$.admin"}}],
        "queries": [{"name": "notes", "sql": "select id, text from notes order by id"}]}
    (tmp / "visible" / "c").mkdir(parents=True, exist_ok=True)
    (tmp / "visible" / "c" / "requests.json").write_text(json.dumps(plan))
    return Target.load(tmp / "target.yaml")


def _run(tmp: Path, target: Target, case: str) -> CaseResult:
    (tmp / case).mkdir()
    return Gateway(target, tmp / "visible", tmp / case).run_case(Case(case=case, inputs="c"))


def _databases(sockets: Path) -> list[str]:
    import psycopg

    with psycopg.connect(host=str(sockets), port=PORT, user="postgres", dbname="postgres") as admin:
        rows = admin.execute("SELECT datname FROM pg_database UNION ALL SELECT rolname FROM pg_roles").fetchall()
    return sorted(r[0] for r in rows if r[0].startswith("tri_case_"))


def test_every_case_gets_a_fresh_clone_of_the_template(server: Path, tmp_path: Path) -> None:
    target = _target(tmp_path, server)
    for case in ("c-0000000001", "c-0000000002"):
        result = _run(tmp_path, target, case)
        assert result.provenance.behavior == "answered", result.provenance.extract_error
        assert [r for r in result.rows if r["step"] in ("add", "notes")] == [
            {"case": case, "step": "add", "n": "0", "status": "201", "id": "2"},
            {"case": case, "step": "notes", "n": "0", "id": "1", "text": "seeded"},
            {"case": case, "step": "notes", "n": "1", "id": "2", "text": "ünïcode"},
        ]
    assert _databases(server) == []  # each clone and its role dropped when its case ended


def test_the_service_reaches_neither_the_snapshot_nor_the_servers_machine(server: Path, tmp_path: Path) -> None:
    result = _run(tmp_path, _target(tmp_path, server), "c-0000000003")
    [reach] = [r for r in result.rows if r["step"] == "reach"]
    assert reach["template"] == "OperationalError"  # no CONNECT on the template for a case's role
    assert reach["program"] == "InsufficientPrivilege"  # not a superuser: no COPY ... PROGRAM
    assert reach["admin"] == "OperationalError"  # the administrator's name alone opens nothing


def test_side_effect_queries_run_with_the_case_roles_rights_only(server: Path, tmp_path: Path) -> None:
    """The exam's queries and any view the service planted run as the case's role: a query that needs the
    administrator's rights (a server program, another database's catalogue) fails as a finding, never runs."""
    target = _target(tmp_path, server)
    plan = json.loads((tmp_path / "visible" / "c" / "requests.json").read_text())
    plan["queries"] = [{"name": "who", "sql": "select current_user as text, usesuper::text as id "
                                              "from pg_user where usename = current_user"}]
    (tmp_path / "visible" / "c" / "requests.json").write_text(json.dumps(plan))
    result = _run(tmp_path, target, "c-0000000005")
    [who] = [r for r in result.rows if r["step"] == "who"]
    assert who["text"].startswith("tri_case_") and who["id"] == "false"
    plan["queries"] = [{"name": "escape", "sql": "copy (select 1) to program 'touch /tmp/tri-pg-escape'"}]
    (tmp_path / "visible" / "c" / "requests.json").write_text(json.dumps(plan))
    escaped = _run(tmp_path, target, "c-0000000006")
    assert "side-effect query failed" in str(escaped.provenance.extract_error)
    assert not Path("/tmp/tri-pg-escape").exists()


def test_a_missing_template_or_a_superuser_owner_is_refused(server: Path, tmp_path: Path) -> None:
    (tmp_path / "g").mkdir()
    with pytest.raises(UsageError, match="template database 'nope' does not exist"):
        Gateway(_target(tmp_path, server, template="nope"), tmp_path / "visible", tmp_path / "g")
    (tmp_path / "h").mkdir()
    with pytest.raises(UsageError, match="owner 'postgres' is a superuser"):
        Gateway(_target(tmp_path, server, owner="postgres"), tmp_path / "visible", tmp_path / "h")


def test_a_server_that_trusts_its_socket_is_refused(server: Path, tmp_path: Path) -> None:
    """Every case's jail sees the socket: a server that lets anyone on it log in as the administrator without a
    password would give every service the administrator's rights."""
    binaries = _bin()
    assert binaries is not None
    hba = server.parent / "data" / "pg_hba.conf"
    saved = hba.read_text()
    as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    reload = [*as_user, str(binaries / "pg_ctl"), "-D", str(server.parent / "data"), "reload"]
    try:
        hba.write_text("local all postgres trust\n" + saved)
        subprocess.run(reload, check=True, capture_output=True)
        (tmp_path / "g").mkdir()
        with pytest.raises(UsageError, match="without a password"):
            Gateway(_target(tmp_path, server), tmp_path / "visible", tmp_path / "g")
    finally:
        hba.write_text(saved)
        subprocess.run(reload, check=True, capture_output=True)


@pytest.mark.parametrize(("sql", "why"), [
    ("select set_config('statement_timeout', '0', false) as text", None),  # lifts nothing for the next query
    ("select pg_sleep(30)", "canceling statement due to statement timeout"),
    ("create table pwn as select 1", "syntax error"),  # only a query can be a cursor: statements never run
    ("set statement_timeout = 0", "syntax error"),
    ("select 1 as step", "not named case, step or n"),
    ("select repeat('x', 1000000) as text from generate_series(1, 40)", "more than"),
])
def test_a_side_effect_query_is_read_only_bounded_and_never_a_crash(server: Path, tmp_path: Path, sql: str,
                                                                     why: str | None) -> None:
    target = _target(tmp_path, server)
    plan = json.loads((tmp_path / "visible" / "c" / "requests.json").read_text())
    plan["queries"] = [{"name": "q", "sql": sql}, {"name": "then", "sql": "select pg_sleep(12) as text"}]
    (tmp_path / "visible" / "c" / "requests.json").write_text(json.dumps(plan))
    result = _run(tmp_path, target, "c-0000000007")
    assert (why is not None and why in str(result.provenance.extract_error)) or \
        "statement timeout" in str(result.provenance.extract_error)  # the next query still times out
