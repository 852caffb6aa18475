"""API-driven roles: tool-use loops over the official Anthropic and OpenAI SDKs.

A role driven through an API is isolated by construction: the model's only access to anything is the
tool box the engine implements (workspace-confined files, ``run_case`` through the gateway, ``submit``).
One loop serves three wire formats through small adapters: Anthropic Messages, OpenAI Responses, and
OpenAI Chat Completions (which also serves OpenAI-compatible servers such as vLLM, Ollama or
llama.cpp through ``base_url``). Temperature is pinned; retries are ours to count, not the SDK's.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..isolation._tools import ToolError
from ._episode import Attempt, Episode, EpisodeResult, Status, Usage, mask

Call = tuple[str, str, dict[str, Any]]  # (call id, tool name, arguments)
# USD per million tokens: (input, output, cache read, cache write); empty unless the caller supplies prices
Prices = dict[str, tuple[float, float, float, float]]


@dataclass(frozen=True)
class Turn:
    calls: list[Call]
    usage: Usage
    model: str
    raw: Any  # the provider's response, kept for the adapter's next request


class Adapter(Protocol):
    def ask(self) -> Turn: ...

    def answer(self, turn: Turn, results: list[tuple[str, str, bool]]) -> None: ...

    def history(self) -> list[dict[str, Any]]: ...


@dataclass
class LLMDriver:
    """Runs episodes through one provider adapter family."""

    name: str
    model: str
    make_adapter: Any  # (episode, model) -> Adapter
    errors: tuple[type[BaseException], ...]
    secrets: dict[str, str]
    prices: Prices
    transcripts: Path | None = None  # where to keep each episode's conversation, secrets masked
    complete: Any = None  # (system, prompt) -> (text, Usage): one answer, no tools (for rulings)
    spent: Usage = field(default_factory=Usage)  # what ask_text has used so far

    def ask_text(self, system: str, prompt: str) -> str:
        """One plain answer to ``prompt`` (no tools), for K-sampled rulings; its usage adds to ``spent``."""
        text, usage = self.complete(system, prompt)
        self.spent = self.spent + usage
        return mask(str(text), self.secrets)

    def run(self, episode: Episode) -> EpisodeResult:
        start = time.monotonic()
        usage, model, turns = Usage(), self.model, 0
        outcome: tuple[Status, str | None] = ("timeout", f"no submit within {episode.limits.turns} turns")
        adapter: Adapter | None = None
        try:
            adapter = self.make_adapter(episode, self.model)
            for turns in range(1, episode.limits.turns + 1):  # noqa: B007 - the count is reported
                turn = adapter.ask()
                usage, model = usage + turn.usage, turn.model
                ended = self._after(episode, adapter, turn, usage, start)
                if ended is not None:
                    outcome = ended
                    break
        except self.errors as exc:
            first = str(exc).splitlines()[0] if str(exc) else ""
            outcome = ("runtime_failure", f"{type(exc).__name__}: {first}")
        if adapter is not None and self.transcripts is not None:
            self._keep(self.transcripts, episode, adapter)
        return self._result(episode, *outcome, usage, model, time.monotonic() - start, turns)

    def _keep(self, folder: Path, episode: Episode, adapter: Adapter) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        role = episode.charter.contract.role
        n = len(list(folder.glob(f"{role}-*.jsonl"))) + 1
        lines = [mask(json.dumps(m, ensure_ascii=False, default=str), self.secrets) for m in adapter.history()]
        (folder / f"{role}-{n:03d}.jsonl").write_text("\n".join(lines) + "\n", "utf-8")

    def _after(self, episode: Episode, adapter: Adapter, turn: Turn, usage: Usage,
               start: float) -> tuple[Status, str | None] | None:
        """Carry out the turn's tool calls; how the episode ended, or None to go on."""
        if not turn.calls:
            return "malformed_output", "the model stopped without calling submit"
        results = []
        for call_id, name, args in turn.calls:
            try:
                results.append((call_id, episode.tools.call(name, args), False))
            except ToolError as exc:
                results.append((call_id, str(exc), True))
        adapter.answer(turn, results)  # also when the episode ends here: the transcript keeps the last turn
        submitted = episode.tools.submitted
        if submitted is not None:
            return ("blocked", str(submitted.get("reason") or "")) if submitted.get("blocked") else ("ok", None)
        if self._cost(usage, turn.model)[0] > episode.limits.budget_usd:
            return "runtime_failure", f"budget of ${episode.limits.budget_usd} spent before submit"
        if time.monotonic() - start > episode.limits.seconds:
            return "timeout", f"no submit within {episode.limits.seconds:.0f}s"
        return None

    def spent_usd(self) -> float:
        """What ``ask_text`` has cost so far (0 when no price is known for the model)."""
        return self._cost(self.spent, self.model)[0]

    def _cost(self, usage: Usage, model: str) -> tuple[float, str]:
        price = next((p for prefix, p in self.prices.items() if model.startswith(prefix)), None)
        if price is None:
            return 0.0, f"none: no price known for {model}"
        tokens = (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens, usage.cache_write_tokens)
        return sum(t * p for t, p in zip(tokens, price, strict=True)) / 1e6, f"price table per MTok {price}"

    def _result(self, episode: Episode, status: Status, reason: str | None, usage: Usage, model: str,
                seconds: float, turns: int) -> EpisodeResult:
        cost, basis = self._cost(usage, model)
        submitted = episode.tools.submitted or {}
        attempt = Attempt(driver=self.name, model=model, status=status, usage=usage, cost_usd=round(cost, 6),
                          cost_basis=basis, seconds=round(seconds, 3),
                          error=None if status in ("ok", "blocked") else mask(reason or "", self.secrets))
        return EpisodeResult(role=episode.charter.contract.role, status=status,
                             summary=mask(str(submitted.get("summary", "")), self.secrets),
                             reason=mask(reason, self.secrets) if reason else None, simulation=False,
                             attempts=[attempt], tool_calls=turns, breach_attempts=list(episode.tools.attempts))


