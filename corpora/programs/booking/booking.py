"""The server side of a workshop booking form (see spec.md)."""

WORKSHOPS = {"POT": 6, "WEAVE": 4, "GLASS": 10}


class Page:
    def __init__(self, status, title, message):
        self.status, self.title, self.message = status, title, message

    def line(self):
        return f"{self.status} {self.title}: {self.message}"


class Desk:
    def __init__(self):
        self.booked = {code: 0 for code in WORKSHOPS}
        self.tokens = set()

    def submit(self, token, workshop, name, seats):
        code = workshop.strip().upper()
        if code not in WORKSHOPS:
            return Page(status=404, title="Not found", message=workshop.strip())
        name = name.strip()
        if len(name) < 2 or len(name) > 40:
            return Page(status=422, title="Check the form", message="name")
        if not seats.strip().isdigit() or not 1 <= int(seats) <= 4:
            return Page(status=422, title="Check the form", message="seats")
        if token in self.tokens:
            return Page(status=409, title="Already sent", message=token)
        left = WORKSHOPS[code] - self.booked[code]
        if int(seats) > left:
            return Page(status=409, title="Full", message=f"{code} has {left} left")
        self.booked[code] += int(seats)
        self.tokens.add(token)
        return Page(status=200, title="Booked",
                    message=f"{name}, {int(seats)} seat(s) at {code}, {left - int(seats)} left")

    def summary(self):
        parts = [f"{code}={self.booked[code]}" for code in sorted(self.booked)]
        return Page(status=200, title="Summary", message=" ".join(parts))


def run(text):
    desk = Desk()
    out = []
    for line in text.splitlines():
        if line == "summary":
            out.append(desk.summary().line())
            continue
        token, workshop, name, seats = line.split("|")
        out.append(desk.submit(token, workshop, name, seats).line())
    return "\n".join(out)
