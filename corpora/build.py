#!/usr/bin/env python3
"""Build the shipped review corpus (``corpora/review/``) from the programs in ``corpora/programs/``, reproducibly.

    python corpora/build.py            # write corpora/review/ anew
    python corpora/build.py --check    # build into a temporary folder and compare byte for byte (exit 1 if stale)

Each program folder holds ``spec.md``, one module that defines ``run(text) -> str``, and ``probes.py`` whose
``inputs()`` lists the texts that exercise the spec (the probes and the program's own name never reach a role).
Per program the corpus gets:

- **planted cases**: every mutant that the engine's mutation operators (``tri_agent.mutation``, one table, every
  bug class of the presets) make of the module, written as a person would have written the bug (a check that
  never fires is gone, not ``and False``; a statement dropped leaves no ``pass``), kept only when some probe input
  shows it: the original's and the mutant's outputs differ there. The root cause is the changed lines, with the
  operator's words as formulations, the input that shows it and what differs;
- **clean cases**: the program with its local names renamed and its functions reordered, kept only when every
  probe gives the original's output (the right answer is "nothing to report");
- **incomplete cases**: the program without its spec, or the spec without the program (the right answer is to
  block).

The build runs with ``PYTHONHASHSEED=0`` (it restarts itself so): a mutant that walks a set in hash order then
gives the same output in every build. The corpus is then loaded and audited exactly as ``tri-agent eval-roles``
does before any attempt; a case the audit refuses stops the build. Nothing here is random: the same programs give
the same corpus, byte for byte.
"""

from __future__ import annotations

import argparse
import difflib
import filecmp
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import libcst as cst

from tri_agent.mutation._operators import Instance, instances, operator_classes
from tri_agent.roleeval import audit, load_corpus

HERE = Path(__file__).resolve().parent
PROGRAMS = HERE / "programs"
VERSION = "1"
PLANTER = "corpora/build.py 1"
TASK = ("Review the program in these files against spec.md. Report each place where the program does not do what "
        "spec.md says, as path:line with what goes wrong there. If it does what spec.md says, report nothing. If "
        "the files are too incomplete to judge, block and say what is missing.")
CLEAN_VARIANTS = 10
PLANTED_CAP = 24  # per program: many cases of one program are not independent evidence
# operators whose every mutant bears a mark no person's bug has (a loop that always breaks on its first pass)
LEFT_OUT = {"loop-cut"}
# program -> its target kind (the corpus spans the four)
KINDS = {"gradebook": "command", "invoice": "document", "inventory": "command", "timesheet": "command",
         "ledger": "service", "catalog": "service", "booking": "browser", "outline": "document",
         "contacts": "document", "sessions": "service", "shipping": "command", "signup": "browser"}

# operator -> single words a finding at the place must hold one of (one word each: the place does the pinning, and a
# longer phrase would be found in the planted code itself, which the audit rightly refuses)
WORDS: dict[str, list[str]] = {
    "rounding-swap": ["rounding", "round", "half"],
    "normalisation-dropped": ["strip", "whitespace", "trim", "case", "lowercase", "uppercase", "normalize",
                              "normalise", "normalization", "unicode", "accent", "spaces"],
    "boundary-shift": ["boundary", "inclusive", "exclusive", "edge", "comparison", "limit", "strict"],
    "off-by-one": ["off-by-one", "index", "extra", "miscount", "count", "slice", "range", "limit"],
    "row-dropped": ["missing", "dropped", "omitted", "omits", "never", "lost", "skipped", "removed"],
    "early-return": ["early", "prematurely", "before", "skips", "never"],
    "loop-cut": ["first", "break", "stops", "only", "one"],
    "exception-swallowed": ["swallowed", "ignored", "suppressed", "silently", "swallows", "ignores"],
    "validation-skipped": ["validation", "check", "accepted", "accepts", "missing", "unchecked", "validate"],
    "precision-lost": ["precision", "quantize", "rounded", "rounding", "decimals", "float", "places"],
    "order-lost": ["order", "sorted", "sort", "unsorted", "ordering"],
    "duplicates-merged": ["duplicate", "duplicates", "deduplicated", "merged", "repeated", "unique"],
    "encoding-skipped": ["bom", "encoding", "mark", "utf", "latin", "signature"],
    "status-swapped": ["status"],
    "write-dropped": ["saved", "persisted", "written", "stored", "insert", "update", "delete", "lost"],
}
# operator -> what such a bug breaks, in the corpus's own words (never the spec's)
BREAKS = {
    "rounding-swap": "the halves rule for rounded figures",
    "normalisation-dropped": "text compared or printed in its normal form",
    "boundary-shift": "an end of a range included or excluded as prescribed",
    "off-by-one": "a count, position or span exactly as prescribed",
    "row-dropped": "every prescribed line, item or field emitted",
    "early-return": "the work finished before the answer is given",
    "loop-cut": "every element visited",
    "exception-swallowed": "a failure reported as prescribed",
    "validation-skipped": "input the prescription refuses is refused",
    "precision-lost": "figures carried with the prescribed decimals",
    "order-lost": "results in the prescribed sequence",
    "duplicates-merged": "repeats kept as separate entries",
    "encoding-skipped": "the leading byte-order mark handled",
    "status-swapped": "each outcome answered with its prescribed code",
    "write-dropped": "each change kept in storage",
}


