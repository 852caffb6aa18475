"""Workshop booking desk: server-rendered HTML forms over SQLite (sessions, one-time forms at their own address,
drafts kept across an expired session).

Run: DESK_DB=desk.db python3 -m uvicorn desk:app --port 8000 (see spec/README.md).
"""

import hashlib
import html
import json
import os
import re
import sqlite3
from datetime import UTC, datetime, timedelta
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse
from starlette.routing import Route

LIFETIME = timedelta(minutes=10)
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
FIELDS = ("name", "email", "workshop", "seats", "lunch")


def now():
    raw = os.environ.get("DESK_NOW")
    return datetime.fromisoformat(raw.replace("Z", "+00:00")) if raw else datetime.now(UTC)


def stamp(moment):
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def connect():
    connection = sqlite3.connect(os.environ["DESK_DB"], isolation_level=None)
    connection.row_factory = sqlite3.Row
    return connection


def new_token(db, kind):
    count = db.execute("select count(*) from sessions").fetchone()[0] + db.execute(
        "select count(*) from form_tokens").fetchone()[0]
    return hashlib.sha256(f"{kind}:{count}:{stamp(now())}".encode()).hexdigest()[:24]


def session_user(request, db, *, expired_too=False):
    row = db.execute("select user, expires from sessions where token = ?",
                     (request.cookies.get("sid", ""),)).fetchone()
    if row is None:
        return None, False
    live = row["expires"] > stamp(now())
    return (row["user"] if live or expired_too else None), live


def page(title, body, status=200):
    text = (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            f'<link rel="icon" href="data:,"></head><body><main>{body}</main></body></html>')
    return HTMLResponse(text, status_code=status, headers={"Cache-Control": "no-store"})


def euros(cents):
    return f"€{cents // 100}.{cents % 100:02d}"


async def health(request):
    return PlainTextResponse("ok")


def login_form(next_path, problem=""):
    alert = f'<p role="alert">{html.escape(problem)}</p>' if problem else ""
    return page("Sign in", f'<h1>Sign in</h1>{alert}<form method="post" action="/login">'
                f'<input type="hidden" name="next" value="{html.escape(next_path)}">'
                '<label>User <input name="user" required></label>'
                '<label>Password <input name="password" type="password" required></label>'
                "<button>Sign in</button></form>")


async def login(request):
    if request.method == "GET":
        return login_form(request.query_params.get("next", "/book"))
    form = await request.form()
    target = str(form.get("next") or "/book")
    target = target if target.startswith("/") and not target.startswith("//") else "/book"
    with connect() as db:
        user = db.execute("select id from users where id = ? and password = ?",
                          (form.get("user", ""), form.get("password", ""))).fetchone()
        if user is None:
            return login_form(target, "Wrong user or password.")
        token = new_token(db, "session")
        db.execute("insert into sessions values (?, ?, ?)", (token, user["id"], stamp(now() + LIFETIME)))
    response = RedirectResponse(target, status_code=303)
    response.set_cookie("sid", token, httponly=True, samesite="lax")
    return response


def book_form(db, user, token, values, problems):
    options = "".join(
        f'<option value="{w["id"]}"{" selected" if values.get("workshop") == w["id"] else ""}>'
        f'{html.escape(w["title"])} ({euros(w["price_cents"])})</option>'
        for w in db.execute("select * from workshops order by id"))
    alert = ("<ul role=\"alert\" aria-label=\"Problems\">"
             + "".join(f"<li>{html.escape(p)}</li>" for p in problems) + "</ul>") if problems else ""
    checked = " checked" if values.get("lunch") == "vegetarian" else ""
    body = (f'<h1>Book a workshop</h1>{alert}'
            f'<form method="post" action="/book?form={token}" aria-label="Booking form">'
            f'<label>Name <input name="name" required maxlength="40" value="{html.escape(values.get("name", ""))}">'
            f'</label><label>Email <input name="email" type="email" required '
            f'value="{html.escape(values.get("email", ""))}"></label>'
            f'<label>Workshop <select name="workshop">{options}</select></label>'
            f'<label>Seats <input name="seats" type="number" min="1" max="4" required '
            f'value="{html.escape(values.get("seats", "1"))}"></label>'
            f'<label><input type="checkbox" name="lunch" value="vegetarian"{checked}> Vegetarian lunch</label>'
            "<button>Book</button></form>")
    return page("Book a workshop", body)


