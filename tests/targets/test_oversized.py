"""A case that prints past the target's output cap fails with oversized_output; its rows are not read."""

from __future__ import annotations

from pathlib import Path

from tri_agent.exam._formats import Case
from tri_agent.targets._gateway import CaseResult, Gateway
from tri_agent.targets._target import Target

SCRIPT = """import sys
open(sys.argv[1] + "/out.csv", "w").write("case,x\\n" + sys.argv[2] + ",1\\n")
sys.stdout.write("Z" * int(sys.argv[3]))
"""


def _run(tmp: Path, printed: int) -> CaseResult:
    (tmp / "target").mkdir()
    (tmp / "target" / "t.py").write_text(SCRIPT)
    (tmp / "in" / "c").mkdir(parents=True)
    (tmp / "target.yaml").write_text(f"""schema_version: 1
baseline: target
run: [python3, "{{target}}/t.py", "{{output}}", "{{case}}", "{printed}"]
output_cap: 65536
extract: {{file: out.csv, format: csv}}
""")
    (tmp / "scratch").mkdir()
    gateway = Gateway(Target.load(tmp / "target.yaml"), tmp / "in", tmp / "scratch")
    return gateway.run_case(Case(case="c-0123456789", inputs="c"))


def test_a_flood_past_the_cap_fails_the_case(tmp_path: Path) -> None:
    result = _run(tmp_path, 5 << 20)
    assert result.rows == [] and result.provenance.oversized_output
    assert str(result.provenance.extract_error).startswith("oversized_output")


def test_output_within_the_cap_is_read(tmp_path: Path) -> None:
    result = _run(tmp_path, 1000)
    assert result.rows == [{"case": "c-0123456789", "x": "1"}]
    assert not result.provenance.oversized_output
