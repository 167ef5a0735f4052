"""The recorded exports of real instrumentors (tests/otlp/recorded/): that each decodes as the README
says, one recording per scenario, and that none names the machine it was recorded on."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.otlp import instrumentors
from tests.otlp.record_instrumentors import RECORDED_DIR, read_recording, scoped_spans

# Scope names seen per recording: what classification and the fixtures of §11 have to match.
SCOPES = {
    "openinference_openai": {"weather-app", "openinference.instrumentation.openai"},
    "openinference_langchain": {
        "openinference.instrumentation.langchain",
        "openinference.instrumentation.openai",
    },
    "openai_v2_span_content": {"weather-app", "opentelemetry.util.genai.handler"},
    "openai_v2_default": {"weather-app", "opentelemetry.util.genai.handler"},
    "traceloop_workflow": {"traceloop.tracer", "opentelemetry.instrumentation.openai.v1"},
    "pydantic_ai_agent": {"pydantic-ai"},
    "openinference_openai_agents": {"openinference.instrumentation.openai_agents"},
}
SPAN_COUNTS = {
    "openinference_openai": 3,
    "openinference_langchain": 9,
    "openai_v2_span_content": 3,
    "openai_v2_default": 3,
    "traceloop_workflow": 6,
    "pydantic_ai_agent": 4,
    "openinference_openai_agents": 8,
}
# What a recording must not contain: the folders and host the recorder normalizes away.
MACHINE_MARKS = ("/work/", "/tmp/", "/root", "/home/", "site-packages", "127.0.0.1")


def test_every_scenario_has_a_recording_and_nothing_else_is_recorded() -> None:
    assert sorted(path.stem for path in RECORDED_DIR.glob("*.pb")) == sorted(instrumentors.SCENARIOS)


@pytest.mark.parametrize("scenario", sorted(instrumentors.SCENARIOS))
def test_a_recording_decodes_to_the_instrumentors_spans(scenario: str) -> None:
    requests = read_recording(RECORDED_DIR / f"{scenario}.pb")

    spans = scoped_spans(requests)
    assert len(spans) == SPAN_COUNTS[scenario]
    assert {scope for scope, _ in spans} == SCOPES[scenario]
    assert all(len(span.trace_id) == 16 and len(span.span_id) == 8 for _, span in spans)


@pytest.mark.parametrize("scenario", sorted(instrumentors.SCENARIOS))
def test_a_recording_names_no_machine(scenario: str) -> None:
    data = (RECORDED_DIR / f"{scenario}.pb").read_bytes()

    assert [mark for mark in MACHINE_MARKS if mark.encode() in data] == []
    for request in read_recording(RECORDED_DIR / f"{scenario}.pb"):
        for resource_spans in request.resource_spans:
            keys = {pair.key for pair in resource_spans.resource.attributes}
            assert keys == {
                "service.name",
                "service.instance.id",
                "telemetry.sdk.language",
                "telemetry.sdk.name",
                "telemetry.sdk.version",
            }


def test_the_length_prefixes_cover_the_file_exactly(tmp_path: Path) -> None:
    """A truncated recording is an error, not silently fewer requests."""
    whole = (RECORDED_DIR / "openai_v2_default.pb").read_bytes()
    cut = tmp_path / "cut.pb"
    cut.write_bytes(whole[:-1])

    with pytest.raises(ValueError, match="recording ends inside a request"):
        read_recording(cut)
