"""Event scripts that exercise every rule of the spec (never shown to a role)."""

import random


def inputs():
    out = [
        "0 login ann apple\n300 touch s1\n601 touch s1\n602 touch s1",
        "0 login ann x\n10 login ann x\n20 login ann x\n30 login ann apple\n80 login ann apple\n81 login Ann apple",
        "0 login ann x\n1 login ann x\n59 login ann x\n60 login ann apple",
        "0 login bob berry\n1 login ann apple\n2 login bob berry\n3 who\n4 logout s1\n5 who\n6 logout s1",
        "0 login cy cherry\n301 who\n302 touch s9\n303 logout s1",
        "0 login  ANN  apple\n1 who\n299 touch s1\n598 who\n599 who\n600 touch s1",
    ]
    rng = random.Random(17)
    for _ in range(30):
        now, lines = 0, []
        for _ in range(rng.randint(3, 10)):
            now += rng.choice([0, 1, 59, 60, 120, 299, 300, 301])
            kind = rng.choice(["login", "login", "touch", "logout", "who"])
            if kind == "login":
                user = rng.choice(["ann", "bob", "Cy"])
                lines.append(f"{now} login {user} {rng.choice(['apple', 'berry', 'cherry', 'x'])}")
            elif kind == "who":
                lines.append(f"{now} who")
            else:
                lines.append(f"{now} {kind} s{rng.randint(1, 3)}")
        out.append("\n".join(lines))
    return out
