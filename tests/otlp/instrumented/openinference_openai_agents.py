"""OpenInference's OpenAI Agents instrumentor on an OpenAI Agents SDK agent with one function tool, on
the stand-in server (the SDK's default model calls the Responses API, `/v1/responses`).

The instrumentor's processor replaces the SDK's own (`exclusive_processor=True`), so nothing is sent
to OpenAI's trace backend; the SDK's spans become OpenTelemetry spans exported to Redline.
"""

# mypy: disable-error-code="import-not-found, import-untyped, untyped-decorator, no-any-return"
# (Third-party packages live in the instrumented venv only, not in the suite's; sibling modules are
# imported as scripts import them, which mypy cannot follow, so their values are Any here.)

from __future__ import annotations

import sys

import otlp_export
import weather
from agents import Agent, Runner, function_tool
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor


@function_tool(name_override=weather.TOOL_NAME, description_override=weather.TOOL_DESCRIPTION)
def get_weather(city: str) -> str:
    return weather.get_weather(city)


def main() -> int:
    provider, exporter = otlp_export.tracer_provider("weather-openai-agents")
    OpenAIAgentsInstrumentor().instrument(tracer_provider=provider, exclusive_processor=True)
    agent = Agent(name="weather_agent", instructions=weather.SYSTEM, model=weather.MODEL, tools=[get_weather])
    result = Runner.run_sync(agent, weather.QUESTION)
    if result.final_output != weather.ANSWER:
        raise RuntimeError(f"the agent answered {result.final_output!r}, not the scripted answer")
    return otlp_export.finish(provider, exporter)


if __name__ == "__main__":
    sys.exit(main())
