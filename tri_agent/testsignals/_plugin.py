"""The pytest plugin (entry point ``pytest11``: on in every session once tri-agent is installed; ``-p no:tri_agent``
turns it off): one spool entry per session, bound to the tree the session saw, and the tree's hash as a property
(``tri_agent.tree``) of the JUnit report the session writes, if it writes one.

The entry holds the working tree's hash at the start and at the end, the invocation, every collected node id, each
test's outcome with its phases combined, and the session's own exit status. It goes to the repository's git folder
(``<git dir>/tri-agent/spool/``, or ``TRI_AGENT_SPOOL``) under a temporary name and is renamed into place, so a
killed run leaves no half entry. Lean on purpose: the standard library and ``_tree`` only, never pydantic, since
every pytest session pays for what it imports. Outside a git work tree, or on an xdist worker (the controller
writes the one entry), it does nothing; a failure to write says one line on stderr and never changes the session's
outcome.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from .._version import __version__
from ..repository import clean_env
from ._tree import working_tree

_STATE: dict[str, Any] = {}
# hooks that can decide what runs and what a run reports; who implements them is recorded (pytest's own and
# pluggy's implementations, and this plugin's, are not)
OUTCOME_HOOKS = ("pytest_runtest_protocol", "pytest_runtest_setup", "pytest_runtest_call", "pytest_pyfunc_call",
                 "pytest_runtest_teardown", "pytest_runtest_makereport", "pytest_report_teststatus",
                 "pytest_runtest_logreport", "pytest_runtestloop", "pytest_collection_modifyitems")


def spool_dir(repo: Path) -> Path | None:
    """Where ``repo``'s entries go: ``TRI_AGENT_SPOOL``, else its git folder's ``tri-agent/spool``; None outside a
    git work tree."""
    if os.environ.get("TRI_AGENT_SPOOL"):
        return Path(os.environ["TRI_AGENT_SPOOL"])
    done = subprocess.run(["git", "-C", str(repo), "rev-parse", "--path-format=absolute", "--git-common-dir"],
                          capture_output=True, check=False, env=clean_env())
    if done.returncode != 0:
        return None
    return Path(done.stdout.decode("utf-8", "surrogateescape").strip()) / "tri-agent" / "spool"


def write_entry(folder: Path, entry: dict[str, Any]) -> Path:
    """``entry`` into ``folder`` under a new name, atomically (written, flushed to disk, then renamed)."""
    folder.mkdir(parents=True, exist_ok=True)
    name = f"{int(float(entry['finished']) * 1000):015d}-{os.getpid()}-{os.urandom(4).hex()}.json"
    part = folder / f".{name}.part"
    with open(part, "w", encoding="utf-8") as f:
        json.dump(entry, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(part, folder / name)
    return folder / name


def _top(path: Path) -> Path | None:
    done = subprocess.run(["git", "-C", str(path), "rev-parse", "--show-toplevel"], capture_output=True,
                          check=False, env=clean_env())
    return Path(done.stdout.decode("utf-8", "surrogateescape").strip()) if done.returncode == 0 else None


def _say(what: str) -> None:
    print(f"tri-agent: no spool entry for this session: {what}", file=sys.stderr)


def pytest_configure(config: Any) -> None:
    if _STATE:  # a session inside a session (pytester): the outer one's entry is the one written, without its runs
        _STATE["inner"] += 1
        return
    if hasattr(config, "workerinput"):  # an xdist worker: its controller sees every report and writes the entry
        return
    try:
        top = _top(Path(str(config.rootpath)))
        if top is None:
            return
        tree = working_tree(top)
        addopts = [f"PYTEST_ADDOPTS={os.environ['PYTEST_ADDOPTS']}"] if os.environ.get("PYTEST_ADDOPTS") else []
        _STATE.update(config=config, inner=0, top=top, tree=tree, started=time.time(), collected=[], phases={},
                      errors=[], rootdir=os.path.relpath(str(config.rootpath), top),
                      invocation=[str(a) for a in config.invocation_params.args] + addopts)
        if config.pluginmanager.hasplugin("xdist"):
            config.pluginmanager.register(_Controller(), "tri_agent_xdist")
    except Exception as exc:  # never the session's problem
        _STATE.clear()
        _say(f"{type(exc).__name__}: {exc}")


class _Controller:
    """xdist's hook, registered only where xdist is (pytest refuses a hook it has no specification for)."""

    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        if _outer() and not _STATE["collected"]:
            _STATE["collected"] = list(ids)  # every worker collects the same ids; the first says them all


def _ours(session: Any) -> bool:
    return bool(_STATE) and session.config is _STATE["config"]


