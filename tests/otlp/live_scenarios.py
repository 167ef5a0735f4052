"""Running an instrumented scenario (tests/otlp/instrumented/) against a live Redline: the fixtures and
the call the OTLP tests and the console's browser tests share.

A test that takes `stand_in` and `otel_python` (import them, with `scripted_llm`, into its module) and a
live server calls `export`: the scenario's agent talks to the stand-in model server and its spans reach
the server's default project through the stock OTLP/HTTP exporter, as a user's would.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import ADMIN_TOKEN
from tests.liveserver import LiveServer
from tests.llmserver import ScriptedLLM
from tests.otlp import instrumentors

__all__ = ["PROJECT", "export", "otel_python", "stand_in"]

PROJECT = "default"


@pytest.fixture(scope="session")
def otel_python() -> Path:
    """The instrumented venv's python: REDLINE_OTEL_PYTHON (CI), else built once at .otel-venv/."""
    return instrumentors.instrumented_python()


@pytest.fixture
def stand_in(scripted_llm: ScriptedLLM) -> ScriptedLLM:
    """The stand-in model server, answering each scenario's conversation (instrumented/weather.py)."""
    scripted_llm.otherwise = instrumentors.weather_script()
    return scripted_llm


def export(
    scenario: str, otel_python: Path, live_server: LiveServer, stand_in: ScriptedLLM, home: Path
) -> instrumentors.Finished:
    """Run the scenario against the live server; a failed export or agent fails the test with its output."""
    environment = instrumentors.scenario_environment(live_server.url, ADMIN_TOKEN, stand_in.url, PROJECT)
    try:
        return instrumentors.run_scenario(otel_python, instrumentors.SCENARIOS[scenario], environment, home)
    except instrumentors.ScenarioFailed as failure:
        problem = str(failure)
    pytest.fail(problem, pytrace=False)