# --- running a program on its probes ------------------------------------------------------------------------------

class _Late(Exception):
    pass


def _alarm(_signum: int, _frame: object) -> None:
    raise _Late


def outputs(source: str, name: str, probes: list[str]) -> list[str] | None:
    """The program's output on each probe (an exception is an output too); None when it does not compile or a
    probe runs past a second (a mutant that loops is shown by its hang, but a hang is no output to compare)."""
    try:
        code = compile(source, name, "exec")
    except SyntaxError:
        return None
    out: list[str] = []
    previous = signal.signal(signal.SIGALRM, _alarm)
    try:
        for text in probes:
            namespace: dict[str, Any] = {"__name__": "corpus_program"}
            signal.setitimer(signal.ITIMER_REAL, 1.0)
            try:
                exec(code, namespace)
                out.append(repr(namespace["run"](text)))
            except _Late:
                return None
            except Exception as exc:
                out.append(f"raised {type(exc).__name__}")
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.signal(signal.SIGALRM, previous)
    return out


# --- writing a mutant as a person would have ----------------------------------------------------------------------

class _Natural(cst.CSTTransformer):
    """Mutants as a person would have written the bug, with none of the operators' marks (the judge would spot the
    mark, not the bug): an ``if`` whose test is ``(...) and False`` is gone with its body; a lone ``pass`` beside
    other statements, a self-assignment (``x = x``) and the statements after a ``return`` in its block are gone; a
    rounding mode is named, not quoted; ``(n + 1)`` loses its parentheses where no operator binds tighter, and
    ``(1 + 1)`` is ``2``; ``[x for x in xs]`` is ``list(xs)``; ``s.strip().strip()`` is ``s.strip()``."""

    def __init__(self) -> None:
        super().__init__()
        self.modes: set[str] = set()  # rounding modes named, to import
        self.unused: set[str] = set()  # rounding modes imported that nothing names any more

    def leave_If(self, original: cst.If, updated: cst.If) -> cst.CSTNode | cst.RemovalSentinel:
        test = updated.test
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And) and \
                isinstance(test.right, cst.Name) and test.right.value == "False" and updated.orelse is None:
            return cst.RemoveFromParent()
        return updated

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        kept = [s for s in updated.body if not _is_pass(s) and not _self_assignment(s)]
        ends = next((n for n, s in enumerate(kept) if isinstance(s, cst.SimpleStatementLine)
                     and isinstance(s.body[0], cst.Return)), None)
        kept = kept if ends is None else kept[:ends + 1]
        return updated.with_changes(body=kept or [cst.SimpleStatementLine([cst.Pass()])])

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        value = updated.value
        if updated.keyword is not None and updated.keyword.value == "rounding" and isinstance(value, cst.SimpleString):
            mode = value.evaluated_value
            if isinstance(mode, str) and mode.startswith("ROUND_"):
                self.modes.add(mode)
                return updated.with_changes(value=cst.Name(mode))
        return updated.with_changes(value=_bare(value))

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode) -> Any:
        """Each ``leave_`` method first; then the parentheses of a sum that stands alone where ``_STANDALONE``
        says it does."""
        left = super().on_leave(original, updated)
        fields = _STANDALONE.get(type(left), ())
        changes = {f: _bare(getattr(left, f)) for f in fields if getattr(left, f) is not None}
        return left.with_changes(**changes) if changes else left

    def leave_ListComp(self, original: cst.ListComp, updated: cst.ListComp) -> cst.BaseExpression:
        loop = updated.for_in
        if isinstance(updated.elt, cst.Name) and isinstance(loop.target, cst.Name) and \
                updated.elt.value == loop.target.value and not loop.ifs and loop.inner_for_in is None:
            return cst.Call(cst.Name("list"), [cst.Arg(loop.iter)])
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        func = updated.func
        if isinstance(func, cst.Attribute) and func.attr.value == "strip" and not updated.args and \
                isinstance(func.value, cst.Call) and isinstance(func.value.func, cst.Attribute) and \
                func.value.func.attr.value == "strip" and not func.value.args:
            return func.value
        return updated

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom) -> cst.ImportFrom:
        if not isinstance(updated.module, cst.Name) or updated.module.value != "decimal" or \
                not isinstance(updated.names, Sequence) or not self.modes:
            return updated
        have = {a.name.value for a in updated.names if isinstance(a.name, cst.Name)}
        names = sorted({n for n in have if n not in self.unused} | self.modes, key=lambda n: (not n.isupper(), n))
        return updated.with_changes(names=[cst.ImportAlias(cst.Name(n)) for n in names])


