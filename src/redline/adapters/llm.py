"""An LLM over any OpenAI-compatible chat-completions endpoint: the `ChatModel` training is handed when
REDLINE_LLM_BASE_URL and REDLINE_LLM_MODEL are set.

It lives outside the services (they may not import httpx) and is wired in `redline.background`. One
POST per completion, `temperature: 0` so the same feedback is read the same way as far as the server
allows. What goes wrong is sorted for the job worker: a failure that may pass (no connection, a
timeout, 429, a 5xx) is `ChatUnavailable`, so the job is tried again with backoff; one that won't
(a refused key or model, an answer that is not a chat completion) is `ChatRefused`, so it fails with
the reason. The API key is sent as a bearer token and never appears in a message or a log line.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx

from redline.config import Settings
from redline.learning.chat import ChatMessage, ChatModel, ChatRefused, ChatUnavailable

# How much of an error body a failure quotes: enough to say what the server meant.
QUOTED_CHARACTERS = 200
# Statuses worth trying again: rate limited, or the server's own failure.
RETRYABLE = frozenset({408, 409, 425, 429})


class OpenAICompatibleChat:
    """`ChatModel` over `POST {base_url}/chat/completions`."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = 120.0,
        concurrency: int = 1,
        prompt_characters: int = 32_000,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.name = model
        self.concurrency = concurrency
        self.prompt_characters = prompt_characters
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._key = api_key or None
        # One client for the life of the worker, shared by its threads (httpx's is thread-safe): it keeps
        # connections open between requests, and making a client costs more than a request to a local
        # server: a client per request cost 31.6 ms of Redline's own time each, its TLS context alone
        # (measured with bench/assessments.py on 2026-12-01).
        self._client = httpx.Client(timeout=timeout, transport=transport)

    def complete(self, messages: Sequence[ChatMessage]) -> str:
        headers = {"Authorization": f"Bearer {self._key}"} if self._key else {}
        body = {"model": self.name, "messages": [dict(message) for message in messages], "temperature": 0}
        try:
            answer = self._client.post(self._url, json=body, headers=headers)
        except httpx.TransportError as failure:
            reason = self._hidden(str(failure) or type(failure).__name__)
            raise ChatUnavailable(f"the LLM endpoint could not be reached: {reason}") from None
        if answer.status_code >= 500 or answer.status_code in RETRYABLE:
            raise ChatUnavailable(f"the LLM endpoint answered {answer.status_code}: {self._quoted(answer)}")
        if answer.status_code >= 400:
            raise ChatRefused(
                f"the LLM endpoint refused the request ({answer.status_code}): {self._quoted(answer)}"
            )
        return self._content(answer)

    def _content(self, answer: httpx.Response) -> str:
        try:
            body: Any = answer.json()
            content = body["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise ChatRefused(
                f"the LLM endpoint's answer is not a chat completion: {self._quoted(answer)}"
            ) from None
        if not isinstance(content, str):
            raise ChatRefused("the LLM endpoint's chat completion has no text in choices[0].message.content")
        return content

    def _quoted(self, answer: httpx.Response) -> str:
        text = " ".join(answer.text.split())
        if len(text) > QUOTED_CHARACTERS:
            text = text[:QUOTED_CHARACTERS] + "…"
        return self._hidden(text) or "(no body)"

    def _hidden(self, text: str) -> str:
        """The text without the key, should a server echo it back in an error."""
        return text.replace(self._key, "[the API key]") if self._key else text


def chat_model(settings: Settings) -> ChatModel | None:
    """The LLM the settings name, or None when feedback-derived alternatives are off."""
    if not settings.llm_configured or settings.llm_base_url is None or settings.llm_model is None:
        return None
    key = settings.llm_api_key.get_secret_value() if settings.llm_api_key is not None else None
    return OpenAICompatibleChat(
        settings.llm_base_url,
        settings.llm_model,
        api_key=key,
        timeout=settings.llm_timeout_seconds,
        concurrency=settings.llm_concurrency,
        prompt_characters=settings.llm_prompt_characters,
    )
