"""Rule 15: an oracle that uses a name or value only the patch brought in copied the patch, however it is spelled."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import GIT
from test_gatefile import GATE
from test_map import FILES, _repo
from test_policy import LEDGER, _commit

from tri_agent._errors import ExitCode
from tri_agent.patchgate import check_policy
from tri_agent.patchgate._oracle import introduced, leaning
from tri_agent.patchgate._policy import Finding

HELD = "tests/held_out/test_hidden.py"


def _gated(tmp: Path, held_out: str, patch: str, spec: str = "") -> list[Finding]:
    gate = GATE + ("spec: SPEC.md\n" if spec else "")
    files = {**FILES, "tests/scoring/flake_ledger.json": LEDGER, HELD: held_out, **({"SPEC.md": spec} if spec else {})}
    repo = _repo(tmp, files, gate)
    subprocess.run([*GIT, "tag", "base"], cwd=repo, check=True)
    _commit(repo, {"src/pricing.py": patch}, "agent-7@agents.example.com")
    return check_policy(repo, "base", "HEAD")[1]


@pytest.mark.parametrize(("held_out", "patch", "named"), [
    # a constant over several lines in the patch, copied as one literal
    ("from decimal import Decimal\n\n\ndef test_h():\n    assert Decimal('0.37') > 0\n",
     "from decimal import Decimal\nCAP = (\n    Decimal(\n        '0.37'\n    )\n)\n", "the value Decimal('0.37')"),
    # renamed on both sides and written as arithmetic in the oracle
    ("MY_LIMIT = 37 / 100\n\n\ndef test_h():\n    assert MY_LIMIT\n",
     "from decimal import Decimal\nLIMIT = Decimal('0.37')\nCAP = LIMIT\n", "the value Decimal('0.37')"),
    # the copied literal inside a larger expression of the oracle
    ("from decimal import Decimal\n\n\ndef test_h():\n    assert Decimal('0.0125') * 2 == Decimal('0.025')\n",
     "FEE = 0.0125\n", "the value 0.0125"),
    # a function only the patch defines, called by name
    ("from pricing import loyalty_bonus\n\n\ndef test_h():\n    assert loyalty_bonus(3)\n",
     "def loyalty_bonus(n):\n    return n * 2\n", "the name loyalty_bonus"),
    # an error message copied word for word
    ("def test_h():\n    assert str(ValueError('rate above the cap')) == 'rate above the cap'\n",
     "def check(rate):\n    if rate > 1:\n        raise ValueError('rate above the cap')\n", "'rate above the cap'"),
])
def test_an_oracle_that_copies_the_patch_is_refused(tmp_path: Path, held_out: str, patch: str, named: str) -> None:
    found = _gated(tmp_path, held_out, patch)
    assert {int(f.code) for f in found} == {15}
    assert any(f.line.startswith("src/pricing.py:") and named in f.line and f.detail.startswith(f"{HELD}:")
               for f in found)
    assert not any(HELD in f.line for f in found)  # the line a patch author may read names nothing hidden


@pytest.mark.parametrize(("held_out", "patch", "spec"), [
    # the spec names the value: both sides read it from there
    ("def test_h():\n    assert 0.40 < 1\n", "from decimal import Decimal\nMAX_RATE = Decimal('0.40')\n",
     "Discounts are capped at 0.40 of the price.\n"),
    # the spec names the function the patch must add
    ("from pricing import loyalty_bonus\n\n\ndef test_h():\n    assert loyalty_bonus(3)\n",
     "def loyalty_bonus(n):\n    return n * 2\n", "Add loyalty_bonus(n).\n"),
    # values too plain to be a copy
    ("def test_h():\n    assert [1, 2, 100, True] and 'ok'\n", "RATE = 100\nLIMIT = 2\nON = True\nTAG = 'ok'\n", ""),
    ("def test_h():\n    assert {'total': 1, 'x': 0.75, 'y': 0.3}\n", "ROW = {'total': 0.75, 'z': 0.3}\n", ""),
    # the base's code already held the value (RATE = 3 in FILES) and the name
    ("RATE = 3.0\n\n\ndef test_h():\n    assert RATE\n", "RATE = 3\nSPARE = 3\n", ""),
    # the oracle binds a name of its own that the patch binds too: a coincidence of names, not a copy
    ("from decimal import Decimal\nCAP = Decimal('0.40')\n\n\ndef test_h():\n    assert CAP\n",
     "from decimal import Decimal\nCAP = Decimal('0.40')\n", "Rates are capped at 0.40.\n"),
])
def test_an_oracle_that_reads_the_spec_or_plain_values_is_independent(tmp_path: Path, held_out: str, patch: str,
                                                                      spec: str) -> None:
    assert _gated(tmp_path, held_out, patch, spec) == []


def test_a_value_is_compared_as_a_number_however_it_is_written() -> None:
    intro = introduced(["RATE = 3\n"], {"src/p.py": "ONE = 0.125\nTWO = -7.5\nTRE = '12.50'\n"}, "")
    assert {i.key for i in intro} == {"name:ONE", "name:TWO", "name:TRE", "n:0.125", "n:-7.5", "n:12.5"}
    oracle = "from fractions import Fraction\nX = 1 / 8\nY = -Decimal('7.50')\nZ = 12.5\n"
    assert len(leaning("t.py", oracle, intro)) == 3


def test_docstrings_and_an_oracle_that_does_not_parse_count_for_nothing() -> None:
    intro = introduced([], {"src/p.py": '"""A long docstring of the module."""\n'}, "")
    assert intro == []
    assert leaning("t.py", "def (:\n", introduced([], {"src/p.py": "CAP = 0.37\n"}, "")) == []


def test_the_finding_carries_the_oracle_code(tmp_path: Path) -> None:
    found = _gated(tmp_path, "def test_h():\n    assert 0.37\n", "CAP = 0.37\n")
    assert [f.code for f in found] == [ExitCode.GATE_ORACLE] and found[0].detail == f"{HELD}:2"
    assert found[0].line.startswith("src/pricing.py:1: the patch introduced the value 0.37")
