"""tri-agent self-test: named checks run against the installed ``tri-agent`` command.

Every gate is shown passing on good input *and* failing on bad input; a check that could not fail
would prove nothing. One line per check, then ``N passed, M failed``; exit 1 on any failure.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from pathlib import Path

TRI = os.environ.get("TRI_AGENT", "tri-agent")
CHECKS: list[tuple[str, Callable[[Path], None]]] = []

CALIBER = """schema_version: 1
key: [case, group]
fields:
  avg: amount
  share: ratio
  n: count
  state: {class: status, values: [ok, late]}
  label: text
  meta: json
  tags: set
behaviors: {values: [accepted, rejected, warned]}
relations:
  - {name: groups-sum, kind: sum_of_parts, field: n, by: [case], parts: {where_not: {group: ALL}},
     total: {where: {group: ALL}}}
  - {name: row-order, kind: equal_pair, case_column: case, pairs: [[c-1, c-2]]}
  - {name: superset, kind: monotone, case_column: case, field: n, pairs: [[c-1, c-3]]}
"""
ROWS = [
    {"case": c, "group": g, "avg": avg, "share": "0.500000", "n": n, "state": "ok", "label": f"Grüße {g}",
     "meta": {"k": [1, 2]}, "tags": ["x", "y"]}
    for c, extra in (("c-1", 0), ("c-2", 0), ("c-3", 1))
    for g, avg, n in (("a", "2.35", str(2 + extra)), ("b", "1.10", "1"), ("ALL", "1.93", str(3 + extra)))
]


class CheckFailed(Exception):
    pass


def check(name: str) -> Callable[[Callable[[Path], None]], Callable[[Path], None]]:
    def register(fn: Callable[[Path], None]) -> Callable[[Path], None]:
        CHECKS.append((name, fn))
        return fn

    return register


class LimitHit(Exception):
    """A command ran past the self-test's limit: the machine was too slow or too busy, not a check that failed."""


class Limits:
    """One command's limit, scaled from a calibration run on this machine (never a fixed number of seconds that a
    slow or busy machine trips), and whether role-written code may run without an OS sandbox (a machine with
    none: the demo says so, and nothing it runs can certify)."""

    def __init__(self) -> None:
        self.calibration = 0.0
        self.per_command = 1800.0
        self.unsandboxed = False


LIMITS = Limits()
FACTOR = 300  # a command of the self-test does at most this many calibration runs' worth of work
SANDBOXED = {("exam", "build"), ("exam", "run"), ("mutate",), ("accept",), ("check",)}


def tri(*args: object, expect: int) -> str:
    argv = [*map(str, args)]
    if LIMITS.unsandboxed and (tuple(argv[:2]) in SANDBOXED or tuple(argv[:1]) in SANDBOXED):
        argv.append("--allow-unsandboxed")
    try:
        done = subprocess.run([TRI, *argv], capture_output=True, text=True, timeout=LIMITS.per_command)
    except subprocess.TimeoutExpired:
        raise LimitHit(f"`tri-agent {' '.join(argv)}` ran past {LIMITS.per_command:.0f} s ({FACTOR} times the "
                       f"{LIMITS.calibration:.2f} s calibration run on this machine)") from None
    if done.returncode != expect:
        raise CheckFailed(f"`tri-agent {' '.join(map(str, args))}` exited {done.returncode}, expected {expect}: "
                          f"{(done.stderr or done.stdout).strip().splitlines()[-1:]}")
    if "Traceback" in done.stderr:
        raise CheckFailed("a traceback reached the user")
    return done.stdout + done.stderr


