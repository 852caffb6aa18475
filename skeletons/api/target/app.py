"""The api skeleton's placeholder service (replace it with yours): notes in SQLite, served by uvicorn.

    NOTES_DB=notes.db python3 -m uvicorn app:app --port 8000
"""

import json
import os
import sqlite3

from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route


def connect():
    return sqlite3.connect(os.environ["NOTES_DB"], isolation_level=None)


async def health(request):
    return JSONResponse({"ok": True})


async def add(request):
    try:
        body = json.loads(await request.body())
    except ValueError:
        body = None
    text = body.get("text") if isinstance(body, dict) else None
    if not isinstance(text, str) or not 1 <= len(text) <= 200:
        return JSONResponse({"error": "bad note"}, status_code=400)
    with connect() as db:
        new = db.execute("insert into notes(text) values (?)", (text,)).lastrowid
    return JSONResponse({"id": new}, status_code=201)


async def one(request):
    with connect() as db:
        row = db.execute("select id, text from notes where id = ?", (request.path_params["id"],)).fetchone()
    if row is None:
        return JSONResponse({"error": "not found"}, status_code=404)
    return JSONResponse({"id": row[0], "text": row[1]})


async def count(request):
    with connect() as db:
        return JSONResponse({"count": db.execute("select count(*) from notes").fetchone()[0]})


app = Starlette(routes=[Route("/health", health), Route("/notes", add, methods=["POST"]),
                        Route("/notes", count), Route("/notes/{id:int}", one)])
