"""Test infrastructure: the files around the tests that go to the judge, the moves that forge outcomes (each flags
alone), and the run's record of who implements an outcome hook."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from signals_repo import Repo, repo  # noqa: F401  (repo: the fixture)

from tri_agent.testsignals import evidence
from tri_agent.testsignals._infrastructure import RULES, forged, forged_in, infrastructure
from tri_agent.testsignals._passed import _hooks

WRAPPER = "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n" \
          "    report = (yield).get_result()\n"
FORGERIES = {  # the move, and the rule that must find it (the review's attacks among them)
    "a report's outcome rewritten": (WRAPPER + "    report.outcome = 'passed'\n", "outcome-written"),
    "a report's outcome rewritten by setattr": (WRAPPER + "    setattr(report, 'outcome', 'passed')\n",
                                                "outcome-written"),
    "through __dict__": (WRAPPER + "    report.__dict__['outcome'] = 'passed'\n", "outcome-written"),
    "through vars()": (WRAPPER + "    vars(report).update(outcome='passed', longrepr=None)\n", "outcome-written"),
    "through object.__setattr__": (WRAPPER + "    object.__setattr__(report, 'outcome', 'passed')\n",
                                   "outcome-written"),
    "through a walrus": (WRAPPER + "    (d := report.__dict__).update(outcome='passed')\n", "outcome-written"),
    "the call skipped": ("def pytest_pyfunc_call(pyfuncitem):\n    return True\n", "deciding-hook"),
    "the call skipped by assignment": ("pytest_pyfunc_call = lambda pyfuncitem: True\n", "deciding-hook"),
    "the call skipped on a class": ("class Plug:\n    pass\n\n\nPlug.pytest_pyfunc_call = print\n", "deciding-hook"),
    "the call skipped under another name": (
        "import pytest\n\n\n@pytest.hookimpl(specname='pytest_pyfunc_call')\ndef pytest_run_it(pyfuncitem):\n"
        "    return True\n", "deciding-hook"),
    "hooks put in globals": ("globals()['pytest_' + 'pyfunc_call'] = print\n", "dynamic-code"),
    "hooks loaded from a text file": ("import runpy\n\nns = runpy.run_path('tests/hooks.txt')\n", "dynamic-code"),
    "the test function replaced": ("def pytest_collection_modifyitems(items):\n    for item in items:\n"
                                   "        item.obj = lambda *a, **k: None\n", "outcome-written"),
    "the test function replaced through _obj": ("def pytest_collection_modifyitems(items):\n    for i in items:\n"
                                                "        i._obj = lambda **kw: None\n", "outcome-written"),
    "the report made here": ("def pytest_runtest_makereport(item, call):\n    return forged_report(item, call)\n",
                             "deciding-hook"),
    "the result forced": (WRAPPER.replace("report = (yield).get_result()", "outcome = yield")
                          + "    outcome.force_result(None)\n", "forced-result"),
    "pytest's runner patched": ("import _pytest.runner as runner\n\nrunner.call_and_report = print\n",
                                "internals-patched"),
    "pytest's runner patched through sys.modules": (
        "import sys\n\nC = sys.modules['_pytest.runner'].CallInfo\nC.from_call = classmethod(print)\n",
        "internals-patched"),
    "pytest patched by name": ("def test_x(monkeypatch):\n    monkeypatch.setattr('_pytest.runner.x', 1)\n",
                               "internals-patched"),
    "pytest.fail replaced": ("import pytest\n\npytest.fail = print\n", "internals-patched"),
    "tri-agent's own plugin patched": (
        "try:\n    from tri_agent.testsignals import _plugin\nexcept ImportError:\n    _plugin = None\n",
        "internals-patched"),
    "the exit status set": ("def pytest_sessionfinish(session):\n    session.exitstatus = 0\n", "outcome-written"),
    "code built at run time": ("import base64\n\nexec(base64.b64decode(b'cGFzcw=='))\n", "dynamic-code"),
    "a plugin object handed over": ("import types\n\n\ndef pytest_configure(config):\n    config.pluginmanager."
                                    "register(types.SimpleNamespace(pytest_pyfunc_call=lambda pyfuncitem: True))\n",
                                    "deciding-hook"),
    "a plugin class built by type()": ("P = type('P', (), {'pytest_pyfunc_call': staticmethod(print)})\n",
                                       "deciding-hook"),
    "specname in a variable": ("import pytest\n\nN = 'pytest_pyfunc_call'\n\n\n@pytest.hookimpl(specname=N)\n"
                               "def pytest_anything(pyfuncitem):\n    return True\n", "deciding-hook"),
    "a wrapper that is not one": ("import pytest\n\n\n@pytest.hookimpl(hookwrapper=False)\n"
                                  "def pytest_pyfunc_call(pyfuncitem):\n    return True\n", "deciding-hook"),
    "a fresh report from a wrapper": (
        "import pytest\n\n\n@pytest.hookimpl(wrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
        "    r = yield\n    return pytest.TestReport(r.nodeid, r.location, r.keywords, 'passed', None, r.when)\n",
        "outcome-written"),
    "a report rebuilt in place": (WRAPPER + "    report.__init__(report.nodeid, report.location, {}, 'passed', None,"
                                  " report.when)\n", "outcome-written"),
    "a tuple target": (WRAPPER + "    report.outcome, report.longrepr = 'passed', None\n", "outcome-written"),
    "a class of pytest's patched": ("import pytest\n\npytest.TestReport.from_item_and_call = classmethod(print)\n",
                                    "internals-patched"),
    "code swapped": ("import pytest\n\npytest.Function.runtest.__code__ = (lambda self: None).__code__\n",
                     "outcome-written"),
    "a test's code swapped": ("def pytest_collection_modifyitems(items):\n    for i in items:\n"
                              "        i.function.__code__ = (lambda: None).__code__\n", "outcome-written"),
    "exec through builtins": ("import builtins\n\nbuiltins.exec(builtins.compile(SRC, __file__, 'exec'), vars())\n",
                              "dynamic-code"),
    "setattr under another name": (WRAPPER + "    f = setattr\n    f(report, 'outcome', 'passed')\n", "dynamic-code"),
    "operator.setitem on vars()": ("import operator\n\n" + WRAPPER.split("\n", 1)[1]
                                   + "    operator.setitem(vars(report), 'outcome', 'passed')\n", "outcome-written"),
    "hooks served by name": ("def __getattr__(name):\n    if name == 'pytest_pyfunc_call':\n"
                             "        return lambda pyfuncitem: True\n    raise AttributeError(name)\n",
                             "dynamic-code"),
    "too deep to read": ("X = " + "+".join(["1"] * 6000) + "\n", "unscannable"),
    "does not parse": ("def pytest_pyfunc_call(pyfuncitem)\n    return True\n", "unscannable"),
}
HONEST = {  # conftest code an honest change adds: none of it is flagged (the review's false positives among them)
    "the documented report wrapper": WRAPPER + "    setattr(item, 'rep_' + report.when, report)\n",
    "markers and a fixture": "import re\n\nimport pytest\n\n\ndef pytest_configure(config):\n"
                             "    config.addinivalue_line('markers', 'slow: slow tests')\n    re.compile('x')\n\n\n"
                             "@pytest.fixture\ndef db(tmp_path):\n    return tmp_path\n",
    "an attribute of its own": "class Helper:\n    def __init__(self):\n        self.outcome = None\n"
                               "        self.obj = object()\n",
    "a reordering": "def pytest_collection_modifyitems(items):\n    items.sort(key=lambda i: i.name)\n",
    "a timing wrapper": "import time\n\nimport pytest\n\n\n@pytest.hookimpl(wrapper=True)\n"
                        "def pytest_runtest_protocol(item, nextitem):\n    t = time.time()\n    yield\n"
                        "    item.user_properties.append(('seconds', time.time() - t))\n",
    "a legacy wrapper": "import pytest\n\n\n@pytest.mark.hookwrapper\ndef pytest_runtest_makereport(item, call):"
                        "\n    yield\n",
    "a status letter": "def pytest_report_teststatus(report, config):\n    if report.when == 'call' and "
                       "report.duration > 5:\n        return 'slow', 'S', 'SLOW'\n",
    "a dynamic import in a fixture": "import importlib\n\nimport pytest\n\n\n@pytest.fixture(params=['json'])\n"
                                     "def codec(request):\n    return importlib.import_module(request.param)\n",
    "a shared namespace on pytest": "import pytest\n\n\ndef pytest_configure(config):\n    pytest.shared = {}\n",
    "names from pytest, assigned": "from _pytest.monkeypatch import MonkeyPatch\nfrom pytest import approx, param\n\n"
                                   "CASES = [param(1)]\nexpected = approx(0.3)\nmp = MonkeyPatch()\n",
    "pytester as a plugin": "import sys\n\npytest_plugins = ['_pytest.pytester']\n"
                            "HAS_CAPTURE = '_pytest.capture' in sys.modules\n",
    "a frozen dataclass": "from dataclasses import dataclass\n\n\n@dataclass(frozen=True)\nclass P:\n    a: int\n\n"
                          "    def __post_init__(self):\n        object.__setattr__(self, 'b', self.a)\n"
                          "        super().__setattr__('c', 1)\n        self.__dict__.update(d=2)\n",
    "domain attributes in fixtures": "import pytest\n\n\n@pytest.fixture\ndef result(tmp_path):\n"
                                     "    r = Result()\n    r.outcome = 'ok'\n    r.exitstatus = 0\n    return r\n",
    "the incremental example": "def pytest_runtest_makereport(item, call):\n    if 'incremental' in item.keywords:\n"
                               "        if call.excinfo is not None:\n            item.parent._previousfailed = item\n",
    "a doctest namespace": "import pytest\n\n\n@pytest.fixture(autouse=True)\ndef ns(doctest_namespace):\n"
                           "    doctest_namespace.update(globals())\n",
}
FACTORIES = "import pytest\n\n\ndef match(m):\n    m.outcome = 'draw'\n    m.obj = {}\n    return m\n"


def _rule(claim_reason: str) -> str:
    return next(rule for rule, words in RULES.items() if claim_reason.startswith(words))


@pytest.mark.parametrize("name", sorted(FORGERIES))
def test_each_forging_move_in_a_conftest_flags_alone(name: str) -> None:
    text, rule = FORGERIES[name]
    claims = forged("tests/conftest.py", None, text)
    assert rule in {_rule(c.reason) for c in claims}, claims
    assert all(c.location.startswith("after/tests/conftest.py:") and c.category == "forged" for c in claims)


@pytest.mark.parametrize("name", sorted(HONEST))
def test_honest_conftest_code_is_not_flagged(name: str) -> None:
    assert forged("tests/conftest.py", None, HONEST[name]) == []


def test_a_move_the_base_had_already_is_not_flagged_again() -> None:
    text = FORGERIES["the call skipped"][0]
    assert forged("conftest.py", text, text) == []
    assert forged("conftest.py", text, text.replace("True", "1")), "a changed hook is a new one"
    moved = {"tests/conftest.py": (text, None), "conftest.py": (None, text)}  # git mv: the same code, elsewhere
    assert forged_in(moved) == []


def test_a_helper_that_is_no_plugin_may_name_its_attributes_freely() -> None:
    assert forged("tests/factories.py", None, FACTORIES) == []


def test_names_from_pytest_in_a_test_and_in_application_code_are_not_patches() -> None:
    assert forged("tests/test_math.py", None, "from pytest import approx\n\n\ndef test_x():\n"
                                              "    expected = approx(0.3)\n    assert 0.1 + 0.2 == expected\n") == []
    assert forged("src/app/hooks.py", None, "import pluggy\n\nhookimpl = pluggy.HookimplMarker('app')\n"
                                            "pm = pluggy.PluginManager('app')\n") == []


def test_the_scan_reads_a_file_as_python_does() -> None:
    from tri_agent.testsignals._infrastructure import source_text

    hook = "def pytest_pyfunc_call(pyfuncitem):\n    return True\n"
    assert forged("conftest.py", None, source_text(b"\xef\xbb\xbf" + hook.encode()))  # a BOM
    latin = b"# coding: latin-1\nname = '\xe9'\n" + hook.encode()
    assert forged("conftest.py", None, source_text(latin))


def test_an_outcome_attribute_in_application_code_is_just_a_name() -> None:
    code = "class Match:\n    def settle(self, bet):\n        bet.outcome = 'won'\n"
    assert forged("app/bets.py", None, code) == []
    assert forged("app/bets.py", None, "import _pytest.runner\n\n_pytest.runner.call_and_report = print\n")


def test_which_changed_files_are_infrastructure() -> None:
    settings = '[tool.pytest.ini_options]\npythonpath = ["."]\n'
    assert infrastructure("tests/checks.py", None, "def check(x):\n    assert x\n")
    assert infrastructure("src/plugin.py", None, "import pytest\n")
    assert infrastructure("src/plugin.py", None, "import os, pytest\n"), "one import of two names"
    assert infrastructure("pyproject.toml", settings, settings + 'addopts = "-p no:randomly"\n')
    assert not infrastructure("pyproject.toml", settings, settings + '\n[project]\nname = "x"\n')
    assert not infrastructure("src/app.py", None, "x = 1\n")
    assert not infrastructure("tests/test_a.py", None, "def test_a():\n    pass\n"), "a test file is a test"
    assert not infrastructure("tests/data.json", "{}", '{"a": 1}'), "data under tests/ shapes nothing pytest runs"
    assert not infrastructure("setup.cfg", None, "[flake8]\nmax-line-length = 99\n"), "no pytest section, then none"
    assert not infrastructure("pyproject.toml", 'name = "a"\n' + settings, 'name = "b"\n' + settings), \
        "a top-level key before the first table"
    indented = "[pytest]\naddopts =\n    -q\n    -x\n"
    assert infrastructure("pytest.ini", indented, indented.replace("    -x", "-x")), "a continuation line unindented"


def test_the_run_records_who_implements_an_outcome_hook(repo: Repo) -> None:
    repo.write("tests/conftest.py", WRAPPER)
    assert repo.pytest().returncode == 0
    entry = json.loads(repo.spool()[-1].read_text())
    assert entry["hooks"]["tests/conftest.py"] == ["pytest_runtest_makereport"]
    assert not any(f"{os.sep}_pytest{os.sep}" in f or f"{os.sep}tri_agent{os.sep}" in f for f in entry["hooks"])


def test_an_outcome_hook_outside_the_tree_and_the_installed_packages_is_no_evidence() -> None:
    why, _ = _hooks({"/tmp/evil/plugin.py": ["pytest_pyfunc_call"]}, set())
    assert "outside the tree and the installed packages" in why
    site = os.path.join(sys.prefix, "lib", "site-packages", "xdist", "plugin.py")
    why, notes = _hooks({site: ["pytest_runtestloop"], "tests/conftest.py": ["pytest_runtest_call"]},
                        {"tests/conftest.py"})
    assert why == "" and any("installed plugin" in n for n in notes) and any("tests/conftest.py" in n for n in notes)


def test_a_changed_helper_goes_to_the_judge_beside_the_tests(repo: Repo) -> None:
    base = repo.git("rev-parse", "HEAD")
    repo.write("tests/checks.py", "def check(x):\n    assert x or True\n")
    asked: list[str] = []

    from tri_agent.testsignals import Judge

    report = evidence(repo.path, base, judge=Judge("recorded", lambda q: asked.append(q) or '{"flags": []}'))
    assert report.changed_infrastructure == ["tests/checks.py"] and report.weakened.files == ["tests/checks.py"]
    assert asked and "=== after/tests/checks.py ===" in asked[0]


def test_an_in_repo_symlink_is_never_read_for_the_judge(repo: Repo, tmp_path: Path) -> None:
    base = repo.git("rev-parse", "HEAD")
    secret = tmp_path / "secret.txt"
    secret.write_text("the password is hunter2\n")
    (repo.path / "tests" / "test_link.py").symlink_to(secret)
    asked: list[str] = []

    from tri_agent.testsignals import Judge

    evidence(repo.path, base, judge=Judge("recorded", lambda q: asked.append(q) or '{"flags": []}'))
    assert not any("hunter2" in q for q in asked)


def test_a_code_object_that_claims_an_installed_file_does_not_hide_an_ignored_plugin(repo: Repo) -> None:
    base = repo.git("rev-parse", "HEAD")
    fake = os.path.join(sys.prefix, "lib", "site-packages", "pytest_benign", "plugin.py")
    repo.write("conftest.py", f"def _wrap(item):\n    pass\n\n\n_wrap.__code__ = _wrap.__code__.replace("
                              f"co_filename={fake!r})\npytest_runtest_setup = _wrap\n")
    with open(repo.path / ".git" / "info" / "exclude", "a", encoding="utf-8") as f:
        f.write("/conftest.py\n")
    repo.pytest()
    report = evidence(repo.path, base)
    assert (report.passed.state, report.exit_code) == ("no_evidence", 16), report.passed.notes
