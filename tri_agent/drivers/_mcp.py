"""The engine's tools for CLI agents, over the Model Context Protocol (the official ``mcp`` SDK).

One server per episode, on the orchestrator's side, listening on a unix socket in the role's HOME. It
lists exactly the tools the role's contract grants (a tool outside the contract is absent, not merely
refused), with the JSON schemas of the API roles' tool set, and carries every call out through the same
``ToolBox``: one implementation of the tools, two transports. The agent, in its sandbox, reaches it only
through ``_relay.py`` (standard input and output relayed to the socket), which its MCP configuration starts;
it never sees a file of the orchestrator's.

Every ``tools/list`` answer and every call is recorded (``listed``, ``calls``), so the driver can check the
wiring before trusting an episode: an agent that never listed its tools, or whose granted tools did not
reach it, fails closed.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from .._version import __version__
from ..isolation._tools import ToolBox, ToolError
from ._socket import SocketService

SERVER = "tri"  # agents see the tools as mcp__tri__<tool>
_RELAY = Path(__file__).resolve().with_name("_relay.py")
MAX_MESSAGE = 8 << 20  # bytes of one JSON-RPC message from a role (a tool call carries at most a file it writes)


class ToolServer(SocketService):
    """An MCP server for one episode's ``ToolBox`` on a unix socket; use as a context manager."""

    def __init__(self, box: ToolBox, folder: Path) -> None:
        super().__init__(folder / "tools.sock", folder / "tri-agent-relay.py", _RELAY, "tri-agent-mcp")
        self.box = box
        self.listed: list[list[str]] = []  # the names each tools/list answered with
        self.calls: list[dict[str, Any]] = []  # every call: tool, arguments, outcome (refused or not)

    @property
    def granted(self) -> list[str]:
        return sorted(self.box.specs())

    def relay(self) -> list[str]:
        """The command an agent's MCP configuration starts (inside its sandbox) to reach this server."""
        return [sys.executable, "-I", str(self.relay_path), str(self.socket_path)]

    def handle(self, connection: socket.socket) -> None:
        with connection, contextlib.suppress(Exception):  # a client that vanishes ends its own session only
            anyio.run(self._speak, connection)

    async def _speak(self, connection: socket.socket) -> None:
        reader = anyio.wrap_file(_BoundedLines(connection))  # type: ignore[arg-type]  # has what AsyncFile calls
        writer = anyio.wrap_file(connection.makefile("w", encoding="utf-8", newline="\n"))
        server: Server[Any] = Server(SERVER, version=__version__, on_list_tools=self._list_tools,
                                     on_call_tool=self._call_tool)
        async with stdio_server(stdin=reader, stdout=writer) as (read, write):
            await server.run(read, write, server.create_initialization_options())

    async def _list_tools(self, _ctx: Any, _params: Any) -> types.ListToolsResult:
        tools = [types.Tool(name=name, description=text, inputSchema=schema)
                 for name, (text, schema) in sorted(self.box.specs().items())]
        self.listed.append([t.name for t in tools])
        return types.ListToolsResult(tools=tools)

    async def _call_tool(self, _ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        name, arguments = params.name, dict(params.arguments or {})
        try:
            text, refused = await anyio.to_thread.run_sync(self.box.call, name, arguments), False
        except ToolError as exc:
            text, refused = str(exc), True
        self.calls.append({"tool": name, "arguments": arguments, "refused": refused})
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], isError=refused)

    def record(self) -> str:
        """What the server saw, for the episode's transcript: one JSON line per list and per call."""
        lines = [{"tools/list": names} for names in self.listed] + [{"tools/call": call} for call in self.calls]
        return "".join(json.dumps(line, sort_keys=True) + "\n" for line in lines)


def self_check(contract_role: str = "tester") -> str:
    """Start a server for ``contract_role`` and speak to it through the relay as an agent would (initialize,
    then tools/list, one raw JSON-RPC line at a time); a line saying what it listed, or why it could not."""
    import subprocess
    import tempfile

    from ..isolation._contract import load_charter

    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "tri-agent-doctor", "version": __version__}}}
    with tempfile.TemporaryDirectory(prefix="tri-doctor-") as tmp:
        box = ToolBox(load_charter(contract_role).contract, Path(tmp))
        with ToolServer(box, Path(tmp)) as server:
            relay = subprocess.Popen(server.relay(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
            timer = threading.Timer(20, relay.kill)  # a bridge that hangs must not hang the doctor
            timer.start()
            try:
                listed = _exchange(relay, hello)
            finally:
                timer.cancel()
                relay.kill()
                relay.wait()
    if listed is None:
        return "no tools/list answer from the bridge"
    return f"works ({contract_role}: {', '.join(listed)})" if listed == server.granted else f"lists {listed}"


def _exchange(relay: Any, hello: dict[str, Any]) -> list[str] | None:
    def ask(message: dict[str, Any]) -> dict[str, Any]:
        relay.stdin.write(json.dumps(message) + "\n")
        relay.stdin.flush()
        line = relay.stdout.readline()
        return json.loads(line) if line.startswith("{") else {}

    if "result" not in ask(hello):
        return None
    relay.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    tools = ask({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).get("result", {}).get("tools")
    return None if tools is None else [t["name"] for t in tools]


class _BoundedLines:
    """The socket's lines for the MCP session, none held longer than ``MAX_MESSAGE``: a role that never ends a line
    ends its session instead of filling the orchestrator's memory."""

    def __init__(self, connection: socket.socket) -> None:
        self._raw = connection.makefile("rb")

    def readline(self) -> str:
        line = self._raw.readline(MAX_MESSAGE + 1)
        return "" if len(line) > MAX_MESSAGE else line.decode("utf-8", "replace")

    def close(self) -> None:
        self._raw.close()
