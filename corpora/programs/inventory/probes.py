"""Movement files that exercise every rule of the spec (never shown to a role)."""

import random


def inputs():
    out = [
        "\ufeffsku,qty,kind\nA1,10,in\nA1,5,out\n",
        "SKU,Kind,QTY\n b2 ,IN ,7\n\nb2,out,1\n",
        "sku,qty,kind\nx,1,lost\n",
        "sku,qty,kind\nz,6,in\ny,5,in\nx,4,in\nx,4,in\n",
        "sku,qty,kind\n",
        "kind,sku,qty\nin,q,3\n,,\nout,q,3\n",
        "\ufeffSku,Qty,Kind\nm,6,in\nm,1,Out\n",
    ]
    rng = random.Random(5)
    for _ in range(25):
        lines = ["sku,qty,kind"]
        for _ in range(rng.randint(1, 7)):
            lines.append(f"{rng.choice(['a', 'b', ' c', 'D'])},{rng.randint(1, 9)},{rng.choice(['in', 'out', 'IN'])}")
            if rng.random() < 0.15:
                lines.append("")
        out.append(("\ufeff" if rng.random() < 0.3 else "") + "\n".join(lines) + "\n")
    return out
