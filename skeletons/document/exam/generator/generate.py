"""Case generator of the document skeleton: SEED OUT -> OUT/cases.jsonl, OUT/inputs/<case>/doc.txt, OUT/pairs.jsonl.

Replace the documents with inputs for your own spec. Keep it deterministic (every value drawn from the seed, so
two runs are byte-identical) and make every seed a new exam; keep one case per chaos kind of the preset.
"""

import hashlib
import json
import random
import sys
import unicodedata
from pathlib import Path

WORDS = ["budget", "north", "plan", "review", "sales", "team", "notes", "draft"]
ACCENTED = ["café", "résumé", "naïve", "Zürich", "señor"]
TAGS = ["finance", "ops", "légal", "q3", "hr"]


def case_id(seed: str, name: str) -> str:
    """Opaque: the id never says what the case tests."""
    return "c-" + hashlib.sha256(f"{seed}:{name}".encode()).hexdigest()[:12]


def phrase(rng: random.Random) -> str:
    return " ".join([rng.choice(ACCENTED), *rng.sample(WORDS, 2)])


def document(rng: random.Random, title: bool = True) -> str:
    tags = rng.sample(TAGS, 3)
    tags += [tags[0], ""]  # a repeated tag (kept) and an empty item (dropped)
    head = [f"{rng.choice(['Title', 'TITLE', 'title'])}:  {phrase(rng)} "] if title else []
    head.append(f"Tags: {' , '.join(tags)}")
    headings = [phrase(rng) for _ in range(rng.randint(1, 3))]
    body = [f"{'#' * rng.randint(1, 3)} {h}\nsee #{k} and {rng.choice(WORDS)}" for k, h in enumerate(headings)]
    body.append(f"# {headings[0]}")  # a repeated heading (kept)
    return "\n".join(head) + "\n\n" + "\n".join(body) + "\n"


def write(out: Path, seed: str, name: str, data: bytes) -> dict[str, str]:
    case = case_id(seed, name)
    folder = out / "inputs" / case
    folder.mkdir(parents=True)
    (folder / "doc.txt").write_bytes(data)
    return {"case": case, "inputs": f"inputs/{case}"}


def main() -> None:
    seed, out = sys.argv[1], Path(sys.argv[2])
    rng = random.Random(f"document-skeleton:{seed}")
    cases, pairs = [], []
    for k, nfd in enumerate([False, True, False]):  # each with a BOM and CRLF twin: the same fields
        text = unicodedata.normalize("NFD" if nfd else "NFC", document(rng))
        cases += [write(out, seed, f"plain-{k}", text.encode("utf-8")),
                  write(out, seed, f"bom-crlf-{k}", b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode("utf-8"))]
        pairs.append({"relation": "encoding-changes-nothing", "a": cases[-2]["case"], "b": cases[-1]["case"]})
    cases.append(write(out, seed, "no-title", document(rng, title=False).encode("utf-8")))
    cases.append(write(out, seed, "empty", b""))
    cases.append(write(out, seed, "latin-1", document(rng).encode("latin-1")))
    cases.sort(key=lambda c: c["case"])  # the order says nothing about what a case tests
    (out / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (out / "pairs.jsonl").write_text("".join(json.dumps(p) + "\n" for p in pairs))


if __name__ == "__main__":
    main()
