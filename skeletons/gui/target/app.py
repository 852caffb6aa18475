"""The gui skeleton's placeholder web app (replace it with yours): notes in SQLite, one server-rendered page.

    NOTES_DB=notes.db python3 -m uvicorn app:app --port 8000
"""

import html
import os
import sqlite3
from urllib.parse import parse_qs

from starlette.applications import Starlette
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse
from starlette.routing import Route

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Notes</title></head>
<body><main>
<h1>Notes</h1>
{problem}
<form method="post" action="/notes" aria-label="New note">
  <label for="text">Note</label> <input id="text" name="text">
  <button type="submit">Add</button>
</form>
<p role="status">{count}</p>
<ul aria-label="Saved notes">{items}</ul>
</main></body></html>
"""


def connect():
    return sqlite3.connect(os.environ["NOTES_DB"], isolation_level=None)


def page(problem=None, status=200):
    with connect() as db:
        notes = [row[0] for row in db.execute("select text from notes order by id")]
    alert = f'<p role="alert">{html.escape(problem)}</p>' if problem else ""
    count = "1 note" if len(notes) == 1 else f"{len(notes)} notes"
    items = "".join(f"<li>{html.escape(n)}</li>" for n in notes)
    return HTMLResponse(PAGE.format(problem=alert, count=count, items=items), status_code=status)


async def health(request):
    return JSONResponse({"ok": True})


async def home(request):
    return page()


async def add(request):
    form = parse_qs((await request.body()).decode("utf-8", "replace"), keep_blank_values=True)
    text = form.get("text", [""])[0]
    if not 1 <= len(text) <= 200:
        return page("bad note", status=400)
    if not text.strip():
        return page("bad note", status=400)
    with connect() as db:
        new = db.execute("insert into notes(text) values (?)", (text,)).lastrowid
    return RedirectResponse(f"/?added={new}", status_code=303)


app = Starlette(routes=[Route("/health", health), Route("/", home), Route("/notes", add, methods=["POST"])])
