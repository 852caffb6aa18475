"""Deterministic case generator for the ledger API, written from SPEC.md: seed -> cases.jsonl, pairs.jsonl and
inputs/<case>/requests.json (one request sequence per case)."""

import hashlib
import json
import math
import random
import sys
from pathlib import Path

START = "2026-03-01T09:00:00Z"
SECRETS = {"acc-ana": "ana-secret", "acc-ben": "ben-secret", "acc-cai": "cai-secret"}
SEEDED_FROM = {"acc-ana": 2, "acc-ben": 1, "acc-cai": 0}  # transfers each account starts with
QUERIES = [{"name": "accounts", "sql": "select id as account, balance from accounts order by id"},
           {"name": "transfers", "sql": "select id, to_account as \"to\", amount, fee, memo from transfers "
                                        "where id > 3 order by id"}]
AUTH = "Bearer {{token}}"


def case_id(seed, name):
    return "c-" + hashlib.sha256(f"{seed}:{name}".encode()).hexdigest()[:12]


def login(account, secret=None, step="login"):
    return {"id": step, "method": "POST", "path": "/sessions",
            "json": {"account": account, "secret": secret or SECRETS.get(account, "x")},
            "capture": {"token": "$.token"}, "select": {"error": "$.error"}}


def read(account, step, token=AUTH, clock=None):
    out = {"id": step, "path": f"/accounts/{account}", "headers": {"Authorization": token} if token else {},
           "select": {"error": "$.error", "balance": "$.balance", "transfers": "$.transfers"}}
    return {**out, "clock": clock} if clock else out


def pay(step, to, amount, key, memo=None, repeat=1):
    body = {"to": to, "amount": amount, **({"memo": memo} if memo is not None else {})}
    return {"id": step, "method": "POST", "path": "/transfers", "repeat": repeat, "json": body,
            "headers": {"Authorization": AUTH, "Idempotency-Key": key},
            "select": {"error": "$.error", "id": "$.id", "amount": "$.amount", "fee": "$.fee",
                       "balance": "$.balance", "memo": "$.memo"}}


def page(account, step, limit, cursor=None):
    query = {"limit": str(limit), **({"cursor": cursor} if cursor is not None else {})}
    return {"id": step, "path": f"/accounts/{account}/transfers", "query": query,
            "headers": {"Authorization": AUTH}, "capture": {"cur": "$.next"},
            "select": {"error": "$.error", "ids": "$.items[*].id", "size": "$.count", "more": "exists:$.next"}}


def raw(step, text, key="k-raw", times=1):
    return {"id": step, "method": "POST", "path": "/transfers", "text": text, "times": times,
            "headers": {"Authorization": AUTH, "Idempotency-Key": key, "Content-Type": "application/json"},
            "select": {"error": "$.error"}}


def cents(rng, low, high):
    value = rng.randint(low, high)
    return f"{value // 100}.{value % 100:02d}"


def paging(rng, limit, extra):
    """A walk over every page of Ana's transfers after ``extra`` new ones: the page sizes add up to her count."""
    steps = [login("acc-ana")]
    steps += [pay(f"pay-{i}", rng.choice(["acc-ben", "acc-cai"]), cents(rng, 100, 900), f"k-page-{i}")
              for i in range(extra)]
    pages = math.ceil((SEEDED_FROM["acc-ana"] + extra) / limit)
    steps += [page("acc-ana", f"page-{n + 1}", limit, "{{cur}}" if n else None) for n in range(pages)]
    return [*steps, read("acc-ana", "count")]


def history(rng, folder):
    """Chaos from the data side: a ledger whose rows the case brings (``data/``, loaded into the case's own database
    before the service starts): Ana's balance and a longer history of her transfers, walked page by page with a
    limit that ends exactly on a page boundary."""
    limit, pages = rng.choice([2, 3, 4]), rng.randint(2, 3)
    mine = limit * pages
    rows = [(n + 1, "acc-ana", rng.choice(["acc-ben", "acc-cai"]), cents(rng, 100, 3000)) for n in range(mine)]
    rows.insert(rng.randint(0, mine), (0, "acc-ben", "acc-ana", cents(rng, 100, 900)))  # one not hers to list
    data = folder / "data"
    data.mkdir()
    (data / "transfers.csv").write_text("id,from_account,to_account,amount,fee,memo\n" + "".join(
        f"{n + 1},{src},{dst},{amount},0.00,history\n" for n, (_, src, dst, amount) in enumerate(rows)))
    (data / "accounts.csv").write_text(f"id,balance\nacc-ana,{cents(rng, 20000, 90000)}\n")
    steps = [login("acc-ana"), read("acc-ana", "read")]
    steps += [page("acc-ana", f"page-{n + 1}", limit, "{{cur}}" if n else None) for n in range(pages)]
    return [*steps, read("acc-ana", "count")]


