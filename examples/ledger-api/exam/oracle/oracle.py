"""Independent oracle for the ledger API: the spec's model of accounts, sessions and transfers in pure Decimal,
replayed over each case's request plan. Written from SPEC.md, never from the service's code.

usage: oracle.py VISIBLE OUT  -> OUT/answers.jsonl, OUT/behaviors.jsonl
"""

import csv
import json
import re
import sys
from datetime import datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

CENT = Decimal("0.01")
AMOUNT = re.compile(r"^[0-9]{1,5}(\.[0-9]{1,2})?$")
CAPTURE = re.compile(r"\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}")


class Ledger:
    def __init__(self, clock):
        self.accounts = {"acc-ana": ["Ana", "ana-secret", Decimal("100.00")],
                         "acc-ben": ["Ben", "ben-secret", Decimal("50.00")],
                         "acc-cai": ["Cai", "cai-secret", Decimal("0.00")]}
        self.transfers = [(1, "acc-ana", "acc-ben", Decimal("5.00"), Decimal("0.08"), ""),
                          (2, "acc-ana", "acc-cai", Decimal("2.50"), Decimal("0.04"), ""),
                          (3, "acc-ben", "acc-ana", Decimal("1.00"), Decimal("0.02"), "")]
        self.sessions, self.cursors, self.replays = {}, {}, {}
        self.now = moment(clock)

    def answer(self, method, path, query, headers, body):
        """(status, JSON body) of one request, as the spec says."""
        if path == "/health":
            return 200, {"ok": True}
        if method == "POST" and path == "/sessions":
            return self.login(body)
        who = self.session(headers)
        if isinstance(who, tuple):
            return who
        parts = path.strip("/").split("/")
        if method == "POST" and parts == ["transfers"]:
            return self.transfer(who, headers, body)
        if parts[0] == "accounts" and len(parts) == 2:
            return self.read(who, parts[1])
        return self.listing(who, parts[1], query)

    def login(self, body):
        data = as_object(body)
        if data is None:
            return 400, {"error": "malformed"}
        account = self.accounts.get(data.get("account"))
        if account is None or data.get("secret") != account[1]:
            return 401, {"error": "unauthenticated"}
        token = f"token-{len(self.sessions) + 1}"
        self.sessions[token] = (data["account"], self.now + timedelta(minutes=15))
        return 201, {"token": token}

    def session(self, headers):
        header = headers.get("Authorization", "")
        token = header[len("Bearer "):] if header.startswith("Bearer ") else None
        if token not in self.sessions:
            return 401, {"error": "unauthenticated"}
        account, expires = self.sessions[token]
        return (401, {"error": "expired"}) if self.now >= expires else account

    def read(self, who, account):
        if account != who:
            return 403, {"error": "forbidden"}
        owner, _, balance = self.accounts[account]
        count = sum(1 for t in self.transfers if t[1] == account)
        return 200, {"id": account, "owner": owner, "balance": money(balance), "transfers": count}

    def transfer(self, who, headers, body):
        key = headers.get("Idempotency-Key", "")
        if not 1 <= len(key) <= 64:
            return 400, {"error": "missing idempotency key"}
        if len(body) > 4096:
            return 413, {"error": "too large"}
        data = as_object(body)
        if data is None:
            return 400, {"error": "malformed"}
        if (who, key) in self.replays:
            return 201, self.replays[(who, key)]
        raw, memo, to = data.get("amount"), data.get("memo", ""), data.get("to")
        if not isinstance(raw, str) or not AMOUNT.match(raw) or not 0 < Decimal(raw) <= 10000:
            return 400, {"error": "bad amount"}
        if not isinstance(memo, str) or len(memo) > 140:
            return 400, {"error": "bad memo"}
        if to == who:
            return 400, {"error": "same account"}
        if to not in self.accounts:
            return 404, {"error": "no such account"}
        amount = Decimal(raw)
        fee = (amount * Decimal("0.015")).quantize(CENT, rounding=ROUND_HALF_UP)
        if amount + fee > self.accounts[who][2]:
            return 422, {"error": "insufficient funds"}
        new = max(t[0] for t in self.transfers) + 1
        self.transfers.append((new, who, to, amount, fee, memo))
        self.accounts[who][2] -= amount + fee
        self.accounts[to][2] += amount
        answer = {"id": new, "to": to, "amount": money(amount), "fee": money(fee), "memo": memo,
                  "balance": money(self.accounts[who][2])}
        self.replays[(who, key)] = answer
        return 201, answer

    def listing(self, who, account, query):
        if account != who:
            return 403, {"error": "forbidden"}
        limit = query.get("limit", "10")
        if not (limit.isascii() and limit.isdigit()) or not 1 <= int(limit) <= 50:
            return 400, {"error": "bad limit"}
        after = 0
        if "cursor" in query:
            found = self.cursors.get(query["cursor"])
            if found is None or found[0] != account:
                return 400, {"error": "bad cursor"}
            after = found[1]
        rest = [t for t in self.transfers if t[1] == account and t[0] > after]
        page = rest[:int(limit)]
        following = None
        if len(rest) > len(page):
            following = f"cursor-{len(self.cursors) + 1}"
            self.cursors[following] = (account, page[-1][0])
        items = [{"id": t[0], "to": t[2], "amount": money(t[3]), "fee": money(t[4]), "memo": t[5]} for t in page]
        return 200, {"items": items, "count": len(items), "next": following}

    def tables(self):
        accounts = [{"account": a, "balance": money(v[2])} for a, v in sorted(self.accounts.items())]
        transfers = [{"id": str(t[0]), "to": t[2], "amount": money(t[3]), "fee": money(t[4]), "memo": t[5] or None}
                     for t in self.transfers if t[0] > 3]
        return {"accounts": accounts, "transfers": transfers}


