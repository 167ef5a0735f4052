"""The one conversation every scenario has, so the tests know each step's words in advance.

Standard library only: the scenarios import it beside them (as `weather`), the tests as
`tests.otlp.instrumented.weather`, and the stand-in model server answers by it (`tests.llmserver.tool_loop`).
"""

from __future__ import annotations

import json
from typing import Any

MODEL = "gpt-4o-mini"
SYSTEM = "You are a weather assistant. Use the get_weather tool."
QUESTION = "What is the weather in Paris?"
TOOL_NAME = "get_weather"
TOOL_DESCRIPTION = "The current weather of a city."
TOOL_ARGUMENTS: dict[str, Any] = {"city": "Paris"}
CALL_ID = "call_weather_1"
TOOL_RESULT = "rainy, 14C"
ANSWER = "It is rainy, 14 °C in Paris."
# (input, output) tokens the model reports for the tool-call answer and for the final answer.
CALL_USAGE = (52, 17)
ANSWER_USAGE = (71, 12)
# The conversation id scenarios that can name one give their run (LangGraph's thread, pydantic-ai's).
SESSION_ID = "weather-thread-1"

# The tool as OpenAI's chat completions API declares it.
CHAT_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": TOOL_NAME,
        "description": TOOL_DESCRIPTION,
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


def get_weather(city: str) -> str:
    """The tool itself: deterministic, and it insists on the city the script asks about."""
    if city != TOOL_ARGUMENTS["city"]:
        raise ValueError(f"the scenario only knows the weather in Paris, not {city!r}")
    return TOOL_RESULT


def arguments_json() -> str:
    return json.dumps(TOOL_ARGUMENTS)
