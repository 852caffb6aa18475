"""Document outputs through the gateway: the case's file read by the document reader in a jail of its own, its
rows what the extract rule keeps, volatile parts replaced and counted, and hostile documents costing the case only."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path
from typing import Any

import pytest
from test_documents import _docx, _pdf

from tri_agent.exam._formats import Case, Extract
from tri_agent.targets._gateway import Gateway
from tri_agent.targets._target import Target

EMIT = "import shutil, sys\nfor p in __import__('pathlib').Path(sys.argv[1]).iterdir(): shutil.copy(p, sys.argv[2])\n"
DATE = {"name": "created", "pattern": r"D:\d{14}Z?", "replace": "D:0"}
FILE_ID = {"name": "file-id", "pattern": r"/ID \[<[0-9A-F]+><[0-9A-F]+>\]", "replace": "/ID []"}  # in the bytes


def _gateway(tmp: Path, documents: dict[str, Path | bytes]) -> Gateway:
    """A target that writes, as its output, the files its case gets as input (one case per document)."""
    (tmp / "target").mkdir(parents=True)
    (tmp / "target" / "emit.py").write_text(EMIT)
    (tmp / "target.yaml").write_text(json.dumps({
        "schema_version": 1, "kind": "command", "baseline": "target", "timeout": 20,
        "run": [sys.executable, "{target}/emit.py", "{input}", "{output}"],
        "extract": {"file": "out.csv", "format": "csv"}, "limits": {"memory": 1 << 30}}))
    for name, doc in documents.items():
        (tmp / "visible" / "inputs" / name).mkdir(parents=True)
        target = tmp / "visible" / "inputs" / name / name
        target.write_bytes(doc if isinstance(doc, bytes) else doc.read_bytes())
    return Gateway(Target.load(tmp / "target.yaml"), tmp / "visible", tmp / "scratch")


def _run(gateway: Gateway, name: str, **rule: object) -> tuple[dict[tuple[str, str], str], str | None, str]:
    extract = Extract.model_validate({"file": name, **rule})
    result = gateway.run_case(Case(case="c-0000000a", inputs=f"inputs/{name}", extract=extract))
    rows = {(str(r["part"]), str(r["n"])): str(r["value"]) for r in result.rows}
    assert all(r["case"] == "c-0000000a" for r in result.rows)
    return rows, result.provenance.extract_error, result.provenance.behavior


def test_a_pdf_output_is_read_in_a_jail_and_only_the_parts_asked_for_are_kept(tmp_path: Path) -> None:
    pdf = _pdf(tmp_path / "i.pdf", ["Invoice 42", "Widget 2 10.00"])
    gateway = _gateway(tmp_path / "g", {"invoice.pdf": pdf})
    rows, error, behavior = _run(gateway, "invoice.pdf", format="pdf", parts=["line", "meta:title"],
                                 volatile=[DATE])
    assert error is None and behavior == "accepted"
    assert rows == {("line", "1.1"): "Invoice 42", ("line", "1.2"): "Widget 2 10.00", ("line", "2.1"): "Page two",
                    ("meta", "title"): "Invoice 42", ("volatile", "created"): "1"}  # counted where it was: meta
    rows, _, _ = _run(gateway, "invoice.pdf", format="pdf", parts=["meta"], volatile=[DATE])
    assert rows[("meta", "creationdate")] == "D:0" and rows[("volatile", "created")] == "1"


def test_sha256_replaces_the_declared_volatile_parts_and_counts_them(tmp_path: Path) -> None:
    one = _pdf(tmp_path / "1.pdf", ["same"])
    two = tmp_path / "2.pdf"
    two.write_bytes(one.read_bytes().replace(b"D:2026", b"D:1999"))  # rendered at another time
    gateway = _gateway(tmp_path / "g", {"a.pdf": one, "b.pdf": two})
    plain = [_run(gateway, n, format="sha256")[0] for n in ("a.pdf", "b.pdf")]
    assert plain[0][("sha256", "1")] != plain[1][("sha256", "1")]
    steady = [_run(gateway, n, format="sha256", volatile=[DATE])[0] for n in ("a.pdf", "b.pdf")]
    assert steady[0] == steady[1] and steady[0][("volatile", "created")] == "1"
    assert set(steady[0]) == {("sha256", "1"), ("volatile", "created")}


def _pdf_bomb(inflated: int) -> bytes:
    """A one-page PDF whose content stream inflates from a few hundred KiB to ``inflated`` bytes."""
    packer, chunk = zlib.compressobj(9), b" " * (1 << 20)
    stream = b"".join(packer.compress(chunk) for _ in range(inflated >> 20)) + packer.flush()
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
               b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream"]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for i, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def _zip_bomb(tmp: Path) -> bytes:
    bomb = _docx(tmp / "bomb.docx")
    with zipfile.ZipFile(bomb, "a", compression=zipfile.ZIP_DEFLATED) as archive, \
            archive.open("word/document2.xml", "w", force_zip64=True) as member:
        chunk = b"\0" * (1 << 20)
        for _ in range(300):
            member.write(chunk)
    return bomb.read_bytes()


HOSTILE = {
    "bomb.pdf": ("pdf", lambda tmp: _pdf_bomb(2 << 30)),
    "bomb.docx": ("docx", _zip_bomb),
    "deep.html": ("html", lambda tmp: b"<div>" * 10_000 + b"x" + b"</div>" * 10_000),
    "image.pdf": ("pdf", lambda tmp: b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 64),
}

PEAK = """
import json, sys
from pathlib import Path
from typing import Any
Path("/proc/self/clear_refs").write_text("5")  # the peak so far is the test's, copied at the fork: start afresh
sys.path.insert(0, sys.argv[1])
from test_document_outputs import _gateway, _run
gateway = _gateway(Path(sys.argv[2]), {sys.argv[3]: Path(sys.argv[4])})
rows, error, behavior = _run(gateway, sys.argv[3], format=sys.argv[5])
print(json.dumps({"rows": len(rows), "error": error, "behavior": behavior,
                  "peak": int(next(l for l in open("/proc/self/status") if l.startswith("VmHWM")).split()[1]) * 1024}))
