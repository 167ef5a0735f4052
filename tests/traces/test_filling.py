"""The external ids an import from a shell gives records without one, and the agent it names: ids come
from content and the place among equal records, never from a record's position in the file."""

from __future__ import annotations

import uuid

from hypothesis import given
from hypothesis import strategies as st

from redline.traces.importers.base import Skipped
from redline.traces.importers.filling import content_id, with_agent, with_content_ids
from redline.traces.schemas import RunIn

PROJECT = uuid.UUID("11111111-1111-4111-8111-111111111111")


def _run(text: str, **fields: object) -> RunIn:
    return RunIn.model_validate(
        {"project_id": PROJECT, "status": "completed", "steps": [{"role": "user", "content": text}], **fields}
    )


def _ids(items: list[RunIn | Skipped]) -> list[str | None]:
    return [item.external_id for item in with_content_ids(items) if isinstance(item, RunIn)]


texts = st.lists(st.sampled_from(["hi", "refund 1182", "where is my order", "bye"]), max_size=12)


@given(texts)
def test_ids_are_distinct_and_the_same_every_time(file: list[str]) -> None:
    ids = _ids([_run(text) for text in file])
    assert len(set(ids)) == len(ids)
    assert ids == _ids([_run(text) for text in file])


@given(texts, st.lists(st.sampled_from(["new 1", "new 2", "new 3"]), max_size=4))
def test_records_before_others_dont_change_their_ids(file: list[str], before: list[str]) -> None:
    grown = _ids([_run(text) for text in before + file])
    assert grown[len(before) :] == _ids([_run(text) for text in file])


def test_the_id_is_the_content_then_the_place_among_equals() -> None:
    first = content_id(_run("hi"))
    assert first.startswith("sha256-")
    assert len(first) == len("sha256-") + 32
    assert content_id(_run("hi", title="greeting")) != first
    skipped = Skipped(2, "trace has no steps", "no-steps")
    items: list[RunIn | Skipped] = [
        _run("hi"),
        skipped,
        _run("hi"),
        _run("hi", external_id="own"),
        _run("hi"),
    ]
    assert list(with_content_ids(items))[1] is skipped
    assert _ids(items) == [first, f"{first}-2", "own", f"{first}-3"]
    # The project is not part of the content: the same file gives the same ids in every project.
    elsewhere = RunIn.model_validate({**_run("hi").model_dump(), "project_id": uuid.uuid4()})
    assert content_id(elsewhere) == first


def test_the_agent_fills_in_only_runs_that_name_no_producer() -> None:
    agent_id = uuid.uuid4()
    items: list[RunIn | Skipped] = [
        _run("a"),
        _run("b", agent="billing"),
        _run("c", agent_id=agent_id),
        _run("d", flow="triage"),
        _run("e", agent_version="v9"),
    ]
    filled = [item for item in with_agent(items, "support-bot", "v3") if isinstance(item, RunIn)]
    assert [(run.agent, run.agent_id, run.flow, run.agent_version) for run in filled] == [
        ("support-bot", None, None, "v3"),
        ("billing", None, None, None),
        (None, agent_id, None, None),
        (None, None, "triage", None),
        ("support-bot", None, None, "v9"),
    ]
