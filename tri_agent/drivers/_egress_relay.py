"""Inside a CLI agent's jail: the agent's way out, and nothing else.

    python -I _egress_relay.py SOCKET PORT -- AGENT ARGV...

Listens on the jail's own loopback at PORT (what the agent's ``HTTPS_PROXY`` names), passes every connection
to the orchestrator's allow-list proxy through SOCKET (a file in the agent's HOME, the only thing the jail
shares with the orchestrator), starts the agent and ends with its exit code. Standard library only: it runs
where nothing of tri-agent is installed but the file itself.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import threading


def _pump(src: socket.socket, dst: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while chunk := src.recv(1 << 16):
            dst.sendall(chunk)
    with contextlib.suppress(OSError):
        dst.shutdown(socket.SHUT_WR)


def _bridge(client: socket.socket, path: str) -> None:
    with client, socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as proxy:
        try:
            proxy.connect(path)
        except OSError:
            return
        back = threading.Thread(target=_pump, args=(proxy, client), daemon=True)
        back.start()
        _pump(client, proxy)
        back.join()


def _serve(listener: socket.socket, path: str) -> None:
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        threading.Thread(target=_bridge, args=(client, path), daemon=True).start()


def main(argv: list[str]) -> int:
    if len(argv) < 5 or argv[3] != "--":
        sys.stderr.write("usage: _egress_relay.py SOCKET PORT -- ARGV...\n")
        return 2
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", int(argv[2])))
    listener.listen(16)
    threading.Thread(target=_serve, args=(listener, argv[1]), daemon=True).start()
    try:
        return subprocess.run(argv[4:]).returncode
    except OSError as exc:
        sys.stderr.write(f"egress relay: cannot start {argv[4]}: {exc}\n")
        return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv))