# node type -> its fields where a sum stands alone (no operator around it binds tighter than + or -)
_STANDALONE: dict[type, tuple[str, ...]] = {
    cst.ComparisonTarget: ("comparator",), cst.Comparison: ("left",), cst.Slice: ("lower", "upper"),
    cst.Return: ("value",), cst.FormattedStringExpression: ("expression",), cst.Element: ("value",),
    cst.DictElement: ("value",),
}


def _bare(node: cst.BaseExpression) -> cst.BaseExpression:
    """``node`` without the parentheses an operator put around a sum (safe where the sum stands alone: a comparison's
    side, an argument, a slice bound, a returned value); ``(1 + 1)`` folded to ``2``."""
    if not isinstance(node, cst.BinaryOperation) or not node.lpar:
        return node
    if isinstance(node.left, cst.Integer) and isinstance(node.right, cst.Integer) and \
            isinstance(node.operator, cst.Add | cst.Subtract):
        total = int(node.left.value) + (1 if isinstance(node.operator, cst.Add) else -1) * int(node.right.value)
        return cst.Integer(str(total)) if total >= 0 else node
    return node.with_changes(lpar=[], rpar=[])


def _self_assignment(statement: cst.CSTNode) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    small = statement.body[0]
    return isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.value, cst.Name) and \
        isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value == small.value.value