def ensure(condition: bool, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


def jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def csv(path: Path, rows: list[dict[str, object]], columns: list[str] | None = None) -> Path:
    import csv as _csv
    import io

    columns = columns or list(rows[0])
    buf = io.StringIO()
    w = _csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    for r in rows:
        w.writerow([json.dumps(r[c], ensure_ascii=False) if isinstance(r[c], dict | list) else r[c] for c in columns])
    path.write_text(buf.getvalue(), encoding="utf-8")
    return path


def score(d: Path, actual: list[dict[str, object]], expect: int, *extra: object, fmt: str = "jsonl",
          caliber: str = CALIBER, columns: list[str] | None = None) -> dict[str, object]:
    (d / "cal.yaml").write_text(caliber)
    jsonl(d / "answers.jsonl", ROWS)
    act = jsonl(d / "act.jsonl", actual) if fmt == "jsonl" else csv(d / "act.csv", actual, columns)
    behaviors = ["--expected-behaviors", jsonl(d / "eb.jsonl", [{"case": "c-1", "behavior": "accepted"}]),
                 "--observed-behaviors", d / "ob.jsonl"]
    if not (d / "ob.jsonl").exists():
        jsonl(d / "ob.jsonl", [{"case": "c-1", "behavior": "accepted"}])
    tri("score", "--caliber", d / "cal.yaml", "--answers", d / "answers.jsonl", "--actual", act, *behaviors,
        "--json", d / "report.json", "--force", *extra, expect=expect)
    report: dict[str, object] = json.loads((d / "report.json").read_text())
    return report


def changed(**cells: object) -> list[dict[str, object]]:
    """ROWS with the first row's cells replaced."""
    rows = [dict(r) for r in ROWS]
    rows[0].update(cells)
    return rows


def failures(report: dict[str, object]) -> list[dict[str, object]]:
    return report["answers"]["failures"]  # type: ignore[index, no-any-return]


def sealed_dir(d: Path) -> tuple[Path, str]:
    s = d / "sealed"
    (s / "sub").mkdir(parents=True)
    jsonl(s / "answers.jsonl", ROWS)
    (s / "sub" / "notes.txt").write_text("oracle: pure Decimal\n")
    return s, tri("seal", s, expect=0).strip()


# --- sealing ---------------------------------------------------------------------------------------------------

@check("seal and verify a clean directory")
def _(d: Path) -> None:
    s, digest = sealed_dir(d)
    ensure(len(digest) == 64, f"digest {digest!r}")
    ensure("OK 2 files" in tri("verify", s, "--expect", digest, expect=0), "verify did not report OK")


for _kind, _tamper in {
    "modified": lambda s: (s / "answers.jsonl").write_text("{}\n"),
    "missing": lambda s: (s / "sub" / "notes.txt").unlink(),
    "added": lambda s: (s / "planted.txt").write_text("x\n"),
    "renamed": lambda s: (s / "sub" / "notes.txt").rename(s / "sub" / "moved.txt"),
}.items():
    def _tamper_check(d: Path, kind: str = _kind, tamper: Callable[[Path], object] = _tamper) -> None:
        s, _ = sealed_dir(d)
        tamper(s)
        ensure(f"{kind}:" in tri("verify", s, expect=4), f"verify did not name a {kind} file")

    check(f"verify catches a {_kind} file")(_tamper_check)


@check("verify --expect catches a consistent rewrite of a file and the manifest")
def _(d: Path) -> None:
    s, digest = sealed_dir(d)
    (s / "answers.jsonl").write_text("{}\n")
    (s / "MANIFEST.sha256").unlink()
    (s / "SEAL-LOG.jsonl").unlink()
    tri("seal", s, expect=0)
    tri("verify", s, expect=0)  # self-consistent after the rewrite: only the pinned digest can tell
    ensure("digest:" in tri("verify", s, "--expect", digest, expect=4), "pinned digest not checked")


@check("seal rejects CRLF text files")
def _(d: Path) -> None:
    s = d / "s"
    s.mkdir()
    (s / "a.csv").write_bytes(b"k,v\r\n1,2\r\n")
    ensure("CRLF" in tri("seal", s, expect=4), "no CRLF reason")


@check("seal rejects symlinks")
def _(d: Path) -> None:
    s = d / "s"
    s.mkdir()
    os.symlink("/etc/hostname", s / "link")
    ensure("symlink" in tri("seal", s, expect=4), "no symlink reason")


@check("verify refuses a manifest path escaping the directory")
def _(d: Path) -> None:
    s, _ = sealed_dir(d)
    m = s / "MANIFEST.sha256"
    m.write_text(m.read_text().replace("  sub/notes.txt", "  ../../etc/hostname"))
    ensure("escapes" in tri("verify", s, expect=4), "escaping path not refused")


@check("reseal requires --expect and --reason, and is logged")
def _(d: Path) -> None:
    s, old = sealed_dir(d)
    (s / "sub" / "notes.txt").write_text("oracle v2\n")
    tri("seal", s, expect=4)
    tri("seal", s, "--reseal", "--reason", "v2", expect=2)
    tri("seal", s, "--reseal", "--expect", old, "--reason", "v2", expect=4)
    new = tri("seal", s, "--dry-run", expect=0).strip()
    tri("seal", s, "--reseal", "--expect", new, "--reason", "oracle v2", expect=0)
    log = [json.loads(x) for x in (s / "SEAL-LOG.jsonl").read_text().splitlines()]
    ensure([e["digest"] for e in log] == [old, new] and log[1]["reason"] == "oracle v2", "seal log incomplete")


@check("sha256sum -c checks the manifest too")
def _(d: Path) -> None:
    if shutil.which("sha256sum") is None:
        raise CheckFailed("coreutils sha256sum not installed")
    s, _ = sealed_dir(d)
    done = subprocess.run(["sha256sum", "--strict", "-c", "MANIFEST.sha256"], cwd=s, capture_output=True)
    ensure(done.returncode == 0, done.stdout.decode() + done.stderr.decode())


# --- channel 1: tolerance classes at their exact boundaries ----------------------------------------------------

for _field, _at, _past in [
    ("avg", "2.36", "2.3600001"), ("avg", "2.34", "2.3399999"),
    ("share", "0.500001", "0.5000011"), ("n", "2", "3"), ("state", "ok", "late"),
    ("label", "Grüße a", "Grüße a "), ("meta", {"k": [1.0, 2]}, {"k": [2, 1]}), ("tags", ["y", "x"], ["x"]),
]:
    def _boundary(d: Path, field: str = _field, at: object = _at, past: object = _past) -> None:
        report = score(d, changed(**{field: at}), 0)
        ensure(report["verdict"] == "pass", f"{field}={at!r} should pass")
        report = score(d, changed(**{field: past}), 1)
        ensure([f["field"] for f in failures(report)] == [field], f"{field}={past!r} should fail alone")

    check(f"{_field}: passes at {_at!r}, fails at {_past!r}")(_boundary)


@check("a missing field is a failure, not a pass")
def _(d: Path) -> None:
    rows = changed()
    del rows[0]["share"]
    ensure(failures(score(d, rows, 1))[0]["reason"] == "missing_field", "missing field not failed")


@check("a missing row is a failure")
def _(d: Path) -> None:
    ensure(score(d, ROWS[1:], 1)["answers"]["rows_missing"] == 1, "missing row not counted")  # type: ignore[index]


@check("an unexpected row is a failure")
def _(d: Path) -> None:
    report = score(d, [*ROWS, dict(ROWS[0], case="c-9")], 1)
    ensure(report["answers"]["rows_unexpected"] == 1, "unexpected row not counted")  # type: ignore[index]


@check("duplicate keys in the answer key are malformed input (exit 3)")
def _(d: Path) -> None:
    (d / "cal.yaml").write_text(CALIBER)
    answers = jsonl(d / "answers.jsonl", [*ROWS, ROWS[1]])
    act = jsonl(d / "act.jsonl", ROWS)
    out = tri("score", "--caliber", d / "cal.yaml", "--answers", answers, "--actual", act, expect=3)
    ensure("duplicate key" in out and "answers.jsonl:10" in out, out)


@check("a key the target repeats is a red score with the reason, not malformed input")
def _(d: Path) -> None:
    report = score(d, [*ROWS, ROWS[1]], 1)
    reasons = [f["reason"] for f in report["answers"]["failures"]]  # type: ignore[index]
    ensure(reasons == ["duplicate_key"], f"reasons {reasons}")


@check("a malformed answer row is reported with file:line and field")
def _(d: Path) -> None:
    (d / "cal.yaml").write_text(CALIBER)
    answers = csv(d / "answers.csv", changed(avg="2,35"))
    act = jsonl(d / "act.jsonl", ROWS)
    out = tri("score", "--caliber", d / "cal.yaml", "--answers", answers, "--actual", act, expect=3)
    ensure(f"{answers}:2: field 'avg'" in out, out)


@check("column order and row order do not matter")
def _(d: Path) -> None:
    score(d, list(reversed(ROWS)), 0, fmt="csv", columns=list(ROWS[0])[::-1])
    ensure((d / "act.csv").read_text().startswith("tags,meta,label"), "columns were not reordered")


@check("CSV and JSONL actual tables give the same report")
def _(d: Path) -> None:
    rows = changed(avg="2.40", tags=["x"])
    a, b = score(d, rows, 1), score(d, rows, 1, fmt="csv")
    for r in (a, b):
        r.pop("inputs"), r.pop("actual_sha256")
    ensure(a == b, "reports differ beyond the actual file's digest")


@check("re-running a score is byte-identical")
def _(d: Path) -> None:
    score(d, changed(n="9"), 1)
    first = (d / "report.json").read_bytes()
    score(d, changed(n="9"), 1)
    ensure(first == (d / "report.json").read_bytes(), "report bytes differ")


@check("the report echoes the caliber and answer-key digests")
def _(d: Path) -> None:
    report = score(d, ROWS, 0)
    ensure(report["caliber_sha256"] == hashlib.sha256((d / "cal.yaml").read_bytes()).hexdigest(), "caliber")
    ensure(report["answers_sha256"] == hashlib.sha256((d / "answers.jsonl").read_bytes()).hexdigest(), "answers")


# --- channels 2 and 3, drift ------------------------------------------------------------------------------------

@check("behaviours: equal passes, different fails")
def _(d: Path) -> None:
    score(d, ROWS, 0)
    jsonl(d / "ob.jsonl", [{"case": "c-1", "behavior": "rejected"}])
    report = score(d, ROWS, 1)
    ensure(report["behaviors"]["verdict"] == "fail", "behaviour difference not failed")  # type: ignore[index]


for _name, _rows, _extra in [
    ("groups-sum", [dict(r, n="4") if (r["case"], r["group"]) == ("c-2", "ALL") else r for r in ROWS], ()),
    ("row-order", [dict(r, label="other") if (r["case"], r["group"]) == ("c-2", "b") else r for r in ROWS], ()),
    ("superset", [dict(r, n="0") if r["case"] == "c-3" and r["group"] == "b" else r for r in ROWS], ()),
]:
    def _relation(d: Path, name: str = _name, rows: list[dict[str, object]] = _rows) -> None:
        ensure(score(d, ROWS, 0)["relations"]["verdict"] == "pass", "relations fail on good rows")  # type: ignore
        report = score(d, rows, 1)
        failed = [r["name"] for r in report["relations"]["relations"] if r["failed"]]  # type: ignore[index]
        ensure(name in failed, f"{name} not failed: {failed}")

    check(f"relation {_name}: passes, then fails")(_relation)


@check("relation idempotent: stable replay passes, drifting replay fails")
def _(d: Path) -> None:
    cal = CALIBER + "  - {name: replay, kind: idempotent}\n"
    replay = jsonl(d / "replay.jsonl", ROWS)
    score(d, ROWS, 0, "--replay", replay, caliber=cal)
    jsonl(replay, changed(avg="2.351"))
    report = score(d, ROWS, 1, "--replay", replay, caliber=cal)
    ensure(report["relations"]["relations"][-1]["failed"] == 1, "drifting replay passed")  # type: ignore[index]


@check("drift audit flags tolerance-sized rounding drift")
def _(d: Path) -> None:
    rows = [dict(r, avg=str(Decimal(str(r["avg"])) - Decimal("0.01"))) for r in ROWS]
    report = score(d, rows, 1)
    audit = next(a for a in report["answers"]["drift"] if a["field"] == "avg")  # type: ignore[index]
    ensure(audit["systematic"] and report["answers"]["verdict"] == "pass", "drift hidden")  # type: ignore[index]


# --- leaks ------------------------------------------------------------------------------------------------------

def _leak(d: Path, name: str, content: str) -> str:
    jsonl(d / "answers.jsonl", [{"case": "c-1", "avg": "78.35", "who": "Müller-Lüdenscheid",
                                 "note": "first line\nsecond line", "quote": 'He said "ready"'}])
    ws = d / "ws"
    ws.mkdir()
    (ws / name).write_text(content, encoding="utf-8")
    return tri("leaks", "--answers", d / "answers.jsonl", ws, expect=6)


@check("leak scan finds a plain value with file:line")
def _(d: Path) -> None:
    ensure("notes.md:3" in _leak(d, "notes.md", "a\nb\nexpected 78.35\n"), "no hit at line 3")


@check("leak scan finds a non-ASCII value escaped in JSON")
def _(d: Path) -> None:
    ensure("h.json:1" in _leak(d, "h.json", json.dumps({"x": "Müller-Lüdenscheid"}) + "\n"), "escaped value missed")


@check("leak scan finds a multi-line value")
def _(d: Path) -> None:
    ensure("t.py:1" in _leak(d, "t.py", 'X = "first line\\nsecond line"\n'), "multi-line value missed")


@check("leak scan finds a quoted value inside CSV")
def _(d: Path) -> None:
    ensure("q.csv:2" in _leak(d, "q.csv", 'id,text\n1,"He said ""ready"""\n'), "quoted value missed")


@check("leak scan is quiet on clean files and flags an answer mirror")
def _(d: Path) -> None:
    ans = jsonl(d / "answers.jsonl", ROWS)
    (d / "clean").mkdir()
    (d / "clean" / "f.txt").write_text("nothing sealed here\n")
    tri("leaks", "--answers", ans, d / "clean", expect=0)
    mirror = d / "actual.jsonl"
    mirror.write_bytes(ans.read_bytes())
    ensure("mirror" in tri("leaks", "--answers", ans, "--actual", mirror, expect=6), "mirror not flagged")


# --- the exam pipeline, on the toy-grades example ------------------------------------------------------------------

TOY = Path(__file__).resolve().parents[1] / "examples" / "toy-grades"


def toy(d: Path, fixed: bool = True) -> tuple[Path, Path]:
    """A scratch copy of toy-grades (fixed unless asked) and its exam built for seed 1."""
    if not (TOY / "exam" / "exam.yaml").is_file():
        raise CheckFailed(f"the toy-grades example is missing at {TOY}")
    copy = d / "toy"
    shutil.copytree(TOY, copy, ignore=shutil.ignore_patterns("builds", "runs", "mutation", "out"))
    if fixed:
        subprocess.run(["git", "apply", "-p1", "../fix.patch"], cwd=copy / "target", check=True)
    tri("exam", "build", copy / "exam", "--seed", "1", "--out", copy / "build", expect=0)
    ensure((copy / "build" / "build.json").is_file(), "exam build wrote no build.json")
    return copy, copy / "build"


def build_score(build: Path, actual: Path, expect: int) -> str:
    sealed = build / "sealed"
    return tri("score", "--caliber", build / "caliber.yaml", "--answers", sealed / "answers.jsonl", "--actual", actual,
               "--expected-behaviors", sealed / "behaviors.jsonl", "--observed-behaviors", sealed / "behaviors.jsonl",
               expect=expect)


@check("exam build is deterministic: the same seed seals the same key")
def _(d: Path) -> None:
    copy, build = toy(d)
    tri("exam", "build", copy / "exam", "--seed", "1", "--out", d / "again", expect=0)
    first, second = (json.loads((b / "build.json").read_text())["sealed_digest"] for b in (build, d / "again"))
    ensure(first == second, f"{first} != {second}")


@check("the answer key passes against itself (gold)")
def _(d: Path) -> None:
    _, build = toy(d)
    out = build_score(build, build / "sealed" / "answers.jsonl", 0)
    ensure(re.search(r"PASS answers ([1-9][0-9]*)/\1", out) is not None, out)


@check("a corrupted answer key fails")
def _(d: Path) -> None:
    _, build = toy(d)
    rows = [json.loads(x) for x in (build / "sealed" / "answers.jsonl").read_text().splitlines()]
    rows[0]["total"] = str(Decimal(rows[0]["total"]) + 1)
    out = build_score(build, jsonl(d / "corrupted.jsonl", rows), 1)
    ensure("out_of_tolerance" in (d / "corrupted.jsonl").read_text() or "FAIL" in out, out)


@check("a killable mutant is killed")
def _(d: Path) -> None:
    copy, build = toy(d)
    dropped = "row-dropped:grades.py:96049a5919"  # the *ALL* row never written, made from the class missing-total
    out = tri("mutate", "--target", copy / "target.yaml", "--exam", build, "--menu", copy / "exam" / "mutations.yaml",
              "--out", d / "m", "--only", dropped, "--min-mutants", "1", expect=0)
    ensure("Killed" in out and dropped in out and "1/1 killed" in out, out)


@check("an equivalent mutant is proven so by difference hunting, not counted as a survivor")
def _(d: Path) -> None:
    copy, build = toy(d)
    argv_check = "validation-skipped:grades.py:1eeda14db0"  # the usage check, which no exam input can reach
    out = tri("mutate", "--target", copy / "target.yaml", "--exam", build, "--menu", copy / "exam" / "mutations.yaml",
              "--out", d / "m", "--only", argv_check, "--min-mutants", "0", "--exam-dir", copy / "exam", expect=1)
    ensure("Ignored" in out and "equivalent: no difference over" in out and "fresh seeds" in out, out)
    ensure("Survived" not in out and "0/0 killed" in out, out)


@check("a hanging target times out and its process group is killed")
def _(d: Path) -> None:
    _, build = toy(d, fixed=False)
    (d / "hang").mkdir()
    (d / "hang" / "hang.py").write_text("import subprocess, time\nsubprocess.Popen(['sleep', '60'])\ntime.sleep(60)\n")
    (d / "hang.yaml").write_text('schema_version: 1\nbaseline: hang\nrun: [python3, "{target}/hang.py"]\n'
                                 "timeout: 0.5\nextract: {file: out.csv, format: csv}\n")
    start = time.monotonic()
    tri("exam", "run", build, "--target", d / "hang.yaml", "--out", d / "run", expect=0)
    behaviors = (d / "run" / "observed_behaviors.jsonl").read_text()
    took = time.monotonic() - start  # a sleeper left alive would hold its case for 60 s: each case 0.5 s
    cases = len((build / "visible" / "cases.jsonl").read_text().splitlines())
    ensure(cases > 10 and behaviors.count('"timeout"') == cases, behaviors[:200])
    ensure(took < max(60.0, 30 * LIMITS.calibration), f"{cases} hanging cases took {took:.0f} s: their trees were not "
           "killed")


# --- the hard acceptance, on the toy-grades example with its recorded roles ---------------------------------------

@check("accept: red, fixed, green, final round, passed but not certified (a simulation); a tampered trail is "
       "caught and never resumed")
def _(d: Path) -> None:
    copy = d / "acceptance"
    shutil.copytree(TOY, copy, ignore=shutil.ignore_patterns("builds", "runs", "mutation", "evidence", "SCOREBOARD.md",
                                                              "TIMINGS.json", "ACCEPTANCE.json", "REPORT.html",
                                                              "out"))  # out/: the demo's results, a git tree
    config = copy / "acceptance.yaml"
    config.write_text(config.read_text().replace("gate_n: 3", "gate_n: 1"))  # red, green, final
    git = ["git", "-c", "user.name=selftest", "-c", "user.email=selftest@invalid"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "baseline"]):
        subprocess.run([*git, *args], cwd=copy, check=True, capture_output=True)
    out = tri("accept", copy, expect=9)
    ensure("PASSED, NOT CERTIFIED after 3 rounds" in out and "a simulation" in out, out[-300:])
    tri("verify-trail", copy, expect=0)
    store = Path(re.search(r"evidence store (\S+);", out).group(1))  # type: ignore[union-attr]
    ensure(not store.is_relative_to(copy), f"the store {store} lies inside the project")
    score = store / "records" / "round-0001" / "score.json"
    score.write_text(score.read_text().replace('"verdict": "fail"', '"verdict": "pass"'))
    tri("verify-trail", copy, expect=4)
    tri("accept", copy, "--resume", expect=4)


