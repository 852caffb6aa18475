"""Loopback fakes of the model APIs, shipped because the self-test, examples and tests use them.

``FakeModelServer`` is a real HTTP server on 127.0.0.1 speaking the wire formats of the Anthropic
Messages API (``POST /v1/messages``) and of the OpenAI Responses (``POST /v1/responses``) and Chat
Completions (``POST /v1/chat/completions``) APIs, so the official SDKs run unmodified against it; no
HTTP mocking library is involved (the SDKs' transport is not intercepted by them anyway).

The model behind it is a *player*: a function from the conversation so far (tool results included)
to the next move, either a list of tool calls or a final text. ``play_script`` turns a fixed list of
moves into a player. Every request body is kept in ``requests`` for the tests to inspect.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ToolCall = tuple[str, dict[str, Any]]


@dataclass(frozen=True)
class Move:
    """What the fake model does next: call tools, or answer with text (and stop)."""

    calls: list[ToolCall] = field(default_factory=list)
    text: str = ""


Player = Callable[[list[str]], Move]  # tool results so far -> next move


def play_script(moves: list[Move]) -> Player:
    """A player making ``moves`` in order, one per request, whatever the results."""

    def player(results: list[str]) -> Move:
        turn = sum(1 for r in results if r == "\x00turn")
        return moves[min(turn, len(moves) - 1)]

    return player


class FakeModelServer:
    """Start with ``with FakeModelServer(player) as server:``; ``server.base_url`` is the API root."""

    def __init__(self, player: Player, model: str = "fake-model-1", status: int = 200) -> None:
        self.player, self.model, self.status = player, model, status
        self.requests: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        port = self._server.server_address[1]
        return f"http://127.0.0.1:{port}"

    def __enter__(self) -> FakeModelServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                fake.requests.append({"path": self.path, "body": body})
                route = {"/v1/messages": fake._messages, "/v1/responses": fake._responses,
                         "/v1/chat/completions": fake._chat}.get(self.path.split("?")[0])
                if route is None:
                    return self._send(404, {"error": {"type": "not_found", "message": self.path}})
                if fake.status != 200:
                    return self._send(fake.status, {"type": "error", "error": {"type": "api_error",
                                                                               "message": "fake failure"}})
                return self._send(200, route(body))

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        return Handler

    def _id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids):06d}"

    # --- Anthropic Messages ----------------------------------------------------------------------------------

    def _messages(self, body: dict[str, Any]) -> dict[str, Any]:
        results = ["\x00turn"] * sum(1 for m in body["messages"] if m["role"] == "assistant")
        results += [str(b.get("content")) for m in body["messages"] if isinstance(m.get("content"), list)
                    for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]
        move = self.player(results)
        content: list[dict[str, Any]] = [{"type": "text", "text": move.text}] if move.text else []
        content += [{"type": "tool_use", "id": self._id("toolu"), "name": n, "input": a} for n, a in move.calls]
        return {"id": self._id("msg"), "type": "message", "role": "assistant", "model": self.model,
                "content": content, "stop_reason": "tool_use" if move.calls else "end_turn", "stop_sequence": None,
                "usage": {"input_tokens": 100, "output_tokens": 20, "cache_creation_input_tokens": 0,
                          "cache_read_input_tokens": 50}}

    # --- OpenAI Responses ------------------------------------------------------------------------------------

    def _responses(self, body: dict[str, Any]) -> dict[str, Any]:
        items = body["input"] if isinstance(body["input"], list) else []
        results = ["\x00turn"] * sum(1 for i in items if i.get("type") == "function_call" and i.get("call_id")
                                     and i is _first_call_of_turn(items, i))
        results += [str(i.get("output")) for i in items if i.get("type") == "function_call_output"]
        move = self.player(results)
        output: list[dict[str, Any]] = []
        if move.text:
            output.append({"type": "message", "id": self._id("msg"), "status": "completed", "role": "assistant",
                           "content": [{"type": "output_text", "text": move.text, "annotations": []}]})
        output += [{"type": "function_call", "id": self._id("fc"), "call_id": self._id("call"), "name": n,
                    "arguments": json.dumps(a), "status": "completed"} for n, a in move.calls]
        return {"id": self._id("resp"), "object": "response", "created_at": 0, "status": "completed",
                "model": self.model, "output": output, "parallel_tool_calls": True, "tool_choice": "auto",
                "tools": body.get("tools", []), "error": None, "incomplete_details": None, "instructions": None,
                "metadata": {}, "temperature": body.get("temperature"), "top_p": 1.0,
                "usage": {"input_tokens": 100, "output_tokens": 20, "total_tokens": 120,
                          "input_tokens_details": {"cached_tokens": 50},
                          "output_tokens_details": {"reasoning_tokens": 0}}}

    # --- OpenAI Chat Completions -------------------------------------------------------------------------------

    def _chat(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        results = ["\x00turn"] * sum(1 for m in messages if m["role"] == "assistant")
        results += [str(m.get("content")) for m in messages if m["role"] == "tool"]
        move = self.player(results)
        calls = [{"id": self._id("call"), "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
                 for n, a in move.calls]
        message: dict[str, Any] = {"role": "assistant", "content": move.text or None}
        if calls:
            message["tool_calls"] = calls
        return {"id": self._id("chatcmpl"), "object": "chat.completion", "created": 0, "model": self.model,
                "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop",
                             "logprobs": None}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120,
                          "prompt_tokens_details": {"cached_tokens": 50}}}


def _first_call_of_turn(items: list[dict[str, Any]], item: dict[str, Any]) -> dict[str, Any]:
    # consecutive function_call items belong to one model turn: count a turn at its first call
    index = next(i for i, x in enumerate(items) if x is item)
    while index > 0 and items[index - 1].get("type") == "function_call":
        index -= 1
    return items[index]
