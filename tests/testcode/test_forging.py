"""The scan for moves that forge outcomes, one file at a time: each entry of its tables has a row that finds it, and
each exemption a row that keeps honest code quiet. The change-level view (moves a change added, in the evidence
and in the acceptance smell) is tested in tests/testsignals/test_infrastructure.py and tests/acceptance."""

from __future__ import annotations

import pytest

from tri_agent.testcode._forging import (
    _MAX_SCANNED,
    added_moves,
    imports_pytest,
    in_test_folder,
    moves,
    shown,
    source_text,
)

HOOK = "import pytest\n\n\ndef pytest_runtest_logreport(report):\n"  # a hook whose body starts on line 5
METHOD = "import pytest\n\n\nclass Plugin:\n    def pytest_runtest_logreport(self, report):\n"  # body on line 6


def _found(path: str, text: str) -> list[tuple[str, int]]:
    return [(rule, line) for rule, line, _ in moves(path, text)]


@pytest.mark.parametrize(("path", "text", "expected"), [
    # wrappers cannot replace a result: only forcing one is a move
    pytest.param("conftest.py", "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
                 "def pytest_pyfunc_call(pyfuncitem):\n    yield\n", [], id="hookwrapper=True"),
    pytest.param("conftest.py", "import pytest\n\n\n@pytest.mark.hookwrapper\ndef pytest_pyfunc_call(pyfuncitem):\n"
                 "    yield\n", [], id="the legacy hookwrapper mark"),
    pytest.param("conftest.py", "import pytest\n\n\n@pytest.hookimpl(wrapper=True)\ndef pytest_pyfunc_call(item):\n"
                 "    outcome = yield\n    outcome.force_exception(ValueError())\n", [("forced-result", 7)],
                 id="force_exception"),
    pytest.param("conftest.py", "import pytest\n\n\n@pytest.hookimpl(specname='pytest_collection_modifyitems')\n"
                 "def keep(items):\n    return None\n", [], id="specname of a hook that decides nothing"),
    pytest.param("conftest.py", "def pytest_runtest_makereport(item, call):\n    return None\n", [],
                 id="a makereport that returns None"),
    # outcome writes, and the object's own attributes that are none
    pytest.param("conftest.py", "def helper(item):\n    item.__class__ = Passing\n", [("outcome-written", 2)],
                 id="__class__ swapped"),
    pytest.param("conftest.py", METHOD + "        self.outcome = report.outcome\n", [], id="self's own outcome"),
    pytest.param("conftest.py", METHOD + "        self.last.outcome = report.outcome\n", [], id="self.last.outcome"),
    pytest.param("conftest.py", "class P:\n    @classmethod\n    def pytest_runtest_logreport(cls, report):\n"
                 "        cls.outcome = report.outcome\n", [], id="cls's own outcome"),
    pytest.param("conftest.py", HOOK + "    report.__dict__.setdefault('outcome', 'passed')\n",
                 [("outcome-written", 5)], id="__dict__.setdefault"),
    pytest.param("conftest.py", HOOK + "    report.__dict__.__setitem__('outcome', 'passed')\n",
                 [("outcome-written", 5)], id="__dict__.__setitem__"),
    pytest.param("conftest.py", HOOK + "    seen = report.__dict__.get('outcome')\n", [], id="__dict__.get reads"),
    pytest.param("conftest.py", HOOK + "    log.write(vars(report))\n", [], id="vars() handed to a call"),
    pytest.param("conftest.py", METHOD + "        object.__setattr__(self, 'x', 1)\n", [], id="__setattr__ on self"),
    pytest.param("conftest.py", "class P:\n    @classmethod\n    def pytest_configure(cls, config):\n"
                 "        object.__setattr__(cls, 'x', 1)\n", [], id="__setattr__ on cls"),
    pytest.param("conftest.py", METHOD + "        super().__setattr__('outcome', 1)\n", [], id="super().__setattr__"),
    pytest.param("conftest.py", METHOD + "        self.__dict__.update(report.state)\n", [], id="self.__dict__"),
    pytest.param("conftest.py", "class P:\n    @classmethod\n    def pytest_configure(cls, config):\n"
                 "        cls.__dict__.update(config.state)\n", [], id="cls.__dict__"),
    pytest.param("conftest.py", HOOK + "    made = CollectReport('x', 'passed', None, [])\n",
                 [("outcome-written", 5)], id="CollectReport built"),
    pytest.param("conftest.py", HOOK + "    made = TestReport.from_item_and_call(item, call)\n",
                 [("outcome-written", 5)], id="from_item_and_call"),
    pytest.param("conftest.py", HOOK + "    report.longrepr += ' (ignored)'\n", [("outcome-written", 5)],
                 id="augmented assignment"),
    pytest.param("conftest.py", HOOK + "    with open('x') as report.longrepr:\n        pass\n",
                 [("outcome-written", 5)], id="with ... as an outcome"),
    pytest.param("conftest.py", HOOK + "    first, *report.longrepr = parts\n", [("outcome-written", 5)],
                 id="a starred target"),
    pytest.param("conftest.py", HOOK + "    [None for report.outcome in ['passed']]\n", [("outcome-written", 5)],
                 id="a comprehension's target"),
    pytest.param("conftest.py", HOOK + "    setattr(report, 'outcome', 'passed')\n", [("outcome-written", 5)],
                 id="setattr"),
    pytest.param("conftest.py", METHOD + "        setattr(self, 'outcome', report.outcome)\n", [],
                 id="setattr on self"),
    pytest.param("conftest.py", HOOK + "    setattr(report)\n", [], id="setattr with one argument"),
    pytest.param("conftest.py", "for r in REPORTS:\n    r.outcome = 'passed'\n", [("outcome-written", 2)],
                 id="nested in a module-level statement"),
    pytest.param("conftest.py", "REPORT.outcome = 'passed'\n\n\ndef pytest_configure(config):\n    pass\n",
                 [("outcome-written", 1)], id="module level beside a hook"),
    pytest.param("pkg/sub/conftest.py", "REPORT.outcome = 'passed'\n", [("outcome-written", 1)],
                 id="a conftest outside a test folder"),
    # which files shape the tests
    pytest.param("lib/plugin.py", "from pytest import TestReport\n\n\ndef pytest_runtest_logreport(report):\n"
                 "    report.outcome = 'passed'\n", [("outcome-written", 5)], id="a plugin importing from pytest"),
    pytest.param("lib/helper.py", "import pytest\n\nobj.__class__ = Fake\n", [("outcome-written", 3)],
                 id="a helper importing pytest"),
    pytest.param("lib/helper.py", "import os\n\nobj.__class__ = Fake\n", [], id="a module importing only os"),
    pytest.param("lib/helper.py", "import pytest\n\nREPORT.outcome = 'passed'\n", [],
                 id="a helper's module level is no hook"),
    pytest.param("pkg/test_x.py", "import pytest\n\n\ndef test_x():\n    obj.__class__ = Fake\n", [],
                 id="a test's own body"),
    # dynamic code
    pytest.param("conftest.py", "globals()['pytest_pyfunc_call'] = f\n", [("dynamic-code", 1)], id="globals()"),
    pytest.param("conftest.py", "SETTINGS['k'] = 1\n", [], id="a dict of one's own"),
    pytest.param("conftest.py", "ev = eval\n", [("dynamic-code", 1)], id="eval bound to a name"),
    pytest.param("conftest.py", "def __dir__():\n    return []\n", [("dynamic-code", 1)], id="a module's __dir__"),
    # pytest's, pluggy's and tri-agent's own modules
    pytest.param("conftest.py", "def f(monkeypatch):\n    monkeypatch.setattr('pytest.fail', print)\n",
                 [("internals-patched", 2)], id="setattr by a dotted name of pytest's"),
    pytest.param("conftest.py", "def f(monkeypatch):\n    monkeypatch.setattr('os.getcwd', print)\n", [],
                 id="setattr by a dotted name of another module"),
    pytest.param("conftest.py", "import importlib\n\nrunner = importlib.import_module('_pytest.runner')\n",
                 [("internals-patched", 3)], id="import_module"),
    pytest.param("lib/helper.py", "mod = __import__('_pytest.runner')\n", [("internals-patched", 1)],
                 id="__import__"),
    pytest.param("conftest.py", "print('_pytest is where pytest lives')\n", [], id="a string that names _pytest"),
    pytest.param("lib/helper.py", "import sys\n\nrunner = sys.modules['_pytest.runner']\n",
                 [("internals-patched", 3)], id="sys.modules"),
    pytest.param("lib/helper.py", "import sys\n\nsys.modules['_pytest.runner'].call_and_report = f\n",
                 [("internals-patched", 3), ("internals-patched", 3)], id="through sys.modules, written"),
    pytest.param("lib/helper.py", "from _pytest import runner\n\nrunner.call_and_report = f\n",
                 [("internals-patched", 3)], id="a module taken from _pytest"),
    pytest.param("lib/helper.py", "from _pytest import runner as rn\n\nrn.call_and_report = f\n",
                 [("internals-patched", 3)], id="taken under another name"),
    pytest.param("lib/helper.py", "from os import path\n\npath.sep2 = '/'\n", [], id="taken from os"),
    pytest.param("lib/helper.py", "import pluggy\nimport _pytest.runner as r\n\npluggy.HookCaller.x = f\n",
                 [("internals-patched", 4)], id="two protected imports"),
    pytest.param("lib/helper.py", "import _pytest.runner as r\n\nx = r\nr.call_and_report = f\n",
                 [("internals-patched", 4)], id="the first name kept beside its alias"),
    pytest.param("lib/helper.py", "def later():\n    c.call_and_report = f\n\n\nc = b\nb = a\n"
                 "a = sys.modules['_pytest.runner']\n", [("internals-patched", 2), ("internals-patched", 7)],
                 id="a chain of aliases bound backwards"),
    pytest.param("lib/helper.py", "import tri_agent.testsignals._spool\n", [("internals-patched", 1)],
                 id="tri-agent's own evidence modules"),
])
def test_each_rule_and_each_exemption(path: str, text: str, expected: list[tuple[str, int]]) -> None:
    assert _found(path, text) == expected


