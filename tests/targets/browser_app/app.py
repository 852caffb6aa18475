"""A small web app for the browser-target tests (standard library only: it starts in a tenth of a second).

Run: APP_DB=notes.db APP_NOW=... python3 app.py PORT
"""

import html
import json
import os
import sqlite3
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

FORM = """<h1>Notes</h1><p aria-label="Clock">{now}</p>
<form method="post" action="/" aria-label="Note">
<label>Name <input name="name" required maxlength="10"></label>
<label>Colour <select name="colour"><option value="red">Red</option><option value="blue">Blue</option></select></label>
<label><input type="checkbox" name="agree" value="yes"> Agree</label>
<label>Attachment <input type="file" name="file"
  onchange="document.getElementById('f').value = this.files[0].name"></label>
<output id="f" aria-label="File"></output>
<button>Save</button></form><div id="late"></div>
<script>setTimeout(() => {{ document.getElementById('late').innerHTML = '<p role="status">Ready</p>'; }}, 300);
console.log('form shown');</script>"""


def page(body):
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Notes</title>'
            f'<link rel="icon" href="data:,"></head><body><main>{body}</main></body></html>').encode()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def send(self, status, body, kind="text/html; charset=utf-8", location=None):
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Cache-Control", "no-store")
        if location:
            self.send_header("Location", location)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        path = urlsplit(self.path).path
        db = sqlite3.connect(os.environ["APP_DB"])
        if path == "/health":
            self.send(200, b"ok", "text/plain")
        elif path == "/":
            self.send(200, page(FORM.format(now=html.escape(os.environ.get("APP_NOW", "")))))
        elif path == "/saved":
            rows = db.execute("select name, colour, agree from notes order by id").fetchall()
            items = "".join(f"<li>{html.escape(n)} {c} {a}</li>" for n, c, a in rows)
            self.send(200, page(f'<section aria-label="Saved"><h2>Saved</h2><ul>{items}</ul></section>'))
        elif path == "/api/count":
            count = db.execute("select count(*) from notes").fetchone()[0]
            self.send(200, json.dumps({"count": count}).encode(), "application/json")
        else:
            self.send(404, page("<h1>Not found</h1>"))
        db.close()

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        form = parse_qs(self.rfile.read(length).decode(), keep_blank_values=True)
        with sqlite3.connect(os.environ["APP_DB"]) as db:
            db.execute("insert into notes (name, colour, agree) values (?, ?, ?)",
                       (form.get("name", [""])[0], form.get("colour", [""])[0], form.get("agree", ["no"])[0]))
        self.send(303, b"", location="/saved")


if __name__ == "__main__":
    if sys.argv[1] == "migrate":
        with sqlite3.connect(sys.argv[2]) as db:
            db.execute("create table notes(id integer primary key, name text, colour text, agree text)")
    else:
        ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
