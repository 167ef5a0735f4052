"""The queue-rule engine's rules as properties: deterministic, monotone and proportional sampling; each
metadata op's meaning; and a run never queued twice, by hand, by rule, or both (on both stores)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from redline.errors import Invalid
from redline.queues.matching import (
    RunFacts,
    check_metadata_filters,
    check_when,
    matches,
    metadata_matches,
    sampled,
)
from tests.conftest import Harness

uuids = st.uuids()
shares = st.floats(min_value=0.0001, max_value=1.0, allow_nan=False)
numbers = st.one_of(st.integers(-(10**6), 10**6), st.floats(-1e6, 1e6, allow_nan=False))
scalars = st.one_of(st.text(max_size=8), numbers, st.booleans(), st.none())


def _run(**fields: Any) -> RunFacts:
    base: dict[str, Any] = {
        "id": uuid.uuid4(),
        "project_id": uuid.uuid4(),
        "agent_id": uuid.uuid4(),
        "flow_id": None,
        "version": "1.0.0",
        "version_source": "named",
        "status": "completed",
        "dry_run": False,
        "metadata": None,
    }
    return RunFacts(**{**base, **fields})


# ------------------------------------------------------------------------------------------------ sampling


@given(uuids, uuids, shares)
def test_sampling_is_deterministic(rule_id: uuid.UUID, run_id: uuid.UUID, share: float) -> None:
    assert sampled(rule_id, run_id, share) == sampled(rule_id, run_id, share)


@given(uuids, uuids, shares, shares)
def test_a_run_taken_at_a_share_is_taken_at_every_larger_share(
    rule_id: uuid.UUID, run_id: uuid.UUID, low: float, high: float
) -> None:
    low, high = min(low, high), max(low, high)
    if sampled(rule_id, run_id, low):
        assert sampled(rule_id, run_id, high)


@given(uuids, st.floats(min_value=0.05, max_value=0.95))
@settings(max_examples=20, deadline=None)
def test_the_share_taken_is_roughly_the_sample(rule_id: uuid.UUID, share: float) -> None:
    runs = [uuid.UUID(int=n) for n in range(4000)]
    taken = sum(sampled(rule_id, run_id, share) for run_id in runs) / len(runs)
    # Four standard deviations of a binomial share over 4,000 runs is at most 0.032.
    assert abs(taken - share) < 0.035


@given(uuids, uuids)
def test_a_share_of_one_takes_every_run(rule_id: uuid.UUID, run_id: uuid.UUID) -> None:
    assert sampled(rule_id, run_id, 1.0)


# ---------------------------------------------------------------------------------------- metadata ops


@given(st.text(min_size=1, max_size=8), scalars)
def test_equals_and_not_equals_are_opposites_when_the_value_is_there(key: str, value: Any) -> None:
    meta = {key.replace(".", "_"): value}
    path = key.replace(".", "_")
    for target in (value, "other", 7, True):
        eq = metadata_matches({"path": path, "op": "equals", "value": target}, meta)
        ne = metadata_matches({"path": path, "op": "not_equals", "value": target}, meta)
        assert eq != ne


def test_equals_is_json_equality() -> None:
    assert metadata_matches({"path": "n", "op": "equals", "value": 1}, {"n": 1.0})
    assert not metadata_matches({"path": "n", "op": "equals", "value": 1}, {"n": True})
    assert not metadata_matches({"path": "n", "op": "equals", "value": "1"}, {"n": 1})
    assert metadata_matches({"path": "a.b", "op": "equals", "value": "x"}, {"a": {"b": "x"}})
    assert not metadata_matches({"path": "a.b", "op": "equals", "value": "x"}, {"a": "b"})
    assert metadata_matches({"path": "gone", "op": "not_equals", "value": "x"}, {})
    # All the way down: a boolean inside a list or an object is not a number either.
    assert not metadata_matches({"path": "l", "op": "equals", "value": [1, True]}, {"l": [1, 1]})
    assert not metadata_matches({"path": "o", "op": "equals", "value": {"a": True}}, {"o": {"a": 1}})
    assert metadata_matches({"path": "o", "op": "equals", "value": {"a": [1.0]}}, {"o": {"a": [1]}})
    assert not metadata_matches({"path": "gone", "op": "equals", "value": None}, None)


@given(st.text(max_size=10), st.text(max_size=10), st.text(max_size=10))
def test_contains_finds_substrings(before: str, part: str, after: str) -> None:
    assert metadata_matches({"path": "t", "op": "contains", "value": part}, {"t": before + part + after})


@given(st.lists(scalars, max_size=6), scalars)
def test_contains_finds_list_members(values: list[Any], extra: Any) -> None:
    if extra is None:
        return
    flt = {"path": "l", "op": "contains", "value": extra}
    assert metadata_matches(flt, {"l": [*values, extra]})


def test_contains_matches_nothing_else() -> None:
    assert not metadata_matches({"path": "n", "op": "contains", "value": 1}, {"n": 12})
    assert not metadata_matches({"path": "t", "op": "contains", "value": 1}, {"t": "1"})
    assert not metadata_matches({"path": "o", "op": "contains", "value": "a"}, {"o": {"a": 1}})


@given(scalars)
def test_exists_means_there_and_not_null(value: Any) -> None:
    assert metadata_matches({"path": "x", "op": "exists"}, {"x": value}) == (value is not None)
    assert not metadata_matches({"path": "x", "op": "exists"}, {})


@given(numbers, numbers)
def test_numeric_ops_order_numbers(found: float, limit: float) -> None:
    meta = {"n": found}
    assert metadata_matches({"path": "n", "op": "gt", "value": limit}, meta) == (found > limit)
    assert metadata_matches({"path": "n", "op": "gte", "value": limit}, meta) == (found >= limit)
    assert metadata_matches({"path": "n", "op": "lt", "value": limit}, meta) == (found < limit)
    assert metadata_matches({"path": "n", "op": "lte", "value": limit}, meta) == (found <= limit)


@given(st.one_of(st.text(), st.booleans(), st.none(), st.lists(st.integers())), numbers)
def test_numeric_ops_never_match_a_non_number(found: Any, limit: float) -> None:
    for op in ("gt", "gte", "lt", "lte"):
        assert not metadata_matches({"path": "n", "op": op, "value": limit}, {"n": found})


def test_filters_are_checked_with_their_field_named() -> None:
    with pytest.raises(Invalid, match=r"metadata\[0\]\.op"):
        check_metadata_filters([{"path": "a", "op": "like", "value": 1}])
    with pytest.raises(Invalid, match="needs a value"):
        check_metadata_filters([{"path": "a", "op": "equals"}])
    with pytest.raises(Invalid, match="a number"):
        check_metadata_filters([{"path": "a", "op": "lt", "value": True}])
    with pytest.raises(Invalid, match="dotted path"):
        check_metadata_filters([{"path": "a..b", "op": "exists"}])
    with pytest.raises(Invalid, match="not both"):
        check_when({"agentIds": [str(uuid.uuid4())], "flowIds": [str(uuid.uuid4())]})
    with pytest.raises(Invalid, match="stands alone"):
        check_when({"versions": ["pinned", "1.0.0"]})
    with pytest.raises(Invalid, match="not a run status"):
        check_when({"status": ["done"]})


# ----------------------------------------------------------------------------------------- what matches


def test_when_narrows_by_each_field() -> None:
    agent = uuid.uuid4()
    run = _run(agent_id=agent)
    assert matches({}, run)
    assert not matches({}, _run(status="failed"))
    assert matches({"status": ["failed"]}, _run(status="failed"))
    assert not matches({}, _run(dry_run=True))
    assert matches({"includeDryRuns": True}, _run(dry_run=True))
    assert matches({"agentIds": [str(agent)]}, run)
    assert not matches({"agentIds": [str(uuid.uuid4())]}, run)
    assert not matches({"flowIds": [str(uuid.uuid4())]}, run)
    assert matches({"versions": ["1.0.0"]}, run)
    assert not matches({"versions": ["2.0.0"]}, run)
    assert not matches({"versions": ["pinned"]}, run)
    assert matches({"versions": ["pinned"]}, _run(version_source="pinned"))
    assert not matches({"versions": ["pinned"]}, _run(version_source=None))


# ---------------------------------------------------------------------------------- never queued twice


@given(st.lists(st.sampled_from(["hand", "rule-run", "resend"]), min_size=1, max_size=6))
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_run_is_in_a_queue_once_however_it_is_added(harness: Harness, steps: list[str]) -> None:
    queue = harness.client.post(
        "/v2/annotation-queues",
        json={"display_name": f"q-{uuid.uuid4()}", "description": "", "project_id": harness.project_id},
        headers=harness.admin,
    ).json()
    rule = harness.client.post(
        f"/v2/annotation-queues/{queue['_id']}/automations",
        json={"name": "all", "filters": {}},
        headers=harness.admin,
    )
    assert rule.status_code == 200, rule.text
    external = f"run-{uuid.uuid4()}"
    run_id = None
    for step in steps:
        if step == "hand" and run_id is not None:
            answer = harness.client.post(
                f"/v2/annotation-queues/{queue['_id']}/items",
                json={"items": [{"trace_id": run_id, "span_id": run_id}]},
                headers=harness.admin,
            )
            assert answer.status_code == 200, answer.text
        else:
            made = harness.client.post(
                "/v1/runs", json=harness.run(externalId=external), headers=harness.admin
            )
            assert made.status_code == 201, made.text
            run_id = made.json()["id"]
    items = harness.client.get(
        f"/v2/annotation-queues/{queue['_id']}/items", params={"limit": 200}, headers=harness.admin
    ).json()["data"]
    assert len(items) == 1
