"""Egress for CLI-agent roles: their jail has no network but its own loopback; their model's API is reached
through an allow-list proxy on the orchestrator's side.

Inside the jail, ``_egress_relay.py`` listens on the jail's loopback and passes each connection to a unix
socket in the agent's HOME; the agent is given ``HTTPS_PROXY``/``HTTP_PROXY`` pointing there. Here, each
connection is read as one proxy request (``CONNECT host:port`` for TLS, or an absolute-form HTTP request) and
forwarded only when its host is on the allow-list (the model APIs, the hosts of ``*_BASE_URL`` credentials, and
``TRI_AGENT_EGRESS_ALLOW``). A name that resolves to a loopback, private or link-local address is refused unless
the allow-list names that address itself: the host's own services (databases, other runs' servers, cloud
metadata) are never reached by name. Everything else is answered ``403``.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from urllib.parse import urlsplit

from ._socket import SocketService

MODEL_APIS = ("api.anthropic.com:443", "api.openai.com:443")
ALLOW_ENV = "TRI_AGENT_EGRESS_ALLOW"
_RELAY = Path(__file__).resolve().with_name("_egress_relay.py")
_HEAD_CAP = 16 << 10  # bytes of one request head: a proxy request is a line and a few headers
LOCAL_PORT = 3128  # where the relay listens inside the jail (its own loopback: no clash with anything)


def allow_list(env: Mapping[str, str]) -> frozenset[str]:
    """``host:port`` entries the proxy forwards to: the model APIs, the host of every ``*_BASE_URL`` given, and
    ``TRI_AGENT_EGRESS_ALLOW`` (comma-separated ``host:port``)."""
    entries = set(MODEL_APIS)
    for name, value in env.items():
        if name.endswith("_BASE_URL") and value:
            url = urlsplit(value)
            if url.hostname:
                entries.add(f"{url.hostname}:{url.port or (443 if url.scheme == 'https' else 80)}")
    entries |= {e.strip() for e in env.get(ALLOW_ENV, "").split(",") if e.strip()}
    return frozenset(e.lower() for e in entries)


def permitted(host: str, port: int, allow: Iterable[str],
              resolve: object = socket.getaddrinfo) -> tuple[str, int] | None:
    """The address to connect to for ``host:port``, or None when the allow-list refuses it. A name must be on
    the list and resolve to public addresses only; an address literal must be on the list itself."""
    allowed = frozenset(allow)
    if f"{host.lower()}:{port}" not in allowed:
        return None
    if _literal(host) is not None:
        return host, port
    try:
        infos = resolve(host, port, type=socket.SOCK_STREAM)  # type: ignore[operator]
    except OSError:
        return None
    addresses = [info[4][0] for info in infos]
    if not addresses or any(_local(a) for a in addresses):
        return None  # a listed name pointing at the host's own services (or rebinding to them)
    return addresses[0], port


def _literal(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def _local(address: str) -> bool:
    ip = _literal(address)
    return ip is None or ip.is_loopback or ip.is_private or ip.is_link_local or ip.is_reserved or ip.is_unspecified


def parse_head(head: bytes) -> tuple[str, str, int, bytes] | None:
    """(method, host, port, the head to send upstream) of one proxy request head, or None if it is not one."""
    lines = head.split(b"\r\n")
    parts = lines[0].decode("latin-1").split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        return None
    method, target, version = parts
    if method == "CONNECT":
        host, _, port = target.rpartition(":")
        return (method, host.strip("[]"), int(port), b"") if port.isdigit() and host else None
    url = urlsplit(target)
    if url.scheme != "http" or not url.hostname:
        return None
    path = (url.path or "/") + (f"?{url.query}" if url.query else "")
    first = f"{method} {path} {version}".encode("latin-1")
    return method, url.hostname, url.port or 80, b"\r\n".join([first, *lines[1:]])


class Egress(SocketService):
    """The proxy for one episode, on a unix socket in the agent's HOME; use as a context manager."""

    def __init__(self, folder: Path, env: Mapping[str, str]) -> None:
        super().__init__(folder / "egress.sock", folder / "tri-agent-egress.py", _RELAY, "tri-agent-egress")
        self.allow = allow_list(env)
        self.refused: list[str] = []  # host:port of every request the allow-list turned away

    def env(self) -> dict[str, str]:
        """What the agent is told: every request through the relay on its loopback."""
        proxy = f"http://127.0.0.1:{LOCAL_PORT}"
        return {"HTTPS_PROXY": proxy, "HTTP_PROXY": proxy, "https_proxy": proxy, "http_proxy": proxy,
                "NO_PROXY": "", "no_proxy": ""}

    def wrap(self, argv: list[str], python: str) -> list[str]:
        """The agent's command, started by the relay inside the jail."""
        return [python, "-I", str(self.relay_path), str(self.socket_path), str(LOCAL_PORT), "--", *argv]

    def handle(self, client: socket.socket) -> None:
        with client, contextlib.suppress(OSError):
            head, rest = _read_head(client)
            request = parse_head(head) if head is not None else None
            if request is None:
                client.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
                return
            method, host, port, upstream_head = request
            address = permitted(host, port, self.allow)
            if address is None:
                self.refused.append(f"{host}:{port}")
                client.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
                return
            with socket.create_connection(address, timeout=30) as upstream:
                upstream.settimeout(None)
                if method == "CONNECT":
                    client.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                else:
                    upstream.sendall(upstream_head + b"\r\n\r\n")
                if rest:
                    upstream.sendall(rest)
                _splice(client, upstream)


def _read_head(client: socket.socket) -> tuple[bytes | None, bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = client.recv(4096)
        if not chunk or len(data) > _HEAD_CAP:
            return None, b""
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


def _splice(a: socket.socket, b: socket.socket) -> None:
    def pump(src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while chunk := src.recv(1 << 16):
                dst.sendall(chunk)
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)

    other = threading.Thread(target=pump, args=(b, a), daemon=True)
    other.start()
    pump(a, b)
    other.join()

