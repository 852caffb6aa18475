"""Service and browser targets: what a case costs when the target is a web service started, restored and
stopped per case (or a web app driven through a real browser), against a command target doing the same work.

    python benchmarks/bench_service.py [--repeats 15]

Five targets do the same work per case (insert one row into a fresh copy of an SQLite database, answer with
its id, and the orchestrator reads the table back): a command (one Python process per case), a service on the
standard library's http.server, a service on Starlette served by uvicorn (the ledger-api example's stack), and
the same two apps as browser targets, whose case opens a page with a form in chromium, clicks its button and
reads the id the next page shows (a fresh browser context per case, in the case's jail). Each case of each
kind runs through the gateway, interleaved kind by kind so the machine's noise hits all alike; the median wall
time of one case is reported, as a multiple of the command's and of the same app driven by requests alone.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tri_agent.exam._formats import Case  # noqa: E402
from tri_agent.targets._gateway import Gateway  # noqa: E402
from tri_agent.targets._target import Target  # noqa: E402

COMMAND = """import json, sqlite3, sys
with sqlite3.connect(sys.argv[1] + "/notes.db") as db:
    new = db.execute("insert into notes(text) values ('x')").lastrowid
    rows = db.execute("select id, text from notes").fetchall()
open(sys.argv[2] + "/rows.jsonl", "w").write("".join(json.dumps({"id": str(r[0]), "text": r[1]}) + "\\n" for r in rows))
"""
# the page a browser case opens, and the page its form's answer is (the id it stored)
PAGES = """FORM = '<!doctype html><title>n</title><form method="post" action="/notes"><button>Save</button></form>'
def stored(new):
    return '<!doctype html><title>n</title><p id="id">' + str(new) + '</p>'
def is_form(content_type):
    return content_type.startswith("application/x-www-form-urlencoded")
"""
STDLIB = PAGES + """import json, os, sqlite3, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass
    def do_GET(self):
        self._send(200, FORM if self.path == "/" else {"ok": True})
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        with sqlite3.connect(os.environ["NOTES_DB"]) as db:
            new = db.execute("insert into notes(text) values ('x')").lastrowid
        self._send(201, stored(new) if is_form(self.headers["Content-Type"]) else {"id": new})
    def _send(self, code, body):
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "text/html" if isinstance(body, str) else "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"""
STARLETTE = PAGES + """import os, sqlite3
from starlette.applications import Starlette
from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import Route
async def health(request):
    return JSONResponse({"ok": True})
async def page(request):
    return HTMLResponse(FORM)
async def add(request):
    await request.body()
    with sqlite3.connect(os.environ["NOTES_DB"]) as db:
        new = db.execute("insert into notes(text) values ('x')").lastrowid
    if is_form(request.headers.get("content-type", "")):
        return HTMLResponse(stored(new), status_code=201)
    return JSONResponse({"id": new}, status_code=201)
app = Starlette(routes=[Route("/health", health), Route("/", page), Route("/notes", add, methods=["POST"])])
"""
SERVICE = """schema_version: 1
kind: {kind}
baseline: target
timeout: 30
service:
  start: {start}
  env: {{NOTES_DB: "{{db}}"}}
  ready: {{path: /health, deadline: 15}}
  database: {{kind: sqlite, file: notes.db}}
"""
PLAN = {"steps": [{"id": "add", "method": "POST", "path": "/notes", "json": {"text": "x"}, "select": {"id": "$.id"}}],
        "queries": [{"name": "notes", "sql": "select id, text from notes"}]}
PAGE = {"steps": [{"id": "open", "do": "goto", "path": "/"},
                  {"id": "add", "do": "click", "target": "role:button:Save", "read": {"id": "text:css:#id"}}],
        "queries": PLAN["queries"]}
KINDS = ("command", "http.server", "starlette+uvicorn", "browser, http.server", "browser, starlette+uvicorn")


def _target(root: Path, kind: str) -> Target:
    folder = root / kind
    (folder / "target").mkdir(parents=True)
    with sqlite3.connect(folder / "target" / "notes.db") as db:
        db.execute("create table notes(id integer primary key, text text)")
    (folder / "visible" / "c").mkdir(parents=True)
    if kind == "command":
        (folder / "target" / "main.py").write_text(COMMAND)
        (folder / "target.yaml").write_text('schema_version: 1\nbaseline: target\nrun: [python3, "{target}/main.py", '
                                            '"{target}", "{output}"]\nextract: {file: rows.jsonl, format: jsonl}\n')
    else:
        source, start = ((STDLIB, '[python3, "{target}/app.py", "{port}"]') if kind.endswith("http.server") else
                         (STARLETTE, '[python3, -m, uvicorn, "app:app", --app-dir, "{target}", --port, "{port}", '
                                     '--log-level, warning]'))
        (folder / "target" / "app.py").write_text(source)
        browser = kind.startswith("browser")
        (folder / "target.yaml").write_text(SERVICE.format(start=start, kind="browser" if browser else "service")
                                            + ("browser: {shots: end}\n" if browser else ""))
        name, plan = ("ui.json", PAGE) if browser else ("requests.json", PLAN)
        (folder / "visible" / "c" / name).write_text(json.dumps(plan))
    return Target.load(folder / "target.yaml")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    kinds = KINDS
    seconds: dict[str, list[float]] = {k: [] for k in kinds}
    with tempfile.TemporaryDirectory(prefix="tri-bench-service-") as tmp:
        root = Path(tmp)
        gateways = {}
        for kind in kinds:
            (root / f"scratch-{kind}").mkdir()
            target = _target(root, kind)
            gateways[kind] = Gateway(target, root / kind / "visible", root / f"scratch-{kind}")
        case = Case(case="c-0123456789ab", inputs="c")
        for _ in range(args.repeats):
            for kind in kinds:  # interleaved: the machine's drift hits every kind alike
                start = time.perf_counter()
                result = gateways[kind].run_case(case)
                seconds[kind].append(time.perf_counter() - start)
                assert result.rows and result.provenance.extract_error is None, (kind, result.provenance)
    base = statistics.median(seconds["command"])
    print("| target kind | median s per case | min s | ratio to the command | ratio to the same app by requests |")
    print("|---|---|---|---|---|")
    for kind in kinds:
        median = statistics.median(seconds[kind])
        same = kind.removeprefix("browser, ")
        by_requests = f"{median / statistics.median(seconds[same]):.1f}x" if same != kind else "-"
        print(f"| {kind} | {median:.3f} | {min(seconds[kind]):.3f} | {median / base:.1f}x | {by_requests} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
