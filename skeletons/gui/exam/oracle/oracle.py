"""Independent oracle (replace with yours): the spec's model of the notes page, replayed over each page plan.
Written from SPEC.md, never from the app's code.

usage: oracle.py VISIBLE OUT  -> OUT/answers.jsonl, OUT/behaviors.jsonl
"""

import json
import sys
from pathlib import Path


def shown(notes):
    return "1 note" if len(notes) == 1 else f"{len(notes)} notes"


def run(case, plan):
    notes, typed, rows = [], "", []
    where, problem = "/", None
    for step in plan["steps"]:
        if step["do"] == "goto":
            where, problem = step["path"], None
        elif step["do"] == "fill":
            typed = step["value"]
        elif step["do"] == "click":  # the Add button: the form is sent with what was typed
            if 1 <= len(typed) <= 200 and typed.strip():
                notes.append(typed)
                where, problem = f"/?added={len(notes)}", None
            else:
                where, problem = "/notes", "bad note"
            typed = ""  # a new page: the field is empty again
        if "read" in step:
            now = {"url": where, "text:role:status": shown(notes), "text:role:alert": problem}
            rows.append({"case": case, "step": step["id"], "n": "0",
                         **{column: now[source] for column, source in step["read"].items()}})
    rows += [{"case": case, "step": "notes", "n": str(i), "id": str(i + 1), "text": t} for i, t in enumerate(notes)]
    return rows


def main():
    visible, out = Path(sys.argv[1]), Path(sys.argv[2])
    answers, behaviors = [], []
    for line in (visible / "cases.jsonl").read_text().splitlines():
        case = json.loads(line)
        answers += run(case["case"], json.loads((visible / case["inputs"] / "ui.json").read_text()))
        behaviors.append({"case": case["case"], "behavior": "completed"})
    (out / "answers.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in answers))
    (out / "behaviors.jsonl").write_text("".join(json.dumps(b) + "\n" for b in behaviors))


if __name__ == "__main__":
    main()