def moment(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def money(value):
    return str(value.quantize(CENT))


def as_object(body):
    try:
        data = json.loads(body)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def fill(value, captured):
    if isinstance(value, str):
        return CAPTURE.sub(lambda m: captured.get(m.group(1), ""), value)
    if isinstance(value, list):
        return [fill(v, captured) for v in value]
    if isinstance(value, dict):
        return {fill(k, captured): fill(v, captured) for k, v in value.items()}
    return value


def pick(body, path):
    """The value a '$.name' or '$.items[*].name' path names in the answer (None when it names nothing);
    'exists:$.name' is whether the answer holds a value there."""
    if path.startswith("exists:"):
        return "true" if pick(body, path.removeprefix("exists:")) is not None else "false"
    if path.startswith("$.items[*]."):
        items = body.get("items")
        return [item[path.rsplit(".", 1)[1]] for item in items] if isinstance(items, list) else None
    return body.get(path[2:])


def cell(value):
    """A key cell: text, a count as its digits, a list as JSON (the caliber's json fields); "" is no value."""
    if value is None or value == "":
        return None
    return value if isinstance(value, str | list) else str(value)


def seeded(ledger, data):
    """The rows a case brings replace the fixture's: balances by account, the whole history of transfers."""
    if (data / "accounts.csv").is_file():
        for row in rows_of(data / "accounts.csv"):
            ledger.accounts[row["id"]][2] = Decimal(row["balance"])
    if (data / "transfers.csv").is_file():
        ledger.transfers = [(int(r["id"]), r["from_account"], r["to_account"], Decimal(r["amount"]), Decimal(r["fee"]),
                             r["memo"]) for r in rows_of(data / "transfers.csv")]
    return ledger


def rows_of(path):
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def run(case, plan, data):
    ledger, captured, rows = seeded(Ledger(plan["clock"]), data), {}, []
    for step in plan["steps"]:
        if step.get("clock"):
            ledger.now = moment(step["clock"])
        sent = fill({k: v for k, v in step.items() if k not in ("capture", "select", "clock")}, captured)
        body = json.dumps(sent["json"], ensure_ascii=False) if "json" in sent else sent.get("text", "") * sent.get(
            "times", 1)
        for n in range(step.get("repeat", 1)):
            status, answer = ledger.answer(sent.get("method", "GET"), sent["path"], sent.get("query", {}),
                                           sent.get("headers", {}), body)
            row = {"case": case, "step": step["id"], "n": str(n), "status": str(status)}
            row.update({column: cell(pick(answer, path)) for column, path in step.get("select", {}).items()})
            rows.append(row)
            if n == 0:
                captured.update({name: answer[path[2:]] for name, path in step.get("capture", {}).items()
                                 if answer.get(path[2:]) is not None})
    tables = ledger.tables()
    for query in plan.get("queries", []):
        rows += [{"case": case, "step": query["name"], "n": str(i), **r} for i, r in enumerate(tables[query["name"]])]
    return rows


def main():
    visible, out = Path(sys.argv[1]), Path(sys.argv[2])
    answers, behaviors = [], []
    for line in (visible / "cases.jsonl").read_text().splitlines():
        case = json.loads(line)
        plan = json.loads((visible / case["inputs"] / "requests.json").read_text())
        answers += run(case["case"], plan, visible / case["inputs"] / "data")
        behaviors.append({"case": case["case"], "behavior": "answered"})
    (out / "answers.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in answers))
    (out / "behaviors.jsonl").write_text("".join(json.dumps(b) + "\n" for b in behaviors))


if __name__ == "__main__":
    main()