def _is_pass(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 and \
        isinstance(statement.body[0], cst.Pass)


def naturalised(source: str) -> str:
    module = cst.parse_module(source)
    natural = _Natural()
    changed = module.visit(natural)
    if natural.modes:  # the imports come before the code that names the modes: a second pass adds them
        again = _Natural()
        again.modes = natural.modes
        again.unused = {m for m in re.findall(r"\bROUND_[A-Z_]+\b", source)
                        if len(re.findall(rf"\b{m}\b", changed.code)) == 1}  # named in the import alone
        changed = changed.visit(again)
    return changed.code


def marked(before: str, after: str) -> bool:
    """A mark no person's bug leaves: a block that now holds only ``pass`` where the original held a statement
    (outside an ``except``, where swallowing an error is the bug itself, as people write it)."""
    def lone(text: str) -> int:
        lines = text.splitlines()
        return sum(1 for n, line in enumerate(lines) if line.strip() == "pass" and n > 0
                   and not lines[n - 1].strip().startswith(("except", "class ")))
    return lone(after) > lone(before)


def changed_lines(before: str, after: str) -> tuple[int, int]:
    """The lines of ``after`` that differ from ``before`` (a pure deletion: the lines on both sides of it)."""
    a, b = before.splitlines(), after.splitlines()
    blocks = [op for op in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if op[0] != "equal"]
    first, last = blocks[0][3], blocks[-1][4]
    if last <= first:  # nothing of after changed: lines were only removed
        return max(1, first), min(len(b), first + 1)
    return first + 1, last


# --- the cases ----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Program:
    name: str
    folder: Path
    module: str  # file name of the module
    spec: str
    source: str
    probes: list[str]

    @property
    def kind(self) -> str:
        return KINDS[self.name]


def load_program(folder: Path) -> Program:
    namespace: dict[str, Any] = {}
    exec(compile((folder / "probes.py").read_text(encoding="utf-8"), str(folder / "probes.py"), "exec"), namespace)
    module = next(p.name for p in sorted(folder.glob("*.py")) if p.name != "probes.py")
    return Program(folder.name, folder, module, (folder / "spec.md").read_text(encoding="utf-8"),
                   (folder / module).read_text(encoding="utf-8"), list(namespace["inputs"]()))


@dataclass(frozen=True)
class Case:
    seed: str
    payload: dict[str, str]
    expectation: dict[str, Any]
    provenance: dict[str, Any]


def ref_of(seed: str) -> str:
    return "c-" + hashlib.sha256(f"review/{VERSION}/{seed}".encode()).hexdigest()[:12]


def _provenance(program: Program, tool: str = "", bug_class: str = "") -> dict[str, Any]:
    return {"schema_version": 1, "program": program.name, "kind": program.kind, "planted_by": PLANTER,
            "source_commit": "", "tool": tool, "bug_class": bug_class}


Shown = list[tuple[Instance, str, int, str, str]]  # (instance, text, probe, want, got) of each mutant a probe shows


def planted(program: Program, shown: Shown) -> list[Case]:
    """Every mutant of the program a probe shows, written naturally, one case each."""
    return [_planted_case(program, *item) for item in shown]


def shown_mutants(program: Program, expected: list[str]) -> list[tuple[Instance, str, int, str, str]]:
    """The mutants of the program a probe shows, written naturally: (instance, text, probe, want, got), the
    first PLANTED_CAP in a fixed order spread over the operators."""
    seen: set[str] = set()
    found: list[tuple[Instance, str, int, str, str]] = []
    for instance in instances(program.folder, sorted(operator_classes()), files=[program.module]):
        if instance.operator in LEFT_OUT:
            continue
        text = naturalised(instance.mutated)
        if text in seen or text == program.source or marked(program.source, text):
            continue
        seen.add(text)
        got = outputs(text, program.module, program.probes)
        if got is None:
            continue
        shown = next((n for n, (a, b) in enumerate(zip(expected, got, strict=True)) if a != b), None)
        if shown is not None:
            found.append((instance, text, shown, expected[shown], got[shown]))
    stable = outputs_elsewhere([item[1] for item in found], program)
    return _spread([item for item, again in zip(found, stable, strict=True)
                    if again == outputs(item[1], program.module, program.probes)])[:PLANTED_CAP]


def outputs_elsewhere(texts: list[str], program: Program) -> list[list[str] | None]:
    """Each text's outputs in another interpreter, under another hash seed: a mutant that walks a set prints in
    hash order, and an exam run in the jail would see it flip; such a mutant is no planted bug anyone can pin."""
    request = json.dumps({"texts": texts, "module": program.module, "probes": program.probes})
    done = subprocess.run([sys.executable, __file__, "--outputs"], input=request, capture_output=True, text=True,
                          env={**os.environ, "PYTHONHASHSEED": "1"}, check=True)
    found: list[list[str] | None] = json.loads(done.stdout)
    return found


def _spread(found: list[Any]) -> list[Any]:
    """Round-robin over the operators, so a cap keeps every kind of bug a program has."""
    by_operator: dict[str, list[Any]] = {}
    for item in found:
        by_operator.setdefault(item[0].operator, []).append(item)
    out, queues = [], list(by_operator.values())
    while any(queues):
        for queue in queues:
            if queue:
                out.append(queue.pop(0))
    return out


def _planted_case(program: Program, instance: Instance, text: str, shown: int, want: str, got: str) -> Case:
    """One planted bug, in a renamed variant of the program as clean cases are (so a renamed name tells nothing)."""
    seed = f"{program.name}/planted/{instance.id}"
    n = int(hashlib.sha256(seed.encode()).hexdigest(), 16) % (CLEAN_VARIANTS * 3)
    base, variant = _variant(program.source, n), _variant(text, n)
    if variant != text and outputs(variant, program.module, program.probes) != \
            outputs(text, program.module, program.probes):
        base, variant = program.source, text  # the renaming changed what it does: plant in the program as written
    text = variant
    rc = _root_cause("rc-1", program, instance, text, shown, want, got, base)
    expectation = {"schema_version": 1, "verdict": "findings", "root_causes": [rc], "accepted": []}
    files = {"spec.md": program.spec, program.module: text}
    return Case(seed, files, expectation,
                _provenance(program, f"tri_agent.mutation operator {instance.operator}", instance.bug_class))


def _root_cause(rc_id: str, program: Program, instance: Instance, text: str, shown: int, want: str,
                got: str, base: str | None = None) -> dict[str, Any]:
    """The root cause of one planted bug; ``base``: the program as the case shows it unplanted (its renamed variant),
    so the surface is the planted lines of what the role reads."""
    first, last = changed_lines(base or program.source, text)
    crashed = ["crash", "crashes", "exception", "raises", "traceback"] if got.startswith("raised ") else []
    return {"id": rc_id, "requirement": f"spec.md demands {BREAKS[instance.operator]}",
          "trigger": f"probe {shown + 1} of {len(program.probes)} of the corpus's {program.name} inputs",
          "surface": {"path": program.module, "lines": [first, last]},
          "consequence": f"the program's answer to that probe differs from the prescribed one "
                         f"({_digest(want)} expected, {_digest(got)} given)",
          "formulations": [*WORDS[instance.operator], *crashed]}


# --- the examiner's corpus: one case per program, every planted bug a root cause its exam must kill ----------------

EXAMINER_TASK = ("Write an exam for the program exam/SPEC.md describes, run as INTERFACE.md says: under exam/, beside "
                 "the exam.yaml and caliber.yaml given, a generator (generator/generate.py) and an independent "
                 "oracle (oracle/oracle.py) written from the spec alone, and TESTPLAN.md saying what is tested and "
                 "why. The exam must pass a program that does what the spec says and fail as many programs that do "
                 "not as it can. If the files are too incomplete to write one, block and say what is missing.")
INTERFACE = """# How the program is run

Each case of the exam gives the program one input file, `input.txt`: the text the spec's Input section describes
(UTF-8; it may start with a byte-order mark where the spec allows one). The program's whole output is read as
answer rows, one per output line in order: `{"n": "1", "line": "..."}`, `n` counting from 1, `line` the line's
text without its line break. An empty line gives no row (its number is skipped), so an empty output gives none.
The program always exits 0.

The generator is run as `python3 generator/generate.py SEED OUT`: it writes `OUT/cases.jsonl`, one line
`{"case": "c-...", "inputs": "inputs/c-..."}` per case, and each case's `OUT/inputs/c-.../input.txt`; the same seed
must give the same bytes. The oracle is run as `python3 oracle/oracle.py CASES OUT`, CASES being the folder the
generator wrote: it writes `OUT/answers.jsonl` (rows `{"case", "n", "line"}`) and `OUT/behaviors.jsonl` (`{"case",
"behavior": "accepted"}` per case). Both run in a sandbox without network, and never see the program.
"""
EXAM_YAML = """schema_version: 1
name: review-program
generator: [python3, generator/generate.py, "{seed}", "{out}"]
oracle: [python3, oracle/oracle.py, "{cases}", "{out}"]
timeout: 60
"""
CALIBER = """schema_version: 1
key: [case, n]
fields:
  line: text
behaviors: {values: [accepted, crashed, timeout]}
"""
TARGET_YAML = """schema_version: 1
kind: command
baseline: .
run: [python3, "{target}/main.py", "{input}/input.txt", "{output}/lines.jsonl"]
timeout: 20
extract: {file: lines.jsonl, format: jsonl}
behaviors:
  - {exit: timeout, behavior: timeout}
  - {exit: 0, behavior: accepted}
  - {exit: nonzero, behavior: crashed}
"""
ADAPTER = """import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from %s import run  # noqa: E402

output = run(Path(sys.argv[1]).read_text(encoding="utf-8"))
rows = [{"n": str(n), "line": line} for n, line in enumerate(output.split("\\n"), start=1) if line]
Path(sys.argv[2]).write_text("".join(json.dumps(row) + "\\n" for row in rows), encoding="utf-8")
"""


def examiner_case(program: Program, shown: Shown) -> Case:
    """The program's spec and how it is run, shown; the program, and each planted bug as an exact edit of it, kept
    private: the examiner's exam names a bug when the engine sees the exam kill it."""
    causes = []
    for n, (instance, text, probe, want, got) in enumerate(shown, start=1):
        rc = _root_cause(f"rc-{n}", program, instance, text, probe, want, got)
        rc["plant"] = {**plant(program.source, text), "file": program.module, "bug_class": instance.bug_class}
        causes.append(rc)
    target = {"target.yaml": TARGET_YAML, "main.py": ADAPTER % program.module.removesuffix(".py"),
              program.module: program.source}
    expectation = {"schema_version": 1, "verdict": "findings", "root_causes": causes, "accepted": [],
                   "target": target}
    return Case(f"{program.name}/examiner", examiner_payload(program.spec), expectation, _provenance(program))


def examiner_payload(spec: str | None) -> dict[str, str]:
    files = {"INTERFACE.md": INTERFACE, "exam/exam.yaml": EXAM_YAML, "exam/caliber.yaml": CALIBER}
    return files if spec is None else {**files, "exam/SPEC.md": spec}


def plant(before: str, after: str) -> dict[str, str]:
    """The edit that turns ``before`` into ``after`` as find and replace texts, whole lines, widened by a line at a
    time until what it finds occurs exactly once in ``before``."""
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    blocks = [op for op in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if op[0] != "equal"]
    i1, i2, j1, j2 = blocks[0][1], blocks[-1][2], blocks[0][3], blocks[-1][4]
    while True:
        find = "".join(a[i1:i2])
        if find and before.count(find) == 1:
            return {"find": find, "replace": "".join(b[j1:j2])}
        i1, j1 = max(0, i1 - 1), max(0, j1 - 1)  # one more line before, on both sides alike
        if i1 == 0 and i2 < len(a):
            i2, j2 = i2 + 1, j2 + 1


def _digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:16]


