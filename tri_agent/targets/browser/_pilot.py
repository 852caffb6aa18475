"""The browser pilot of a browser case: it runs *inside* the case's jail, next to the web app, on the jail's
private loopback network.

It starts the app (the request driver's ``Service``, from ``client.py`` beside it), launches the system's
chromium through Playwright in one fresh browser context (no storage, no cookies, no service workers), performs
the case's steps, and prints one JSON line per reading step: the cells it read (accessibility trees as
canonical JSON, texts, field values, the URL; cleaned of volatile parts by ``trees.py`` beside it) and, for a
``request`` step, the answer. It keeps screenshots and the page's console in the log folder, and a last line
vouching for each screenshot by its SHA-256: evidence for people, never read by the scorer. It judges nothing:
the orchestrator scores these lines (and reads the database) after the jail has ended. It is the jail's first
process and not dumpable, so the app beside it can neither write its lines nor kill it.

The file is copied into the case's folder and run by its path (the jail does not show this package); it needs
Playwright from the interpreter's own environment. Exit codes: 0 every step done, 3 the app never became ready,
4 the app stopped answering, 5 a step could not be done (no such element, a wait that never ended), 2 a bad plan.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from typing import Any, NoReturn

READY, UNREADY, CRASHED, BAD_PLAN, STUCK = 0, 3, 4, 2, 5

# Switch off a form's client-side validation, as a user with the browser's developer tools would: the server
# must refuse what the page would have stopped.
_UNGUARD = """form => {
  form.noValidate = true;
  for (const field of form.querySelectorAll('input, select, textarea')) {
    for (const name of ['required', 'pattern', 'min', 'max', 'minlength', 'maxlength', 'step'])
      field.removeAttribute(name);
    if (['email', 'number', 'url', 'date', 'tel'].includes(field.type)) field.type = 'text';
  }
}"""


def _sibling(folder: str, name: str) -> Any:
    """A module copied beside this file (``client``: the service's start and stop; ``trees``: what reads become)."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(folder, f"{name}.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def locate(page: Any, spec: str) -> Any:
    """The element a locator spec names (see ``_pages.LOCATORS``)."""
    kind, _, rest = spec.partition(":")
    if kind == "role":
        role, _, name = rest.partition(":")
        return page.get_by_role(role, name=name, exact=True) if name else page.get_by_role(role)
    if kind == "label":
        return page.get_by_label(rest, exact=True)
    if kind == "text":
        return page.get_by_text(rest, exact=True)
    if kind == "placeholder":
        return page.get_by_placeholder(rest, exact=True)
    if kind == "testid":
        return page.get_by_test_id(rest)
    return page.locator(rest)


class Pilot:
    """One browser context over the app; ``act`` performs a step, ``read`` reads after it."""

    def __init__(self, plan: dict[str, Any], page: Any, context: Any, base: str, trees: Any) -> None:
        self.plan, self.page, self.context, self.base, self.trees = plan, page, context, base, trees
        self.clean = _sibling(plan["folder"], "client").cleaner(plan["volatile"])
        self.drop = frozenset(plan["drop"])

    def act(self, step: dict[str, Any]) -> dict[str, Any]:
        """Perform ``step`` (its ``do`` names a row of ``ACTS``); what it answered, for a request step."""
        target: Any = locate(self.page, step["target"]) if step.get("target") else None
        answer = ACTS[step["do"]](self, target, step)
        if step["do"] == "request":
            return dict(answer)
        self.settle()
        return {}

    def click(self, target: Any, step: dict[str, Any]) -> None:
        replay = int(step.get("replay") or 0)
        if not replay:
            target.click()
            return
        with self.page.expect_request(lambda r: r.method in ("POST", "PUT", "PATCH", "DELETE")) as sent:
            target.click()
        self.settle()
        for _ in range(replay):  # the very request the page sent, again, with the context's cookies
            self.context.request.fetch(sent.value, max_redirects=0)

    def request(self, _target: Any, step: dict[str, Any]) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"method": step.get("method", "GET"), "max_redirects": 0}
        if "json" in step:
            kwargs["data"] = json.dumps(step["json"], ensure_ascii=False)
            kwargs["headers"] = {"Content-Type": "application/json"}
        response = self.context.request.fetch(self.base + step["path"], **kwargs)
        body = response.body()[: self.plan["body_cap"]]
        wanted = {h.removeprefix("header:").lower() for h in step.get("select_headers") or ()}
        headers = {k.lower(): v for k, v in response.headers.items() if k.lower() in wanted}
        return {"status": response.status, "body": body.decode("utf-8", "replace"), "headers": headers}

    def settle(self) -> None:
        """A step that navigated has finished loading the new page before anything reads it."""
        self.page.wait_for_load_state("load")

    def read(self, step: dict[str, Any]) -> dict[str, str | None]:
        """Every read of the step as its cell: normalised and cleaned here, under the case's deadline."""
        return {column: self.trees.read_value(source, self.read_one(source), self.drop, self.clean)
                for column, source in step["read"].items()}

    def read_one(self, source: str) -> str | None:
        """What ``source`` reads now, without waiting: a read comes after the step settled (a ``wait`` step waits
        for what appears later). An element that is not there reads as null; of several, the first counts."""
        kind, _, spec = source.partition(":")
        page = self.page
        if kind == "url":
            url = str(page.url)
            return url[len(self.base):] if url.startswith(self.base) else url
        if kind == "title":
            return str(page.title())
        target = locate(page, spec)
        count = target.count()
        if kind == "count":
            return str(count)
        if kind == "visible":
            return "true" if count and target.first.is_visible() else "false"
        if not count:
            return None
        target = target.first
        if kind == "tree":
            return str(target.aria_snapshot())
        if kind == "value":
            return str(target.input_value())
        return str(target.inner_text())