# --- Anthropic Messages --------------------------------------------------------------------------------------------

class _Anthropic:
    def __init__(self, episode: Episode, model: str, client: Any, temperature: float | None, max_tokens: int) -> None:
        self.client, self.model, self.temperature, self.max_tokens = client, model, temperature, max_tokens
        self.system = episode.charter.body
        self.tools = [{"name": n, "description": d, "input_schema": s} for n, (d, s) in episode.tools.specs().items()]
        self.messages: list[dict[str, Any]] = [{"role": "user", "content": episode.task}]

    def ask(self) -> Turn:
        # this SDK's create() has no temperature parameter; a pinned one travels in the body
        extra = {"temperature": self.temperature} if self.temperature is not None else None
        resp = self.client.messages.create(model=self.model, max_tokens=self.max_tokens, system=self.system,
                                           messages=self.messages, tools=self.tools, extra_body=extra)
        u = resp.usage
        usage = Usage(input_tokens=u.input_tokens, output_tokens=u.output_tokens,
                      cache_read_tokens=u.cache_read_input_tokens or 0,
                      cache_write_tokens=u.cache_creation_input_tokens or 0)
        calls = [(b.id, b.name, dict(b.input)) for b in resp.content if b.type == "tool_use"]
        return Turn(calls, usage, resp.model, resp)

    def history(self) -> list[dict[str, Any]]:
        return [{"role": "system", "content": self.system}, *self.messages]

    def answer(self, turn: Turn, results: list[tuple[str, str, bool]]) -> None:
        content = [b.model_dump(exclude_none=True) for b in turn.raw.content]
        self.messages.append({"role": "assistant", "content": content})
        self.messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": cid, "content": out, "is_error": err} for cid, out, err in results]})


def anthropic_driver(model: str, *, api_key: str, base_url: str | None = None, temperature: float | None = 0.0,
                     max_tokens: int = 4096, prices: Prices | None = None, timeout: float = 120,
                     transcripts: Path | None = None) -> LLMDriver:
    import anthropic

    client = anthropic.Anthropic(api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout)

    def complete(system: str, prompt: str) -> tuple[str, Usage]:
        extra = {"temperature": temperature} if temperature is not None else None
        resp = client.messages.create(model=model, max_tokens=max_tokens, system=system,
                                      messages=[{"role": "user", "content": prompt}], extra_body=extra)
        text = "".join(b.text for b in resp.content if b.type == "text")
        return text, Usage(input_tokens=resp.usage.input_tokens, output_tokens=resp.usage.output_tokens)

    return LLMDriver("anthropic", model, lambda ep, m: _Anthropic(ep, m, client, temperature, max_tokens),
                     (anthropic.APIError,), {"ANTHROPIC_API_KEY": api_key}, prices or {}, transcripts, complete)


# --- OpenAI Responses and Chat Completions -------------------------------------------------------------------------

def _arguments(raw: str) -> dict[str, Any]:
    try:
        value = json.loads(raw or "{}")
    except ValueError:
        return {"__unparseable_arguments__": raw}
    return value if isinstance(value, dict) else {"__not_an_object__": value}


