"""Merging model calls into threads without repeating history (otlp-ingest §8.5) and choosing the
primary thread (§8.6), on hand-made messages."""

from __future__ import annotations

from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st

from redline.traces.otlp import threads as threads_module
from redline.traces.otlp.model import Message, ToolCall
from redline.traces.otlp.threads import Call, Thread, merge, primary

SYSTEM = Message("system", "You are helpful.")
USER = Message("user", "Weather in Paris?")
ASKS = Message("assistant", tool_calls=(ToolCall("call_1", "get_weather", {"city": "Paris"}),))
ASKS_AGAIN = Message("assistant", tool_calls=(ToolCall("call_1", "get_weather", '{"city": "Paris"}'),))
RESULT = Message("tool", "rainy, 14C", tool_call_id="call_1")
ANSWER = Message("assistant", "It is rainy, 14 °C.")


def call(
    name: str, inputs: list[Message], outputs: list[Message], *, end: int = 0, stateless: bool = False
) -> Call:
    return Call(name, end, tuple(inputs), tuple(outputs), stateless)


def texts(thread: Thread) -> list[str]:
    return [f"{m.role}:{m.text or ','.join(c.name for c in m.tool_calls)}" for m in thread.messages]


def test_a_call_that_resends_the_thread_extends_it() -> None:
    threads = merge(
        [
            call("L1", [SYSTEM, USER], [ASKS]),
            call("L2", [SYSTEM, USER, ASKS_AGAIN, RESULT], [ANSWER]),
        ]
    )
    assert len(threads) == 1
    assert threads[0].messages == [SYSTEM, USER, ASKS, RESULT, ANSWER]
    assert threads[0].output_heads == {2: "L1", 4: "L2"}
    assert threads[0].calls == 2


def test_equality_ignores_whitespace_and_reasoning_but_not_role_or_tool_names() -> None:
    resent = Message("user", "  Weather\n in   Paris? ")
    thought = Message("assistant", "Sure.", reasoning="the user wants weather")
    threads = merge(
        [
            call("L1", [USER], [thought]),
            call("L2", [resent, Message("assistant", "Sure."), Message("user", "thanks")], [ANSWER]),
        ]
    )
    assert len(threads) == 1
    assert texts(threads[0]) == [
        "user:Weather in Paris?",
        "assistant:Sure.",
        "user:thanks",
        f"assistant:{ANSWER.text}",
    ]
    other_tool = Message("assistant", tool_calls=(ToolCall(None, "get_time", {}),))
    same_tool = Message("assistant", tool_calls=(ToolCall(None, "get_weather", {}),))
    split = merge([call("L1", [USER], [same_tool]), call("L2", [USER, other_tool], [ANSWER])])
    assert len(split) == 2


def test_tool_messages_with_ids_compare_by_id_and_calls_by_their_id_sets() -> None:
    reworded = Message("tool", "rainy and 14C", tool_call_id="call_1")
    threads = merge(
        [
            call("L1", [USER], [ASKS]),
            call("L2", [USER, ASKS_AGAIN, RESULT], [Message("assistant", "More?")]),
            call(
                "L3", [USER, ASKS, reworded, Message("assistant", "More?"), Message("user", "no")], [ANSWER]
            ),
        ]
    )
    assert len(threads) == 1
    assert [m.text for m in threads[0].messages][-2:] == ["no", ANSWER.text]


def test_the_longest_thread_that_prefixes_the_input_wins() -> None:
    router = call("R", [USER], [Message("assistant", "weather")])
    threads = merge(
        [
            router,
            call("L1", [SYSTEM, USER], [ASKS]),
            call("L2", [SYSTEM, USER, ASKS, RESULT], [ANSWER]),
        ]
    )
    assert [len(t.messages) for t in threads] == [2, 5]


def test_a_trimmed_history_continues_from_the_last_occurrence_of_the_thread_end() -> None:
    first = Message("user", "first question")
    reply = Message("assistant", "first reply")
    later = Message("user", "second question")
    threads = merge(
        [
            call("L1", [SYSTEM, first], [reply]),
            call("L2", [Message("system", "Summary: user asked a first question."), reply, later], [ANSWER]),
        ]
    )
    assert len(threads) == 1
    assert threads[0].messages == [SYSTEM, first, reply, later, ANSWER]


def test_the_latest_anchor_in_the_input_wins() -> None:
    yes = Message("assistant", "yes")
    threads = merge(
        [
            call("A", [Message("user", "a?")], [yes]),
            call("B", [Message("user", "b?")], [Message("assistant", "no")]),
            call(
                "C",
                [
                    Message("user", "x"),
                    Message("assistant", "no"),
                    Message("user", "y"),
                    yes,
                    Message("user", "z"),
                ],
                [ANSWER],
            ),
        ]
    )
    assert [texts(t)[-2:] for t in threads] == [
        ["user:z", f"assistant:{ANSWER.text}"],
        ["user:b?", "assistant:no"],
    ]


