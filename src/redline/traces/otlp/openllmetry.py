"""OpenLLMetry's legacy attributes (otlp-ingest §6.5; traceloop ≤ 0.54, and LangSmith's OTel export):
`gen_ai.prompt.{i}.*` and `gen_ai.completion.{i}.*`, flattened, each completion one choice.

LangSmith nests the fields one level deeper (`gen_ai.prompt.{i}.message.role`); both are read. A
`content` may be a JSON list of content blocks. LangSmith may instead send one `gen_ai.prompt` /
`gen_ai.completion` text, LangChain's serialization of the call: `messages` reads that as a
provider-shaped request or response (`provider`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from redline.traces.otlp.canonical import Reading
from redline.traces.otlp.chat import read_message
from redline.traces.otlp.values import numbered

PROMPT, COMPLETION = "gen_ai.prompt", "gen_ai.completion"


def read(reading: Reading, family: Mapping[str, Any], prefix: str) -> None:
    """The messages of the flattened family under `prefix` (its keys in `family`)."""
    for item in numbered(family, prefix):
        if prefix == COMPLETION:
            reading.new_choice()
        read_message(reading, _message(item, prefix == COMPLETION), blocks_in_text=True)


def _message(item: dict[str, Any], output: bool) -> dict[str, Any]:
    """A message object from one item's keys (`role`, `content`, `tool_calls.{j}.name`, …, or the
    same under `message.`)."""
    if "role" not in item and "message.role" in item:
        item = {key.removeprefix("message."): value for key, value in item.items()}
    message = {key: value for key, value in item.items() if "." not in key}
    calls = numbered(item, "tool_calls")
    if calls:
        message["tool_calls"] = calls
    if output and "role" not in message:
        message["role"] = "assistant"
    return message
