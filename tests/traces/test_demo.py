"""The demo data set: deterministic, valid, and shaped like real support-agent traces."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from redline.traces.demo import DEFAULT_NOW, demo_runs
from redline.traces.schemas import RunIn

PROJECT = uuid.UUID("00000000-0000-4000-8000-000000000001")


@pytest.fixture(scope="module")
def runs() -> list[RunIn]:
    return demo_runs(PROJECT)


def test_same_arguments_give_the_same_runs(runs: list[RunIn]) -> None:
    again = demo_runs(PROJECT)
    assert [run.model_dump() for run in again] == [run.model_dump() for run in runs]


def test_another_seed_gives_other_runs(runs: list[RunIn]) -> None:
    other = demo_runs(PROJECT, seed=8)
    assert [run.model_dump() for run in other] != [run.model_dump() for run in runs]


@pytest.mark.parametrize("count", [0, 1, 7, 60])
def test_count_is_honoured(count: int) -> None:
    assert len(demo_runs(PROJECT, count=count)) == count


def test_default_count(runs: list[RunIn]) -> None:
    assert len(runs) == 200


@pytest.mark.parametrize("seed", [7, 1, 42])
def test_about_a_third_are_bad(seed: int) -> None:
    runs = demo_runs(PROJECT, seed=seed)
    bad = sum(1 for run in runs if run.metadata and run.metadata["quality"] == "bad")
    assert 0.2 <= bad / len(runs) <= 0.4


def test_v2_is_better_than_v1(runs: list[RunIn]) -> None:
    def bad_share(version: str) -> float:
        of_version = [run for run in runs if run.agent_version == version]
        return sum(1 for run in of_version if run.metadata and run.metadata["quality"] == "bad") / len(
            of_version
        )

    assert bad_share("v2") < bad_share("v1")


def test_statuses_mix(runs: list[RunIn]) -> None:
    statuses = [run.status for run in runs]
    assert statuses.count("failed") >= 1
    assert statuses.count("running") >= 1
    assert statuses.count("completed") > len(runs) // 2


def test_every_finished_run_ends_with_an_assistant_answer(runs: list[RunIn]) -> None:
    for run in runs:
        if run.status == "running":
            assert run.output is None
            assert run.ended_at is None
            continue
        last = run.steps[-1]
        assert last.role == "assistant"
        assert last.tool_name is None
        assert last.content.strip()
        assert run.output == {"answer": last.content}


def test_tool_results_answer_an_earlier_call(runs: list[RunIn]) -> None:
    for run in runs:
        calls: set[str] = set()
        for step in run.steps:
            if step.role == "assistant" and step.tool_name is not None:
                assert step.tool_call_id is not None
                assert step.tool_input is not None
                calls.add(step.tool_call_id)
            elif step.role == "tool":
                assert step.tool_call_id in calls


def test_runs_are_valid(runs: list[RunIn]) -> None:
    for run in runs:
        # Round-tripping through the wire format runs every validator again.
        RunIn.model_validate(run.model_dump(by_alias=True))


def test_external_ids_are_unique(runs: list[RunIn]) -> None:
    ids = [run.external_id for run in runs]
    assert len(set(ids)) == len(ids)
    assert ids[0] == "demo-0000"


def test_run_shape(runs: list[RunIn]) -> None:
    for index, run in enumerate(runs):
        assert run.project_id == PROJECT
        assert run.agent == "support-agent"
        assert run.agent_version == ("v1" if index % 2 == 0 else "v2")
        assert run.version_source == "pinned"
        assert run.metadata is not None
        assert run.metadata["demo"] is True
        assert run.metadata["channel"] in {"chat", "email"}
        assert isinstance(run.input, dict)
        assert set(run.input) == {"customer", "message"}
        assert run.steps[0].role == "system"
        assert run.steps[1].role == "user"


def test_times_fall_in_the_two_weeks_before_now(runs: list[RunIn]) -> None:
    for run in runs:
        assert run.started_at is not None
        assert DEFAULT_NOW - timedelta(days=14) <= run.started_at < DEFAULT_NOW
        if run.ended_at is not None:
            assert run.started_at <= run.ended_at <= DEFAULT_NOW


def test_now_moves_the_window() -> None:
    now = datetime(2025, 3, 1, tzinfo=UTC)
    for run in demo_runs(PROJECT, count=20, now=now):
        assert run.started_at is not None
        assert now - timedelta(days=14) <= run.started_at < now


def test_naive_now_is_refused() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        demo_runs(PROJECT, count=1, now=datetime(2026, 1, 1))  # noqa: DTZ001 - naive on purpose


def test_spans_hang_off_one_agent_span(runs: list[RunIn]) -> None:
    for run in runs:
        root, *children = run.spans
        assert (root.kind, root.name, root.parent_span_id) == ("agent", "support-agent", None)
        assert children
        for span in children:
            assert span.parent_span_id == root.span_id
            assert span.kind in {"llm", "tool"}
            assert span.attributes is not None
            if span.kind == "llm":
                assert span.name == "chat gpt-4o-mini"
                assert set(span.attributes) == {"model", "prompt_tokens", "completion_tokens"}
        tool_calls = [step.tool_name for step in run.steps if step.role == "assistant" and step.tool_name]
        assert [span.name for span in children if span.kind == "tool"] == tool_calls
        model_calls = [step for step in run.steps if step.role == "assistant"]
        assert sum(1 for span in children if span.kind == "llm") == len(model_calls)


def test_bad_runs_include_the_expected_mistakes(runs: list[RunIn]) -> None:
    unchecked_refunds = 0
    for run in runs:
        tools = [step.tool_name for step in run.steps if step.role == "assistant" and step.tool_name]
        if "issue_refund" in tools and "lookup_order" not in tools:
            unchecked_refunds += 1
            assert run.metadata is not None
            assert run.metadata["quality"] == "bad"
    assert unchecked_refunds >= 1


def test_each_bad_run_names_its_flaw(runs: list[RunIn]) -> None:
    """The flaw a run was made with is in its metadata, so the demo's corrections can say what went wrong."""
    flaws = {"no_lookup", "non_refundable", "wrong_amount", "hallucinated_date", "repeated_question", "rude"}
    for run in runs:
        assert run.metadata is not None
        flaw = run.metadata["flaw"]
        if run.status == "failed" or run.metadata["quality"] == "good":
            assert flaw is None
        else:
            assert flaw in flaws
    assert {run.metadata["flaw"] for run in runs if run.metadata} == {None, *flaws}
