"""A scripted OpenAI-compatible model server on 127.0.0.1, for tests of what Redline asks an LLM and does
with its answers, and for instrumented agents that need a model to talk to offline: real HTTP, answers
taken from a script each test writes, every request recorded (its headers and JSON body).

It answers chat completions (`/v1/chat/completions`) and, for the OpenAI Agents SDK, the Responses API
(`/v1/responses`); a `Reply` carries tool calls and token counts, which plain text answers do not.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass(frozen=True)
class Status:
    """An HTTP failure to answer with instead of a completion."""

    code: int
    body: str = '{"error": {"message": "scripted failure"}}'


@dataclass(frozen=True)
class ToolCallReply:
    """A tool call the model makes: `arguments` is sent as the JSON string OpenAI sends."""

    call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Reply:
    """A model answer with what a plain text answer lacks: tool calls and the usage the server reports."""

    text: str = ""
    tool_calls: tuple[ToolCallReply, ...] = ()
    input_tokens: int = 0
    output_tokens: int = 0


# A step of the script: the completion's text (a dict is sent as its JSON), a full reply, or a failure;
# or a function of the request that answers one of those, for answers that depend on what is asked.
Answer = str | dict[str, Any] | Reply | Status
Scripted = Answer | Callable[["Recorded"], Answer]


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def prompt(self) -> str:
        """The last message's text: the part of the request that names the target and its context."""
        return str(self.body["messages"][-1]["content"])

    @property
    def instructions(self) -> str:
        return str(self.body["messages"][0]["content"])

    @property
    def offers_tools(self) -> bool:
        return bool(self.body.get("tools"))

    @property
    def has_tool_result(self) -> bool:
        """Whether the conversation sent already answers a tool call (chat `tool` message or Responses
        `function_call_output` item)."""
        messages = self.body.get("messages") or []
        items = self.body.get("input")
        items = items if isinstance(items, list) else []
        return any(isinstance(m, dict) and m.get("role") == "tool" for m in messages) or any(
            isinstance(item, dict) and item.get("type") == "function_call_output" for item in items
        )


def tool_loop(
    call: ToolCallReply, call_usage: tuple[int, int], final: str, final_usage: tuple[int, int]
) -> Scripted:
    """The deterministic agent script: a request that offers tools and has no tool result yet gets the
    tool call; any other request (after the tool result, or one without tools) gets the final text.

    One script for every round of every agent, so a test needs not know how many requests a framework
    makes; the usages are (input, output) tokens."""

    def answer(request: Recorded) -> Answer:
        if request.offers_tools and not request.has_tool_result:
            return Reply(tool_calls=(call,), input_tokens=call_usage[0], output_tokens=call_usage[1])
        return Reply(text=final, input_tokens=final_usage[0], output_tokens=final_usage[1])

    return answer


@dataclass
class ScriptedLLM:
    """The server's state: what it will answer next, and what it was asked."""

    url: str
    script: list[Scripted] = field(default_factory=list)
    requests: list[Recorded] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    # Answered whenever the script is empty (e.g. `tool_loop(...)`); None: an empty script is a failure.
    otherwise: Scripted | None = None

    def answer(self, *steps: Scripted) -> None:
        with self.lock:
            self.script.extend(steps)

    def next_answer(self) -> Scripted:
        with self.lock:
            if self.script:
                return self.script.pop(0)
            if self.otherwise is not None:
                return self.otherwise
            return Status(500, '{"error": {"message": "the test script has no answer left"}}')

    @property
    def assessments(self) -> list[Recorded]:
        return [request for request in self.requests if "TARGET step" in request.prompt]

    @property
    def reviews(self) -> list[Recorded]:
        return [request for request in self.requests if "CALL A" in request.prompt]


def _chat_completion(request: dict[str, Any], reply: Reply, with_usage: bool) -> dict[str, Any]:
    # OpenAI sends null content beside tool calls, and a string (maybe empty) otherwise.
    message: dict[str, Any] = {
        "role": "assistant",
        "content": (reply.text or None) if reply.tool_calls else reply.text,
    }
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": call.call_id,
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
            }
            for call in reply.tool_calls
        ]
    completion: dict[str, Any] = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": request.get("model"),
        "choices": [
            {"index": 0, "message": message, "finish_reason": "tool_calls" if reply.tool_calls else "stop"}
        ],
    }
    if with_usage:
        completion["usage"] = {
            "prompt_tokens": reply.input_tokens,
            "completion_tokens": reply.output_tokens,
            "total_tokens": reply.input_tokens + reply.output_tokens,
        }
    return completion


def _response(request: dict[str, Any], reply: Reply, with_usage: bool) -> dict[str, Any]:
    """A Responses API answer, non-streaming: function_call items, or one output_text message. Like
    OpenAI's, it repeats the request's instructions and tools (instrumentors read them from the answer)."""
    output: list[dict[str, Any]] = [
        {
            "type": "function_call",
            "id": f"fc_{call.call_id}",
            "call_id": call.call_id,
            "name": call.name,
            "arguments": json.dumps(call.arguments),
            "status": "completed",
        }
        for call in reply.tool_calls
    ]
    if not reply.tool_calls:
        output.append(
            {
                "type": "message",
                "id": "msg_scripted",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
            }
        )
    return {
        "id": "resp_scripted",
        "object": "response",
        "created_at": 1_700_000_000,
        "status": "completed",
        "model": request.get("model"),
        "instructions": request.get("instructions"),
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": request.get("tools") or [],
        "usage": {
            "input_tokens": reply.input_tokens,
            "output_tokens": reply.output_tokens,
            "total_tokens": reply.input_tokens + reply.output_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        }
        if with_usage
        else None,
    }


# How each path renders an answer: (the request, the reply, whether to report usage) -> JSON body.
RENDERERS: dict[str, Callable[[Any, Reply, bool], dict[str, Any]]] = {
    "/v1/chat/completions": _chat_completion,
    "/v1/responses": _response,
}


def _handler(state: ScriptedLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            recorded = Recorded(self.path, dict(self.headers.items()), body)
            with state.lock:
                state.requests.append(recorded)
            scripted = state.next_answer()
            answer = scripted(recorded) if callable(scripted) else scripted
            if self.path not in RENDERERS:
                answer = Status(404, '{"error": {"message": "no such path"}}')
            if isinstance(answer, Status):
                self._send(answer.code, answer.body.encode())
                return
            if isinstance(answer, Reply):
                rendered = RENDERERS[self.path](body, answer, True)
            else:
                text = answer if isinstance(answer, str) else json.dumps(answer)
                rendered = RENDERERS[self.path](body, Reply(text=text), False)
            self._send(200, json.dumps(rendered).encode())

        def _send(self, code: int, payload: bytes) -> None:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: pytest shows what a failing test needs."""

    return Handler


@contextmanager
def serving() -> Iterator[ScriptedLLM]:
    """The server, on a free loopback port, for as long as the block runs; its base URL ends in /v1 as
    OpenAI's does. Outside pytest too, so a script can record what instrumented agents send."""
    state = ScriptedLLM(url="")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def scripted_llm() -> Iterator[ScriptedLLM]:
    with serving() as state:
        yield state