def clean(program: Program, expected: list[str]) -> list[Case]:
    """Variants of the program that behave exactly as it does: local names renamed, functions reordered."""
    out, seen = [], {program.source}
    for n in range(CLEAN_VARIANTS * 3):
        if len(out) == CLEAN_VARIANTS:
            break
        text = _variant(program.source, n)
        if text in seen or outputs(text, program.module, program.probes) != expected:
            continue
        seen.add(text)
        out.append(Case(f"{program.name}/clean/{n}", {"spec.md": program.spec, program.module: text},
                        {"schema_version": 1, "verdict": "clean", "root_causes": [], "accepted": []},
                        _provenance(program)))
    return out


SYNONYMS = {"line": "row", "lines": "rows", "text": "content", "out": "result", "total": "amount",
            "entries": "items", "entry": "item", "records": "rows_read", "record": "row_read", "value": "val",
            "name": "label", "key": "k", "count": "n_items", "parts": "pieces", "field": "cell", "fields": "cells",
            "items": "elements", "item": "element", "result": "outcome", "raw": "given", "number": "line_no",
            "word": "token", "words": "tokens", "body": "payload", "state": "store", "recent": "lately",
            "token": "tok", "session": "live_session", "known": "seen", "users": "found", "names": "labels",
            "store": "book", "now": "moment", "event": "what", "args": "rest_args", "params": "query_args",
            "kept": "chosen", "pages": "page_count", "start": "first", "page": "page_no", "size": "per_page",
            "sort": "order_by", "amount": "figure", "balance": "funds", "row": "record_row", "cursor": "cur",
            "net": "subtotal", "vat": "tax", "rate": "percent", "problem": "issue", "order": "purchase",
            "stock": "on_hand", "moves": "n_moves", "skus": "codes", "low": "short", "header": "columns",
            "reader": "csv_rows", "cells": "values", "kind": "direction", "sku": "code", "qty": "quantity",
            "weeks": "per_week", "days": "pairs", "code": "ws_code", "left": "remaining", "desk": "front_desk",
            "form": "page_form", "chosen": "picked", "unique": "distinct", "local": "mailbox", "domain": "host",
            "person": "who_", "day": "date_", "hours": "raw_hours"}


