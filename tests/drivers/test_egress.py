"""CLI-agent roles reach their model's API through an allow-list proxy; the host's own services, never."""

from __future__ import annotations

import json
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tri_agent.drivers._command import CommandDriver
from tri_agent.drivers._egress import allow_list, parse_head, permitted
from tri_agent.drivers._episode import Episode, Limits
from tri_agent.isolation._contract import load_charter
from tri_agent.isolation._tools import ToolBox

AGENT = r'''
import json, os, socket, sys
json.loads(sys.stdin.read())
port = int(os.environ["HOST_PORT"])
seen = {}
try:
    with socket.create_connection(("127.0.0.1", port), timeout=3) as s:
        seen["direct"] = s.recv(100).decode()
except OSError as exc:
    seen["direct"] = type(exc).__name__
proxy = os.environ.get("HTTPS_PROXY", "")
try:
    with socket.create_connection(("127.0.0.1", int(proxy.rsplit(":", 1)[1])), timeout=3) as s:
        s.sendall(f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        answer = s.recv(200).decode()
        seen["proxy"] = answer.split("\r\n")[0]
        if " 200 " in seen["proxy"]:
            seen["tunnel"] = (answer.split("\r\n\r\n", 1)[1] or s.recv(100).decode())
except (OSError, IndexError, ValueError) as exc:
    seen["proxy"] = type(exc).__name__
print(json.dumps({"protocol": "tri-agent-executor/1", "status": "blocked", "reason": json.dumps(seen)}))
'''


@pytest.fixture
def host_service() -> Iterator[int]:
    """A service of the orchestrator's machine on its loopback (a database, another run's server)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                conn.sendall(b"HOST-SECRET")

    threading.Thread(target=serve, daemon=True).start()
    yield int(listener.getsockname()[1])
    listener.close()


def _run(tmp: Path, port: int, allow: str | None = None) -> dict[str, str]:
    ws = tmp / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "agent.py").write_text(AGENT)
    charter = load_charter("tester")
    credentials = {"HOST_PORT": str(port), **({"TRI_AGENT_EGRESS_ALLOW": allow} if allow else {})}
    driver = CommandDriver([sys.executable, str(ws / "agent.py")], credentials=credentials)
    result = driver.run(Episode(charter, "probe", ToolBox(charter.contract, ws), Limits(seconds=30)))
    assert result.status == "blocked", result.reason
    return dict(json.loads(str(result.reason)), layers=",".join(driver.layers))


LAYERS = ["bubblewrap", "landlock"]


@pytest.mark.parametrize("layer", LAYERS)
def test_an_agent_reaches_no_host_service_directly_or_through_the_proxy(tmp_path: Path, host_service: int,
                                                                          layer: str,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _run_under(tmp_path, host_service, layer, monkeypatch)
    assert seen["direct"] in ("ConnectionRefusedError", "PermissionError", "OSError"), seen
    assert seen["proxy"] == "HTTP/1.1 403 Forbidden" and "tunnel" not in seen and seen["layers"] == layer


@pytest.mark.parametrize("layer", LAYERS)
def test_an_allowed_destination_is_reached_through_the_tunnel(tmp_path: Path, host_service: int, layer: str,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _run_under(tmp_path, host_service, layer, monkeypatch, allow=f"127.0.0.1:{host_service}")
    assert seen["proxy"] == "HTTP/1.1 200 Connection Established" and seen["tunnel"] == "HOST-SECRET", seen
    assert seen["direct"] != "HOST-SECRET"  # the allow-list opens the proxy, never the jail's own network


def _run_under(tmp: Path, port: int, layer: str, monkeypatch: pytest.MonkeyPatch,
               allow: str | None = None) -> dict[str, str]:
    import tri_agent.sandbox._jail as jail
    from tri_agent.sandbox._bubblewrap import probe
    from tri_agent.sandbox._confine import landlock_abi

    if layer == "bubblewrap" and probe().bubblewrap is None:
        pytest.skip("no working bubblewrap here")
    if layer == "landlock" and landlock_abi() < 4:
        pytest.skip("no Landlock with TCP rules here")
    monkeypatch.setattr(jail, "strongest", lambda: layer)
    return _run(tmp, port, allow)


def test_the_allow_list_holds_the_model_apis_base_urls_and_what_the_user_adds() -> None:
    allowed = allow_list({"OPENAI_BASE_URL": "https://llm.example.org:8443/v1", "ANTHROPIC_BASE_URL": "",
                          "TRI_AGENT_EGRESS_ALLOW": " Gateway.Example:80 ,", "OTHER_URL": "http://x.org"})
    assert allowed == {"api.anthropic.com:443", "api.openai.com:443", "llm.example.org:8443", "gateway.example:80"}


def _resolver(*addresses: str):  # type: ignore[no-untyped-def]
    return lambda host, port, type: [(0, 0, 0, "", (a, port)) for a in addresses]


@pytest.mark.parametrize(("host", "port", "addresses", "allowed"), [
    ("api.openai.com", 443, ("104.18.7.192",), ("104.18.7.192", 443)),
    ("api.openai.com", 80, ("104.18.7.192",), None),  # another port of a listed host
    ("evil.example", 443, ("1.2.3.4",), None),  # not listed
    ("api.openai.com", 443, ("127.0.0.1",), None),  # a listed name rebound to the host's loopback
    ("api.openai.com", 443, ("1.2.3.4", "10.0.0.8"), None),  # one private address among public ones
    ("api.openai.com", 443, ("169.254.169.254",), None),  # cloud metadata
    ("api.openai.com", 443, ("::1",), None),
    ("127.0.0.1", 443, (), None),  # an address literal must be listed itself
])
def test_the_proxy_forwards_only_listed_names_that_resolve_to_public_addresses(
        host: str, port: int, addresses: tuple[str, ...], allowed: tuple[str, int] | None) -> None:
    assert permitted(host, port, allow_list({}), _resolver(*addresses)) == allowed
    assert permitted("127.0.0.1", 5432, {"127.0.0.1:5432"}, _resolver()) == ("127.0.0.1", 5432)


@pytest.mark.parametrize(("head", "parsed"), [
    (b"CONNECT api.openai.com:443 HTTP/1.1\r\nHost: api.openai.com", ("CONNECT", "api.openai.com", 443, b"")),
    (b"CONNECT [::1]:443 HTTP/1.1", ("CONNECT", "::1", 443, b"")),
    (b"GET http://gw.example:8080/v1/x?a=1 HTTP/1.1\r\nHost: gw.example",
     ("GET", "gw.example", 8080, b"GET /v1/x?a=1 HTTP/1.1\r\nHost: gw.example")),
    (b"GET /relative HTTP/1.1", None), (b"CONNECT nohost HTTP/1.1", None), (b"garbage", None),
    (b"GET ftp://x/ HTTP/1.1", None),
])
def test_a_proxy_request_head_is_read_or_refused(head: bytes, parsed: object) -> None:
    assert parse_head(head) == parsed