# what each action of ``_pages.ACTIONS`` does, given the pilot, the element (or None) and the step; only a request
# step's answer is kept
ACTS: dict[str, Callable[[Pilot, Any, dict[str, Any]], Any]] = {
    "goto": lambda p, _, step: p.page.goto(p.base + step["path"]),
    "fill": lambda _, target, step: target.fill(step["value"]),
    "select": lambda _, target, step: target.select_option(step["value"]),
    "check": lambda _, target, __: target.check(),
    "uncheck": lambda _, target, __: target.uncheck(),
    "click": Pilot.click,
    "press": lambda _, target, step: target.press(step["key"]),
    "upload": lambda p, target, step: target.set_input_files(os.path.join(p.plan["inputs"], step["file"])),
    "wait": lambda _, target, __: target.wait_for(state="visible"),
    "back": lambda p, _, __: p.page.go_back(),
    "reload": lambda p, _, __: p.page.reload(),
    "unguard": lambda _, target, __: target.evaluate(_UNGUARD),
    "request": Pilot.request,
    "pause": lambda *_: None,
}


def run_steps(plan: dict[str, Any], service: Any, emit: Any) -> NoReturn:
    """Launch the browser, perform every step, keep the evidence, stop the app and end the process."""
    from playwright.sync_api import sync_playwright

    browser_plan, log = plan["browser"], plan["log"]
    shots = os.path.join(log, "shots")
    os.makedirs(shots, exist_ok=True)
    console: list[dict[str, str]] = []
    # the browser's profile and sockets under a short path (a Unix socket path has at most 107 bytes): the jail's
    # own /tmp, a private tmpfs of fixed size under bubblewrap
    profile = os.environ["TMPDIR"] = tempfile.mkdtemp(prefix="browser-", dir="/tmp")
    with sync_playwright() as play:
        browser = play.chromium.launch(executable_path=browser_plan["executable"], chromium_sandbox=False,
                                       args=["--disable-dev-shm-usage", "--disable-gpu", "--no-first-run"])
        # a fresh context: no cookies, no storage, no cache of an earlier case; fixed locale, zone and size
        context = browser.new_context(viewport=browser_plan["viewport"], locale="en-US", timezone_id="UTC",
                                      service_workers="block", accept_downloads=False)
        context.set_default_timeout(browser_plan["step_timeout"] * 1000)
        page = context.new_page()
        page.on("console", lambda m: console.append({"type": m.type, "text": m.text[:2000]}))
        page.on("pageerror", lambda e: console.append({"type": "pageerror", "text": str(e)[:2000]}))
        pilot = Pilot(plan, page, context, f"http://127.0.0.1:{service.port}", _sibling(plan["folder"], "trees"))
        camera = Camera(page, shots)
        code = _steps(plan, service, pilot, emit, camera)
        camera.shoot("end")
        emit({"evidence": camera.taken})
        _console(os.path.join(log, "console.jsonl"), console)
        service.stop()
        shutil.rmtree(profile, ignore_errors=True)  # an unsandboxed run's /tmp is the host's
        # no graceful close (it takes the browser a second): every answer is out and the app has stopped; the
        # browser and Playwright's driver die with the jail (its pid namespace, or the launcher's reaper)
        sys.stdout.flush()
        os._exit(code)


def _steps(plan: dict[str, Any], service: Any, pilot: Pilot, emit: Any, camera: Camera) -> int:
    for i, step in enumerate(plan["steps"], start=1):
        if step.get("clock") and not service.set_clock(step["clock"]):
            emit({"step": step["id"], "n": 0, "error": "the clock could not be moved"})
            return CRASHED
        try:
            answer = pilot.act(step)
            reads = pilot.read(step) if step["read"] or step["do"] == "request" else None
        except Exception as exc:  # whatever stopped the step (the page, the browser) ends the case
            camera.shoot(f"{i:02d}-{step['id']}-stuck")
            emit({"step": step["id"], "n": 0, "error": f"{step['do']}: {_first_line(exc)}"})
            return CRASHED if service.process is not None and service.process.poll() is not None else STUCK
        if reads is not None:
            emit({"step": step["id"], "n": 0, "reads": reads, **answer})
        if plan["browser"]["shots"] == "each" or (plan["browser"]["shots"] == "reads" and reads is not None):
            camera.shoot(f"{i:02d}-{step['id']}")
    return READY


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


class Camera:
    """Screenshots into the log folder, each with the SHA-256 of the bytes the browser gave: the app beside the
    pilot can write that folder too, and the orchestrator keeps only the files these digests vouch for."""

    def __init__(self, page: Any, folder: str) -> None:
        self.page, self.folder = page, folder
        self.taken: dict[str, str] = {}

    def shoot(self, name: str) -> None:
        with contextlib.suppress(Exception):  # evidence only: a page that cannot be shot fails nothing
            data = self.page.screenshot(timeout=5000)
            with open(os.path.join(self.folder, f"{name}.png"), "wb") as out:
                out.write(data)
            self.taken[f"{name}.png"] = hashlib.sha256(data).hexdigest()


def _console(path: str, console: list[dict[str, str]]) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for line in console[:1000]:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")


def main(argv: list[str]) -> int:
    with open(argv[1], encoding="utf-8") as f:
        plan = json.load(f)
    plan["folder"] = os.path.dirname(os.path.abspath(argv[0]))
    client = _sibling(plan["folder"], "client")
    return int(client.drive(plan, run_steps))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
