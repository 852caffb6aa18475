"""The verdict's property replay, copied beside the run: each corpus case through its scoring property, outside
pytest, one JSON line per case (property, case, input sha256, passed, error).

Standalone (the standard library only): it runs in the jail. ``python _replay.py ROOT PLAN OUT``: ROOT is the
tree under test, PLAN a JSON list of [property, module path, function, case id, case path], OUT the outcome
file. A property is called with the case's JSON object as keyword arguments (any other JSON value as its one
argument); a Hypothesis test is called through its inner test, so the case, not a new draw, is what runs. The
import path is the tree's root, its ``src`` folder, the pytest ``pythonpath`` of its ``pyproject.toml`` and the
property's own folder.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
import tomllib
from pathlib import Path
from types import ModuleType
from typing import Any


def _paths(root: Path) -> list[str]:
    extra: list[str] = []
    try:
        table = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
        extra = list(table.get("tool", {}).get("pytest", {}).get("ini_options", {}).get("pythonpath", []))
    except (OSError, ValueError):
        pass
    return [str(root), str(root / "src"), *(str(root / p) for p in extra)]


def _module(path: Path, cache: dict[Path, ModuleType | BaseException]) -> ModuleType | BaseException:
    if path not in cache:
        try:
            spec = importlib.util.spec_from_file_location(f"_corpus_{len(cache)}", path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.path.insert(0, str(path.parent))
            spec.loader.exec_module(module)
            cache[path] = module
        except BaseException as exc:  # an import that fails fails each of its cases
            cache[path] = exc
    return cache[path]


def _call(module: ModuleType, function: str, data: bytes) -> None:
    target: Any = getattr(module, function)
    target = getattr(getattr(target, "hypothesis", None), "inner_test", target)
    case = json.loads(data)
    if isinstance(case, dict):
        target(**case)
    else:
        target(case)


def main(argv: list[str]) -> int:
    root, plan, out = Path(argv[0]), json.loads(Path(argv[1]).read_text(encoding="utf-8")), Path(argv[2])
    sys.path[:0] = _paths(root)
    cache: dict[Path, ModuleType | BaseException] = {}
    with out.open("a", encoding="utf-8") as sink:
        for n, (prop, module_path, function, case, case_path) in enumerate(plan):
            data = Path(case_path).read_bytes()
            module, error = _module(Path(module_path), cache), ""
            try:
                if isinstance(module, BaseException):
                    raise module
                _call(module, function, data)
            except BaseException as exc:  # SystemExit too: a case that exits did not pass
                error = f"{type(exc).__name__}: {str(exc)[:200]}"
            sink.write(json.dumps({"property": prop, "case": case, "input_sha256": hashlib.sha256(data).hexdigest(),
                                   "passed": not error, "error": error, "n": n}) + "\n")
            sink.flush()
        sink.write(json.dumps({"finished": len(plan), "records": len(plan), "n": len(plan)}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