def test_an_input_opening_with_results_of_a_threads_last_calls_continues_it() -> None:
    threads = merge(
        [
            call("R1", [USER], [ASKS]),
            call("R2", [RESULT], [ANSWER]),
        ]
    )
    assert len(threads) == 1
    assert threads[0].messages == [USER, ASKS, RESULT, ANSWER]
    nameless = Message("tool", "rainy", name="get_weather")
    by_name = merge([call("R1", [USER], [Message("assistant", tool_calls=(ToolCall(None, "get_weather"),))]),
                     call("R2", [nameless], [ANSWER])])  # fmt: skip
    assert len(by_name) == 1
    stranger = merge(
        [call("R1", [USER], [ASKS]), call("R2", [Message("tool", "x", tool_call_id="call_9")], [ANSWER])]
    )
    assert len(stranger) == 2


def test_a_stateless_continuation_joins_the_only_thread() -> None:
    follow = Message("user", "And tomorrow?")
    joined = merge([call("R1", [USER], [ANSWER]), call("R2", [follow], [ANSWER], stateless=True)])
    assert len(joined) == 1
    assert joined[0].messages == [USER, ANSWER, follow, ANSWER]
    not_stated = merge([call("R1", [USER], [ANSWER]), call("R2", [follow], [ANSWER])])
    assert len(not_stated) == 2
    two = merge(
        [
            call("R1", [USER], [ANSWER]),
            call("R2", [Message("user", "other")], [ANSWER]),
            call("R3", [follow], [ANSWER], stateless=True),
        ]
    )
    assert len(two) == 3


def test_calls_without_messages_make_no_thread() -> None:
    assert merge([call("L1", [], [])]) == []


def test_primary_is_the_only_thread_ending_in_the_run_output() -> None:
    router = call("R", [Message("system", "Route."), USER], [Message("assistant", "weather")], end=1)
    threads = merge([router, call("L1", [SYSTEM, USER], [ANSWER], end=2)])
    assert primary(threads, " It is rainy,\n14 °C. ").created == 1
    assert primary(threads, "weather").created == 0


def test_primary_falls_back_to_most_calls_then_latest_call_then_first_created() -> None:
    a = call("A1", [Message("user", "a")], [Message("assistant", "a1")], end=5)
    a2 = call("A2", [Message("user", "a"), Message("assistant", "a1"), Message("user", "b")], [ANSWER], end=6)
    b = call("B1", [Message("user", "z")], [ANSWER], end=9)
    assert primary(merge([a, a2, b]), None).created == 0
    assert primary(merge([a, b]), None).created == 1
    assert primary(merge([a, b]), ANSWER.text).created == 1
    tied = [
        call("A1", [Message("user", "a")], [ANSWER], end=5),
        call("B1", [Message("user", "b")], [ANSWER], end=5),
    ]
    assert primary(merge(tied), "nothing like it").created == 0


def test_with_many_threads_calls_still_find_theirs() -> None:
    independent = [
        call(f"R{i}", [Message("user", f"q{i}")], [Message("assistant", f"a{i}")]) for i in range(10)
    ]
    asks = Message("assistant", tool_calls=(ToolCall("c7", "lookup"),))
    threads = merge(
        [
            *independent,
            call(
                "X", [Message("user", "q3"), Message("assistant", " a3 "), Message("user", "more")], [ANSWER]
            ),
            call(
                "Y",
                [Message("system", "Summary."), Message("assistant", "a5"), Message("user", "and?")],
                [asks],
            ),
            call("Z", [Message("tool", "found", tool_call_id="c7")], [Message("assistant", "Found it.")]),
        ]
    )
    assert len(threads) == 10
    assert texts(threads[3]) == ["user:q3", "assistant:a3", "user:more", f"assistant:{ANSWER.text}"]
    assert texts(threads[5]) == [
        "user:q5",
        "assistant:a5",
        "user:and?",
        "assistant:lookup",
        "tool:found",
        "assistant:Found it.",
    ]


_pool = st.sampled_from(
    [
        Message("system", "Be brief."),
        Message("user", "hi"),
        Message("user", " hi\n"),
        Message("user", "bye"),
        Message("assistant", "hello there"),
        Message("assistant", "hello  there"),
        Message("assistant", tool_calls=(ToolCall("c1", "f"),)),
        Message("assistant", tool_calls=(ToolCall(None, "f"),)),
        Message("tool", "r1", tool_call_id="c1"),
        Message("tool", "r", name="f"),
    ]
)
_calls = st.lists(
    st.builds(
        Call,
        span_id=st.sampled_from(["a", "b"]),
        end_ns=st.integers(0, 3),
        inputs=st.lists(_pool, max_size=5).map(tuple),
        outputs=st.lists(_pool, max_size=2).map(tuple),
        stateless=st.booleans(),
    ),
    max_size=14,
)


@settings(deadline=None)  # a loaded CI machine is not a failure of the rule
@given(_calls)
def test_finding_threads_by_lookup_agrees_with_comparing_each(calls: list[Call]) -> None:
    with patch.object(threads_module, "_COMPARE_ALL_UP_TO", 0):
        by_lookup = [(t.messages, t.output_heads, t.calls) for t in merge(calls)]
    with patch.object(threads_module, "_COMPARE_ALL_UP_TO", 10_000):
        by_comparing = [(t.messages, t.output_heads, t.calls) for t in merge(calls)]
    assert by_lookup == by_comparing


def test_a_thread_without_assistant_text_never_matches_the_run_output() -> None:
    silent = call("A1", [Message("user", "a")], [ASKS], end=9)
    spoken = call("B1", [Message("user", "b")], [ANSWER], end=1)
    assert primary(merge([silent, spoken]), ANSWER.text).created == 1