def pytest_collection_finish(session: Any) -> None:
    if _ours(session) and session.items:
        _STATE["collected"] = [item.nodeid for item in session.items]


def pytest_unconfigure(config: Any) -> None:
    if _STATE and config is not _STATE["config"]:
        _STATE["inner"] -= 1


def _outer() -> bool:
    return bool(_STATE) and not _STATE["inner"]


def pytest_collectreport(report: Any) -> None:
    if _outer() and report.outcome == "failed":
        _STATE["errors"].append(report.nodeid or "<session>")


def pytest_runtest_logreport(report: Any) -> None:
    if _outer():
        _STATE["phases"].setdefault(report.nodeid, {})[report.when] = (report.outcome,
                                                                        bool(getattr(report, "wasxfail", "")))


def outcome(phases: dict[str, tuple[str, bool]]) -> str:
    """One test's phases as one outcome: passed only when every phase that ran passed and the call ran."""
    if any(o == "failed" for w, (o, _) in phases.items() if w != "call"):
        return "error"
    call, xfail = phases.get("call", phases.get("setup", ("failed", False)))
    if call == "skipped":
        return "xfailed" if xfail else "skipped"
    if call == "failed":
        return "failed"
    if "call" not in phases:
        return "error"
    return "xpassed" if xfail else "passed"


def hook_files(config: Any, top: Path) -> dict[str, list[str]]:
    """Each file (relative to ``top`` when inside it, else absolute) whose code implements one of ``OUTCOME_HOOKS``
    in this session, with the hooks it implements. Both the function's code file and its plugin's module file are
    named, so a code object that claims another file (``co_filename`` rewritten) does not hide where it was loaded
    from."""
    files = [getattr(sys.modules.get(m), "__file__", None) for m in ("_pytest", "pluggy")]
    own = [os.path.dirname(os.path.realpath(f)) for f in files if f] + \
        [os.path.dirname(os.path.dirname(os.path.realpath(__file__)))]
    root, found = os.path.realpath(top), dict[str, list[str]]()
    for name in OUTCOME_HOOKS:
        caller = getattr(config.hook, name, None)
        for impl in caller.get_hookimpls() if caller is not None else []:
            for where in _sources(impl):
                if any(d and where.startswith(d + os.sep) for d in own):
                    continue
                shown = os.path.relpath(where, root) if where.startswith(root + os.sep) else where
                if name not in found.setdefault(shown, []):
                    found[shown].append(name)
    return found


def _sources(impl: Any) -> set[str]:
    """The files a hook implementation comes from: its code's, and its plugin's module's."""
    code = getattr(getattr(impl, "function", None), "__code__", None)
    plugin = impl.plugin
    module = plugin if hasattr(plugin, "__file__") else sys.modules.get(type(plugin).__module__)
    files = {getattr(code, "co_filename", None), getattr(module, "__file__", None)} - {None}
    return {os.path.realpath(str(f)) if not str(f).startswith("<") else str(f) for f in files} or \
        {f"<{impl.plugin_name}>"}


def pytest_sessionstart(session: Any) -> None:
    """A JUnit report this session writes (``--junitxml``) names the tree it ran on, as the entry does."""
    if not _ours(session):
        return
    try:
        from _pytest.junitxml import xml_key

        xml = session.config.stash.get(xml_key, None)
        if xml is not None:
            xml.add_global_property("tri_agent.tree", _STATE["tree"].sha256)
            _STATE["xml"] = xml
    except Exception as exc:  # an older or newer pytest without the stash key: the entry still says it all
        _say(f"the JUnit report will not name its tree ({type(exc).__name__})")


@pytest.hookimpl(tryfirst=True)  # before junitxml's writes its report, so an edited tree is named in it
def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    if not _ours(session):
        return
    try:
        tree, end = _STATE["tree"], working_tree(_STATE["top"])
        if _STATE.get("xml") is not None and end.sha256 != tree.sha256:
            _STATE["xml"].add_global_property("tri_agent.tree_end", end.sha256)
        folder = spool_dir(_STATE["top"])
        if folder is None:
            return
        write_entry(folder, {
            "schema_version": 1, "tree_sha256": tree.sha256, "tree_sha256_end": end.sha256, "files": tree.files,
            "rootdir": _STATE["rootdir"], "invocation": _STATE["invocation"], "started": _STATE["started"],
            "finished": time.time(), "collected": _STATE["collected"],
            "outcomes": {k: outcome(v) for k, v in _STATE["phases"].items()}, "collect_errors": _STATE["errors"],
            "exit_status": int(exitstatus), "hooks": hook_files(session.config, _STATE["top"]),
            "plugin": __version__})
    except Exception as exc:
        _say(f"{type(exc).__name__}: {exc}")
    finally:
        _STATE.clear()
