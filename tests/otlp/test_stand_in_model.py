"""The stand-in model server's agent script (tests/llmserver.py `tool_loop`), over real HTTP: what the
instrumented scenarios rely on it to answer, on chat completions and on the Responses API."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.llmserver import ScriptedLLM, scripted_llm
from tests.otlp.instrumented import weather
from tests.otlp.live_scenarios import stand_in

__all__ = ["scripted_llm", "stand_in"]

QUESTION = {"role": "user", "content": weather.QUESTION}
TOOL_RESULT = {"role": "tool", "tool_call_id": weather.CALL_ID, "content": weather.TOOL_RESULT}


def post(stand_in: ScriptedLLM, path: str, body: dict[str, Any]) -> dict[str, Any]:
    answer = httpx.post(f"{stand_in.url}{path}", json=body, timeout=10)
    assert answer.status_code == 200, answer.text
    decoded: dict[str, Any] = answer.json()
    return decoded


def test_a_chat_request_offering_tools_gets_the_tool_call_with_its_usage(stand_in: ScriptedLLM) -> None:
    body = {"model": weather.MODEL, "messages": [QUESTION], "tools": [weather.CHAT_TOOL]}

    completion = post(stand_in, "/chat/completions", body)

    (choice,) = completion["choices"]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["content"] is None
    assert choice["message"]["tool_calls"] == [
        {
            "id": weather.CALL_ID,
            "type": "function",
            "function": {"name": weather.TOOL_NAME, "arguments": weather.arguments_json()},
        }
    ]
    assert completion["model"] == weather.MODEL
    assert completion["usage"] == {"prompt_tokens": 52, "completion_tokens": 17, "total_tokens": 69}


@pytest.mark.parametrize(
    "messages",
    [[QUESTION, TOOL_RESULT], [QUESTION]],
    ids=["after the tool result", "without tools offered"],
)
def test_a_chat_request_with_the_tool_result_or_no_tools_gets_the_answer(
    stand_in: ScriptedLLM, messages: list[dict[str, Any]]
) -> None:
    tools = [weather.CHAT_TOOL] if len(messages) > 1 else []
    completion = post(
        stand_in, "/chat/completions", {"model": weather.MODEL, "messages": messages, "tools": tools}
    )

    (choice,) = completion["choices"]
    assert choice == {
        "index": 0,
        "message": {"role": "assistant", "content": weather.ANSWER},
        "finish_reason": "stop",
    }
    assert completion["usage"] == {"prompt_tokens": 71, "completion_tokens": 12, "total_tokens": 83}


def test_the_responses_api_calls_the_tool_then_answers(stand_in: ScriptedLLM) -> None:
    tool = {"type": "function", "name": weather.TOOL_NAME, "parameters": {"type": "object"}}
    first = post(
        stand_in,
        "/responses",
        {"model": weather.MODEL, "instructions": weather.SYSTEM, "input": [QUESTION], "tools": [tool]},
    )
    call = {
        "type": "function_call",
        "id": f"fc_{weather.CALL_ID}",
        "call_id": weather.CALL_ID,
        "name": weather.TOOL_NAME,
        "arguments": weather.arguments_json(),
        "status": "completed",
    }
    assert first["output"] == [call]
    assert (first["instructions"], first["tools"], first["model"]) == (weather.SYSTEM, [tool], weather.MODEL)
    assert (first["usage"]["input_tokens"], first["usage"]["output_tokens"]) == weather.CALL_USAGE

    answered = [QUESTION, call, {"type": "function_call_output", "call_id": weather.CALL_ID, "output": "x"}]
    second = post(stand_in, "/responses", {"model": weather.MODEL, "input": answered, "tools": [tool]})
    (message,) = second["output"]
    assert message["type"] == "message"
    assert message["content"] == [{"type": "output_text", "text": weather.ANSWER, "annotations": []}]
    assert (second["usage"]["input_tokens"], second["usage"]["output_tokens"]) == weather.ANSWER_USAGE
    assert [request.path for request in stand_in.requests] == ["/v1/responses", "/v1/responses"]


def test_a_text_answer_keeps_the_old_shape_without_usage(scripted_llm: ScriptedLLM) -> None:
    """Tests written before tool calls script plain text: their completions stay as they were."""
    scripted_llm.answer("plain")

    completion = post(scripted_llm, "/chat/completions", {"model": "m", "messages": [QUESTION]})

    assert "usage" not in completion
    assert completion["choices"][0]["message"] == {"role": "assistant", "content": "plain"}


def test_an_unknown_path_is_not_found(stand_in: ScriptedLLM) -> None:
    answer = httpx.post(f"{stand_in.url}/embeddings", json={"input": "x"}, timeout=10)

    assert answer.status_code == 404
    assert answer.json() == {"error": {"message": "no such path"}}