def problems_of(db, values):
    problems = []
    name = values.get("name", "").strip()
    if not name or len(name) > 40:
        problems.append("Name must be 1 to 40 characters.")
    if not EMAIL.fullmatch(values.get("email", "").strip()):
        problems.append("Email is not valid.")
    workshop = db.execute("select * from workshops where id = ?", (values.get("workshop", ""),)).fetchone()
    if workshop is None:
        problems.append("Choose a workshop.")
    seats = values.get("seats", "")
    if not re.fullmatch(r"[0-9]{1,2}", seats):
        problems.append("Seats must be 1 to 4.")
    elif workshop is not None:
        taken = db.execute("select coalesce(sum(seats), 0) from bookings where workshop = ?",
                           (workshop["id"],)).fetchone()[0]
        if taken + int(seats) > workshop["capacity"]:
            problems.append("This workshop is full.")
    return problems


def to_login(token):
    return RedirectResponse("/login?next=" + quote(f"/book?form={token}" if token else "/book", safe=""),
                          status_code=303)


async def book(request):
    token = request.query_params.get("form", "")
    with connect() as db:
        user, live = session_user(request, db, expired_too=True)
        if not live:
            return to_login(token)
        form = db.execute("select booking from form_tokens where token = ? and user = ?", (token, user)).fetchone()
        if form is None:  # no form of this user's: a new one, at its own address
            token = new_token(db, "form")
            db.execute("insert into form_tokens values (?, ?, null)", (token, user))
            return RedirectResponse(f"/book?form={token}", status_code=303)
        if form["booking"] is not None and request.method == "GET":  # this form already booked: show it
            return RedirectResponse(f"/bookings/{form['booking']}", status_code=303)
        if request.method == "GET":
            draft = db.execute("select fields from drafts where user = ? and token = ?", (user, token)).fetchone()
            return book_form(db, user, token, json.loads(draft["fields"]) if draft else {}, [])
        values = {k: str(v) for k, v in (await request.form()).items() if k in FIELDS}
        problems = problems_of(db, values)
        if problems:
            return book_form(db, user, token, values, problems)
        price = db.execute("select price_cents from workshops where id = ?", (values["workshop"],)).fetchone()[0]
        lunch = "vegetarian" if values.get("lunch") == "vegetarian" else "regular"
        cursor = db.execute("insert into bookings (user, workshop, name, email, seats, lunch, total) "
                            "values (?, ?, ?, ?, ?, ?, ?)",
                            (user, values["workshop"], values["name"].strip(), values["email"].strip(),
                             int(values["seats"]), lunch, euros(price * int(values["seats"]))))
        db.execute("update form_tokens set booking = ? where token = ?", (cursor.lastrowid, token))
        db.execute("delete from drafts where user = ?", (user,))
    return RedirectResponse(f"/bookings/{cursor.lastrowid}", status_code=303)


async def booking(request):
    with connect() as db:
        user, _ = session_user(request, db)
        row = db.execute("select b.*, w.title from bookings b join workshops w on w.id = b.workshop "
                         "where b.id = ? and b.user = ?", (request.path_params["id"], user or "")).fetchone()
    if user is None or row is None:
        return page("Not found", "<h1>Not found</h1>", status=404)
    return page(f"Booking {row['id']}", (
        f'<h1>Booked</h1><section aria-label="Booking"><h2>Booking {row["id"]}</h2>'
        f'<p>Name: {html.escape(row["name"])}</p><p>Email: {html.escape(row["email"])}</p>'
        f'<p>Workshop: {html.escape(row["title"])}</p><p>Seats: {row["seats"]}</p>'
        f'<p>Lunch: {row["lunch"]}</p><p>Total: {row["total"]}</p></section>'))


async def api_bookings(request):
    with connect() as db:
        user, _ = session_user(request, db)
        if user is None:
            return JSONResponse({"error": "sign in first"}, status_code=401)
        rows = db.execute("select id, workshop, seats, total from bookings where user = ? order by id", (user,))
        return JSONResponse({"bookings": [dict(r) for r in rows]})


app = Starlette(routes=[
    Route("/health", health), Route("/login", login, methods=["GET", "POST"]),
    Route("/book", book, methods=["GET", "POST"]), Route("/bookings/{id:int}", booking),
    Route("/api/bookings", api_bookings),
])
