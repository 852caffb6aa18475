"""Ledger API: accounts, sessions, transfers with fees and idempotency keys, paged listings.

Run: LEDGER_DB=ledger.db python3 -m uvicorn ledger:app --port 8000 (see spec/README.md).
"""

import hashlib
import json
import os
import re
import sqlite3
from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal

from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

SIGNING = "ledger-signing-key"
MAX_BODY = 4096
FEE_RATE = Decimal("0.015")
CENT = Decimal("0.01")
LIFETIME = timedelta(minutes=15)
AMOUNT = re.compile(r"^[0-9]{1,5}(\.[0-9]{1,2})?$")


def now():
    raw = os.environ.get("LEDGER_NOW")
    return datetime.fromisoformat(raw.replace("Z", "+00:00")) if raw else datetime.now(UTC)


def connect():
    connection = sqlite3.connect(os.environ["LEDGER_DB"], isolation_level=None)
    connection.row_factory = sqlite3.Row
    return connection


def error(status, message):
    return JSONResponse({"error": message}, status_code=status)


def signed(text):
    return hashlib.sha256(f"{SIGNING}:{text}".encode()).hexdigest()[:16]


def stamp(moment):
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


async def json_object(request):
    try:
        body = json.loads(await request.body())
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


def authenticated(request, db):
    header = request.headers.get("authorization", "")
    row = db.execute("select account, expires from sessions where token = ?",
                     (header.removeprefix("Bearer "),)).fetchone() if header.startswith("Bearer ") else None
    if row is None:
        return None, error(401, "unauthenticated")
    if now() >= datetime.fromisoformat(row["expires"]):
        return None, error(401, "expired")
    return row["account"], None


async def health(request):
    return JSONResponse({"ok": True})


async def sessions(request):
    body = await json_object(request)
    if body is None:
        return error(400, "malformed")
    with connect() as db:
        row = db.execute("select secret from accounts where id = ?", (str(body.get("account")),)).fetchone()
        if row is None or body.get("secret") != row["secret"]:
            return error(401, "unauthenticated")
        issued = now()
        token = signed(f"token:{body['account']}:{issued.isoformat()}")
        db.execute("insert or replace into sessions(token, account, expires) values (?, ?, ?)",
                   (token, body["account"], (issued + LIFETIME).isoformat()))
    return JSONResponse({"token": token, "expires_at": stamp(issued + LIFETIME)}, status_code=201)


async def account(request):
    with connect() as db:
        owner, denied = authenticated(request, db)
        if denied:
            return denied
        wanted = request.path_params["id"]
        if wanted != owner:
            return error(403, "forbidden")
        row = db.execute("select id, owner, balance from accounts where id = ?", (wanted,)).fetchone()
        count = db.execute("select count(*) from transfers where from_account = ?", (wanted,)).fetchone()[0]
    return JSONResponse({"id": row["id"], "owner": row["owner"], "balance": row["balance"], "transfers": count})


async def transfer(request):
    with connect() as db:
        sender, denied = authenticated(request, db)
        if denied:
            return denied
        key = request.headers.get("idempotency-key", "")
        if not 1 <= len(key) <= 64:
            return error(400, "missing idempotency key")
        if len(await request.body()) > MAX_BODY:
            return error(413, "too large")
        body = await json_object(request)
        if body is None:
            return error(400, "malformed")
        replay = db.execute("select answer from replays where account = ? and key = ?", (sender, key)).fetchone()
        if replay is not None:
            return JSONResponse(json.loads(replay["answer"]), status_code=201)
        return apply(db, sender, key, body)


def apply(db, sender, key, body):
    raw = body.get("amount")
    if not isinstance(raw, str) or not AMOUNT.match(raw) or not Decimal(0) < Decimal(raw) <= Decimal("10000"):
        return error(400, "bad amount")
    amount, memo, to = Decimal(raw).quantize(CENT), body.get("memo", ""), body.get("to")
    if not isinstance(memo, str) or len(memo) > 140:
        return error(400, "bad memo")
    if to == sender:
        return error(400, "same account")
    if db.execute("select 1 from accounts where id = ?", (str(to),)).fetchone() is None:
        return error(404, "no such account")
    fee = (amount * FEE_RATE).quantize(CENT, rounding=ROUND_HALF_UP)
    balance = Decimal(db.execute("select balance from accounts where id = ?", (sender,)).fetchone()[0])
    if amount + fee > balance:
        return error(422, "insufficient funds")
    db.execute("begin immediate")
    new_id = db.execute("select coalesce(max(id), 0) + 1 from transfers").fetchone()[0]
    db.execute("insert into transfers(id, from_account, to_account, amount, fee, memo) values (?, ?, ?, ?, ?, ?)",
               (new_id, sender, to, str(amount), str(fee), memo))
    db.execute("update accounts set balance = ? where id = ?", (str(balance - amount - fee), sender))
    received = Decimal(db.execute("select balance from accounts where id = ?", (to,)).fetchone()[0])
    db.execute("update accounts set balance = ? where id = ?", (str(received + amount), to))
    answer = {"id": new_id, "to": to, "amount": str(amount), "fee": str(fee), "memo": memo,
              "balance": str(balance - amount - fee)}
    db.execute("insert into replays(account, key, answer) values (?, ?, ?)", (sender, key, json.dumps(answer)))
    db.execute("commit")
    return JSONResponse(answer, status_code=201)


async def listing(request):
    with connect() as db:
        owner, denied = authenticated(request, db)
        if denied:
            return denied
        wanted = request.path_params["id"]
        if wanted != owner:
            return error(403, "forbidden")
        raw_limit = request.query_params.get("limit", "10")
        if not raw_limit.isdigit() or not 1 <= int(raw_limit) <= 50:
            return error(400, "bad limit")
        limit, after = int(raw_limit), 0
        cursor = request.query_params.get("cursor")
        if cursor is not None:
            position, _, signature = cursor.partition(".")
            if not position.isdigit() or signature != signed(f"cursor:{wanted}:{position}"):
                return error(400, "bad cursor")
            after = int(position)
        rows = db.execute("select id, to_account, amount, fee, memo from transfers where from_account = ? and id > ? "
                          "order by id limit ?", (wanted, after, limit + 1)).fetchall()
    items = [{"id": r["id"], "to": r["to_account"], "amount": r["amount"], "fee": r["fee"], "memo": r["memo"]}
             for r in rows[:limit]]
    last = items[-1]["id"] if items else 0
    following = f"{last}.{signed(f'cursor:{wanted}:{last}')}" if len(rows) > limit else None
    return JSONResponse({"items": items, "count": len(items), "next": following})


app = Starlette(routes=[
    Route("/health", health),
    Route("/sessions", sessions, methods=["POST"]),
    Route("/accounts/{id}", account),
    Route("/accounts/{id}/transfers", listing),
    Route("/transfers", transfer, methods=["POST"]),
])
