"""Data per case for services: the generator writes the rows each case's service starts over (``data/``), the
target's seed step loads them into the case's fresh database, the oracle reads the same files. A bug that shows only
on some data is found by an exam that varies the rows, and missed by the same exam over the fixed snapshot."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pytest

from tri_agent.exam._build import build_exam
from tri_agent.scoring._grading import score
from tri_agent.targets._gateway import run_exam, run_score_inputs

# a ledger's total; the bug: refunds (negative amounts) are left out, which only data holding one shows
APP = r'''
import json, os, sqlite3, sys
from http.server import BaseHTTPRequestHandler, HTTPServer


class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_GET(self):
        if self.path == "/health":
            body = {"ok": True}
        else:
            with sqlite3.connect(os.environ["APP_DB"]) as db:
                total = db.execute("select coalesce(sum(amount), 0) from entries WHERE_CLAUSE").fetchone()[0]
            body = {"total": str(total)}
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
'''
SEED = r'''
import csv, os, sqlite3, sys
db, data = sys.argv[1], sys.argv[2]
if os.path.isfile(os.path.join(data, "entries.csv")):  # the case brings its own rows: they replace the snapshot's
    with open(os.path.join(data, "entries.csv"), newline="") as f, sqlite3.connect(db) as conn:
        conn.execute("delete from entries")
        conn.executemany("insert into entries(amount) values (?)", [(int(r["amount"]),) for r in csv.DictReader(f)])
'''
SNAPSHOT = (120, 45, 300)  # the fixed rows: no refund among them
GENERATOR = r'''
import json, random, sys
from pathlib import Path
seed, out, varied = sys.argv[1], Path(sys.argv[2]), sys.argv[3] == "varied"
rng = random.Random(seed)
cases = []
for i in range(6):
    case = f"c-{rng.getrandbits(48):012x}"
    folder = out / "inputs" / case
    folder.mkdir(parents=True)
    # the requests vary with the seed either way (a fixed-data exam deepens only in its queries)
    step = {"id": "total", "path": "/total", "query": {"probe": str(rng.getrandbits(32))},
            "select": {"total": "$.total"}}
    (folder / "requests.json").write_text(json.dumps({"steps": [step]}))
    if varied:
        (folder / "data").mkdir()
        amounts = [rng.randint(-200, 500) for _ in range(rng.randint(1, 8))]
        (folder / "data" / "entries.csv").write_text("amount\n" + "".join(f"{a}\n" for a in amounts))
    cases.append({"case": case, "inputs": f"inputs/{case}"})
(out / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
'''
ORACLE = r'''
import csv, json, sys
from pathlib import Path
cases, out = Path(sys.argv[1]), Path(sys.argv[2])
rows = []
for line in (cases / "cases.jsonl").read_text().splitlines():
    case = json.loads(line)
    data = cases / case["inputs"] / "data" / "entries.csv"
    amounts = [int(r["amount"]) for r in csv.DictReader(data.open())] if data.is_file() else SNAPSHOT
    rows.append({"case": case["case"], "step": "total", "n": "0", "status": "200", "total": str(sum(amounts))})
(out / "answers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
'''
CALIBER = "schema_version: 1\nkey: [case, step, n]\nfields:\n  status: {class: status}\n  total: {class: count}\n"


def _exam(root: Path, varied: bool) -> Path:
    exam = root / ("exam-varied" if varied else "exam-fixed")
    (exam / "generator").mkdir(parents=True)
    (exam / "oracle").mkdir()
    (exam / "generator" / "generate.py").write_text(GENERATOR)
    (exam / "oracle" / "oracle.py").write_text(ORACLE.replace("SNAPSHOT", repr(list(SNAPSHOT))))
    mode = "varied" if varied else "fixed"
    (exam / "exam.yaml").write_text(f"schema_version: 1\nname: ledger-total\n"
                                    f'generator: [python3, generator/generate.py, "{{seed}}", "{{out}}", {mode}]\n'
                                    'oracle: [python3, oracle/oracle.py, "{cases}", "{out}"]\n')
    (exam / "caliber.yaml").write_text(CALIBER)
    (exam / "SPEC.md").write_text("# Ledger\n\nGET /total answers the sum of every entry, refunds included.\n")
    (exam / "TESTPLAN.md").write_text("# Plan\n\nTotals over varied entries.\n")
    return exam


def _target(root: Path, buggy: bool) -> Path:
    folder = root / ("target-buggy" if buggy else "target-right")
    folder.mkdir(parents=True)
    (folder / "app.py").write_text(APP.replace("WHERE_CLAUSE", "where amount > 0" if buggy else ""))
    (folder / "seed.py").write_text(SEED)
    with sqlite3.connect(folder / "ledger.db") as db:
        db.execute("create table entries(id integer primary key, amount integer)")
        db.executemany("insert into entries(amount) values (?)", [(a,) for a in SNAPSHOT])
    path = root / f"{folder.name}.yaml"
    path.write_text(f"""schema_version: 1
kind: service
baseline: {folder.name}
timeout: 30
service:
  start: [{sys.executable}, "{{target}}/app.py", "{{port}}"]
  env: {{APP_DB: "{{db}}"}}
  seed: [{sys.executable}, "{{target}}/seed.py", "{{db}}", "{{data}}"]
  ready: {{path: /health, deadline: 10}}
  database: {{kind: sqlite, file: ledger.db}}
""")
    return path


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("service-data")
    return {mode: build_exam(_exam(root, mode == "varied"), "7", root / f"build-{mode}") and root / f"build-{mode}"
            for mode in ("varied", "fixed")}


@pytest.mark.parametrize("mode, buggy, verdict", [
    ("varied", False, "pass"), ("varied", True, "fail"),  # rows varied per case: the refund bug is found
    ("fixed", False, "pass"), ("fixed", True, "pass"),  # the fixed snapshot holds no refund: the bug is missed
])
def test_rows_varied_per_case_find_a_bug_the_fixed_snapshot_hides(built: dict[str, Path], tmp_path: Path,
                                                                   mode: str, buggy: bool, verdict: str) -> None:
    run_exam(built[mode], _target(tmp_path, buggy), tmp_path / "run")
    report = score(run_score_inputs(built[mode], tmp_path / "run"))
    assert report.verdict == verdict, report.blockers


def test_a_seed_that_fails_leaves_the_case_unready_and_says_why(built: dict[str, Path], tmp_path: Path) -> None:
    target = _target(tmp_path, buggy=False)
    (tmp_path / "target-right" / "seed.py").write_text("import sys\nsys.exit('no such table: entries')\n")
    record = run_exam(built["varied"], target, tmp_path / "run")
    assert record.unread and all("the seed step exited 1: no such table: entries" in why
                                 for why in record.unread.values())
    behaviours = (tmp_path / "run" / "observed_behaviors.jsonl").read_text()
    assert behaviours.count('"unready"') == record.cases
