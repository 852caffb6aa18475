"""A table of contents from Markdown headings (see spec.md)."""

import html
import re
import unicodedata

HEADING = re.compile(r"^(#{1,3}) (.*)$")


def headings(text):
    found = []
    fenced = False
    for line in text.lstrip("\ufeff").splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        match = HEADING.match(line)
        if match is None:
            continue
        title = unicodedata.normalize("NFC", match.group(2).strip().rstrip("#").strip())
        if title:
            found.append((len(match.group(1)), title))
    return found


def slug(title):
    return re.sub(r"[\W_]+", "-", title.lower()).strip("-")


def run(text):
    out = ["<nav>"]
    used = {}
    entries = headings(text)
    for level, title in entries:
        base = slug(title)
        used[base] = used.get(base, 0) + 1
        anchor = base if used[base] < 2 else f"{base}-{used[base]}"
        out.append(f'<a class="h{level}" href="#{anchor}">{html.escape(title)}</a>')
    out.append(f"<!-- {len(entries)} headings -->")
    out.append("</nav>")
    return "\n".join(out)
