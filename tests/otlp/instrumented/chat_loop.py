"""The two-turn tool-calling loop an app writes around the `openai` client itself: ask with the tool
offered, run the tool the model calls, send its result back, read the answer.

Shared by the scenarios whose instrumentor wraps the `openai` client (OpenInference, OTel GenAI,
OpenLLMetry), so the three record the same conversation. `ask` lets a scenario wrap each model call
(traceloop's task decorator) and `run_tool` the tool (its tool decorator).
"""

# mypy: disable-error-code="import-not-found, import-untyped, no-any-return"
# (Third-party packages live in the instrumented venv only, not in the suite's; sibling modules are
# imported as scripts import them, which mypy cannot follow, so their values are Any here.)

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import openai
import weather


def create(client: openai.OpenAI, messages: list[dict[str, Any]]) -> Any:
    return client.chat.completions.create(model=weather.MODEL, messages=messages, tools=[weather.CHAT_TOOL])


def weather_loop(
    client: openai.OpenAI,
    ask: Callable[[openai.OpenAI, list[dict[str, Any]]], Any] = create,
    run_tool: Callable[..., str] = weather.get_weather,
) -> str:
    """The final answer; fails loudly when the model does not follow the script."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": weather.SYSTEM},
        {"role": "user", "content": weather.QUESTION},
    ]
    first = ask(client, messages).choices[0].message
    (call,) = first.tool_calls
    messages.append(
        {
            "role": "assistant",
            "content": first.content,
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.function.name, "arguments": call.function.arguments},
                }
            ],
        }
    )
    result = run_tool(**json.loads(call.function.arguments))
    messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    answer = ask(client, messages).choices[0].message.content
    if answer != weather.ANSWER:
        raise RuntimeError(f"the model answered {answer!r}, not the scripted answer")
    return str(answer)
