"""pydantic-ai with its OpenTelemetry instrumentation (`Agent.instrument_all`, the default format) on
an agent whose model is a `FunctionModel`: no server at all, the function plays the model. It calls the
tool until a tool result is in the history, then answers, with fixed token counts, so the run has a
known shape.
"""

# mypy: disable-error-code="import-not-found, import-untyped, untyped-decorator, no-any-return"
# (Third-party packages live in the instrumented venv only, not in the suite's; sibling modules are
# imported as scripts import them, which mypy cannot follow, so their values are Any here.)

from __future__ import annotations

import sys

import otlp_export
import weather
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.instrumented import InstrumentationSettings
from pydantic_ai.usage import RequestUsage


def play_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    answered = any(isinstance(part, ToolReturnPart) for message in messages for part in message.parts)
    if not answered and info.function_tools:
        return ModelResponse(
            parts=[
                ToolCallPart(weather.TOOL_NAME, dict(weather.TOOL_ARGUMENTS), tool_call_id=weather.CALL_ID)
            ],
            usage=RequestUsage(input_tokens=weather.CALL_USAGE[0], output_tokens=weather.CALL_USAGE[1]),
        )
    return ModelResponse(
        parts=[TextPart(weather.ANSWER)],
        usage=RequestUsage(input_tokens=weather.ANSWER_USAGE[0], output_tokens=weather.ANSWER_USAGE[1]),
    )


def main() -> int:
    provider, exporter = otlp_export.tracer_provider("weather-pydantic-ai")
    Agent.instrument_all(InstrumentationSettings(tracer_provider=provider))
    agent = Agent(
        FunctionModel(play_model, model_name=weather.MODEL),
        name="weather_agent",
        instructions=weather.SYSTEM,
    )

    @agent.tool_plain(name=weather.TOOL_NAME, description=weather.TOOL_DESCRIPTION)
    def get_weather(city: str) -> str:
        return weather.get_weather(city)

    result = agent.run_sync(weather.QUESTION, conversation_id=weather.SESSION_ID)
    if result.output != weather.ANSWER:
        raise RuntimeError(f"the agent answered {result.output!r}, not the scripted answer")
    return otlp_export.finish(provider, exporter)


if __name__ == "__main__":
    sys.exit(main())