@pytest.mark.parametrize(("path", "size", "expected"), [
    ("tests/test_big.py", _MAX_SCANNED + 1, [("unscannable", 1)]),
    ("tests/data.py", _MAX_SCANNED + 1, [("unscannable", 1)]),  # in a test folder, though no test file
    ("lib/big.py", _MAX_SCANNED + 1, []),  # application code: no test infrastructure
    ("tests/test_big.py", _MAX_SCANNED, []),  # the cap itself is scanned
])
def test_a_file_too_large_to_scan(path: str, size: int, expected: list[tuple[str, int]]) -> None:
    text = "#" * (size - 1) + "\n"
    assert _found(path, text) == expected
    assert [key for rule, _, key in moves(path, text)] == [f"{size} characters"] * len(expected)


@pytest.mark.parametrize(("path", "text", "expected"), [
    ("lib/helper.py", "import pytest\ndef (:\n", [("unscannable", 2, "SyntaxError")]),
    ("pkg/test_x.py", "x = 1\ndef (:\n", [("unscannable", 2, "SyntaxError")]),  # a test file, anywhere
    ("tests/test_x.py", "x = 1\x00\n", [("unscannable", 1, "SyntaxError")]),  # no line given
    ("lib/helper.py", "def (:\n", []),  # application code that does not parse: the judge's to read
    ("lib/deep.py", "x = 1" + " + 1" * 5000 + "\n", [("unscannable", 1, "RecursionError")]),  # too deep to walk
])
def test_a_file_that_does_not_parse(path: str, text: str, expected: list[tuple[str, int, str]]) -> None:
    assert moves(path, text) == expected


