"""The bridge a CLI agent starts as its MCP server: standard input and output, relayed to a unix socket.

    python -I _relay.py SOCKET

The agent runs in its sandbox, the tool server on the orchestrator's side; the only thing the sandbox
shares with the orchestrator is the socket file in the agent's own HOME. This script uses the standard
library alone (it runs inside the sandbox, where nothing of tri-agent is installed but the file itself)
and relays bytes both ways until either side closes.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading


def _pump(read: int, write: int) -> None:
    try:
        while chunk := os.read(read, 1 << 16):
            while chunk:
                chunk = chunk[os.write(write, chunk):]
    except OSError:
        pass


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        sys.stderr.write("usage: _relay.py SOCKET\n")
        return 2
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(argv[1])
    except OSError as exc:
        sys.stderr.write(f"relay: cannot reach the tool server at {argv[1]}: {exc}\n")
        return 1
    def upstream() -> None:  # the agent's requests; at their end, the server is told, and answers what is left
        _pump(0, connection.fileno())
        with contextlib.suppress(OSError):
            connection.shutdown(socket.SHUT_WR)

    threading.Thread(target=upstream, daemon=True).start()
    _pump(connection.fileno(), 1)  # the server's answers, until it closes
    connection.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
