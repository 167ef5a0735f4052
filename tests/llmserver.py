"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for tests of what Redline asks an
LLM and does with its answers: real HTTP, answers taken from a script each test writes, every request
recorded (its headers and JSON body)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass(frozen=True)
class Status:
    """An HTTP failure to answer with instead of a completion."""

    code: int
    body: str = '{"error": {"message": "scripted failure"}}'


# A step of the script: the completion's text (a dict is sent as its JSON), or a failure; or a function
# of the request that answers one of those, for answers that depend on what is asked.
Answer = str | dict[str, Any] | Status
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


@dataclass
class ScriptedLLM:
    """The server's state: what it will answer next, and what it was asked."""

    url: str
    script: list[Scripted] = field(default_factory=list)
    requests: list[Recorded] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, *steps: Scripted) -> None:
        with self.lock:
            self.script.extend(steps)

    def next_answer(self) -> Scripted:
        with self.lock:
            if not self.script:
                return Status(500, '{"error": {"message": "the test script has no answer left"}}')
            return self.script.pop(0)

    @property
    def assessments(self) -> list[Recorded]:
        return [request for request in self.requests if "TARGET step" in request.prompt]

    @property
    def reviews(self) -> list[Recorded]:
        return [request for request in self.requests if "CALL A" in request.prompt]


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
            if self.path != "/v1/chat/completions":
                answer = Status(404, '{"error": {"message": "no such path"}}')
            if isinstance(answer, Status):
                self._send(answer.code, answer.body.encode())
                return
            content = answer if isinstance(answer, str) else json.dumps(answer)
            completion = {
                "id": "chatcmpl-scripted",
                "object": "chat.completion",
                "model": body.get("model"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
            }
            self._send(200, json.dumps(completion).encode())

        def _send(self, code: int, payload: bytes) -> None:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: pytest shows what a failing test needs."""

    return Handler


@pytest.fixture
def scripted_llm() -> Iterator[ScriptedLLM]:
    """The server, on a free loopback port; its base URL ends in /v1 as OpenAI's does."""
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