class _Responses:
    def __init__(self, episode: Episode, model: str, client: Any, temperature: float | None) -> None:
        self.client, self.model, self.pinned = client, model, _pinned(temperature)
        self.instructions = episode.charter.body
        self.tools = [{"type": "function", "name": n, "description": d, "parameters": s, "strict": False}
                      for n, (d, s) in episode.tools.specs().items()]
        self.items: list[dict[str, Any]] = [{"role": "user", "content": episode.task}]

    def ask(self) -> Turn:
        resp = self.client.responses.create(model=self.model, instructions=self.instructions, input=self.items,
                                            tools=self.tools, **self.pinned)
        u = resp.usage
        cached = u.input_tokens_details.cached_tokens if u and u.input_tokens_details else 0
        usage = Usage(input_tokens=u.input_tokens if u else 0, output_tokens=u.output_tokens if u else 0,
                      cache_read_tokens=cached or 0)
        calls = [(i.call_id, i.name, _arguments(i.arguments)) for i in resp.output if i.type == "function_call"]
        return Turn(calls, usage, resp.model, resp)

    def history(self) -> list[dict[str, Any]]:
        return [{"role": "system", "content": self.instructions}, *self.items]

    def answer(self, turn: Turn, results: list[tuple[str, str, bool]]) -> None:
        self.items += [i.model_dump(exclude_none=True) for i in turn.raw.output]
        self.items += [{"type": "function_call_output", "call_id": cid, "output": ("ERROR: " if err else "") + out}
                       for cid, out, err in results]


class _Chat:
    def __init__(self, episode: Episode, model: str, client: Any, temperature: float | None) -> None:
        self.client, self.model, self.pinned = client, model, _pinned(temperature)
        self.tools = [{"type": "function", "function": {"name": n, "description": d, "parameters": s}}
                      for n, (d, s) in episode.tools.specs().items()]
        self.messages: list[dict[str, Any]] = [{"role": "system", "content": episode.charter.body},
                                               {"role": "user", "content": episode.task}]

    def ask(self) -> Turn:
        resp = self.client.chat.completions.create(model=self.model, messages=self.messages, tools=self.tools,
                                                   **self.pinned)
        u = resp.usage
        cached = u.prompt_tokens_details.cached_tokens if u and u.prompt_tokens_details else 0
        usage = Usage(input_tokens=u.prompt_tokens if u else 0, output_tokens=u.completion_tokens if u else 0,
                      cache_read_tokens=cached or 0)
        message = resp.choices[0].message
        calls = [(c.id, c.function.name, _arguments(c.function.arguments)) for c in message.tool_calls or []]
        return Turn(calls, usage, resp.model, message)

    def history(self) -> list[dict[str, Any]]:
        return list(self.messages)

    def answer(self, turn: Turn, results: list[tuple[str, str, bool]]) -> None:
        message = turn.raw
        self.messages.append({"role": "assistant", "content": message.content,
                              "tool_calls": [c.model_dump(exclude_none=True) for c in message.tool_calls or []]})
        self.messages += [{"role": "tool", "tool_call_id": cid, "content": ("ERROR: " if err else "") + out}
                          for cid, out, err in results]


def _pinned(temperature: float | None) -> dict[str, Any]:
    """The temperature argument, or none at all (reasoning models reject the parameter)."""
    return {} if temperature is None else {"temperature": temperature}


def openai_driver(model: str, *, api_key: str, base_url: str | None = None, api: str = "responses",
                  temperature: float | None = 0.0, prices: Prices | None = None, timeout: float = 120,
                  transcripts: Path | None = None) -> LLMDriver:
    """``api="responses"`` for OpenAI itself; ``api="chat"`` for Chat Completions and compatible servers."""
    import openai

    client = openai.OpenAI(api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout)
    make = (lambda ep, m: _Responses(ep, m, client, temperature)) if api == "responses" else \
        (lambda ep, m: _Chat(ep, m, client, temperature))

    def complete(system: str, prompt: str) -> tuple[str, Usage]:
        if api == "responses":
            resp = client.responses.create(model=model, instructions=system, input=prompt, **_pinned(temperature))
            u = resp.usage
            return resp.output_text, Usage(input_tokens=u.input_tokens if u else 0,
                                           output_tokens=u.output_tokens if u else 0)
        chat = client.chat.completions.create(model=model, **_pinned(temperature), messages=[
            {"role": "system", "content": system}, {"role": "user", "content": prompt}])
        c = chat.usage
        return chat.choices[0].message.content or "", Usage(input_tokens=c.prompt_tokens if c else 0,
                                                            output_tokens=c.completion_tokens if c else 0)

    return LLMDriver("openai" if api == "responses" else "openai-chat", model, make, (openai.APIError,),
                     {"OPENAI_API_KEY": api_key}, prices or {}, transcripts, complete)
