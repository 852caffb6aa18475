"""An accounts service over SQLite (see spec.md)."""

import json
import sqlite3
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

CENTS = Decimal("0.01")


class Reply:
    def __init__(self, status, body):
        self.status, self.body = status, body

    def line(self):
        return f"{self.status} {json.dumps(self.body, sort_keys=True)}"


def amount_of(body):
    try:
        amount = Decimal(str(body.get("amount"))).quantize(CENTS, rounding=ROUND_HALF_UP)
    except InvalidOperation:
        return None
    if amount <= 0 or amount > 10000:
        return None
    return amount


def shown(row):
    return {"id": row[0], "balance": f"{Decimal(row[2]):.2f}"}


def handle(db, user, method, path, body):
    parts = path.strip("/").split("/")
    if method == "POST" and parts == ["accounts"]:
        name = str(body.get("name", "")).strip()
        if not name:
            return Reply(status=422, body={"error": "name"})
        cursor = db.execute("insert into accounts (owner, balance, name) values (?, '0', ?)", (user, name))
        return Reply(status=201, body={"id": cursor.lastrowid, "balance": "0.00"})
    if len(parts) < 2 or parts[0] != "accounts" or not parts[1].isdigit():
        return Reply(status=400, body={"error": "request"})
    row = db.execute("select id, owner, balance from accounts where id = ?", (int(parts[1]),)).fetchone()
    if row is None:
        return Reply(status=404, body={"error": "account"})
    if row[1] != user:
        return Reply(status=403, body={"error": "owner"})
    if method == "GET" and len(parts) == 2:
        return Reply(status=200, body={"id": row[0], "balance": f"{Decimal(row[2]):.2f}"})
    if method != "POST" or len(parts) != 3 or parts[2] not in ("deposit", "withdraw"):
        return Reply(status=400, body={"error": "request"})
    amount = amount_of(body)
    if amount is None:
        return Reply(status=422, body={"error": "amount"})
    balance = Decimal(row[2]) + (amount if parts[2] == "deposit" else -amount)
    if balance < 0:
        return Reply(status=409, body={"error": "funds"})
    db.execute("update accounts set balance = ? where id = ?", (str(balance), row[0]))
    return Reply(status=200, body=shown((row[0], row[1], balance)))


def run(text):
    db = sqlite3.connect(":memory:")
    db.execute("create table accounts (id integer primary key, owner text, balance text, name text)")
    out = []
    for line in text.splitlines():
        user, method, path, *rest = line.split(" ", 3)
        body = json.loads(rest[0]) if rest else {}
        out.append(handle(db, user, method, path, body).line())
    return "\n".join(out)
