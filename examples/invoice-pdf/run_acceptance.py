"""Run the invoice-pdf hard acceptance with scripted roles, in a scratch copy (the example is not modified).

The roles replay recorded actions: this is a simulation, labelled so in the scoreboard, and it can never
certify acceptance. Everything else is real: the renderer writes real PDF and HTML files in each case's jail, and
each document is read by a real parser (pypdf, lxml) in a jail of its own. Round 1 finds the three planted bugs;
the builder's recorded fix lands in round 2, which is green, then the final regression round. It ends with exit 9,
"passed, not certified", which is what this script expects.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TRI = os.environ.get("TRI_AGENT", "tri-agent")
GIT = ["git", "-c", "user.name=tri-agent demo", "-c", "user.email=demo@invalid"]


NOT_CERTIFIED = 9  # what a simulation that passes the protocol must end with
MARK = ".tri-agent-demo"  # only a folder this script made is ever cleared


def fresh(out: Path) -> Path:
    """The demo's one results folder, emptied of the previous demo (and of nothing else)."""
    if out.exists() and any(out.iterdir()):
        if not (out / MARK).exists():
            sys.exit(f"{out} holds files this demo did not write; set TRI_AGENT_EXAMPLE_OUT to an empty folder")
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / MARK).write_text("written by examples/invoice-pdf/run_acceptance.py; cleared by its next run\n")
    return out


def main() -> int:
    out = fresh(Path(os.environ.get("TRI_AGENT_EXAMPLE_OUT") or HERE / "out" / "acceptance").resolve())
    work = out / "invoice-pdf"
    shutil.copytree(HERE, work, ignore=shutil.ignore_patterns("builds", "runs", "mutation", "evidence", "out",
                                                              "SCOREBOARD.md", "__pycache__"))
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "the renderer as the agent built it"]):
        subprocess.run([*GIT, *args], cwd=work, check=True, capture_output=True)
    # the run's state (evidence store, builds) beside the copy, not in the user's home; fixed seeds make the
    # demo the same every time, and are one more reason it can never certify
    env = {**os.environ, "XDG_STATE_HOME": str(out / "state"), "TRI_AGENT_SEED_SECRET": "invoice-pdf-demo"}
    print(f"$ tri-agent accept {work}", flush=True)
    code = subprocess.run([TRI, "accept", str(work)], env=env).returncode
    board = work / "SCOREBOARD.md"
    if board.exists():
        print(board.read_text(encoding="utf-8"))
    verify = subprocess.run([TRI, "verify-trail", str(work)], env=env).returncode
    print(f"results: {work} (SCOREBOARD.md, REPORT.html, ACCEPTANCE.json, the tickets in exam/tickets/); "
          f"evidence store: {out / 'state'}")
    if code != NOT_CERTIFIED:
        print(f"expected exit {NOT_CERTIFIED} (passed, not certified: a simulation), got {code}", file=sys.stderr)
        return code or 1
    return verify


if __name__ == "__main__":
    sys.exit(main())