class _Rename(cst.CSTTransformer):
    """Renames the local names of every function that ``pick`` chooses (assignment, loop and comprehension targets
    only: parameters and globals keep their names)."""

    def __init__(self, pick: Callable[[str], bool]) -> None:
        self.pick, self.stack = pick, []  # type: ignore[var-annotated]

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.stack.append(_locals(node) if self.pick(node.name.value) else set())

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        self.stack.pop()
        return updated

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        if self.stack and updated.value in self.stack[-1]:
            return updated.with_changes(value=SYNONYMS[updated.value])
        return updated


def _locals(function: cst.FunctionDef) -> set[str]:
    found: set[str] = set()

    class Targets(cst.CSTVisitor):
        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            found.update(_names(node.target))

        def visit_For(self, node: cst.For) -> None:
            found.update(_names(node.target))

        def visit_CompFor(self, node: cst.CompFor) -> None:
            found.update(_names(node.target))

    function.body.visit(Targets())
    params = {p.name.value for p in function.params.params}
    return {n for n in found if n in SYNONYMS and n not in params and SYNONYMS[n] not in params}


def _names(target: cst.CSTNode) -> set[str]:
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, cst.Tuple | cst.List):
        return {n for e in target.elements for n in _names(e.value)}
    return set()


@lru_cache(maxsize=1024)  # clean cases and planted ones ask for the same variants of the same program
def _variant(source: str, n: int) -> str:
    """The n-th variant: which functions get renamed locals and how the top-level functions are ordered follow
    from n's hash, so the same n always gives the same text."""
    h = hashlib.sha256(f"{n}".encode()).digest()
    module = cst.parse_module(source).visit(_Rename(lambda name: bool(
        hashlib.sha256(h + name.encode()).digest()[0] & 1)))
    return _shuffled(module, h).code