"""


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_document_costs_its_case_and_never_the_orchestrators_memory(tmp_path: Path, name: str) -> None:
    fmt, make = HOSTILE[name]
    document = tmp_path / name
    document.write_bytes(make(tmp_path))
    done = subprocess.run([sys.executable, "-c", PEAK, str(Path(__file__).parent), str(tmp_path / "g"), name,
                           str(document), fmt], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    outcome = json.loads(done.stdout)
    assert outcome["behavior"] == "accepted" and outcome["rows"] == 0  # the run was fine: its document was not
    assert outcome["error"].startswith(f"unreadable {name}: ")
    assert outcome["peak"] < 200 << 20, outcome  # the orchestrator's own peak, the reader's not included


STAMP = """import datetime, random, sys
from fpdf import FPDF
pdf = FPDF()
pdf.set_creation_date(datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc)
                      + datetime.timedelta(days=random.randrange(9999), seconds=random.randrange(86400)))
pdf.add_page()
pdf.set_font("Helvetica")
pdf.cell(0, 8, "same text every time")
pdf.output(sys.argv[2] + "/stamped.pdf")
"""


def test_two_runs_agree_on_a_document_once_its_declared_volatile_parts_are_replaced(tmp_path: Path) -> None:
    gateway = _gateway(tmp_path / "g", {"any": b"x"})
    (gateway.built / "emit.py").write_text(STAMP)  # the built copy: every case runs it

    def twice(**rule: object) -> tuple[Any, Any]:
        case = Case(case="c-0000000b", inputs="inputs/any", extract=Extract.model_validate(
            {"file": "stamped.pdf", "format": "pdf", **rule}))
        first, second = (gateway.run_case(case).provenance for _ in range(2))
        assert first.outputs != second.outputs  # another creation date in the bytes each time
        return first, second

    first, second = twice(volatile=[DATE])  # the file's id is derived from its date: it differs too
    assert first.compared() != second.compared()
    first, second = twice(volatile=[DATE, FILE_ID])
    assert first.compared() == second.compared() and first.steady and first.steady != first.outputs
    first, second = twice()  # nothing declared: the dates are a difference, as before
    assert first.compared() != second.compared() and not first.steady


@pytest.mark.parametrize("printed", [b"not json\n", b"[1, 2]\n", b'{"part": "x", "n": "1", "value": "v"}\n\xff\n'])
def test_a_reader_that_prints_anything_but_rows_gives_no_rows(printed: bytes) -> None:
    from tri_agent.sandbox._process import Completed
    from tri_agent.targets.documents._extract import reader_rows

    done = Completed(argv=(), exit_code=0, stdout=printed, stderr=b"", seconds=0.0, timed_out=False, truncated=False)
    read = reader_rows(done, Extract(file="a.pdf", format="pdf"), "c-0000000a")
    assert read.rows == [] and read.steady is None
    assert read.error == "unreadable a.pdf: the document reader printed something other than rows"


def test_hidden_text_and_volatile_counts_are_kept_whatever_parts_the_rule_keeps() -> None:
    from tri_agent.sandbox._process import Completed
    from tri_agent.targets.documents._extract import reader_rows

    printed = b"".join(json.dumps({"part": p, "n": n, "value": v}).encode() + b"\n" for p, n, v in [
        ("line", "1.1", "Total: 12.00"), ("font", "1", "Helvetica"), ("hidden", "1", "Total: 99.00"),
        ("volatile", "created", "1")])
    done = Completed(argv=(), exit_code=0, stdout=printed, stderr=b"", seconds=0.0, timed_out=False, truncated=False)
    read = reader_rows(done, Extract(file="a.pdf", format="pdf", parts=["line"]), "c-0000000a")
    assert [r["part"] for r in read.rows] == ["line", "hidden", "volatile"]


def test_a_renderer_writing_the_expected_total_in_white_is_caught_whatever_the_parts(tmp_path: Path) -> None:
    """The attack: the page shows the wrong total; the right one is written white on white, where a parser reads it
    and no one sees it. The lines alone would look right; the hidden row is kept although only lines are asked
    for, so a key without it fails the case (unexpected row)."""
    from test_documents import _hiding_pdf

    pdf = _hiding_pdf(tmp_path / "w.pdf", "white")
    rows, error, _ = _run(_gateway(tmp_path / "g", {"invoice.pdf": pdf}), "invoice.pdf", format="pdf",
                          parts=["line"])
    assert error is None and rows[("line", "1.2")] == "Total: 99.00"
    assert rows[("hidden", "1")] == "Total: 99.00"
