"""A replay against a correction's shouldCall and mustNotCall, as the rule in the spec says."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from redline.corrections.replay import ReplayVerdict, check_replay

Entry = dict[str, Any]


def _call(tool: str, args: dict[str, Any] | None = None, *, refused: bool = False) -> Entry:
    call: Entry = {"tool": tool, "refused": refused}
    if args is not None:
        call["args"] = args
    return call


def _listed(tool: str, args: dict[str, Any] | None = None) -> Entry:
    return {"tool": tool} if args is None else {"tool": tool, "args": args}


# --- The rule's examples ------------------------------------------------------------------------


def test_calls_match_listed_calls_in_any_order() -> None:
    should = [_listed("acme.lookup", {"id": 1}), _listed("acme.refund", {"amount": 5})]
    calls = [_call("acme.refund", {"amount": 5}), _call("acme.lookup", {"id": 1})]
    assert check_replay(should, [], calls) == ReplayVerdict(right=True, problems=())


def test_a_tool_listed_twice_needs_two_calls() -> None:
    should = [_listed("acme.refund"), _listed("acme.refund")]
    once = check_replay(should, [], [_call("acme.refund")])
    assert once == ReplayVerdict(
        right=False, problems=('"acme.refund" was called 1 time; the correction lists it 2 times.',)
    )
    assert check_replay(should, [], [_call("acme.refund"), _call("acme.refund")]).right


def test_more_calls_than_listed_is_wrong() -> None:
    verdict = check_replay([_listed("acme.refund")], [], [_call("acme.refund")] * 2)
    assert verdict.problems == ('"acme.refund" was called 2 times; the correction lists it 1 time.',)


def test_a_listed_tool_never_called_is_wrong() -> None:
    verdict = check_replay([_listed("acme.refund", {"amount": 5})], [], [_call("acme.lookup")])
    assert verdict.problems == ('"acme.refund" was called 0 times; the correction lists it 1 time.',)


@pytest.mark.parametrize("listed_args", [None, {}])
@pytest.mark.parametrize("call_args", [None, {}, {"amount": 5, "reason": {"code": "late"}}])
def test_no_args_or_empty_args_match_any_call(
    listed_args: dict[str, Any] | None, call_args: dict[str, Any] | None
) -> None:
    assert check_replay([_listed("acme.refund", listed_args)], [], [_call("acme.refund", call_args)]).right


def test_null_args_on_a_call_are_no_arguments() -> None:
    call = {"tool": "acme.refund", "args": None}
    assert check_replay([_listed("acme.refund")], [], [call]).right
    assert not check_replay([_listed("acme.refund", {"amount": 5})], [], [call]).right


def test_each_given_field_must_equal_the_calls_argument() -> None:
    should = [_listed("acme.refund", {"amount": 5, "currency": "EUR"})]
    assert check_replay(should, [], [_call("acme.refund", {"amount": 5, "currency": "EUR"})]).right
    wrong = check_replay(should, [], [_call("acme.refund", {"amount": 5, "currency": "USD"})])
    assert wrong == ReplayVerdict(
        right=False, problems=('"acme.refund" was called with arguments the listed call does not match.',)
    )


def test_a_given_field_missing_from_the_call_does_not_match() -> None:
    assert not check_replay([_listed("t", {"note": None})], [], [_call("t", {})]).right
    assert check_replay([_listed("t", {"note": None})], [], [_call("t", {"note": None})]).right


def test_extra_fields_in_the_calls_args_are_fine() -> None:
    should = [_listed("acme.refund", {"amount": 5})]
    assert check_replay(should, [], [_call("acme.refund", {"amount": 5, "reason": "late", "x": [1]})]).right


def test_nested_values_are_compared_whole() -> None:
    should = [_listed("t", {"order": {"id": 7}, "tags": ["a", "b"]})]
    assert check_replay(should, [], [_call("t", {"order": {"id": 7}, "tags": ["a", "b"]})]).right
    # A nested object with more fields, or an array in another order, is a different value.
    assert not check_replay(should, [], [_call("t", {"order": {"id": 7, "x": 1}, "tags": ["a", "b"]})]).right
    assert not check_replay(should, [], [_call("t", {"order": {"id": 7}, "tags": ["b", "a"]})]).right
    assert not check_replay(should, [], [_call("t", {"order": {"id": 7}, "tags": ["a"]})]).right


@pytest.mark.parametrize(
    ("listed", "given_value"),
    [(True, 1), (1, True), (False, 0), (0, False), (1.0, True), ([1], [True]), ({"k": 0}, {"k": False})],
)
def test_a_boolean_never_equals_a_number(listed: Any, given_value: Any) -> None:
    assert not check_replay([_listed("t", {"v": listed})], [], [_call("t", {"v": given_value})]).right


@pytest.mark.parametrize(("listed", "given_value"), [(1, 1.0), (1.0, 1), ([2, {"n": 3}], [2.0, {"n": 3.0}])])
def test_numbers_are_one_json_type(listed: Any, given_value: Any) -> None:
    assert check_replay([_listed("t", {"v": listed})], [], [_call("t", {"v": given_value})]).right


def test_strings_and_null_are_not_numbers() -> None:
    assert not check_replay([_listed("t", {"v": "1"})], [], [_call("t", {"v": 1})]).right
    assert not check_replay([_listed("t", {"v": None})], [], [_call("t", {"v": 0})]).right
    assert not check_replay([_listed("t", {"v": []})], [], [_call("t", {"v": {}})]).right


def test_a_must_not_call_tool_called_is_wrong() -> None:
    verdict = check_replay([], ["acme.delete"], [_call("acme.delete", {"id": 1})])
    assert verdict == ReplayVerdict(
        right=False, problems=('"acme.delete" must not be called, and was called 1 time.',)
    )
    assert check_replay([], ["acme.delete"], [_call("acme.lookup")]).right


def test_a_refused_call_counts_as_called_for_must_not_call() -> None:
    calls = [_call("acme.delete", refused=True), _call("acme.delete")]
    verdict = check_replay([], ["acme.delete"], calls)
    assert verdict.problems == ('"acme.delete" must not be called, and was called 2 times (1 refused).',)


def test_a_refused_call_counts_as_called_for_should_call() -> None:
    should = [_listed("acme.refund", {"amount": 5})]
    assert check_replay(should, [], [_call("acme.refund", {"amount": 5}, refused=True)]).right
    extra = [_call("acme.refund", {"amount": 5}), _call("acme.refund", refused=True)]
    assert not check_replay(should, [], extra).right


def test_tools_in_neither_list_are_ignored() -> None:
    should = [_listed("acme.refund")]
    calls = [_call("acme.lookup"), _call("acme.refund"), _call("acme.lookup", {"x": 1}, refused=True)]
    assert check_replay(should, ["acme.delete"], calls).right
    assert check_replay([], [], calls).right


def test_a_call_matching_only_an_already_used_listed_call_is_wrong() -> None:
    should = [_listed("t", {"a": 1}), _listed("t", {"a": 2})]
    verdict = check_replay(should, [], [_call("t", {"a": 1}), _call("t", {"a": 1})])
    assert verdict.problems == (
        '"t" was called 2 times as listed, '
        "but its calls' arguments do not match the listed calls one to one.",
    )


def test_a_pairing_first_fit_misses_is_found() -> None:
    # First-fit gives the first call to {"a": 1}, leaving {"a": 1} with nothing but {"b": 2}.
    should = [_listed("t", {"a": 1}), _listed("t", {"b": 2})]
    assert check_replay(should, [], [_call("t", {"a": 1, "b": 2}), _call("t", {"a": 1})]).right


def test_problems_come_in_list_order() -> None:
    should = [_listed("b.second"), _listed("a.first", {"x": 1}), _listed("b.second")]
    calls = [_call("a.first", {"x": 2}), _call("z.never"), _call("y.never")]
    verdict = check_replay(should, ["z.never", "y.never", "z.never"], calls)
    assert verdict == ReplayVerdict(
        right=False,
        problems=(
            '"b.second" was called 0 times; the correction lists it 2 times.',
            '"a.first" was called with arguments the listed call does not match.',
            '"z.never" must not be called, and was called 1 time.',
            '"y.never" must not be called, and was called 1 time.',
        ),
    )


def test_nothing_asked_and_nothing_called_is_right() -> None:
    assert check_replay([], [], []) == ReplayVerdict(right=True, problems=())


# --- Properties ---------------------------------------------------------------------------------

SHOULD_TOOLS = ["s.a", "s.b", "s.c"]
MUST_NOT_TOOLS = ["m.x", "m.y"]
OTHER_TOOLS = ["o.p", "o.q"]
KEYS = ["a", "b", "c"]

# Few, colliding values, so generated calls often match listed ones and often nearly do.
small_json = st.recursive(
    st.none() | st.booleans() | st.sampled_from([0, 1, 1.0, 2.5, "x", "y"]),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=2),
    max_leaves=4,
)
small_args = st.dictionaries(st.sampled_from(KEYS), small_json, max_size=2)
any_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6,
)


@st.composite
def listed_entries(draw: st.DrawFn) -> list[Entry]:
    return draw(
        st.lists(
            st.builds(_listed, st.sampled_from(SHOULD_TOOLS), st.none() | small_args),
            max_size=6,
        )
    )


@st.composite
def any_calls(draw: st.DrawFn, tools: Sequence[str]) -> list[Entry]:
    return draw(
        st.lists(
            st.builds(_call, st.sampled_from(list(tools)), st.none() | small_args, refused=st.booleans()),
            max_size=8,
        )
    )


@st.composite
def satisfied(draw: st.DrawFn) -> tuple[list[Entry], list[str], list[Entry]]:
    """A correction and a replay that makes exactly one call per listed entry, each with the listed
    args plus fields of its own, shuffled, and nothing to a mustNotCall tool."""
    should = draw(listed_entries())
    calls = []
    for entry in should:
        own = draw(st.dictionaries(st.sampled_from(["d", "e"]), any_json, max_size=2))
        calls.append(_call(entry["tool"], {**own, **entry.get("args", {})}, refused=draw(st.booleans())))
    must_not = draw(st.lists(st.sampled_from(MUST_NOT_TOOLS), max_size=3))
    return should, must_not, draw(st.permutations(calls))


@settings(deadline=None)  # Pure and quick; timing on a shared machine is only noise.
@given(
    should=listed_entries(),
    must_not=st.lists(st.sampled_from(MUST_NOT_TOOLS), max_size=2),
    calls=any_calls(SHOULD_TOOLS + MUST_NOT_TOOLS + OTHER_TOOLS),
    data=st.data(),
)
def test_permuting_the_calls_never_changes_the_verdict(
    should: list[Entry], must_not: list[str], calls: list[Entry], data: st.DataObject
) -> None:
    shuffled = data.draw(st.permutations(calls))
    assert check_replay(should, must_not, shuffled) == check_replay(should, must_not, calls)


@settings(deadline=None)  # Pure and quick; timing on a shared machine is only noise.
@given(case=satisfied())
def test_one_matching_call_per_listed_entry_is_right(
    case: tuple[list[Entry], list[str], list[Entry]],
) -> None:
    should, must_not, calls = case
    assert check_replay(should, must_not, calls) == ReplayVerdict(right=True, problems=())


@settings(deadline=None)  # Pure and quick; timing on a shared machine is only noise.
@given(case=satisfied(), data=st.data())
def test_one_call_too_many_to_a_listed_tool_is_wrong(
    case: tuple[list[Entry], list[str], list[Entry]], data: st.DataObject
) -> None:
    should, must_not, calls = case
    tool = data.draw(st.sampled_from([entry["tool"] for entry in should])) if should else "s.a"
    if not should:
        should = [_listed(tool)]
        calls = [_call(tool)]
    extra = data.draw(st.builds(_call, st.just(tool), st.none() | small_args, refused=st.booleans()))
    position = data.draw(st.integers(0, len(calls)))
    verdict = check_replay(should, must_not, [*calls[:position], extra, *calls[position:]])
    assert not verdict.right
    listed_count = sum(entry["tool"] == tool for entry in should)
    assert verdict.problems == (
        f'"{tool}" was called {listed_count + 1} times; the correction lists it '
        f"{listed_count} time{'' if listed_count == 1 else 's'}.",
    )


@settings(deadline=None)  # Pure and quick; timing on a shared machine is only noise.
@given(
    should=listed_entries(),
    must_not=st.lists(st.sampled_from(MUST_NOT_TOOLS), min_size=1, max_size=2),
    calls=any_calls(SHOULD_TOOLS + OTHER_TOOLS),
    data=st.data(),
)
def test_any_call_to_a_must_not_call_tool_is_wrong(
    should: list[Entry], must_not: list[str], calls: list[Entry], data: st.DataObject
) -> None:
    tool = data.draw(st.sampled_from(must_not))
    extra = data.draw(st.builds(_call, st.just(tool), st.none() | small_args, refused=st.booleans()))
    position = data.draw(st.integers(0, len(calls)))
    verdict = check_replay(should, must_not, [*calls[:position], extra, *calls[position:]])
    assert not verdict.right
    assert any(problem.startswith(f'"{tool}" must not be called') for problem in verdict.problems)


@settings(deadline=None)  # Pure and quick; timing on a shared machine is only noise.
@given(
    should=listed_entries(),
    must_not=st.lists(st.sampled_from(MUST_NOT_TOOLS), max_size=2),
    calls=any_calls(SHOULD_TOOLS + MUST_NOT_TOOLS),
    others=any_calls(OTHER_TOOLS),
    data=st.data(),
)
def test_calls_to_unnamed_tools_never_change_the_verdict(
    should: list[Entry], must_not: list[str], calls: list[Entry], others: list[Entry], data: st.DataObject
) -> None:
    mixed = data.draw(st.permutations(calls + others))
    assert check_replay(should, must_not, mixed) == check_replay(should, must_not, calls)


def _first_fit(calls: Sequence[Mapping[str, Any]], listed: Sequence[Mapping[str, Any]]) -> bool:
    """What a greedy check would say: each call, in order, takes the first free listed call it fits."""
    free = list(listed)
    for call in calls:
        fit = next((args for args in free if all(k in call and call[k] == v for k, v in args.items())), None)
        if fit is None:
            return False
        free.remove(fit)
    return True


@settings(deadline=None)  # Pure and quick; timing on a shared machine is only noise.
@given(
    values=st.lists(st.sampled_from([0, "x", None, [1], {"a": 2}]), min_size=1, max_size=4),
    loose=st.integers(1, 3),
)
def test_a_perfect_pairing_greedy_misses_is_right(values: list[Any], loose: int) -> None:
    # Loose listed calls first, strict ones after; calls that fit the strict ones come first and
    # would use up the loose ones, leaving the calls with no "key" argument nothing to fit.
    listed: list[dict[str, Any]] = [{}] * loose + [{"key": value} for value in values]
    call_args = [{"key": value, "more": True} for value in values] + [{"other": n} for n in range(loose)]
    assert not _first_fit(call_args, listed)
    should = [_listed("t", args) for args in listed]
    assert check_replay(should, [], [_call("t", args) for args in call_args]).right