def _shuffled(node: Any, h: bytes) -> Any:
    """``node`` (a module or a class body's owner) with its function definitions in another order (a class keeps
    ``__init__`` first); definitions are only bound by name, so the order changes no behaviour."""
    body = list(node.body.body if isinstance(node, cst.ClassDef) else node.body)
    body = [_shuffled(s, h) if isinstance(s, cst.ClassDef) else s for s in body]
    functions = [i for i, s in enumerate(body) if isinstance(s, cst.FunctionDef) and s.name.value != "__init__"]
    order = sorted(functions, key=lambda i: hashlib.sha256(h + bytes([i])).digest())
    shuffled = list(body)
    for slot, i in zip(functions, order, strict=True):
        shuffled[slot] = body[i]
    if isinstance(node, cst.ClassDef):
        return node.with_changes(body=node.body.with_changes(body=shuffled))
    return node.with_changes(body=shuffled)


def incomplete(program: Program, n: int) -> Case:
    """The program alone (no spec to judge it by) or, for every other program, the spec alone (no program)."""
    blocked = {"schema_version": 1, "verdict": "blocked", "root_causes": [], "accepted": []}
    if n % 2 == 0:
        return Case(f"{program.name}/incomplete/code", {program.module: program.source}, blocked, _provenance(program))
    return Case(f"{program.name}/incomplete/spec", {"spec.md": program.spec}, blocked, _provenance(program))


# --- the corpus ---------------------------------------------------------------------------------------------------

def cases(names: list[str] | None = None) -> tuple[list[Case], list[Case]]:
    """The judge's review cases and the examiner's cases, of every program (or of those ``names``)."""
    review: list[Case] = []
    examiner: list[Case] = []
    folders = sorted(p for p in PROGRAMS.iterdir() if p.is_dir() and (names is None or p.name in names))
    for n, folder in enumerate(folders):
        program = load_program(folder)
        expected = outputs(program.source, program.module, program.probes)
        if expected is None:
            raise SystemExit(f"build: {folder}: the program itself does not run on its probes")
        shown = shown_mutants(program, expected)
        review += [*planted(program, shown), *clean(program, expected), incomplete(program, n)]
        examiner.append(examiner_case(program, shown))
        if n % 4 == 0:  # a few programs also give the examiner a spec it is not shown: it must block
            examiner.append(Case(f"{program.name}/examiner/incomplete", examiner_payload(None), {
                "schema_version": 1, "verdict": "blocked", "root_causes": [], "accepted": []}, _provenance(program)))
    return review, examiner