def test_imports_pytest_reads_the_text_of_what_does_not_parse() -> None:
    assert imports_pytest("import pytest\ndef (:\n")
    assert imports_pytest("from _pytest import runner\ndef (:\n")
    assert not imports_pytest("import os\ndef (:\n")
    assert imports_pytest("from pytest import fixture\n") and not imports_pytest("from os import path\n")


def test_a_folder_anywhere_above_counts_as_a_test_folder() -> None:
    assert in_test_folder("src/tests/helpers.py") and in_test_folder("tests/helpers.py")
    assert not in_test_folder("src/helpers.py") and not in_test_folder("tests")


def test_source_text_decodes_as_python_does() -> None:
    assert source_text("# -*- coding: latin-1 -*-\nNAME = 'café'\n".encode("latin-1")).endswith("'café'\n")
    assert source_text(b"\xef\xbb\xbfx = 1\n") == "x = 1\n"  # the BOM is Python's, not the text's
    assert source_text(b"x = 1\n\n\nNAME = '\xff'\n") == "x = 1\n\n\nNAME = '\ufffd'\n"  # not UTF-8: replaced
    assert source_text(b"# coding: no-such-codec\nx = 1\n") == "# coding: no-such-codec\nx = 1\n"


def test_a_move_is_shown_by_its_first_line_that_is_no_decorator() -> None:
    assert shown("@pytest.hookimpl(tryfirst=True)\ndef pytest_pyfunc_call(item):\n    return True") == \
        "def pytest_pyfunc_call(item):"
    assert shown("") == ""
    assert shown("x = '" + "y" * 200 + "'") == ("x = '" + "y" * 200)[:120]


def test_added_moves_are_those_no_base_file_had() -> None:
    hook = "def pytest_pyfunc_call(pyfuncitem):\n    return True\n"
    assert added_moves({"conftest.py": hook}, {"tests/conftest.py": hook}) == []  # moved
    assert [(p, r, line) for p, r, line, _ in added_moves({}, {"conftest.py": hook, "notes.txt": hook})] == [
        ("conftest.py", "deciding-hook", 1)]
    assert added_moves({"conftest.py": None}, {"conftest.py": None, "gone.py": None}) == []
