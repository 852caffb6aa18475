"""Browser targets: a web app started as a service target is, driven through a real browser in every case.

A browser target file::

    schema_version: 1
    kind: browser
    preset: gui
    baseline: ../target
    build: [python3, migrate.py, app.db]
    timeout: 60
    service:                       # how the app starts, is probed, restored and stopped (as a service target)
      start: [python3, -m, uvicorn, "app:app", --port, "{port}"]
      ready: {path: /health}
      database: {kind: sqlite, file: app.db}
      clock: {env: APP_NOW}
    browser: {viewport: {width: 1024, height: 768}, step_timeout: 5, shots: reads}

Each case runs in its own jail, like a service case: the database restored, the app started on the jail's own
loopback, and the pilot (``_pilot``, copied into the case) drives Debian's chromium through Playwright in one
fresh browser context. The browser runs inside the jail too: it reaches the app and nothing else, and what it
writes (its profile, the screenshots) counts against the case's write cap.

Why Playwright over the system browser: the pinned library drives Debian's chromium through the browser's own
pipe protocol (``--remote-debugging-pipe``), and its accessibility snapshots are the maintained reading of what
a page exposes. ``tests/targets/test_browser.py`` checks the pairing (launch, a context, a snapshot, a
screenshot) on every run of the suite; the launch uses the real binary, ``/usr/lib/chromium/chromium``, because
Debian's ``/usr/bin/chromium`` is a shell wrapper that reads ``/etc/chromium.d``, which no jail shows.

Chromium reads ``/proc``, which the Landlock fallback closes to every run: a browser target needs bubblewrap
(or an explicitly unsandboxed run, which never certifies); under Landlock alone its cases are refused (exit 7),
never run with less.
"""

from __future__ import annotations

import hashlib
import importlib.util
import stat
from pathlib import Path
from typing import Any

from ..._errors import InfrastructureFailure
from ...sandbox import _jail
from .._specs import BrowserSpec
from .._target import TargetConfig
from ..service._serve import Driving, driver_folder, service_wire
from . import _pilot, _trees
from ._pages import UiPlan, load_page_plan, page_rows

CHROMIUM = ("/usr/lib/chromium/chromium", "/usr/lib/chromium-browser/chromium-browser")
FONTS = Path("/etc/fonts")  # fontconfig's configuration: without it every glyph is a box
SHOT_CAP = 4 << 20  # bytes of one kept screenshot
SHOTS_KEPT = 64


def executable(spec: BrowserSpec) -> str:
    """The chromium binary this target's cases launch; exit 7 when there is none."""
    candidates = (spec.executable,) if spec.executable else CHROMIUM
    found = next((c for c in candidates if Path(c).is_file()), None)
    if found is None:
        raise InfrastructureFailure(f"no chromium binary here ({', '.join(candidates)})",
                                    hint="install Debian's chromium (apt-get install chromium; `python3 dev.py test` "
                                         "does it as root) or set browser.executable in the target file")
    return found


def require_browser(spec: BrowserSpec) -> str:
    """Everything a browser case needs, checked before the first case: Playwright, chromium, and a sandbox layer
    the browser can run in. The chromium binary."""
    if importlib.util.find_spec("playwright") is None:
        raise InfrastructureFailure("browser targets need Playwright, which this environment lacks",
                                    hint="pip install 'tri-agent[gui]' (it pins the Playwright the suite checks)")
    if _jail.strongest() == _jail.LANDLOCK:
        raise InfrastructureFailure("a browser target cannot run under the Landlock fallback: chromium needs /proc, "
                                    "which that layer closes", hint="install bubblewrap (apt-get install "
                                    "bubblewrap); --allow-unsandboxed runs anyway and never certifies")
    return executable(spec)


def prepare_pilot(work: Path, config: TargetConfig, values: dict[str, str], env: dict[str, str]) -> Driving:
    """The pilot's argv, what it must read, and how its lines become rows."""
    assert config.service is not None
    plan: UiPlan = load_page_plan(work / "input")
    browser = config.browser or BrowserSpec()
    wire = {**service_wire(work, config.service, plan.clock, values, env),
            "steps": [s.wire() for s in plan.steps], "inputs": str(work / "input"),
            "volatile": [v.model_dump(by_alias=True) for v in plan.volatile], "drop": plan.drop,
            "browser": {"executable": executable(browser), "viewport": browser.viewport.model_dump(),
                        "step_timeout": browser.step_timeout, "shots": browser.shots}}
    argv, folder = driver_folder(work, wire, (Path(_trees.__file__), Path(_pilot.__file__)))
    case = values["{case}"]
    cap = max(config.output_cap, min(len(plan.steps) * 4 * _trees.TEXT_CAP, 256 << 20))
    return Driving(argv=argv, readable=(folder,), extra=(FONTS,) if FONTS.is_dir() else (), cap=cap,
                   rows=lambda answers: page_rows(case, plan, answers), queries=plan.queries,
                   exits=(_pilot.READY, _pilot.UNREADY, _pilot.CRASHED, _pilot.STUCK),
                   evidence=lambda answers: evidence(work, answers))


def evidence(work: Path, answers: list[dict[str, Any]]) -> tuple[Path, ...]:
    """The screenshots a case kept, oldest step first: only files the pilot vouched for (its last line names each
    with the SHA-256 of the bytes the browser gave), plain, of a sane size (the app ran beside the pilot and could
    have written anything into that folder)."""
    vouched: dict[str, Any] = next((a["evidence"] for a in reversed(answers) if isinstance(a.get("evidence"), dict)),
                                   {})
    folder = work / "log" / "shots"
    if not folder.is_dir() or folder.is_symlink():
        return ()
    kept = []
    for name, digest in sorted(vouched.items())[:SHOTS_KEPT]:
        path = folder / str(name)
        if path.parent != folder or not _plain_png(path):
            continue
        if hashlib.sha256(path.read_bytes()).hexdigest() == digest:
            kept.append(path)
    return tuple(kept)


def _plain_png(path: Path) -> bool:
    try:
        info = path.lstat()
    except OSError:
        return False
    return (stat.S_ISREG(info.st_mode) and info.st_nlink == 1 and info.st_size <= SHOT_CAP
            and path.suffix == ".png")
