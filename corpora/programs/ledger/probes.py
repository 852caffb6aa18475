"""Request scripts that exercise every rule of the spec (never shown to a role)."""

import random


def inputs():
    out = [
        'ann POST /accounts {"name": " Ann "}\nann POST /accounts/1/deposit {"amount": "10.005"}\nann GET /accounts/1',
        'ann POST /accounts {"name": "  "}\nann GET /accounts/1',
        'ann POST /accounts {"name": "a"}\nbob GET /accounts/1\nbob POST /accounts/1/deposit {"amount": "5"}',
        'ann POST /accounts {"name": "a"}\nann POST /accounts/1/deposit {"amount": "5"}\n'
        'ann POST /accounts/1/withdraw {"amount": "5"}\nann GET /accounts/1',
        'ann POST /accounts {"name": "a"}\nann POST /accounts/1/withdraw {"amount": "0.01"}\nann GET /accounts/1',
        'ann POST /accounts {"name": "a"}\nann POST /accounts/1/deposit {"amount": "10000"}\n'
        'ann POST /accounts/1/deposit {"amount": "10000.01"}\nann POST /accounts/1/deposit {"amount": "0"}',
        'ann GET /accounts/9\nann DELETE /accounts/1\nann GET /things/1\nann POST /accounts/x/deposit {}',
        'ann POST /accounts {"name": "a"}\nann PUT /accounts/1/deposit {"amount": "1"}\n'
        'ann POST /accounts/1/close {}\nann POST /accounts/1/deposit {"amount": "abc"}',
    ]
    rng = random.Random(13)
    for _ in range(25):
        lines = ['ann POST /accounts {"name": "a"}', 'bob POST /accounts {"name": "b"}']
        for _ in range(rng.randint(2, 8)):
            who, acct = rng.choice(["ann", "bob"]), rng.randint(1, 3)
            act = rng.choice(["deposit", "withdraw", "get"])
            amount = rng.choice(["1", "2.505", "0.004", "50", "10000"])
            lines.append(f"{who} GET /accounts/{acct}" if act == "get" else
                         f'{who} POST /accounts/{acct}/{act} {{"amount": "{amount}"}}')
        out.append("\n".join(lines))
    return out
