"""Deterministic case generator for the workshop booking desk, written from SPEC.md: seed -> cases.jsonl and
inputs/<case>/ui.json (one browser session per case, from a fresh database).

Every case is triggered through the page (sign in, fill, choose, tick, click, the back button) and asserted
through the machine channels first: the bookings table read from the database after the case, and the app's
API. The page's own state is read where the spec fixes it: the URL, the booking region's accessibility tree,
the problems alert, field values after a sign-in."""

import hashlib
import json
import random
import sys
from pathlib import Path

START = "2026-03-02T09:00:00Z"
PASSWORDS = {"ana": "ana-pass", "ben": "ben-pass"}
NAMES = ["Zoë Ångström", "Nguyễn Thị Minh", "Søren Ærø", "José María Núñez", "Zoe\u0308 Ke\u0301", "Ana 🎨 Lima",
         "Łukasz Żółw", "Dvořák Antonín"]
QUERIES = [{"name": "bookings", "sql": "select id, workshop, name, email, seats, lunch, total from bookings "
                                       "where id > 2 order by id"}]
AFTER_BOOK = {"where": "url", "booking": "tree:role:region:Booking", "problems": "text:role:alert:Problems"}
API = {"id": "api", "do": "request", "path": "/api/bookings",
       "select": {"error": "$.error", "ids": "$.bookings[*].id", "seat_counts": "$.bookings[*].seats",
                  "totals": "$.bookings[*].total"}}


def case_id(seed, name):
    return "c-" + hashlib.sha256(f"{seed}:{name}".encode()).hexdigest()[:12]


def sign_in(user, prefix="", read=None):
    steps = [{"id": f"{prefix}user", "do": "fill", "target": "label:User", "value": user},
             {"id": f"{prefix}password", "do": "fill", "target": "label:Password", "value": PASSWORDS[user]},
             {"id": f"{prefix}sign-in", "do": "click", "target": "role:button:Sign in",
              "read": read or {"where": "url"}}]
    return steps


def open_form(user):
    """The booking page asked for without a session: the sign-in page, then a new form."""
    return [{"id": "open", "do": "goto", "path": "/book", "read": {"where": "url"}}, *sign_in(user)]


def fill(name, email, workshop="pottery", seats="1", lunch=False, prefix=""):
    steps = [{"id": f"{prefix}name", "do": "fill", "target": "label:Name", "value": name},
             {"id": f"{prefix}email", "do": "fill", "target": "label:Email", "value": email},
             {"id": f"{prefix}workshop", "do": "select", "target": "role:combobox:Workshop", "value": workshop},
             {"id": f"{prefix}seats", "do": "fill", "target": "label:Seats", "value": seats}]
    if lunch:
        steps.append({"id": f"{prefix}lunch", "do": "check", "target": "label:Vegetarian lunch"})
    return steps


def book(step="book", **extra):
    return {"id": step, "do": "click", "target": "role:button:Book", "read": AFTER_BOOK, **extra}


def email_of(rng):
    return f"{rng.choice(['a', 'b', 'k'])}{rng.randint(1, 99)}@example.org"


def unguard():
    return {"id": "off", "do": "unguard", "target": "role:form:Booking form"}


def crowded(rng, folder):
    """Chaos from the data side: the case brings its own earlier bookings (``data/``, loaded into the case's database
    before the app starts), leaving the weaving workshop one to three seats; one seat too many is refused, the last
    seats are booked."""
    left, taken, rows = rng.randint(1, 3), 0, []
    while taken < 10 - left:
        seats = min(rng.randint(1, 4), 10 - left - taken)
        rows.append(f"{len(rows) + 1},ben,weaving,Ben Ode,ben@example.org,{seats},regular,€{9 * seats}.00\n")
        taken += seats
    (folder / "data").mkdir()
    (folder / "data" / "bookings.csv").write_text("id,user,workshop,name,email,seats,lunch,total\n" + "".join(rows))
    name = rng.choice(NAMES)
    return [*open_form("ana"), *fill(name, "ana@example.org", "weaving", str(left + 1)), book("too-many"),
            {"id": "fewer", "do": "fill", "target": "label:Seats", "value": str(left)}, book("last-seats"), API]