def _run(item: tuple[str, Callable[[Path], None]]) -> tuple[str, str, str]:
    """(name, PASS | FAIL | LIMIT, why)."""
    name, fn = item
    with tempfile.TemporaryDirectory(prefix="tri-selftest-") as tmp:
        try:
            fn(Path(tmp))
        except CheckFailed as exc:
            return name, "FAIL", str(exc)
        except LimitHit as exc:
            return name, "LIMIT", str(exc)
        except Exception as exc:  # a broken check is a failed check
            return name, "FAIL", f"{type(exc).__name__}: {exc}"
    return name, "PASS", ""


def calibrate() -> float:
    """Seconds one exam build of the toy takes here (the generator and the oracle twice each, in the jail): the
    unit the self-test's limits are counted in. It has no limit of its own: every run in it has the engine's."""
    with tempfile.TemporaryDirectory(prefix="tri-selftest-calibration-") as tmp:
        start = time.monotonic()
        done = subprocess.run([TRI, "exam", "build", TOY / "exam", "--seed", "calibration", "--out", Path(tmp) / "b",
                               *(["--allow-unsandboxed"] if LIMITS.unsandboxed else [])], capture_output=True)
        if done.returncode != 0:
            return 0.0
        return time.monotonic() - start


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if shutil.which(TRI) is None:
        print(f"self-test: {TRI!r} is not on PATH; install tri-agent first (pip install .)", file=sys.stderr)
        return 7
    LIMITS.unsandboxed = "--allow-unsandboxed" in args
    # runs keep their state outside their project: here, in a folder of the self-test's own, and with the
    # seeds fixed so every run is reproducible (such a run is labelled as one that can never certify)
    with tempfile.TemporaryDirectory(prefix="selftest-state-") as state, \
            ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        os.environ.update(XDG_STATE_HOME=state, TRI_AGENT_SEED_SECRET="tri-agent-selftest")
        LIMITS.calibration = calibrate()
        if LIMITS.calibration > 0:
            LIMITS.per_command = max(FACTOR * LIMITS.calibration, 120.0)  # never tighter than 2 minutes
        results = list(pool.map(_run, CHECKS))
    for name, status, why in results:
        print(f"{status} {name}" + (f": {why}" if why else ""))
    failed = sum(1 for _, status, _ in results if status == "FAIL")
    limited = sum(1 for _, status, _ in results if status == "LIMIT")
    print(f"{len(results) - failed - limited} passed, {failed} failed" + (f", {limited} hit the limit" if limited
                                                                          else ""))
    if limited and not failed:
        print(f"self-test: {limited} check(s) ran past the limit scaled from this machine's calibration run: the "
              "machine was too slow or too busy, which is not a failed check; run it again on a quieter machine",
              file=sys.stderr)
        return 7
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
