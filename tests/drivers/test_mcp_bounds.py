"""The MCP session reads a role's socket in bounded lines: a line that never ends ends the session."""

from __future__ import annotations

import socket
import threading

from tri_agent.drivers._mcp import MAX_MESSAGE, _BoundedLines


def _feed(data: bytes) -> _BoundedLines:
    ours, theirs = socket.socketpair()

    def send() -> None:
        theirs.sendall(data)
        theirs.close()

    threading.Thread(target=send, daemon=True).start()
    return _BoundedLines(ours)


def test_lines_within_the_bound_are_read_whole() -> None:
    lines = _feed(b'{"jsonrpc": "2.0"}\n' + "é".encode() * 10 + b"\n")
    assert lines.readline() == '{"jsonrpc": "2.0"}\n'
    assert lines.readline() == "é" * 10 + "\n"
    assert lines.readline() == ""


def test_a_line_past_the_bound_is_the_end_of_the_session() -> None:
    lines = _feed(b"x" * (MAX_MESSAGE + 10) + b"\n{}\n")
    assert lines.readline() == ""


def test_a_line_exactly_at_the_bound_is_kept() -> None:
    lines = _feed(b"y" * (MAX_MESSAGE - 1) + b"\n")
    assert len(lines.readline()) == MAX_MESSAGE
