"""Sessions with expiry and a lock after failed sign-ins (see spec.md)."""

USERS = {"ann": "apple", "bob": "berry", "cy": "cherry"}
TTL = 300
WINDOW = 60
TRIES = 3


class Store:
    def __init__(self):
        self.sessions = {}
        self.failures = {}
        self.made = 0

    def login(self, now, user, password):
        user = user.strip().lower()
        recent = [t for t in self.failures.get(user, []) if now - t < WINDOW]
        self.failures[user] = recent
        if len(recent) >= TRIES:
            return "locked"
        if USERS.get(user) != password:
            recent.append(now)
            return "denied"
        self.made += 1
        token = f"s{self.made}"
        self.sessions[token] = [user, now]
        return f"ok {token}"

    def live(self, now, token):
        session = self.sessions.get(token)
        if session is None:
            return None
        if now - session[1] > TTL:
            del self.sessions[token]
            return None
        return session

    def touch(self, now, token):
        known = token in self.sessions
        session = self.live(now, token)
        if session is None:
            return "expired" if known else "unknown"
        session[1] = now
        return "alive"

    def logout(self, now, token):
        if self.live(now, token) is None:
            return "unknown"
        del self.sessions[token]
        return "bye"

    def who(self, now):
        users = [self.live(now, token) for token in list(self.sessions)]
        names = sorted({s[0] for s in users if s is not None})
        return " ".join(["users:", *names])


def run(text):
    store = Store()
    out = []
    for line in text.splitlines():
        now, event, *args = line.split()
        if event == "who":
            out.append(store.who(int(now)))
        else:
            out.append(getattr(store, event)(int(now), *args))
    return "\n".join(out)
