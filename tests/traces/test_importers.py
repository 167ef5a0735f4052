"""Importers: each format on realistic samples, skipped records and their reasons, and `auto` detection."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from redline.errors import Invalid
from redline.traces.importers import anthropic_messages, native, openai_chat, stash
from redline.traces.importers.base import Importer, ParsedRuns, Skipped
from redline.traces.importers.registry import FORMATS, Formats, format_names, list_formats, parse_text
from redline.traces.render import render_trace
from tests.samples import jsonl, make_run, stash_record

PROJECT = uuid.UUID("11111111-1111-4111-8111-111111111111")
OTHER_PROJECT = "22222222-2222-4222-8222-222222222222"


def steps_of(parsed: ParsedRuns, run: int = 0) -> list[dict[str, Any]]:
    """The steps of one run as plain dicts without unset fields, to compare against in one assert."""
    return [step.model_dump(exclude_none=True) for step in parsed.runs[run].steps]


# -- native ----------------------------------------------------------------------------------------------

NATIVE_RUN: dict[str, Any] = make_run(OTHER_PROJECT, externalId="ticket-1182")


def test_native_runs_import_into_the_given_project_whatever_project_they_name() -> None:
    parsed = native.IMPORTER.parse(jsonl(NATIVE_RUN, {**NATIVE_RUN, "externalId": "t2"}), PROJECT)

    assert parsed.skipped == []
    assert [run.project_id for run in parsed.runs] == [PROJECT, PROJECT]
    assert [run.external_id for run in parsed.runs] == ["ticket-1182", "t2"]
    assert parsed.runs[0].agent == "support-agent"
    assert render_trace(parsed.runs[0].steps).startswith("user: I want a refund")


def test_native_runs_may_come_as_a_json_array_without_a_project() -> None:
    run = {key: value for key, value in NATIVE_RUN.items() if key != "projectId"}

    parsed = native.IMPORTER.parse(json.dumps([run, run], indent=2), PROJECT)

    assert len(parsed.runs) == 2
    assert parsed.skipped == []


def test_a_native_record_that_fails_validation_is_skipped_with_where_and_why() -> None:
    bad_steps = [*NATIVE_RUN["steps"][:2], {"role": "bot", "content": "beep"}]
    text = jsonl(NATIVE_RUN, {**NATIVE_RUN, "steps": bad_steps}, {**NATIVE_RUN, "status": "done"})

    parsed = native.IMPORTER.parse(text, PROJECT)

    assert len(parsed.runs) == 1
    assert parsed.skipped == [
        Skipped(2, "steps[2].role: Input should be 'system', 'user', 'assistant' or 'tool'"),
        Skipped(3, "status: Input should be 'running', 'completed', 'failed', 'cancelled' or 'suspended'"),
    ]


def test_a_native_record_breaking_a_run_rule_is_skipped_with_the_rule() -> None:
    parsed = native.IMPORTER.parse(jsonl({**NATIVE_RUN, "flow": "refunds"}), PROJECT)

    assert parsed.skipped == [Skipped(1, "a run comes from an agent or a flow, not both")]


def test_lines_that_are_not_json_or_not_objects_are_skipped_by_line_number() -> None:
    text = json.dumps(NATIVE_RUN) + "\n\n{not json\n[1, 2]\n"

    parsed = native.IMPORTER.parse(text, PROJECT)

    assert len(parsed.runs) == 1
    assert parsed.skipped == [
        Skipped(3, "not valid JSON: Expecting property name enclosed in double quotes (column 2)"),
        Skipped(4, "a record must be a JSON object"),
    ]


def test_a_byte_order_mark_at_the_start_is_ignored() -> None:
    fmt, parsed = parse_text("\ufeff" + jsonl(NATIVE_RUN), PROJECT)

    assert (fmt, len(parsed.runs), parsed.skipped) == ("native", 1, [])


def test_native_runs_need_no_steps_as_the_api_takes_them() -> None:
    text = jsonl(
        {**NATIVE_RUN, "steps": []},
        {**NATIVE_RUN, "steps": [{"role": "system", "content": "skill"}]},
        {"status": "running"},
    )

    parsed = native.IMPORTER.parse(text, PROJECT)

    assert [len(run.steps) for run in parsed.runs] == [0, 1, 0]
    assert parsed.skipped == []


def test_conversations_without_steps_or_with_only_system_steps_are_skipped() -> None:
    text = jsonl(
        {"messages": []},
        {"messages": [{"role": "system", "content": "skill"}]},
    )

    parsed = openai_chat.IMPORTER.parse(text, PROJECT)

    assert parsed.runs == []
    assert parsed.skipped == [
        Skipped(1, "trace has no steps", "no-steps"),
        Skipped(2, "trace has only system steps; nothing to judge", "only-system-steps"),
    ]


# -- OpenAI chat -----------------------------------------------------------------------------------------

OPENAI_RECORD: dict[str, Any] = {
    "id": "conv-7",
    "title": "Refund for 1182",
    "metadata": {"channel": "chat"},
    "messages": [
        {"role": "developer", "content": "You are a support agent."},
        {
            "role": "user",
            "content": [{"type": "text", "text": "I want a refund"}, {"type": "text", "text": "1182"}],
        },
        {
            "role": "assistant",
            "content": "Let me check that order.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "lookup_order", "arguments": '{"order_id": "1182"}'},
                },
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "refund_policy", "arguments": "{}"},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": '{"status": "delivered"}'},
        {"role": "tool", "tool_call_id": "call_2", "content": "Refunds within 30 days."},
        {"role": "assistant", "content": None, "refusal": None},
        {"role": "assistant", "content": "Your order was delivered on May 3."},
    ],
}


def test_openai_messages_become_steps_with_one_step_per_tool_call() -> None:
    parsed = openai_chat.IMPORTER.parse(jsonl(OPENAI_RECORD), PROJECT)

    assert parsed.skipped == []
    run = parsed.runs[0]
    assert (run.project_id, run.status, run.external_id, run.title) == (
        PROJECT,
        "completed",
        "conv-7",
        "Refund for 1182",
    )
    assert run.metadata == {"channel": "chat"}
    assert steps_of(parsed) == [
        {"role": "system", "content": "You are a support agent."},
        {"role": "user", "content": "I want a refund\n1182"},
        {
            "role": "assistant",
            "content": "Let me check that order.",
            "tool_name": "lookup_order",
            "tool_input": {"order_id": "1182"},
            "tool_call_id": "call_1",
        },
        {
            "role": "assistant",
            "content": "",
            "tool_name": "refund_policy",
            "tool_input": {},
            "tool_call_id": "call_2",
        },
        {"role": "tool", "content": '{"status": "delivered"}', "tool_call_id": "call_1"},
        {"role": "tool", "content": "Refunds within 30 days.", "tool_call_id": "call_2"},
        {"role": "assistant", "content": ""},
        {"role": "assistant", "content": "Your order was delivered on May 3."},
    ]


def test_openai_parts_other_than_text_are_left_out() -> None:
    message = {
        "role": "user",
        "content": [
            {"type": "image_url", "image_url": {"url": "https://example.com/receipt.png"}},
            {"type": "text", "text": "Here is my receipt"},
        ],
    }

    parsed = openai_chat.IMPORTER.parse(jsonl({"messages": [message]}), PROJECT)

    assert steps_of(parsed) == [{"role": "user", "content": "Here is my receipt"}]


@pytest.mark.parametrize(
    ("document", "count"),
    [
        ([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}], 1),
        ({"messages": [{"role": "user", "content": "hi"}]}, 1),
        (
            [
                {"messages": [{"role": "user", "content": "hi"}]},
                {"messages": [{"role": "user", "content": "yo"}]},
            ],
            2,
        ),
    ],
)
def test_openai_text_may_be_one_json_document(document: object, count: int) -> None:
    parsed = openai_chat.IMPORTER.parse(json.dumps(document, indent=2), PROJECT)

    assert len(parsed.runs) == count
    assert parsed.skipped == []


def _call(arguments: object) -> dict[str, Any]:
    call = {"id": "c", "type": "function", "function": {"name": "lookup_order", "arguments": arguments}}
    return {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "tool_calls": [call]}]}


@pytest.mark.parametrize(
    ("record", "reason"),
    [
        (
            _call('{"order_id": '),
            "messages[1].tool_calls[0].function.arguments: not valid JSON: Expecting value",
        ),
        (_call("[1, 2]"), "messages[1].tool_calls[0].function.arguments: must be a JSON object, not list"),
        (_call(None), "messages[1].tool_calls[0].function.arguments: must be a JSON string"),
        ({"messages": [{"role": "bot", "content": "beep"}]}, "messages[0].role: invalid role 'bot'"),
        ({"messages": [{"role": "user", "content": 7}]}, "messages[0].content: must be a string"),
        ({"messages": "hi"}, 'a record needs a "messages" list'),
        ({"messages": []}, "trace has no steps"),
        (
            {"messages": [{"role": "system", "content": "skill"}]},
            "trace has only system steps; nothing to judge",
        ),
    ],
)
def test_an_openai_record_that_cannot_be_read_is_skipped_with_its_reason(record: object, reason: str) -> None:
    good = {"messages": [{"role": "user", "content": "hi"}]}

    parsed = openai_chat.IMPORTER.parse(jsonl(good, record), PROJECT)

    assert len(parsed.runs) == 1
    assert len(parsed.skipped) == 1
    assert parsed.skipped[0].record == 2
    assert parsed.skipped[0].reason.startswith(reason)


def test_openai_arguments_already_decoded_are_taken_as_they_are() -> None:
    parsed = openai_chat.IMPORTER.parse(jsonl(_call({"order_id": "1182"})), PROJECT)

    assert parsed.runs[0].steps[1].tool_input == {"order_id": "1182"}


def test_a_numeric_record_id_becomes_the_external_id() -> None:
    parsed = openai_chat.IMPORTER.parse(
        jsonl({"id": 42, "messages": [{"role": "user", "content": "hi"}]}), PROJECT
    )

    assert parsed.runs[0].external_id == "42"


# -- Anthropic messages ----------------------------------------------------------------------------------

ANTHROPIC_RECORD: dict[str, Any] = {
    "id": "conv-9",
    "system": [{"type": "text", "text": "You are a support agent.", "cache_control": {"type": "ephemeral"}}],
    "messages": [
        {"role": "user", "content": "I want a refund for order 1182"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "I should look the order up first.", "signature": "sig"},
                {"type": "text", "text": "Let me check that order."},
                {"type": "tool_use", "id": "toolu_1", "name": "lookup_order", "input": {"order_id": "1182"}},
                {"type": "tool_use", "id": "toolu_2", "name": "refund_policy", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": '{"status": "delivered"}'},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "content": [{"type": "text", "text": "policy service down"}],
                    "is_error": True,
                },
                {"type": "text", "text": "Any news?"},
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "Your order was delivered on May 3."}]},
    ],
}


def test_anthropic_blocks_become_tool_call_and_tool_result_steps_in_order() -> None:
    parsed = anthropic_messages.IMPORTER.parse(jsonl(ANTHROPIC_RECORD), PROJECT)

    assert parsed.skipped == []
    assert parsed.runs[0].external_id == "conv-9"
    assert steps_of(parsed) == [
        {"role": "system", "content": "You are a support agent."},
        {"role": "user", "content": "I want a refund for order 1182"},
        {
            "role": "assistant",
            "content": "Let me check that order.",
            "tool_name": "lookup_order",
            "tool_input": {"order_id": "1182"},
            "tool_call_id": "toolu_1",
            "metadata": {"thinking": "I should look the order up first."},
        },
        {
            "role": "assistant",
            "content": "",
            "tool_name": "refund_policy",
            "tool_input": {},
            "tool_call_id": "toolu_2",
        },
        {"role": "tool", "content": '{"status": "delivered"}', "tool_call_id": "toolu_1"},
        {
            "role": "tool",
            "content": "policy service down",
            "tool_call_id": "toolu_2",
            "metadata": {"is_error": True},
        },
        {"role": "user", "content": "Any news?"},
        {"role": "assistant", "content": "Your order was delivered on May 3."},
    ]


def test_an_anthropic_message_of_only_tool_results_adds_no_user_step() -> None:
    record = {
        "system": "Be brief.",
        "messages": [
            {"role": "user", "content": "weather?"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t", "name": "weather", "input": {}}],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "sunny"}]},
        ],
    }

    parsed = anthropic_messages.IMPORTER.parse(json.dumps(record), PROJECT)

    assert [step.role for step in parsed.runs[0].steps] == ["system", "user", "assistant", "tool"]
    assert render_trace(parsed.runs[0].steps) == "user: weather?\n\nassistant → weather({})\n\ntool: sunny"


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        (
            {"role": "user", "content": [{"type": "tool_use", "id": "t", "name": "x", "input": {}}]},
            "messages[0].content: tool_use blocks belong in an assistant message",
        ),
        (
            {"role": "assistant", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]},
            "messages[0].content: tool_result blocks belong in a user message",
        ),
        (
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "x", "input": "{}"}]},
            "messages[0].content[0].input: must be a JSON object",
        ),
        (
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "input": {}}]},
            "messages[0].content[0].name: a tool call needs a name",
        ),
    ],
)
def test_an_anthropic_record_that_cannot_be_read_is_skipped_with_its_reason(
    message: dict[str, Any], reason: str
) -> None:
    parsed = anthropic_messages.IMPORTER.parse(jsonl({"messages": [message]}), PROJECT)

    assert parsed.runs == []
    assert parsed.skipped == [Skipped(1, reason)]


@pytest.mark.parametrize(
    ("importer", "role"),
    [(openai_chat.IMPORTER, "bot"), (anthropic_messages.IMPORTER, "system")],
)
def test_a_chat_message_with_a_bad_role_is_skipped_naming_the_message(importer: Importer, role: str) -> None:
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}, {"role": role}]

    parsed = importer.parse(jsonl({"system": "skill", "messages": messages}), PROJECT)

    reason = f"messages[2].role: invalid role {role!r}"
    assert parsed.skipped == [Skipped(1, reason, "invalid-role", 2, f"invalid role {role!r}")]


def test_an_anthropic_record_with_only_a_system_prompt_has_nothing_to_judge() -> None:
    parsed = anthropic_messages.IMPORTER.parse(jsonl({"system": "skill", "messages": []}), PROJECT)

    assert parsed.skipped == [
        Skipped(1, "trace has only system steps; nothing to judge", "only-system-steps")
    ]


# -- stash -----------------------------------------------------------------------------------------------

STASH_RECORD: dict[str, Any] = stash_record(metadata={"channel": "chat"})
STASH_RECORD["steps"][2]["metadata"] = {"thinking": "Look it up first."}


def test_stash_records_become_finished_runs_with_their_steps_as_given() -> None:
    parsed = stash.IMPORTER.parse(
        jsonl(STASH_RECORD, {"steps": [{"role": "user", "content": "hi"}]}), PROJECT
    )

    assert parsed.skipped == []
    run = parsed.runs[0]
    assert (run.project_id, run.status, run.external_id, run.title, run.metadata) == (
        PROJECT,
        "completed",
        "ticket-1182",
        "Refund for 1182",
        {"channel": "chat"},
    )
    assert steps_of(parsed) == STASH_RECORD["steps"]
    assert parsed.runs[1].external_id is None
    assert render_trace(run.steps).startswith(
        "user: I want a refund for order 1182\n\nassistant → lookup_order"
    )


@pytest.mark.parametrize(
    ("document", "external_ids"),
    [(STASH_RECORD, ["ticket-1182"]), ([STASH_RECORD, {**STASH_RECORD, "id": 7}], ["ticket-1182", "7"])],
)
def test_stash_text_may_be_one_json_document(document: object, external_ids: list[str]) -> None:
    parsed = stash.IMPORTER.parse(json.dumps(document, indent=2), PROJECT)

    assert parsed.skipped == []
    assert [run.external_id for run in parsed.runs] == external_ids


def test_stash_leaves_out_keys_it_does_not_define_so_a_trace_read_back_imports_again() -> None:
    read_back = {
        **STASH_RECORD,
        "external_id": "x",
        "step_count": 5,
        "steps": [{"id": str(uuid.uuid4()), "index": 0, "role": "user", "content": "hi", "tool_name": None}],
    }

    parsed = stash.IMPORTER.parse(jsonl(read_back), PROJECT)

    assert parsed.skipped == []
    assert steps_of(parsed) == [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize(
    ("record", "skipped"),
    [
        (
            {
                "steps": [
                    {"role": "user", "content": "hi"},
                    {"role": "tool"},
                    {"role": "bot", "content": "beep"},
                ]
            },
            Skipped(1, "steps[2].role: invalid role 'bot'", "invalid-role", 2, "invalid role 'bot'"),
        ),
        (
            {"steps": [{"content": "hi"}]},
            Skipped(1, "steps[0].role: invalid role None", "invalid-role", 0, "invalid role None"),
        ),
        ({"steps": []}, Skipped(1, "trace has no steps", "no-steps")),
        (
            {"steps": [{"role": "system", "content": "skill"}]},
            Skipped(1, "trace has only system steps; nothing to judge", "only-system-steps"),
        ),
        ({"steps": "hi"}, Skipped(1, 'a record needs a "steps" list')),
        (
            {"steps": [{"role": "user", "content": 7}]},
            Skipped(1, "steps[0].content: Input should be a valid string"),
        ),
        ({"steps": ["hi"]}, Skipped(1, "steps[0]: Input should be a valid dictionary or instance of StepIn")),
        (
            {"id": ["x"], "steps": [{"role": "user"}]},
            Skipped(1, "externalId: Input should be a valid string"),
        ),
    ],
)
def test_a_stash_record_that_cannot_be_read_is_skipped_with_the_kind_of_its_reason(
    record: dict[str, Any], skipped: Skipped
) -> None:
    parsed = stash.IMPORTER.parse(jsonl(record), PROJECT)

    assert parsed.runs == []
    assert parsed.skipped == [skipped]


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        (STASH_RECORD, "stash"),
        ({"steps": []}, "stash"),
        ({"steps": [{"role": "user", "content": "hi", "metadata": {}}]}, "stash"),
        (NATIVE_RUN, "native"),
        ({**NATIVE_RUN, "steps": [{"role": "user", "content": "hi"}]}, "native"),
        # A native run without its status still reads as native, so its reason names the missing field.
        ({key: value for key, value in NATIVE_RUN.items() if key != "status"}, "native"),
    ],
)
def test_stash_and_native_records_are_told_apart(record: dict[str, Any], expected: str) -> None:
    # Stash is tried first and claims no record with a status, so native loses nothing to it.
    assert stash.IMPORTER.detect(jsonl(record)) is (expected == "stash")
    assert parse_text(jsonl(record), PROJECT)[0] == expected


# -- the registry and auto detection ---------------------------------------------------------------------


def test_a_caller_may_choose_its_own_formats_and_their_order() -> None:
    chat_first = Formats((openai_chat.IMPORTER, stash.IMPORTER))
    text = jsonl({"messages": [{"role": "user", "content": "hi"}]})

    assert chat_first.names() == ["openai_chat", "stash"]
    assert chat_first.parse_text(text, PROJECT)[0] == "openai_chat"
    assert chat_first.parse_text(jsonl(STASH_RECORD), PROJECT)[0] == "stash"
    for fmt, sentence in [
        ("native", "unknown format 'native'; expected auto or one of: openai_chat, stash"),
        ("auto", "could not detect the trace format; tried: openai_chat, stash"),
    ]:
        with pytest.raises(Invalid) as refused:
            chat_first.parse_text(jsonl(NATIVE_RUN), PROJECT, fmt)
        assert refused.value.message == sentence


def test_a_format_listed_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="listed twice"):
        Formats((stash.IMPORTER, stash.IMPORTER))


def test_formats_are_listed_in_detection_order_with_descriptions() -> None:
    assert format_names() == ["stash", "native", "openai_chat", "anthropic_messages", "otel"]
    assert [importer.name for importer in FORMATS] == format_names()[:-1]
    assert all(name and description for name, description in list_formats())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (jsonl(NATIVE_RUN), "native"),
        (json.dumps([NATIVE_RUN], indent=2), "native"),
        (jsonl(OPENAI_RECORD), "openai_chat"),
        (json.dumps(OPENAI_RECORD["messages"]), "openai_chat"),
        (jsonl(ANTHROPIC_RECORD), "anthropic_messages"),
        (json.dumps(ANTHROPIC_RECORD, indent=2), "anthropic_messages"),
        (
            jsonl({"system": "Be brief.", "messages": [{"role": "user", "content": "hi"}]}),
            "anthropic_messages",
        ),
        # Plain text messages read the same in both chat formats; OpenAI is tried first.
        (jsonl({"messages": [{"role": "user", "content": "hi"}]}), "openai_chat"),
        (jsonl({"messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}), "openai_chat"),
    ],
)
def test_auto_detects_the_format_from_the_first_record(text: str, expected: str) -> None:
    fmt, parsed = parse_text(text, PROJECT)

    assert fmt == expected
    assert parsed.runs
    assert parsed.skipped == []


def test_auto_looks_at_the_first_record_only() -> None:
    text = jsonl(OPENAI_RECORD, ANTHROPIC_RECORD)

    fmt, parsed = parse_text(text, PROJECT)

    assert fmt == "openai_chat"
    assert parsed.skipped == [
        Skipped(2, "messages[1].content[2]: a tool_use block is Anthropic's; import as anthropic_messages")
    ]


def test_a_named_format_is_used_without_detection() -> None:
    fmt, parsed = parse_text(
        jsonl({"messages": [{"role": "user", "content": "hi"}]}), PROJECT, "anthropic_messages"
    )

    assert fmt == "anthropic_messages"
    assert len(parsed.runs) == 1


@pytest.mark.parametrize(
    ("text", "fmt", "sentence"),
    [
        (
            jsonl(NATIVE_RUN),
            "langfuse",
            "unknown format 'langfuse'; expected auto or one of: "
            "stash, native, openai_chat, anthropic_messages, otel",
        ),
        (
            "",
            "langfuse",
            "unknown format 'langfuse'; expected auto or one of: "
            "stash, native, openai_chat, anthropic_messages, otel",
        ),
        ("", "auto", "there is nothing to import: the text is empty"),
        (" \n\t\n", "native", "there is nothing to import: the text is empty"),
        (
            jsonl({"hello": "world"}),
            "auto",
            "could not detect the trace format; tried: stash, native, openai_chat, anthropic_messages, otel",
        ),
        (
            "not json at all",
            "auto",
            "could not detect the trace format; tried: stash, native, openai_chat, anthropic_messages, otel",
        ),
    ],
)
def test_texts_that_cannot_be_imported_are_refused_with_the_spec_sentence(
    text: str, fmt: str, sentence: str
) -> None:
    with pytest.raises(Invalid) as refused:
        parse_text(text, PROJECT, fmt)

    assert refused.value.message == sentence
    assert refused.value.status == 400


def test_a_record_with_a_nul_character_is_skipped_naming_where() -> None:
    bad = {"messages": [{"role": "user", "content": "hi\u0000"}]}
    parsed = openai_chat.IMPORTER.parse(
        jsonl({"messages": [{"role": "user", "content": "ok"}]}, bad), PROJECT
    )
    assert len(parsed.runs) == 1
    assert parsed.skipped == [
        Skipped(2, "messages[0].content: text may not contain the NUL character (\\u0000)")
    ]