def cases(rng):
    half_cents = ["3.00", "7.00", "1.00", "11.00", "0.10"]  # 1.5 % of each ends on half a cent, or near it
    rng.shuffle(half_cents)
    later = "2026-03-01T09:14:59Z"
    yield "read-own", [login("acc-ana"), read("acc-ana", "read"), read("acc-ben", "read-other")], []
    yield "no-token", [read("acc-ana", "read", token=None), read("acc-ana", "forged", token="Bearer forged"),
                       {**pay("pay", "acc-ben", "1.00", "k-1"), "headers": {"Idempotency-Key": "k-1"}},
                       login("acc-ana", "wrong", step="bad-secret"), login("acc-zed", step="no-account")], []
    yield "foreign", [login("acc-ben"), read("acc-ana", "read"), page("acc-ana", "list", 10),
                      pay("pay", "acc-cai", "1.00", "k-foreign"), page("acc-ben", "own", 10)], QUERIES
    yield "expiry", [login("acc-ana"), read("acc-ana", "before", clock=later),
                     read("acc-ana", "at-expiry", clock="2026-03-01T09:15:00Z"),
                     read("acc-ana", "after", clock="2026-03-01T10:00:00Z")], []
    yield "fees", [login("acc-ana")] + [pay(f"pay-{i}", "acc-ben", a, f"k-fee-{i}", memo=f"fee {i}")
                                        for i, a in enumerate(half_cents)], QUERIES
    amount = cents(rng, 100, 2000)
    yield "replay-once", [login("acc-ana"), pay("pay", "acc-cai", amount, "k-same")], QUERIES
    yield "replay-twice", [login("acc-ana"), pay("pay", "acc-cai", amount, "k-same", repeat=2)], QUERIES
    yield "rejected", [
        login("acc-ana"),
        {**pay("no-key", "acc-ben", "1.00", ""), "headers": {"Authorization": AUTH}},
        pay("long-key", "acc-ben", "1.00", "k" * 65),
        raw("oversized", "x", times=5000), raw("malformed", "{not json"), raw("not-object", "[1, 2]"),
        pay("three-places", "acc-ben", "1.234", "k-a"), pay("zero", "acc-ben", "0.00", "k-b"),
        pay("too-much", "acc-ben", "10000.01", "k-c"), pay("number", "acc-ben", 5, "k-d"),
        pay("long-memo", "acc-ben", "1.00", "k-e", memo="m" * 141), pay("self", "acc-ana", "1.00", "k-f"),
        pay("nobody", "acc-zed", "1.00", "k-g"), pay("overdraft", "acc-ben", "99.00", "k-h"),
        pay("unicode", "acc-cai", cents(rng, 100, 500), "k-i", memo="Grüße ☃ 😀 ́e"),
    ], QUERIES
    yield "broke", [login("acc-cai"), pay("pay", "acc-ana", "0.01", "k-broke")], QUERIES
    for limit, extra in ((2, 3), (3, 4), (1, 1), (10, 0)):
        yield f"paging-{limit}-{extra}", paging(rng, limit, extra), []
    yield "cursors", [login("acc-ana"), page("acc-ana", "first", 1),
                      page("acc-ana", "tampered", 1, "{{cur}}0"), page("acc-ana", "made-up", 1, "2.abc"),
                      login("acc-ben", step="login-ben"), page("acc-ben", "foreign-cursor", 1, "{{cur}}"),
                      page("acc-ben", "zero-limit", 0), page("acc-ben", "big-limit", 51),
                      page("acc-ben", "word-limit", "ten")], []


def main():
    seed, out = sys.argv[1], Path(sys.argv[2])
    rng = random.Random(f"ledger-api:{seed}")
    written, ids = [], {}
    for name, steps, queries in [*cases(rng), ("history", None, QUERIES)]:
        cid = ids[name] = case_id(seed, name)
        folder = out / "inputs" / cid
        folder.mkdir(parents=True)
        steps = history(rng, folder) if steps is None else steps
        plan = {"schema_version": 1, "clock": START, "steps": steps, "queries": queries}
        (folder / "requests.json").write_text(json.dumps(plan, ensure_ascii=False, indent=1))
        written.append({"case": cid, "inputs": f"inputs/{cid}"})
    written.sort(key=lambda c: c["case"])  # the order says nothing about what a case tests
    (out / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in written))
    pair = {"relation": "replay-changes-nothing", "a": ids["replay-once"], "b": ids["replay-twice"]}
    (out / "pairs.jsonl").write_text(json.dumps(pair) + "\n")


if __name__ == "__main__":
    main()
