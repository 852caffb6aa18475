"""Run the csvkit-stats hard acceptance with scripted roles, in a scratch copy (the example is not modified).

The target is a real third-party program: csvstat from csvkit, installed from PyPI. The copy's target folder gets
the installed csvkit package beside the wrapper (vendored, as a project that patches a dependency does), so the
mutation gate can make mutants of csvstat itself. Round 1 finds csvkit's one discrepancy with its documentation,
the builder's recorded patch lands, three green rounds and the final round follow. Every role is scripted, so it
ends with exit 9, "passed, not certified", which is what this script expects.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TRI = os.environ.get("TRI_AGENT", "tri-agent")
GIT = ["git", "-c", "user.name=tri-agent demo", "-c", "user.email=demo@invalid"]
NOT_CERTIFIED = 9  # what a simulation that passes the protocol must end with
VERSION = "2.2.0"  # the csvkit the exam was written for
MARK = ".tri-agent-demo"  # only a folder this script made is ever cleared


def vendor(target: Path) -> Path:
    """Copy the installed csvkit beside the wrapper in ``target``; refuse another version than the exam's."""
    spec = importlib.util.find_spec("csvkit")
    if spec is None or spec.origin is None:
        sys.exit(f"csvkit is not installed: pip install csvkit=={VERSION} (python3 dev.py test installs it)")
    from importlib.metadata import version

    if version("csvkit") != VERSION:
        sys.exit(f"csvkit {version('csvkit')} is installed; this exam was written for {VERSION}: "
                 f"pip install csvkit=={VERSION}")
    package = Path(spec.origin).parent
    return Path(shutil.copytree(package, target / "csvkit", ignore=shutil.ignore_patterns("__pycache__")))


def prepare(project: Path) -> None:
    """The example as a project an agent hands over: csvkit vendored, everything committed."""
    shutil.copytree(HERE, project, ignore=shutil.ignore_patterns("out", "__pycache__"))
    vendor(project / "target")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "csvstat wrapped, csvkit vendored"]):
        subprocess.run([*GIT, *args], cwd=project, check=True, capture_output=True)


def main() -> int:
    out = Path(os.environ.get("TRI_AGENT_EXAMPLE_OUT") or HERE / "out").resolve()
    if out.exists() and any(out.iterdir()):
        if not (out / MARK).exists():
            sys.exit(f"{out} holds files this script did not write; set TRI_AGENT_EXAMPLE_OUT to an empty folder")
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / MARK).write_text("written by examples/csvkit-stats/run_acceptance.py; cleared by its next run\n")
    work = out / "csvkit-stats"
    prepare(work)
    env = {**os.environ, "XDG_STATE_HOME": str(out / "state"), "TRI_AGENT_SEED_SECRET": "csvkit-stats-demo"}
    print(f"$ tri-agent accept {work}", flush=True)
    code = subprocess.run([TRI, "accept", str(work)], env=env).returncode
    verify = subprocess.run([TRI, "verify-trail", str(work)], env=env).returncode
    print(f"results: {work} (SCOREBOARD.md, REPORT.html, ACCEPTANCE.json); evidence store: {out / 'state'}")
    if code != NOT_CERTIFIED:
        print(f"expected exit {NOT_CERTIFIED} (passed, not certified: a simulation), got {code}", file=sys.stderr)
        return code or 1
    return verify


if __name__ == "__main__":
    sys.exit(main())
