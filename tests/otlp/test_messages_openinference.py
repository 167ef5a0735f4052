"""OpenInference messages (otlp-ingest §6.1, example §10.1), and the steps they make (§7)."""

from __future__ import annotations

from functools import partial
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from redline.traces.otlp.messages import input_messages, output_messages
from redline.traces.otlp.model import DerivedStep, Extracted, Media, Message, RawSpan, ToolCall
from redline.traces.otlp.steps import message_steps
from tests.otlp.builders import hex_id, raw_spans
from tests.otlp.examples import attributes_of, example_10_1

SPAN = hex_id("L")
OTLP = {"span_id": SPAN, "convention": "openinference"}
M = partial(Message, source_span=SPAN, source_convention="openinference")


def llm_span(attributes: dict[str, Any]) -> RawSpan:
    [span] = raw_spans([{"span": "L", "parent": None, "name": "ChatOpenAI", "attributes": attributes}])
    return span


def flattened(prefix: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """Flat OpenInference keys for messages written as nested dicts and lists."""
    out: dict[str, Any] = {}

    def walk(path: str, value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                walk(f"{path}.{key}", item)
        elif isinstance(value, list):
            for index, item in enumerate(value):
                walk(f"{path}.{index}", item)
        else:
            out[path] = value

    for index, message in enumerate(messages):
        walk(f"{prefix}.{index}.message", message)
    return out


L1 = attributes_of(example_10_1(), "L1")
L2 = attributes_of(example_10_1(), "L2")


def test_l1_of_the_worked_example_reads_its_prompt_and_its_tool_call() -> None:
    span = llm_span(L1)
    assert input_messages(span) == Extracted(
        (M(role="system", text="You are helpful."), M(role="user", text="Weather in Paris?")), "openinference"
    )
    assert output_messages(span) == Extracted(
        (M(role="assistant", tool_calls=(ToolCall("call_1", "get_weather", {"city": "Paris"}),)),),
        "openinference",
    )


def test_l2_of_the_worked_example_gives_the_steps_the_spec_lists() -> None:
    span = llm_span(L2)
    inputs, outputs = input_messages(span), output_messages(span)
    assert inputs.messages[2:] == (
        M(role="assistant", tool_calls=(ToolCall("call_1", "get_weather", {"city": "Paris"}),)),
        M(role="tool", text="rainy, 14C", tool_call_id="call_1"),
    )
    assert message_steps(inputs.messages + outputs.messages) == [
        DerivedStep("system", "You are helpful.", metadata={"otlp": OTLP}),
        DerivedStep("user", "Weather in Paris?", metadata={"otlp": OTLP}),
        DerivedStep(
            "assistant",
            "",
            tool_name="get_weather",
            tool_input={"city": "Paris"},
            tool_call_id="call_1",
            metadata={"otlp": OTLP},
        ),
        DerivedStep(
            "tool", "rainy, 14C", tool_name="get_weather", tool_call_id="call_1", metadata={"otlp": OTLP}
        ),
        DerivedStep("assistant", "It is rainy, 14 °C.", metadata={"otlp": OTLP}),
    ]


def test_content_wins_over_contents_for_text_but_contents_add_images_and_reasoning() -> None:
    span = llm_span(
        flattened(
            "llm.input_messages",
            [
                {
                    "role": "user",
                    "content": "What is in the picture?",
                    "contents": [
                        {"message_content": {"type": "text", "text": "What is in the picture?"}},
                        {
                            "message_content": {
                                "type": "image",
                                "image": {"image": {"url": "https://x/cat.png"}},
                            }
                        },
                    ],
                },
                {
                    "role": "user",
                    "contents": [
                        {"message_content": {"type": "text", "text": "And "}},
                        {"message_content": {"type": "text", "text": "this one?"}},
                        {
                            "message_content": {
                                "type": "image",
                                "image": {"image": {"url": "data:image/png;base64,iVBO"}},
                            }
                        },
                    ],
                },
            ],
        )
        | flattened(
            "llm.output_messages",
            [
                {
                    "role": "assistant",
                    "contents": [
                        {"message_content": {"type": "reasoning", "text": "Two cats."}},
                        {"message_content": {"type": "text", "text": "Cats."}},
                    ],
                }
            ],
        )
    )
    cat = {"type": "image", "image": {"image": {"url": "https://x/cat.png"}}}
    inline = {"type": "image", "image": {"image": {"url": "data:image/png;base64,iVBO"}}}
    messages = input_messages(span).messages
    assert messages == (
        M(
            role="user",
            text="What is in the picture?",
            media=(Media("image", "https://x/cat.png"),),
            metadata={"parts": [cat]},
        ),
        M(
            role="user",
            text="And this one?",
            media=(Media("image", None, "image/png"),),
            metadata={"parts": [inline]},
        ),
    )
    assert output_messages(span).messages == (M(role="assistant", text="Cats.", reasoning="Two cats."),)
    assert [step.content for step in message_steps(messages)] == [
        "What is in the picture?\n[image: https://x/cat.png]",
        "And this one?\n[image: image/png]",
    ]


def test_tool_use_contents_count_only_without_tool_calls() -> None:
    tool_use = {"type": "tool_use", "tool_call": {"id": "c1", "function": {"name": "f", "arguments": "{}"}}}
    with_calls = {
        "role": "assistant",
        "contents": [{"message_content": tool_use}],
        "tool_calls": [{"tool_call": {"id": "c1", "function": {"name": "f", "arguments": "{}"}}}],
    }
    only_contents = {"role": "assistant", "contents": [{"message_content": tool_use}]}
    result = {"role": "tool", "tool_call_id": "c1", "content": "done"}
    span = llm_span(flattened("llm.input_messages", [with_calls, result, only_contents]))
    calls = [m.tool_calls for m in input_messages(span).messages]
    assert calls == [(ToolCall("c1", "f", {}),), (), (ToolCall("c1", "f", {}),)]


def test_legacy_function_calls_are_tool_calls_without_an_id() -> None:
    span = llm_span(
        flattened(
            "llm.output_messages",
            [
                {
                    "role": "assistant",
                    "function_call_name": "lookup",
                    "function_call_arguments_json": '{"q": "x"}',
                }
            ],
        )
        | flattened("llm.input_messages", [{"role": "function", "name": "lookup", "content": "42"}])
    )
    assert output_messages(span).messages == (
        M(role="assistant", tool_calls=(ToolCall(None, "lookup", {"q": "x"}),)),
    )
    assert input_messages(span).messages == (M(role="tool", text="42", name="lookup"),)


def test_a_gap_in_the_indices_is_skipped_and_malformed_messages_are_counted() -> None:
    """Edge case 17: an SDK dropped attributes over its limit; the rest of the list survives."""
    span = llm_span(
        {
            "llm.input_messages.0.message.role": "system",
            "llm.input_messages.0.message.content": "Be nice.",
            # index 1 dropped by the SDK; index 2 lost its role
            "llm.input_messages.2.message.content": "orphan text",
            "llm.input_messages.3.message.role": "user",
            "llm.input_messages.3.message.content": "Hi",
            "llm.input_messages.3.message.tool_calls.0.tool_call.id": "no function",
            "llm.input_messages.11.message.role": "assistant",
            "llm.input_messages.11.message.content": "Hello!",
        }
    )
    assert input_messages(span) == Extracted(
        (M(role="system", text="Be nice."), M(role="user", text="Hi"), M(role="assistant", text="Hello!")),
        "openinference",
        unparsed_parts=2,
    )


def test_several_output_messages_are_choices_only_when_the_request_asked_for_several() -> None:
    """Edge case 16: choice 0 is kept, the others become alternatives."""
    choices = flattened(
        "llm.output_messages",
        [{"role": "assistant", "content": "Paris."}, {"role": "assistant", "content": "It is Paris."}],
    )
    span = llm_span(choices | {"llm.invocation_parameters": '{"model": "gpt-4o", "n": 2}'})
    [message] = output_messages(span).messages
    assert message == M(
        role="assistant", text="Paris.", metadata={"alternatives": [{"text": "It is Paris."}]}
    )
    assert message_steps([message]) == [
        DerivedStep(
            "assistant", "Paris.", metadata={"alternatives": [{"text": "It is Paris."}], "otlp": OTLP}
        )
    ]


def test_the_finish_reason_attribute_goes_to_the_answer() -> None:
    span = llm_span(L2 | {"llm.finish_reason": "stop"})
    assert output_messages(span).messages == (
        M(role="assistant", text="It is rainy, 14 °C.", metadata={"finish_reason": "stop"}),
    )


def test_responses_api_items_are_joined_into_one_assistant_turn() -> None:
    """OpenInference writes one output message per Responses item: reasoning, text, each function call."""
    span = llm_span(
        flattened(
            "llm.output_messages",
            [
                {
                    "role": "assistant",
                    "contents": [{"message_content": {"type": "reasoning", "text": "Need both."}}],
                },
                {
                    "role": "assistant",
                    "contents": [{"message_content": {"type": "text", "text": "Checking."}}],
                },
                {
                    "role": "assistant",
                    "tool_calls": [{"tool_call": {"id": "a", "function": {"name": "f", "arguments": "{}"}}}],
                },
                {"role": "assistant", "tool_calls": [{"tool_call": {"id": "b", "function": {"name": "g"}}}]},
            ],
        )
    )
    assert output_messages(span).messages == (
        M(
            role="assistant",
            text="Checking.",
            reasoning="Need both.",
            tool_calls=(ToolCall("a", "f", {}), ToolCall("b", "g", None)),
        ),
    )


def test_unknown_roles_become_users_that_remember_their_role() -> None:
    span = llm_span(flattened("llm.input_messages", [{"role": "Critic", "content": "Too long."}]))
    [message] = input_messages(span).messages
    assert message == M(role="user", text="Too long.", metadata={"original_role": "Critic"})
    assert message_steps([message])[0].metadata == {"original_role": "Critic", "otlp": OTLP}


@given(
    st.lists(st.sampled_from(["user", "assistant", "system", "tool"]), min_size=1, max_size=12), st.randoms()
)
def test_a_flattened_conversation_reads_back_in_index_order_whatever_the_key_order(
    roles: list[str], random: Any
) -> None:
    written = [{"role": role, "content": f"message {i}"} for i, role in enumerate(roles)]
    items = list(flattened("llm.input_messages", written).items())
    random.shuffle(items)
    messages = input_messages(llm_span(dict(items))).messages
    assert [(m.role, m.text) for m in messages] == [(role, f"message {i}") for i, role in enumerate(roles)]


def test_an_inline_image_over_64_kib_is_named_by_its_type_and_omitted_from_metadata() -> None:
    payload = "A" * (100 * 1024)  # base64 of 75 KiB
    url = f"data:image/jpeg;base64,{payload}"
    small = "data:image/gif;base64,R0lGOD"
    span = llm_span(
        flattened(
            "llm.input_messages",
            [
                {
                    "role": "user",
                    "contents": [
                        {"message_content": {"type": "image", "image": {"image": {"url": url}}}},
                        {"message_content": {"type": "image", "image": {"image": {"url": small}}}},
                    ],
                }
            ],
        )
    )
    [message] = input_messages(span).messages
    assert message.media == (Media("image", None, "image/jpeg"), Media("image", None, "image/gif"))
    assert message.metadata["parts"] == [
        {"type": "image", "image": {"image": {"url": f"[blob omitted: {75 * 1024} bytes]"}}},
        {"type": "image", "image": {"image": {"url": small}}},
    ]
    assert message_steps([message])[0].content == "[image: image/jpeg]\n[image: image/gif]"
