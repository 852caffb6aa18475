"""The public Python API: the surface pinned name by name, listed once, and docs/api.md's example run end to end."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import tri_agent
from tri_agent import ExitCode, TriAgentError

ROOT = Path(__file__).resolve().parents[1]
PUBLIC = [
    "BuildRecord", "BuilderTurn", "Caliber", "Escalation", "ExitCode", "GateRefusal", "InfrastructureFailure",
    "LeakDetected",
    "LeakReport", "MalformedInput", "MutationSummary", "NotDeterministic", "NotReady", "PolicyViolation",
    "RunRecord", "ScoreInputs", "ScoreReport", "TamperDetected", "TrailReport", "TriAgentError", "UsageError",
    "Verdict", "VerifyReport", "__version__", "accept", "build_exam", "load_caliber", "mutate", "preview",
    "render_markdown", "run_exam", "scan_leaks", "score", "score_run", "seal", "verify", "verify_trail",
]


def test_the_public_surface_is_exactly_this() -> None:
    assert tri_agent.__all__ == PUBLIC


def test_every_public_name_resolves_from_the_module_it_is_listed_under() -> None:
    for name in PUBLIC:
        value = getattr(tri_agent, name)
        if name != "__version__":
            assert value.__module__ == f"tri_agent.{tri_agent._EXPORTS[name]}", name
    with pytest.raises(AttributeError, match="no attribute 'Gateway'"):
        _ = tri_agent.Gateway


def test_the_names_for_type_checkers_are_the_listed_ones() -> None:
    tree = ast.parse((ROOT / "tri_agent" / "__init__.py").read_text(encoding="utf-8"))
    [block] = [n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING"]
    imported = {a.asname or a.name: f"{n.module}" for n in block.body if isinstance(n, ast.ImportFrom)
                for a in n.names}
    assert imported == dict(tri_agent._EXPORTS.items())


def test_every_error_class_of_the_tree_is_public() -> None:
    from tri_agent import _errors

    tree = {n for n, v in vars(_errors).items() if isinstance(v, type) and issubclass(v, TriAgentError)}
    assert tree <= set(PUBLIC)


def test_the_api_raises_the_error_tree_with_the_commands_exit_codes(tmp_path: Path) -> None:
    with pytest.raises(TriAgentError) as caught:
        tri_agent.build_exam(tmp_path / "nowhere", "1", tmp_path / "out")
    assert caught.value.exit_code in (ExitCode.USAGE, ExitCode.MALFORMED) and "\n" not in caught.value.line()
    with pytest.raises(tri_agent.UsageError):
        tri_agent.verify_trail(tmp_path)
    with pytest.raises(tri_agent.UsageError, match="is not a run folder"):
        tri_agent.score_run(tmp_path, tmp_path)


def _example() -> str:
    [code] = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "api.md").read_text(encoding="utf-8"), flags=re.S)
    return code


def test_the_documented_example_runs(tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(_example(), encoding="utf-8")
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    done = subprocess.run([sys.executable, str(script)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=1200)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert re.fullmatch(r"\d+ cases, answer key sealed: [0-9a-f]{12}", lines[0])
    assert lines[1].startswith("fail ")  # the toy as committed has its planted bugs
    killed = re.fullmatch(r"(pass|fail) (\d+)/(\d+) killed \(\d+%\).*", lines[2])
    assert killed and 0 < int(killed[2]) <= int(killed[3])  # calibrating a buggy target: what it is
    assert lines[3].startswith("accepted after 5 rounds; ") and "scripted" in lines[3]
    assert re.fullmatch(r"\d+ records, trail digest [0-9a-f]{12}", lines[4])
