"""Independent oracle (replace with yours): the spec's model of the notes, replayed over each request plan.
Written from SPEC.md, never from the service's code.

usage: oracle.py VISIBLE OUT  -> OUT/answers.jsonl, OUT/behaviors.jsonl
"""

import json
import re
import sys
from pathlib import Path

CAPTURE = re.compile(r"\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}")


def answer(notes, method, path, body):
    if method == "POST":
        try:
            data = json.loads(body)
        except ValueError:
            data = None
        text = data.get("text") if isinstance(data, dict) else None
        if not isinstance(text, str) or not 1 <= len(text) <= 200:
            return 400, {"error": "bad note"}
        notes.append(text)
        return 201, {"id": len(notes)}
    if path == "/notes":
        return 200, {"count": len(notes)}
    wanted = path.rsplit("/", 1)[1]
    if not wanted.isdigit() or not 1 <= int(wanted) <= len(notes):
        return 404, {"error": "not found"}
    return 200, {"id": int(wanted), "text": notes[int(wanted) - 1]}


def run(case, plan):
    notes, captured, rows = [], {}, []
    for step in plan["steps"]:
        path = CAPTURE.sub(lambda m: captured.get(m.group(1), ""), step["path"])
        body = json.dumps(step["json"], ensure_ascii=False) if "json" in step else step.get("text", "")
        status, got = answer(notes, step.get("method", "GET"), path, body)
        row = {"case": case, "step": step["id"], "n": "0", "status": str(status)}
        row.update({col: None if got.get(p[2:]) is None else str(got[p[2:]]) for col, p in step["select"].items()})
        rows.append(row)
        captured.update({name: str(got[p[2:]]) for name, p in step.get("capture", {}).items() if p[2:] in got})
    rows += [{"case": case, "step": "notes", "n": str(i), "id": str(i + 1), "text": t} for i, t in enumerate(notes)]
    return rows


def main():
    visible, out = Path(sys.argv[1]), Path(sys.argv[2])
    answers, behaviors = [], []
    for line in (visible / "cases.jsonl").read_text().splitlines():
        case = json.loads(line)
        answers += run(case["case"], json.loads((visible / case["inputs"] / "requests.json").read_text()))
        behaviors.append({"case": case["case"], "behavior": "answered"})
    (out / "answers.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in answers))
    (out / "behaviors.jsonl").write_text("".join(json.dumps(b) + "\n" for b in behaviors))


if __name__ == "__main__":
    main()
