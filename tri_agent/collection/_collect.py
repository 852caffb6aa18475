"""A tree's tests as pytest collects them, in the OS sandbox: ``pytest --collect-only`` with the collection's own
plugin (``_collector``), on a tree written out clean by the caller. The code collected is role-written (a
builder's, a pull request's), so it runs in the jail like everything else such a role wrote.
"""

from __future__ import annotations

import json
import secrets
import shutil
import sys
import tempfile
from pathlib import Path

from .._errors import InfrastructureFailure
from ..sandbox._jail import Jail
from ..sandbox._process import base_env

_HERE = Path(__file__).resolve().parent
_FILE_CAP = 64 << 20


def collect(tree: Path, timeout: float = 600.0) -> tuple[list[str], list[str]]:
    """``pytest --collect-only`` on ``tree`` in the jail: (node ids in order, files that failed to collect)."""
    with tempfile.TemporaryDirectory(prefix="collect-") as tmp:
        work = Path(tmp)
        for name in ("plugin", "home", "out"):
            (work / name).mkdir()
        plugin = f"collector_{secrets.token_hex(6)}"
        shutil.copyfile(_HERE / "_collector.py", work / "plugin" / f"{plugin}.py")
        out = work / "out" / f"{secrets.token_hex(8)}.json"
        env = {**base_env(work / "home"), "PATH": f"{Path(sys.executable).parent}:{base_env(work)['PATH']}",
               "PYTEST_ADDOPTS": "", "PYTHONPATH": str(work / "plugin"), "TRI_AGENT_COLLECTED": str(out),
               "TMPDIR": str(work / "home")}
        argv = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", plugin, "-p",
                "no:cacheprovider", "-p", "no:xdist", "-p", "no:tri_agent"]
        done, _ = Jail(readable=(tree, work / "plugin"), writable=(work / "home", work / "out")).run(
            argv, cwd=tree, env=env, timeout=timeout, file_cap=_FILE_CAP)
        if done.timed_out:
            raise InfrastructureFailure(f"collecting the tests of {tree} ran past {timeout:.0f} s",
                                        hint="raise --timeout")
        try:
            found = json.loads(out.read_text(encoding="utf-8"))
            return [str(i) for i in found["collected"]], [str(e) for e in found["errors"]]
        except (OSError, ValueError, KeyError, TypeError):
            tail = (done.stderr or done.stdout).decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
            raise InfrastructureFailure(f"pytest could not collect the tests of {tree} (exit {done.exit_code}): "
                                        f"{tail[0][:160]}", hint="run pytest --collect-only there") from None