def cases(rng):
    name, other = rng.sample(NAMES, 2)
    workshop, seats = rng.choice([("pottery", "2"), ("weaving", str(rng.randint(1, 4))), ("pottery", "1")])
    foreign = {"id": "foreign", "do": "goto", "path": "/bookings/1",
               "read": {"where": "url", "heading": "text:role:heading", "booking": "tree:role:region:Booking"}}
    yield "book", [*open_form("ana"), *fill(name, email_of(rng), workshop, seats, rng.random() < 0.5), book(),
                   foreign, API]
    yield "book-ben", [{**API, "id": "api-before"}, *open_form("ben"),
                       *fill(f"  {other}  ", " ben@example.org ", "weaving", "3", True), book(), API]
    long = (other.replace(" ", "") * 10)[:41]
    yield "checks", [*open_form("ana"), *fill("", "ana@example.org"), book("empty-name"),
                     *fill(name, "not-an-address", prefix="again-"), book("bad-email"), unguard(),
                     *fill(long, "a@b", "weaving", rng.choice(["x", "-1", "2.5"]), prefix="off-"), book("unguarded")]
    yield "bypass-seats", [*open_form("ana"), unguard(),
                           *fill(name, "ana@example.org", "weaving", rng.choice(["0", "5", "9"])), book()]
    # 40 characters, all in the Basic Multilingual Plane: the page counts UTF-16 units, the server characters
    exact = ("".join(c for c in name if ord(c) <= 0xFFFF).replace(" ", "é") * 10)[:40]
    yield "capacity", [*open_form("ana"), *fill(exact, "ana@example.org", "printing", "1"), book("full"),
                       {"id": "three", "do": "select", "target": "role:combobox:Workshop", "value": "pottery"},
                       {"id": "fill-3", "do": "fill", "target": "label:Seats", "value": "3"}, book("too-many"),
                       {"id": "fill-2", "do": "fill", "target": "label:Seats", "value": "2"}, book("last-seats")]
    yield "resubmit", [*open_form("ben"), *fill(other, "ben@example.org", "weaving", "2", True),
                       book(replay=rng.randint(1, 2)),
                       {"id": "back", "do": "back", "read": {"where": "url", "booking": "tree:role:region:Booking"}},
                       API]
    # the session of 09:00 ends at 09:10:00: a form sent one second before books, one sent at that second does not
    yield "expiry", [*open_form("ana"), *fill(other, "ana@example.org", "pottery", "1"),
                     book("in-time", clock="2026-03-02T09:09:59Z"),
                     {"id": "new-form", "do": "goto", "path": "/book", "read": {"where": "url"}},
                     *fill(name, "ana@example.org", "weaving", "4", True, prefix="late-"),
                     book("too-late", clock="2026-03-02T09:10:00Z"),
                     *sign_in("ana", "again-", {"where": "url", "name": "value:label:Name",
                                                "seats_field": "value:label:Seats"}),
                     book("book-again"), API]


def main():
    seed, out = sys.argv[1], Path(sys.argv[2])
    rng = random.Random(f"workshop-gui:{seed}")
    written = []
    for name, steps in [*cases(rng), ("crowded", None)]:
        cid = case_id(seed, name)
        folder = out / "inputs" / cid
        folder.mkdir(parents=True)
        steps = crowded(rng, folder) if steps is None else steps
        plan = {"schema_version": 1, "clock": START, "steps": steps, "queries": QUERIES,
                "volatile": [{"pattern": "[0-9a-f]{24}", "as": "<token>"}]}
        (folder / "ui.json").write_text(json.dumps(plan, ensure_ascii=False, indent=1))
        written.append({"case": cid, "inputs": f"inputs/{cid}"})
    written.sort(key=lambda c: c["case"])  # the order says nothing about what a case tests
    (out / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in written))


if __name__ == "__main__":
    main()
