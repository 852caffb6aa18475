"""Independent oracle for the workshop booking desk: the spec's model of the app (sessions, one-time forms,
drafts, bookings, in whole cents) and of the browser in front of it (history, the page's own checks), replayed
over each case's UI plan. Written from SPEC.md, never from the app's code.

usage: oracle.py VISIBLE OUT  -> OUT/answers.jsonl, OUT/behaviors.jsonl
"""

import csv
import json
import re
import sys
from datetime import datetime, timedelta
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

WORKSHOPS = {"pottery": ("Pottery", 1250, 6), "printing": ("Printing", 1500, 3), "weaving": ("Weaving", 900, 10)}
PASSWORDS = {"ana": "ana-pass", "ben": "ben-pass"}
LIFETIME = timedelta(minutes=10)
TOKEN = "<token>"  # every form token, as the plan's volatile rule writes it
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
# the page's own check of an email field (HTML's valid e-mail address)
HTML_EMAIL = re.compile(r"^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?"
                        r"(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$")
LABELS = {"label:Name": "name", "label:Email": "email", "role:combobox:Workshop": "workshop", "label:Seats": "seats",
          "label:Vegetarian lunch": "lunch", "label:User": "user", "label:Password": "password"}


def moment(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def euros(cents):
    return f"€{cents // 100}.{cents % 100:02d}"


class Desk:
    """The app as the spec describes it. Forms are numbered; every token reads as <token>."""

    def __init__(self, clock):
        self.now = moment(clock)
        self.bookings = [{"id": 1, "user": "ben", "workshop": "pottery", "name": "Ben Ode", "email": "ben@example.org",
                          "seats": 4, "lunch": "regular", "total": "€50.00"},
                         {"id": 2, "user": "ben", "workshop": "printing", "name": "Ben Ode",
                          "email": "ben@example.org", "seats": 3, "lunch": "vegetarian", "total": "€45.00"}]
        self.sessions, self.forms, self.drafts = {}, {}, {}

    def user(self, sid):
        found = self.sessions.get(sid)
        return found[0] if found and self.now < found[1] else None

    def get(self, path, sid):
        """(status, page or redirect) for a GET."""
        url = urlsplit(path)
        query = parse_qs(url.query)
        if url.path == "/login":
            return 200, {"kind": "login", "next": query.get("next", ["/book"])[0], "fields": {}}
        if url.path == "/book":
            return self.book_get(query.get("form", [""])[0], sid)
        if url.path.startswith("/bookings/"):
            row = next((b for b in self.bookings if str(b["id"]) == url.path.split("/")[2]), None)
            user = self.user(sid)
            if row is None or user is None or row["user"] != user:
                return 404, {"kind": "notfound"}
            return 200, {"kind": "booking", "row": row}
        return 404, {"kind": "notfound"}

    def book_get(self, form, sid):
        user = self.user(sid)
        if user is None:
            return 303, self.to_login(form)
        if self.forms.get(form, {}).get("user") != user:
            token = f"f{len(self.forms) + 1}"
            self.forms[token] = {"user": user, "booking": None}
            return 303, f"/book?form={token}"
        if self.forms[form]["booking"] is not None:
            return 303, f"/bookings/{self.forms[form]['booking']}"
        draft = self.drafts.get(user)
        values = dict(draft[1]) if draft and draft[0] == form else {}
        return 200, {"kind": "form", "form": form, "fields": values, "problems": []}

    def to_login(self, form):
        return "/login?next=" + quote(f"/book?form={form}" if form else "/book", safe="")

    def login(self, fields, next_path):
        if PASSWORDS.get(fields.get("user", "")) != fields.get("password", ""):
            return 200, {"kind": "login", "next": next_path, "fields": {}, "alert": "Wrong user or password."}, None
        sid = f"s{len(self.sessions) + 1}"
        self.sessions[sid] = (fields["user"], self.now + LIFETIME)
        return 303, next_path, sid

    def book_post(self, form, values, sid):
        found = self.sessions.get(sid)
        if self.user(sid) is None:
            if found is not None:
                self.drafts[found[0]] = (form, dict(values))
            return 303, self.to_login(form)
        user = found[0]
        if self.forms.get(form, {}).get("user") != user:
            return self.book_get("", sid)
        if self.forms[form]["booking"] is not None:
            return 303, f"/bookings/{self.forms[form]['booking']}"
        problems = self.problems(values)
        if problems:
            return 200, {"kind": "form", "form": form, "fields": dict(values), "problems": problems}
        price, seats = WORKSHOPS[values["workshop"]][1], int(values["seats"])
        row = {"id": len(self.bookings) + 1, "user": user, "workshop": values["workshop"],
               "name": values["name"].strip(), "email": values["email"].strip(), "seats": seats,
               "lunch": "vegetarian" if values.get("lunch") else "regular", "total": euros(price * seats)}
        self.bookings.append(row)
        self.forms[form]["booking"] = row["id"]
        self.drafts.pop(user, None)
        return 303, f"/bookings/{row['id']}"

    def problems(self, values):
        out = []
        name = values.get("name", "").strip()
        if not name or len(name) > 40:
            out.append("Name must be 1 to 40 characters.")
        if not EMAIL.fullmatch(values.get("email", "").strip()):
            out.append("Email is not valid.")
        workshop = WORKSHOPS.get(values.get("workshop", ""))
        if workshop is None:
            out.append("Choose a workshop.")
        seats = values.get("seats", "")
        if not re.fullmatch(r"[0-9]+", seats) or not 1 <= int(seats) <= 4:
            out.append("Seats must be 1 to 4.")
        elif workshop is not None:
            taken = sum(b["seats"] for b in self.bookings if b["workshop"] == values["workshop"])
            if taken + int(seats) > workshop[2]:
                out.append("This workshop is full.")
        return out

    def api(self, sid):
        user = self.user(sid)
        if user is None:
            return 401, {"error": "sign in first"}
        return 200, {"bookings": [{"id": b["id"], "workshop": b["workshop"], "seats": b["seats"], "total": b["total"]}
                                  for b in self.bookings if b["user"] == user]}


class Browser:
    """One fresh browser context: a cookie, a history of addresses, the page shown and its form's state."""

    def __init__(self, desk):
        self.desk, self.sid, self.history, self.at, self.page, self.guarded = desk, None, [], -1, None, True

    def navigate(self, path, push=True):
        for _ in range(10):  # redirects are followed to the page that answers
            status, answer = self.desk.get(path, self.sid)
            if status != 303:
                break
            path = answer
        self.show(path, answer, push)

    def show(self, path, page, push=True):
        if push:
            self.history = [*self.history[: self.at + 1], path]
            self.at += 1
        else:
            self.history[self.at] = path
        self.page, self.guarded = page, True
        if page["kind"] == "form":
            page["fields"] = {"workshop": "pottery", "seats": "1", **page["fields"]}

    def follow(self, status, answer):
        if status == 303:
            self.navigate(answer)
        else:
            self.show(self.history[self.at], answer)

    def fill(self, target, value):
        field = LABELS[target]
        if self.guarded and field == "name":
            value = cut_utf16(value, 40)  # the page's maxlength counts UTF-16 code units
        if self.guarded and field == "email":
            value = value.strip()  # an email field drops surrounding white space
        self.page["fields"][field] = value

    def click(self, target, replay):
        fields = self.page["fields"]
        if target == "role:button:Sign in":
            status, answer, sid = self.desk.login(fields, self.page["next"])
            self.sid = sid or self.sid
            return self.follow(status, answer)
        if self.guarded and not page_accepts(fields):
            return None  # the page's own checks stop the form: nothing is sent
        form = self.page["form"]
        sent = {k: ("vegetarian" if k == "lunch" else v) for k, v in fields.items() if v is not False}
        self.follow(*self.desk.book_post(form, sent, self.sid))
        for _ in range(replay):  # the very same request again, same cookie
            self.desk.book_post(form, sent, self.sid)
        return None

    def back(self):
        self.at -= 1
        self.navigate(self.history[self.at], push=False)

    def read(self, source):
        kind, _, spec = source.partition(":")
        page = self.page
        if kind == "url":
            return re.sub(r"f[0-9]+", TOKEN, self.history[self.at])
        if kind == "tree":
            return booking_tree(page["row"]) if page["kind"] == "booking" else None  # a json field: the value
        if kind == "value":
            return page["fields"].get(LABELS[spec], "") if page["kind"] == "form" else None
        if spec == "role:alert:Problems":
            return " ".join(page["problems"]) if page["kind"] == "form" and page["problems"] else None
        if spec == "role:heading":
            return {"login": "Sign in", "form": "Book a workshop", "booking": "Booked", "notfound": "Not found"}[
                page["kind"]]
        raise ValueError(f"the oracle has no model of read {source!r}")


def cut_utf16(text, limit):
    out, units = "", 0
    for c in text:
        units += 2 if ord(c) > 0xFFFF else 1
        if units > limit:
            break
        out += c
    return out


def page_accepts(fields):
    """The page's checks: name and email required, the email well formed, seats a number from 1 to 4."""
    seats = fields.get("seats", "")
    return (fields.get("name", "") != "" and HTML_EMAIL.fullmatch(fields.get("email", "")) is not None
            and re.fullmatch(r"[0-9]+", seats) is not None and 1 <= int(seats) <= 4)


def booking_tree(row):
    title = WORKSHOPS[row["workshop"]][0]
    texts = [f"Name: {row['name']}", f"Email: {row['email']}", f"Workshop: {title}", f"Seats: {row['seats']}",
             f"Lunch: {row['lunch']}", f"Total: {row['total']}"]
    return [{"role": "region", "name": "Booking", "children": [
        {"role": "heading", "name": f"Booking {row['id']}", "level": "2"},
        *({"role": "paragraph", "text": t} for t in texts)]}]


def cell(value):
    """A key cell: text, or a JSON value as itself (the caliber's json fields)."""
    return value


def pick(document, path):
    """The spec's API fields the exam selects: $.error, $.bookings[*].<field>."""
    if path == "$.error":
        return document.get("error")
    field = path.rsplit(".", 1)[1]
    return [b[field] for b in document["bookings"]] if "bookings" in document else None


def seeded(desk, data):
    """The earlier bookings a case brings replace the fixture's."""
    if (data / "bookings.csv").is_file():
        with (data / "bookings.csv").open(encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle))
        desk.bookings = [{**row, "id": int(row["id"]), "seats": int(row["seats"])} for row in rows]
    return desk


