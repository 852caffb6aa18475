"""The package's layering (import-linter's contracts in pyproject.toml) holds, and each check bites; the import
graph has no cycle; every module is named where a reader looks for it."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT = Path(sys.executable).with_name("lint-imports")


def _lint(project: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(project))
    return subprocess.run([str(LINT), "--no-cache", "--no-logo", str(project / "pyproject.toml")], cwd=project,
                          env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "tri_agent", tmp_path / "tri_agent", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


CONTRACTS = 5
STAGES = "Stages are layered: a package never imports a higher one"
AGENT = "The agent side (who plays a role) never reaches the exam side (what is judged and how)"
EXAM = "The exam side never reaches the agent side"
WINGS = "The wings beside acceptance never import it"
KINDS = "Target kinds are layered: the gateway over the kinds, the kinds over the target file, the specs a leaf"


def _broken(report: str) -> set[str]:
    """The names of the contracts a lint-imports report lists as broken (it wraps long names over lines)."""
    text = " ".join(report.split())
    names = (STAGES, AGENT, EXAM, WINGS, KINDS)
    return {n for n in names if re.search(re.escape(n) + r" BROKEN", text)}


def test_the_package_keeps_its_layers() -> None:
    done = _lint(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{CONTRACTS} kept, 0 broken" in done.stdout


@pytest.mark.parametrize(("module", "planted", "breaks"), [
    # the bottom reaching the top; a wing (roleeval judges exams through the mutation gate, which seals) then reaches
    # acceptance through it too
    ("evidence/_seal.py", "from ..acceptance import _gate", {STAGES, WINGS}),
    ("scoring/_tables.py", "from ..evidence import _manifest", {STAGES}),     # two independent siblings
    ("targets/_gateway.py", "from ..mutation import _gate", {STAGES}),        # one layer up
    ("_errors.py", "from . import _yamldoc", {STAGES}),                       # the root of the exception tree
    ("drivers/_scripted.py", "from ..scoring import _tables", {AGENT}),       # a driver reading how it is scored
    ("isolation/_tools.py", "from ..targets import _gateway", {AGENT}),
    ("scoring/_grading.py", "from ..drivers import _episode", {STAGES, EXAM}),
    ("patchgate/__init__.py", "from ..acceptance import _rounds", {STAGES, WINGS}),
    ("targets/_specs.py", "from . import _target", {KINDS}),                  # the leaf importing up
    ("targets/service/_serve.py", "from ..browser import _drive", {KINDS}),  # a kind importing the one built on it
])
def test_a_planted_import_breaks_its_contract(copy: Path, module: str, planted: str, breaks: set[str]) -> None:
    path = copy / "tri_agent" / module
    path.write_text(path.read_text() + f"\n{planted}  # planted\n")
    done = _lint(copy)
    assert done.returncode == 1, done.stdout + done.stderr
    assert _broken(done.stdout) == breaks, done.stdout
    assert f"{CONTRACTS - len(breaks)} kept, {len(breaks)} broken" in done.stdout
    importer = "tri_agent." + module.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    assert importer in done.stdout


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    work.append((step, iter(sorted(graph.get(step, ())))))
                elif step in stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                part = stack[stack.index(node):]
                del stack[stack.index(node):]
                if len(part) > 1:
                    found.append(sorted(part))
    return found


def _graph(package: Path) -> dict[str, set[str]]:
    import grimp

    graph = grimp.build_graph(package.name)  # every import: at the top, in a function, under TYPE_CHECKING
    return {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}


def test_the_import_graph_has_no_cycle() -> None:
    assert _cycles(_graph(ROOT / "tri_agent")) == []


def test_the_cycle_finder_finds_a_planted_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_a_planted_cycle_is_found_in_a_copy(copy: Path) -> None:
    path = copy / "tri_agent" / "targets" / "_specs.py"
    path.write_text(path.read_text() + "\nfrom . import _target  # planted\n")
    done = subprocess.run([sys.executable, "-c", "import sys, json; sys.path.insert(0, sys.argv[1]); "
                           "import grimp; g = grimp.build_graph('tri_agent'); "
                           "print(json.dumps({m: sorted(g.find_modules_directly_imported_by(m)) for m in g.modules}))",
                           str(copy)], capture_output=True, text=True, timeout=120, cwd=copy)
    import json

    graph = {m: set(v) for m, v in json.loads(done.stdout).items()}
    assert any({"tri_agent.targets._specs", "tri_agent.targets._target"} <= set(c) for c in _cycles(graph))


def _named(package: Path) -> list[str]:
    """The modules and subpackages of ``package`` its docstring does not name (as ``_x`` or ``x/``)."""
    doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text(encoding="utf-8"))) or ""
    parts = [p.stem for p in package.glob("*.py") if p.name != "__init__.py"]
    parts += [p.name for p in package.iterdir() if (p / "__init__.py").is_file()]
    return sorted(n for n in parts if f"``{n}``" not in doc and f"``{n}/``" not in doc)


@pytest.mark.parametrize("package", sorted(p.parent.relative_to(ROOT).as_posix()
                                           for p in (ROOT / "tri_agent").glob("*/**/__init__.py")))
def test_every_module_is_named_in_its_package_docstring(package: str) -> None:
    assert _named(ROOT / package) == []


def test_every_top_level_module_is_in_the_architecture_map() -> None:
    tree = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8").split("```")[1]
    parts = [p.name for p in (ROOT / "tri_agent").iterdir() if (p / "__init__.py").is_file()]
    parts += [p.name for p in (ROOT / "tri_agent").glob("*.py") if p.name not in ("__init__.py", "__main__.py")]
    assert sorted(p for p in parts if not re.search(rf"(^|\s){re.escape(p)}/?(\s|$)", tree)) == []


def test_an_unnamed_module_is_seen(copy: Path) -> None:
    (copy / "tri_agent" / "targets" / "_stray.py").write_text('"""Named nowhere."""\n')
    assert _named(copy / "tri_agent" / "targets") == ["_stray"]


def test_a_new_module_outside_every_layer_breaks_the_contract(copy: Path) -> None:
    (copy / "tri_agent" / "_stray.py").write_text('"""Belongs to no layer."""\n')
    done = _lint(copy)
    assert done.returncode == 1
    assert "tri_agent._stray" in done.stdout


def _long_functions(package: Path, limit: int) -> list[str]:
    out = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > limit:
                    out.append(f"{path.relative_to(package.parent)}:{node.lineno} {node.name} ({length} lines)")
    return out


def test_no_function_of_the_package_is_over_60_lines() -> None:
    assert _long_functions(ROOT / "tri_agent", 60) == []


def test_a_long_function_is_seen(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text("def f():\n" + "    x = 1\n" * 61)
    assert _long_functions(tmp_path / "pkg", 60) == ["pkg/m.py:1 f (62 lines)"]


def test_the_command_line_module_is_thin() -> None:
    assert len((ROOT / "tri_agent" / "_cli.py").read_text(encoding="utf-8").splitlines()) < 300


def test_no_second_conftest_shadows_the_one_tests_import_from() -> None:
    """Test files import helpers with ``from conftest import ...``: a conftest.py in a subfolder would take that
    name for every file collected after it (it broke 32 test files once)."""
    found = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "tests").rglob("conftest.py"))
    assert found == ["tests/conftest.py"]
