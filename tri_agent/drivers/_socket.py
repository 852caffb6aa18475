"""A server on a unix socket in a CLI agent's HOME, beside the relay script the agent starts inside its sandbox.

The socket file is the only thing a sandboxed agent shares with the orchestrator: the engine's tools (MCP) and
the egress proxy are each one of these. Each connection is served on a thread of its own until the episode
ends (the context manager closes the listener).
"""

from __future__ import annotations

import contextlib
import socket
import threading
from pathlib import Path
from types import TracebackType
from typing import Self


class SocketService:
    """Subclasses say how one connection is served (``handle``); use as a context manager."""

    def __init__(self, socket_path: Path, relay_path: Path, relay_source: Path, name: str) -> None:
        self.socket_path, self.relay_path = socket_path, relay_path
        self._relay_source, self._name = relay_source, name
        self._listener: socket.socket | None = None
        self._thread: threading.Thread | None = None

    def handle(self, connection: socket.socket) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self.relay_path.write_bytes(self._relay_source.read_bytes())  # into the agent's HOME: in its sandbox
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(self.socket_path))
        listener.listen(16)
        self._listener = listener
        self._thread = threading.Thread(target=self._serve, name=self._name, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _serve(self) -> None:
        while self._listener is not None:
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return  # the episode is over: the listener was closed
            threading.Thread(target=self.handle, args=(connection,), daemon=True).start()