def run(case, plan, data):
    desk = seeded(Desk(plan["clock"]), data)
    browser = Browser(desk)
    rows = []
    for step in plan["steps"]:
        if step.get("clock"):
            desk.now = moment(step["clock"])
        do = step["do"]
        row = {"case": case, "step": step["id"], "n": "0"}
        if do == "goto":
            browser.navigate(step["path"])
        elif do in ("fill", "select"):
            browser.fill(step["target"], step["value"])
        elif do == "check":
            browser.page["fields"][LABELS[step["target"]]] = True
        elif do == "unguard":
            browser.guarded = False
        elif do == "click":
            browser.click(step["target"], step.get("replay", 0))
        elif do == "back":
            browser.back()
        elif do == "request":
            status, document = desk.api(browser.sid)
            row.update(status=str(status), **{c: cell(pick(document, p)) for c, p in step["select"].items()})
        row.update({column: browser.read(source) for column, source in step.get("read", {}).items()})
        if step.get("read") or do == "request":
            rows.append(row)
    for query in plan.get("queries", []):
        new = [b for b in desk.bookings if b["id"] > 2]
        rows += [{"case": case, "step": query["name"], "n": str(i), "id": str(b["id"]), "workshop": b["workshop"],
                  "name": b["name"], "email": b["email"], "seats": str(b["seats"]), "lunch": b["lunch"],
                  "total": b["total"]} for i, b in enumerate(new)]
    return rows


def main():
    visible, out = Path(sys.argv[1]), Path(sys.argv[2])
    answers, behaviors = [], []
    for line in (visible / "cases.jsonl").read_text().splitlines():
        case = json.loads(line)
        plan = json.loads((visible / case["inputs"] / "ui.json").read_text())
        answers += run(case["case"], plan, visible / case["inputs"] / "data")
        behaviors.append({"case": case["case"], "behavior": "completed"})
    (out / "answers.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in answers))
    (out / "behaviors.jsonl").write_text("".join(json.dumps(b) + "\n" for b in behaviors))


if __name__ == "__main__":
    main()
