"""What the learning services need of an LLM: one chat completion, as text.

The services never speak HTTP (the import-linter contract): the job is handed something that answers
`complete`, and `redline.adapters.llm` is the one made from the settings, over an OpenAI-compatible endpoint.
Tests hand in the same thing pointed at a scripted server on loopback.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

ChatMessage = Mapping[str, str]


class ChatModel(Protocol):
    """An LLM that answers a conversation with one message's text."""

    @property
    def name(self) -> str:
        """The model's name, recorded with what it assessed (never a key or a URL)."""
        ...

    @property
    def concurrency(self) -> int:
        """How many requests may be open at once: the endpoint's limit, as the operator set it."""
        ...

    @property
    def prompt_characters(self) -> int:
        """About how many characters of conversation one request may show: what the model's context
        window takes, as the operator set it."""
        ...

    def complete(self, messages: Sequence[ChatMessage]) -> str:
        """The assistant's answer to `messages`.

        Raises `ChatUnavailable` when trying again later may work (the endpoint could not be reached,
        timed out, was overloaded or failed on its side), `ChatRefused` when it would not (the key or
        the model was refused, or the endpoint answered something that is not a chat completion).
        """
        ...


class ChatUnavailable(Exception):
    """The LLM could not answer now; the job that asked is tried again later."""


class ChatRefused(Exception):
    """The LLM endpoint refused the request in a way trying again would not change; the message says why."""
