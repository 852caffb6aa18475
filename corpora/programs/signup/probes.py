"""Form posts that exercise every rule of the spec (never shown to a role)."""

import random


def inputs():
    out = [
        " Ann@Example.org |de|news, Events\nann@example.org|fr|jobs\nlist",
        "a@b|de|news\na@@b.c|de|news\n@b.c|de|news\na@.c|de|news\na@b.c|de|news\nlist",
        "x@y.z|d e|news\nx@y.z|us|news\nx@y.z|GB|\nx@y.z|GB|news,jobs,offers,events\nx@y.z|GB|,news,,\nlist",
        "x@y.z|ie|news,news,NEWS\ny@y.z|nl|sport\nz<b>@y.z|nl|offers\nlist",
        "q@y.z|fr|jobs,offers,events\nlist",
    ]
    rng = random.Random(23)
    for _ in range(30):
        lines = []
        for _ in range(rng.randint(2, 6)):
            email = rng.choice(["a@b.c", " B@b.c", "c@b.co", "bad", "d@b", "e@x.y"])
            topics = ",".join(rng.choice(["news", " Jobs", "events", "offers", "", "news"])
                              for _ in range(rng.randint(0, 4)))
            lines.append(f"{email}|{rng.choice(['de', 'FR', 'xx', 'g b'])}|{topics}")
        lines.append("list")
        out.append("\n".join(lines))
    return out