CORPORA = {"review": ("judge", TASK), "examiner": ("examiner", EXAMINER_TASK)}


def write(all_cases: list[Case], root: Path) -> None:
    if root.exists():
        shutil.rmtree(root)
    for part in ("visible", "private", "provenance"):
        (root / part).mkdir(parents=True)
    refs = []
    role, task = CORPORA[root.name]
    for case in sorted(all_cases, key=lambda c: ref_of(c.seed)):
        ref = ref_of(case.seed)
        refs.append(ref)
        _dump(root / "visible" / f"{ref}.json", {"schema_version": 1, "case": ref, "task": task, "files": case.payload})
        _dump(root / "private" / f"{ref}.json", {"case": ref, **case.expectation})
        _dump(root / "provenance" / f"{ref}.json", {"case": ref, **case.provenance})
    _dump(root / "corpus.yaml", {"schema_version": 1, "name": root.name, "version": VERSION, "role": role,
                                 "cases": refs})  # JSON is YAML


def _dump(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")


def build(root: Path) -> tuple[list[Case], list[Case]]:
    """Both corpora under ``root`` (``review/``, ``examiner/``), each audited as eval-roles audits it."""
    built = cases()
    for name, made in zip(CORPORA, built, strict=True):
        write(made, root / name)
        audit(load_corpus(root / name))
    return built


def same_tree(a: Path, b: Path) -> bool:
    compared = filecmp.dircmp(a, b)
    if compared.left_only or compared.right_only or compared.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(a, b, compared.common_files, shallow=False)
    return not mismatch and not errors and all(same_tree(a / d, b / d) for d in compared.common_dirs)


def _outputs_mode() -> int:
    """``build.py --outputs``: outputs of the texts on stdin (see ``outputs_elsewhere``), as JSON on stdout."""
    request = json.loads(sys.stdin.read())
    print(json.dumps([outputs(text, request["module"], request["probes"]) for text in request["texts"]]))
    return 0


def main(argv: list[str] | None = None) -> int:
    if (sys.argv[1:] if argv is None else argv) == ["--outputs"]:
        return _outputs_mode()
    if os.environ.get("PYTHONHASHSEED") != "0":  # a mutant that iterates a set must give the same output every build
        args = sys.argv[1:] if argv is None else argv
        os.execve(sys.executable, [sys.executable, __file__, *args], {**os.environ, "PYTHONHASHSEED": "0"})
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="build apart and compare with the corpus folder")
    parser.add_argument("--out", type=Path, default=HERE, help="where review/ and examiner/ are (default: corpora/)")
    args = parser.parse_args(argv)
    if not args.check:
        print(summary(*build(args.out)))
        return 0
    missing = next((args.out / name for name in CORPORA if not (args.out / name).is_dir()), None)
    if missing is not None:
        print(f"build: {missing} is not what the programs give (no such folder); run python corpora/build.py",
              file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as scratch:
        built = build(Path(scratch))
        stale = next((name for name in CORPORA if not same_tree(Path(scratch) / name, args.out / name)), None)
        if stale is not None:
            print(f"build: {args.out / stale} is not what the programs give; run python corpora/build.py",
                  file=sys.stderr)
            return 1
    print(summary(*built))
    return 0


def summary(review: list[Case], examiner: list[Case]) -> str:
    verdicts = [c.expectation["verdict"] for c in review]
    programs = {c.provenance["program"] for c in review}
    kinds = {c.provenance["kind"] for c in review}
    plants = sum(len(c.expectation["root_causes"]) for c in examiner)
    return (f"review corpus: {len(review)} cases from {len(programs)} programs ({', '.join(sorted(kinds))}): "
            f"{verdicts.count('findings')} planted, {verdicts.count('clean')} clean, "
            f"{verdicts.count('blocked')} incomplete\nexaminer corpus: {len(examiner)} cases, {plants} planted bugs "
            f"to kill, {sum(c.expectation['verdict'] == 'blocked' for c in examiner)} incomplete")


if __name__ == "__main__":
    sys.exit(main())
