"""The server side of a newsletter sign-up form (see spec.md)."""

import html

COUNTRIES = {"DE", "FR", "GB", "IE", "NL"}
TOPICS = {"news", "events", "jobs", "offers"}


def message(kind, text):
    return f'<p class="{kind}">{html.escape(text)}</p>'


def valid_email(email):
    if email.count("@") != 1:
        return False
    local, domain = email.split("@")
    if len(local) < 1 or "." not in domain[1:]:
        return False
    return True


def topics_of(raw):
    chosen = [t.strip().lower() for t in raw.split(",") if t.strip()]
    if not chosen or any(t not in TOPICS for t in chosen):
        return None
    unique = sorted(set(chosen))
    if len(unique) > 3:
        return None
    return unique


class Form:
    def __init__(self):
        self.subscribers = []

    def post(self, email, country, topics):
        email = email.strip().lower()
        if not valid_email(email):
            return message("error", "Please enter a valid email address.")
        country = country.replace(" ", "").upper()
        if country not in COUNTRIES:
            return message("error", "Please choose your country.")
        chosen = topics_of(topics)
        if chosen is None:
            return message("error", "Please choose one to three topics.")
        if any(s[0] == email for s in self.subscribers):
            return message("error", "You are already subscribed.")
        self.subscribers.append((email, country, chosen))
        return message("ok", f"Welcome! You will hear about {', '.join(chosen)}.")

    def listing(self):
        items = [f"<li>{html.escape(e)} ({c}): {', '.join(t)}</li>" for e, c, t in self.subscribers]
        return "<ul>" + "".join(items) + "</ul>"


def run(text):
    form = Form()
    out = []
    for line in text.splitlines():
        if line == "list":
            out.append(form.listing())
        else:
            out.append(form.post(*line.split("|")))
    return "\n".join(out)
