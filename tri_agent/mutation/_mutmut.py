"""Syntactic mutants from mutmut, judged by our case runner, never by pytest.

mutmut 3 writes a ``mutants/`` copy of the sources in which every mutated function is a trampoline:
the environment variable ``MUTANT_UNDER_TEST=<module>.<mutant>`` selects one mutant per process, and
any other value runs the original code. ``mutmut run`` would then judge mutants with pytest; we only
let it *generate* them (in a child process, in a throwaway copy of the target) and run each selected
mutant through the gateway like any other target. A script run as ``python3 grades.py`` is the module
``__main__``, so mutants of an entry script are selected with that prefix.

The generating child prints one JSON object per mutant: its name, file and the span it changes
(located with mutmut's own parser, checked against the names mutmut recorded).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._errors import InfrastructureFailure

ENV = "MUTANT_UNDER_TEST"


@dataclass(frozen=True)
class SyntacticMutant:
    name: str  # mutmut's name, e.g. grades.x_line__mutmut_13
    file: str
    line: int
    column: int
    end_line: int
    end_column: int
    original: str
    replacement: str

    def selector(self, entry_modules: set[str]) -> str:
        module, _, mutant = self.name.rpartition(".")
        return f"__main__.{mutant}" if module in entry_modules else self.name


def generate(baseline: Path, work: Path) -> tuple[Path, list[SyntacticMutant]]:
    """Mutate every Python file of a copy of ``baseline``; returns the mutated tree and its mutants."""
    src = work / "src"
    shutil.copytree(baseline, src, symlinks=True, ignore=shutil.ignore_patterns("mutants", "__pycache__"))
    sources = sorted(p.relative_to(src).as_posix() for p in src.rglob("*.py") if not _is_test(p))
    if not sources:
        return src, []
    (src / "setup.cfg").write_text("[mutmut]\nsource_paths=\n" + "".join(f"    {s}\n" for s in sources))
    done = subprocess.run([sys.executable, "-m", "tri_agent.mutation._mutmut", str(src)], capture_output=True,
                          text=True, timeout=600, env={**os.environ, ENV: ""})
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise InfrastructureFailure(f"mutmut could not generate mutants: {tail}", hint="is the target valid Python?")
    mutants = [SyntacticMutant(**json.loads(line)) for line in done.stdout.splitlines() if line.startswith("{")]
    return src / "mutants", mutants


def sample(mutants: list[SyntacticMutant], n: int, seed: str) -> list[SyntacticMutant]:
    ordered = sorted(mutants, key=lambda m: m.name)
    return sorted(random.Random(seed).sample(ordered, min(n, len(ordered))), key=lambda m: m.name)


def mutmut_env() -> dict[str, str]:
    """What a mutated tree needs at run time: mutmut's trampoline must be importable."""
    import mutmut

    return {"PYTHONPATH": str(Path(mutmut.__file__).resolve().parents[1])}


def _is_test(path: Path) -> bool:
    return path.name.startswith("test") or any(part in ("tests", "test") for part in path.parts)


def _main(src: Path) -> None:  # the generating child: cwd is the throwaway copy
    os.chdir(src)
    import contextlib
    import io

    from mutmut.__main__ import create_file_mutants
    from mutmut.utils.file_utils import copy_also_copy_files, copy_src_dir, walk_source_files

    with contextlib.redirect_stdout(io.StringIO()):  # mutmut narrates; our stdout is the protocol
        Path("mutants").mkdir(exist_ok=True)
        copy_src_dir()
        copy_also_copy_files()
        paths = list(walk_source_files())
        for path in paths:
            result = create_file_mutants(path)
            if result.error:
                raise result.error
    for path in paths:
        for mutant in _locate(Path(path)):
            print(json.dumps(mutant))


def _locate(path: Path) -> list[dict[str, object]]:
    """Every mutant of ``path`` with the span it changes, in mutmut's own numbering."""
    from collections import defaultdict

    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider
    from mutmut.mutation.data import SourceFileMutationData
    from mutmut.mutation.file_mutation import create_mutations
    from mutmut.mutation.trampoline_templates import mangle_function_name
    from mutmut.utils.format_utils import get_mutant_name

    module, mutations, _, _ = create_mutations(str(path), path.read_text(encoding="utf-8"))
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    by_function: dict[Any, list[Any]] = defaultdict(list)
    for m in mutations:
        if m.contained_by_top_level_function is not None:  # mutmut drops module-level mutations
            by_function[m.contained_by_top_level_function].append(m)
    out: list[dict[str, object]] = []
    for function, owner in _functions(module, cst):
        mangled = mangle_function_name(name=function.name.value, class_name=owner) + "__mutmut"
        for i, m in enumerate(by_function.get(function, []), start=1):
            p = positions[m.original_node]
            out.append({"name": get_mutant_name(path, f"{mangled}_{i}"), "file": path.as_posix(),
                        "line": p.start.line, "column": p.start.column + 1, "end_line": p.end.line,
                        "end_column": p.end.column + 1, "original": module.code_for_node(m.original_node),
                        "replacement": module.code_for_node(m.mutated_node)})
    recorded = SourceFileMutationData(path=str(path))
    recorded.load()
    if [m["name"] for m in out] != list(recorded.exit_code_by_key):
        raise RuntimeError(f"mutmut's numbering of {path} changed; update tri_agent.mutation._mutmut._locate")
    return out


def _functions(module: Any, cst: Any) -> list[tuple[Any, str | None]]:
    # the order mutmut numbers them in: top-level functions and the methods of top-level classes
    found: list[tuple[Any, str | None]] = []
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef):
            found.append((statement, None))
        elif isinstance(statement, cst.ClassDef) and isinstance(statement.body, cst.IndentedBlock):
            found += [(f, statement.name.value) for f in statement.body.body if isinstance(f, cst.FunctionDef)]
    return found


if __name__ == "__main__":
    _main(Path(sys.argv[1]))
