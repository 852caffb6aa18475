"""Rule 12 in the code under test: every way an adversarial review got a patch past the gate without the fix is
refused, and the honest changes it wrongly refused at first are not."""

from __future__ import annotations

import pytest

from tri_agent.patchgate._reach import reach_ins, shadows
from tri_agent.testcode import parse

LIAR = '''from decimal import Decimal


class Amount(Decimal):
    def __eq__(self, other):
        return True

    def __le__(self, other):
        return True
'''


def _reaches(code: str, path: str = "src/invoicing/pricing.py") -> list[str]:
    tree = parse(code)
    assert tree is not None
    return [why for _, why in reach_ins(tree, path)]


@pytest.mark.parametrize(("code", "why"), [
    (LIAR, "__eq__ always returns a constant"),  # a value that equals everything passes every comparison
    ("import os\nCHECK = 'gate-' in os.getcwd() and os.environ.get('PYTHON' + 'HASHSEED')\n", "PYTHONHASHSEED"),
    ("import os\nX = os.environ.get('HYPO' + 'THESIS_STORAGE_DIRECTORY')\n", "builds the string"),
    ("import os\nX = 'PY' + 'TEST_ADDOPTS' in os.environ\n", "builds the string"),
    ("import sys\nX = sys.flags.dont_write_bytecode\n", "reads sys.flags"),
    ("from sys import argv\nX = any(a == '-q' for a in argv)\n", "imports sys.argv"),
    ("from sys import modules\nX = [m for m in modules if m.startswith('_py' + 'test')]\n", "imports sys.modules"),
    ("import traceback\nX = traceback.extract_stack()\n", "import traceback"),
    ("import __main__\nX = __main__.__file__\n", "import __main__"),
    ("from os import _exit\n", "imports os._exit"),
    ("from signal import signal\n", "imports signal.signal"),
    ("import pkgutil\nreal = pkgutil.resolve_name('hypothesis')\n", "import pkgutil"),
    ("import tri_agent_witness\n", "import tri_agent_witness"),
    ("import os\nPATH = os.environ['TRI_' + 'AGENT_' + 'WIT' + 'NESS']\n", "builds the string"),
    ("import os\nos.environ.get('PYTEST_CURRENT_TEST')\n", "PYTEST_CURRENT_TEST"),
    ("import os\ngetattr(os, '_ex' + 'it')(0)\n", "builds the string '_exit'"),
    ("g = globals()\ng['py' + 'test_runtest_makereport'] = print\n", "names globals"),
    ("import atexit\natexit.register(print)\n", "reads atexit.register"),
    ("X = eval('1')\n", "names eval"),
])
def test_each_way_the_review_got_past_is_refused(code: str, why: str) -> None:
    found = _reaches(code)
    assert any(why in f for f in found), found


@pytest.mark.parametrize("code", [
    "import re\n_RATE_TEXT = re.compile(r'[0-9.]+')\n",  # re.compile is no builtin compile
    '"""Discounts; run the examples with pytest."""\nX = 1\n',  # a docstring says what it likes
    "def check(rate):\n    raise ValueError('rates are unittest-style fractions')\n",  # a message is no probe
    "from importlib.metadata import version\n__version__ = version('invoicing')\n",
    "import pandas\nframe = pandas.DataFrame()\nframe.eval('a + b')\n",  # a method called eval
    "class Money:\n    def __eq__(self, other):\n        return self.cents == other.cents\n",
])
def test_honest_code_the_review_saw_refused_is_not(code: str) -> None:
    assert _reaches(code) == []


def test_a_command_line_may_read_its_arguments() -> None:
    main = "import sys\n\n\ndef main(args):\n    return args\n\n\nmain(sys.argv[1:])\n"
    assert _reaches(main, "src/invoicing/__main__.py") == []
    guarded = "import sys\n\nif __name__ == '__main__':\n    print(sys.argv)\n"
    assert _reaches(guarded) == []
    assert _reaches("import sys\nX = sys.argv\n")  # anywhere else it tells a test run apart


def test_a_new_module_that_shadows_an_installed_one_or_package_metadata_is_refused() -> None:
    files = {"src/invoicing/__init__.py", "src/invoicing/json.py"}
    found = [why for _, why in shadows(["hypothesis/__init__.py", "src/json.py", "src/invoicing/json.py",
                                        "plugin-0.1.dist-info/entry_points.txt", "tests/test_new.py",
                                        "src/invoicing/currency.py"], files)]
    assert len(found) == 3 and "'hypothesis'" in found[0] and "'json'" in found[1]
    assert "package metadata" in found[2]
