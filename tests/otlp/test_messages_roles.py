"""Roles as instrumentors spell them, and the cheap test for "this span carries messages"."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from redline.traces.otlp.messages import has_message_attributes, normalize_role
from tests.otlp.builders import raw_spans

KNOWN = {
    "system": "system",
    "developer": "system",
    "instruction": "system",
    "user": "user",
    "human": "user",
    "customer": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "model": "assistant",
    "bot": "assistant",
    "tool": "tool",
    "function": "tool",
    "ipython": "tool",
}


@given(st.sampled_from(sorted(KNOWN)), st.lists(st.booleans(), min_size=12, max_size=12))
def test_known_roles_map_whatever_their_case(name: str, upper: list[bool]) -> None:
    spelled = "".join(c.upper() if up else c for c, up in zip(name, upper, strict=False))
    assert normalize_role(spelled) == (KNOWN[name], None)
    assert normalize_role(f" {spelled}\n") == (KNOWN[name], None)


@given(st.text().filter(lambda s: s.strip().lower() not in KNOWN))
def test_any_other_role_is_a_user_and_keeps_its_spelling(raw: str) -> None:
    assert normalize_role(raw) == ("user", raw)


def test_unknown_roles_keep_the_original_spelling() -> None:
    assert normalize_role("Critic") == ("user", "Critic")
    assert normalize_role("") == ("user", "")


def span_with(attributes: dict[str, object], events: list[dict[str, object]] | None = None) -> bool:
    [span] = raw_spans([{"span": "s", "parent": None, "attributes": attributes, "events": events or []}])
    return has_message_attributes(span)


def test_message_attributes_of_every_convention_are_seen() -> None:
    assert span_with({"llm.input_messages.0.message.role": "user"})
    assert span_with({"llm.output_messages.0.message.content": "hi"})
    assert span_with({"gen_ai.input.messages": "[]"})
    assert span_with({"gen_ai.output.messages": []})
    assert span_with({"gen_ai.system_instructions": "[]"})
    assert span_with({"gen_ai.prompt.0.content": "hi"})
    assert span_with({"gen_ai.prompt.0.message.content": "hi"})
    assert span_with({"gen_ai.completion.0.content": "hi"})
    assert span_with({"gen_ai.prompt": '{"messages": []}'})
    assert span_with({"pydantic_ai.all_messages": "[]"})
    assert span_with({"ai.prompt.messages": "[]"})
    assert span_with({"ai.response.text": "hi"})
    assert span_with({"ai.response.toolCalls": "[]"})
    assert span_with({"ai.result.text": "hi"})
    for event in (
        "gen_ai.client.inference.operation.details",
        "gen_ai.system.message",
        "gen_ai.user.message",
        "gen_ai.assistant.message",
        "gen_ai.tool.message",
        "gen_ai.choice",
        "gen_ai.content.prompt",
        "gen_ai.content.completion",
    ):
        assert span_with({}, [{"name": event}]), event


def test_spans_without_message_attributes_are_not_taken_for_llm_calls() -> None:
    assert not span_with({})
    assert not span_with(
        {"http.method": "GET", "db.statement": "select 1", "exception": "x"}, [{"name": "exception"}]
    )
    assert not span_with({"input.value": '{"messages": []}', "output.value": "x", "tool.name": "t"})
    assert not span_with({"llm.model_name": "gpt-4o", "gen_ai.request.model": "gpt-4o", "ai.prompt": "{}"})
    assert not span_with({"llm.input_messages": "x", "gen_ai.prompt_tokens": 3, "gen_ai.completions": 1})
