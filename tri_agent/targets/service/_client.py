"""The request driver of a service case: it runs *inside* the case's jail, next to the service, on the jail's
private loopback network.

It starts the service, waits until it is ready, sends the case's steps one by one (values captured from earlier
responses substituted into later ones, the clock moved where a step says), stops the service and prints one JSON
line per response on standard output. It judges nothing: the orchestrator reads these lines (and the database)
after the jail has ended.

The file is copied into the case's folder and run by its path with the standard library alone (the jail does not
show this package), so it imports nothing else. Exit codes: 0 every step was sent and answered, 3 the service
never became ready, 4 the service stopped answering (it crashed or closed the connection), 2 a bad plan.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

READY, UNREADY, CRASHED, BAD_PLAN = 0, 3, 4, 2
_CAPTURE = re.compile(r"\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}")
_PATH_TOKEN = re.compile(r"\.([A-Za-z_][A-Za-z0-9_-]*)|\[(\d+)\]|\[\*\]|\['([^']*)'\]")
_NOTHING = object()


def jsonpath(document: Any, path: str) -> Any:
    """The value ``path`` selects in ``document``, or ``_NOTHING``. A subset of JSONPath: ``$``, ``.name``,
    ``['any name']``, ``[index]`` and ``[*]`` (which makes the result a list of what follows it)."""
    if not path.startswith("$"):
        raise ValueError(f"a JSONPath starts with '$': {path!r}")
    tokens, rest = [], path[1:]
    while rest:
        match = _PATH_TOKEN.match(rest)
        if match is None:
            raise ValueError(f"unsupported JSONPath at {rest!r} in {path!r} (supported: .name ['name'] [0] [*])")
        tokens.append(match)
        rest = rest[match.end():]
    return _walk(document, tokens)


def _walk(value: Any, tokens: list[re.Match[str]]) -> Any:
    for i, token in enumerate(tokens):
        name, index, quoted = token.group(1), token.group(2), token.group(3)
        if token.group(0) == "[*]":
            if not isinstance(value, list):
                return _NOTHING
            found = [_walk(item, tokens[i + 1:]) for item in value]
            return [f for f in found if f is not _NOTHING]
        if index is not None:
            if not isinstance(value, list) or int(index) >= len(value):
                return _NOTHING
            value = value[int(index)]
            continue
        key = name if name is not None else quoted
        if not isinstance(value, dict) or key not in value:
            return _NOTHING
        value = value[key]
    return value


def substitute(value: Any, captured: dict[str, str]) -> Any:
    """``{{name}}`` replaced by the value captured under that name (an unknown name: the empty string), in every
    string of ``value``, keys of objects included."""
    if isinstance(value, str):
        return _CAPTURE.sub(lambda m: captured.get(m.group(1), ""), value)
    if isinstance(value, list):
        return [substitute(v, captured) for v in value]
    if isinstance(value, dict):
        return {substitute(k, captured): substitute(v, captured) for k, v in value.items()}
    return value


def cleaner(volatile: list[dict[str, str]]) -> Callable[[str], str]:
    """Every ``pattern`` replaced by its ``as`` text (taken literally: no group references)."""
    # in a replacement only backslashes are special (group references): doubled, every one is itself
    rules = [(re.compile(v["pattern"]), v.get("as", "<volatile>").replace("\\", "\\\\")) for v in volatile]

    def clean(text: str) -> str:
        for pattern, replacement in rules:
            text = pattern.sub(replacement, text)
        return text

    return clean


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Service:
    """The service process: started, restarted (an environment clock moved), stopped."""

    def __init__(self, plan: dict[str, Any]) -> None:
        self.plan, self.port = plan, plan.get("port") or free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.clock: str | None = plan.get("initial_clock")
        self.why = ""  # why the last start failed, in one line (the case's error)

    def start(self) -> bool:
        env = dict(self.plan["env"])
        clock = self.plan.get("clock") or {}
        if clock.get("env") and self.clock is not None:
            env[clock["env"]] = self.clock
        argv = [a.replace("{port}", str(self.port)) for a in self.plan["start"]]
        env = {k: v.replace("{port}", str(self.port)) for k, v in env.items()}
        log = self.plan["log"]
        with open(os.path.join(log, "service.out"), "ab") as out, open(os.path.join(log, "service.err"), "ab") as err:
            try:
                self.process = subprocess.Popen(argv, cwd=self.plan["cwd"], env=env, stdin=subprocess.DEVNULL,
                                                stdout=out, stderr=err, start_new_session=True, close_fds=True)
            except OSError as exc:  # no such program, not executable, a folder the jail does not show
                self.why = (f"the service could not be started: {argv[0]!r}: {exc.strerror or type(exc).__name__} "
                            f"(errno {exc.errno}); a program outside the jail's folders needs them named")
                return False
        return self.wait_ready()

    def wait_ready(self) -> bool:
        ready = self.plan["ready"]
        deadline = time.monotonic() + ready["deadline"]
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                self.why = f"the service exited with code {self.process.returncode} before it was ready{self._said()}"
                return False
            try:
                if send(self.port, {"method": "GET", "path": ready["path"]}, 1.0, 0)[0] == ready["status"]:
                    return True
            except OSError:
                pass
            time.sleep(0.02)
        self.why = (f"the service did not become ready: GET {ready['path']} never answered {ready['status']} within "
                    f"{ready['deadline']} s{self._said()}")
        return False

    def _said(self) -> str:
        """The last lines the service wrote to its stderr (kept whole in the case's logs), for the one line."""
        try:
            with open(os.path.join(self.plan["log"], "service.err"), "rb") as err:
                err.seek(0, os.SEEK_END)
                err.seek(max(0, err.tell() - 4096))
                tail = err.read().decode("utf-8", "replace").strip().splitlines()[-2:]
        except OSError:
            return ""
        said = " | ".join(line.strip() for line in tail if line.strip())
        return f"; its stderr ended: {said[-300:]}" if said else ""

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        _signal_group(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(self.plan["stop_grace"])
        except subprocess.TimeoutExpired:
            _signal_group(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def set_clock(self, now: str) -> bool:
        """Move the service's clock: restart it under the new environment value, or call its clock endpoint."""
        clock = self.plan.get("clock") or {}
        self.clock = now
        if clock.get("env"):
            self.stop()
            return self.start()
        try:
            status = send(self.port, {"method": clock["method"], "path": clock["path"],
                                      "json": {clock["field"]: now}}, self.plan["request_timeout"], 0)[0]
        except (OSError, http.client.HTTPException):
            return False
        return 200 <= status < 300


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(OSError):  # the group is already gone
        os.killpg(pid, sig)


def send(port: int, step: dict[str, Any], timeout: float, body_cap: int) -> tuple[int, dict[str, str], bytes, bool]:
    """One request on a fresh connection: status, headers (names lower-cased), body (cut at ``body_cap``)."""
    body, headers = _body(step), {k: v for k, v in (step.get("headers") or {}).items()}
    if "json" in step and not any(k.lower() == "content-type" for k in headers):
        headers["Content-Type"] = "application/json"
    path = step["path"]
    if step.get("query"):
        from urllib.parse import urlencode

        path += ("&" if "?" in path else "?") + urlencode(step["query"], doseq=True)  # a list: the name per value
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request(step["method"], path, body=body, headers={**headers, "Connection": "close"})
        response = connection.getresponse()
        data = response.read(body_cap + 1) if body_cap else response.read(0)
        got = {k.lower(): v for k, v in response.getheaders()}
        return response.status, got, data[:body_cap], len(data) > body_cap
    finally:
        connection.close()


def _body(step: dict[str, Any]) -> bytes | None:
    if "json" in step:
        return json.dumps(step["json"], ensure_ascii=False).encode("utf-8")
    if step.get("text") is not None:
        return str(step["text"]).encode("utf-8") * int(step.get("times") or 1)
    return None


def run_steps(plan: dict[str, Any], service: Service, emit: Any) -> int:
    captured: dict[str, str] = {}
    clean = cleaner(plan.get("volatile") or [])
    for step in plan["steps"]:
        if step.get("clock") and not service.set_clock(step["clock"]):
            emit({"step": step["id"], "n": 0, "error": "the clock could not be moved"})
            return CRASHED
        concrete = substitute({k: v for k, v in step.items() if k not in ("capture", "clock", "read_headers")},
                              captured)
        wanted = set(step.get("read_headers") or ())
        for n in range(int(step.get("repeat") or 1)):
            try:
                status, headers, body, cut = send(service.port, concrete, plan["request_timeout"], plan["body_cap"])
            except (OSError, ValueError, http.client.HTTPException) as exc:
                emit({"step": step["id"], "n": n, "error": f"no answer: {type(exc).__name__}"})
                return CRASHED
            emit({"step": step["id"], "n": n, "status": status,
                  "headers": {k: clean(v) for k, v in headers.items() if k in wanted},
                  "body": clean(body.decode("utf-8", "replace")), "truncated": cut})
            if n == 0:
                captured.update(_captures(step.get("capture") or {}, body))
    return READY


def _captures(capture: dict[str, str], body: bytes) -> dict[str, str]:
    try:
        document = json.loads(body)
    except ValueError:
        return {}
    found = {}
    for name, path in capture.items():
        value = jsonpath(document, path)
        if value is not _NOTHING and value is not None:
            found[name] = value if isinstance(value, str) else json.dumps(value)
    return found


def _undumpable() -> None:
    """The service runs beside this driver as the same user: made non-dumpable, this process's /proc entries
    (its standard output above all, where the answers go) are closed to it."""
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0


def seed(plan: dict[str, Any]) -> str | None:
    """Run the target's seed step (the case's own data loaded into its fresh database) before the service first
    starts; why it failed, in one line (its output is kept beside the service's logs)."""
    argv = plan.get("seed")
    if not argv:
        return None
    log = plan["log"]
    with open(os.path.join(log, "seed.out"), "wb") as out, open(os.path.join(log, "seed.err"), "wb") as err:
        try:
            code = subprocess.run(argv, cwd=plan["cwd"], env=plan["env"], stdin=subprocess.DEVNULL, stdout=out,
                                  stderr=err, check=False).returncode
        except OSError as exc:
            return f"the seed step could not be started: {argv[0]!r}: {exc.strerror or type(exc).__name__}"
    if code == 0:
        return None
    with open(os.path.join(log, "seed.err"), "rb") as err:
        tail = err.read()[-2000:].decode("utf-8", "replace").strip().splitlines()[-2:]
    return f"the seed step exited {code}: {' | '.join(tail) or '(no stderr)'}"


def emit(line: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(line, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def drive(plan: dict[str, Any], steps: Any) -> int:
    """Start the service, run ``steps(plan, service, emit)`` once it is ready, stop it: the frame of every
    driver (this one's requests, the browser pilot's page)."""
    _undumpable()
    service = Service(plan)
    try:
        unseeded = seed(plan)
        if unseeded is not None:
            emit({"step": None, "n": 0, "error": unseeded})
            return UNREADY
        if not service.start():
            emit({"step": None, "n": 0, "error": service.why or "the service did not become ready"})
            return UNREADY
        return int(steps(plan, service, emit))
    finally:
        service.stop()


def main(argv: list[str]) -> int:
    with open(argv[1], encoding="utf-8") as f:
        plan = json.load(f)
    return drive(plan, run_steps)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
