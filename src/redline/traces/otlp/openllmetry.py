"""OpenLLMetry's legacy attributes (otlp-ingest §6.5; traceloop ≤ 0.54, and LangSmith's OTel export):
`gen_ai.prompt.{i}.*` and `gen_ai.completion.{i}.*`, flattened, each completion one choice.

LangSmith nests the fields one level deeper (`gen_ai.prompt.{i}.message.role`); both are read. A
`content` may be a JSON list of content blocks. LangSmith may instead send one `gen_ai.prompt` /
`gen_ai.completion` text, LangChain's serialization of the call: that is read as a provider-shaped
request or response.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from redline.traces.otlp import provider
from redline.traces.otlp.canonical import Reading
from redline.traces.otlp.chat import read_message
from redline.traces.otlp.values import unflatten

PROMPT, COMPLETION = "gen_ai.prompt", "gen_ai.completion"


def read(reading: Reading, family: Mapping[str, Any], prefix: str) -> None:
    """The messages of the flattened family under `prefix` (its keys in `family`)."""
    for item in unflatten(family, prefix):
        if prefix == COMPLETION:
            reading.new_choice()
        read_message(reading, _unwrapped(item, prefix == COMPLETION), blocks_in_text=True)


def _unwrapped(item: Any, output: bool) -> Any:
    if isinstance(item, dict) and "role" not in item and isinstance(item.get("message"), dict):
        item = {**item["message"], **{k: v for k, v in item.items() if k != "message"}}
    if output and isinstance(item, dict) and "role" not in item:
        item = {"role": "assistant", **item}
    return item


def read_whole(reading: Reading, value: Any, prefix: str) -> None:
    """LangSmith's single JSON text, read as the request or response it serializes."""
    if prefix == PROMPT:
        provider.read_request(reading, value)
    else:
        provider.read_response(reading, value)
