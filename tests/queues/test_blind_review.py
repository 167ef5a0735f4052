"""Blind review over HTTP, on both stores: on a queue of two reviewers per item, bram (a reviewer who has
not saved his own values) reads none of anouk's on the item on any surface — the rm surface's trace,
annotations and export, /v3's trace and search, /v2's agreement — until he has saved his; an admin, the
CLI's local operator and someone who may not review the queue read them throughout; a queue that is
not blind hides nothing; a value under a key the queue doesn't ask, on another place of the trace, or
on another trace, stays in sight; half a review (one of two keys) is not a review. And what it costs:
nothing for an admin, one query for anyone else."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
from click.testing import CliRunner
from sqlalchemy import event

from redline.cli.main import cli
from redline.identity import service as identity
from redline.queues.annotation.blind import blindness, hidden_from
from tests.conftest import Harness
from tests.console.conftest import bearer, console_client
from tests.queues.blind_seed import NOTE, RATING, Blind, principal_id, review, seed_blind
from tests.samples import make_run
from tests.stats.agreement_seed import ADMIN, ok

RM = "/api/v1/rm"


def _rm_values(harness: Harness, seeded: Blind, headers: dict[str, str]) -> dict[str, list[Any]]:
    """Who said what on the trace, as each of the rm surface's readers shows it: the trace's annotations,
    the trace's page, and the export's lines on it (which carry no value: who, only)."""
    listed = ok(harness.client.get(f"{RM}/traces/{seeded.trace_id}/annotations", headers=headers))
    whole = ok(harness.client.get(f"{RM}/traces/{seeded.trace_id}", headers=headers))["annotations"]
    exported = harness.client.get(f"{RM}/export/annotations", headers=headers)
    assert exported.status_code == 200, exported.text
    lines = [orjson.loads(line) for line in exported.content.splitlines()]
    return {
        "listed": sorted((one["author_name"], one["value"]) for one in listed),
        "trace": sorted((one["author_name"], one["value"]) for one in whole),
        "export": sorted(line["author"] for line in lines if line["trace_id"] == seeded.trace_id),
    }


def _rm_saw(*said: tuple[str, str]) -> dict[str, list[Any]]:
    return {"listed": sorted(said), "trace": sorted(said), "export": sorted(who for who, _ in said)}


def test_the_rm_surface_hides_the_others_values_until_the_reviewer_has_saved(harness: Harness) -> None:
    seeded = seed_blind(harness.client, harness.project_id)
    review(harness.client, seeded, "anouk", rating="bad")
    bram, rita = seeded.people["bram"], seeded.people["rita"]
    assert _rm_values(harness, seeded, bram) == _rm_saw()
    assert _rm_values(harness, seeded, ADMIN) == _rm_saw(("anouk", "bad"))
    assert _rm_values(harness, seeded, rita) == _rm_saw(("anouk", "bad"))
    # His own values are his to see at once; everyone's once he has reviewed the item.
    review(harness.client, seeded, "bram", rating="good")
    assert _rm_values(harness, seeded, bram) == _rm_saw(("anouk", "bad"), ("bram", "good"))
    assert _rm_values(harness, seeded, seeded.people["anouk"]) == _rm_saw(("anouk", "bad"), ("bram", "good"))
    # carl, the queue's third possible reviewer, still sees neither: the item is full, but he hasn't.
    assert _rm_values(harness, seeded, seeded.people["carl"]) == _rm_saw()


def _v3_values(harness: Harness, trace_id: str, headers: dict[str, str]) -> list[tuple[Any, ...]]:
    """Who said what on the trace and its spans (the span's own id, None for the trace), as /v3 reads it."""
    said = ok(harness.client.get(f"/v3/traces/{trace_id}", headers=headers))["trace"]["annotations"]
    return sorted((one["author_name"], one["value"], one["span_id"] or "") for one in said)


def _searched(harness: Harness, headers: dict[str, str]) -> dict[str, list[tuple[Any, ...]]]:
    body = {"from": "2000-01-01T00:00:00Z", "to": "2100-01-01T00:00:00Z", "limit": 10}
    page = ok(harness.client.post("/v3/traces/search", json=body, headers=headers))
    return {
        trace["trace_id"]: sorted(
            (one["author_name"], one["value"], one["span_id"] or "") for one in trace["annotations"]
        )
        for trace in page["data"]
    }


def test_v3_hides_them_on_the_items_place_and_key_alone(harness: Harness) -> None:
    seeded = seed_blind(harness.client, harness.project_id)
    review(harness.client, seeded, "anouk", rating="bad")
    anouk, bram = seeded.people["anouk"], seeded.people["bram"]
    # anouk's values under a key the queue doesn't ask, on a span of the item's trace (the item is the
    # whole trace) and on a trace that is no item of the queue stay in sight.
    ok(
        harness.client.post(
            "/v2/human-reviews", json={**NOTE, "project_id": harness.project_id}, headers=ADMIN
        )
    )
    other = ok(harness.client.post("/v1/runs", json=make_run(harness.project_id), headers=ADMIN))["id"]
    as_anouk = console_client(harness, bearer(anouk))
    saves = (
        (seeded.trace_id, seeded.trace_id, {"key": "note", "value": "Refunded without asking why"}),
        (other, other, {"key": "rating", "value": "good"}),
        (seeded.trace_id, "llm", {"key": "rating", "value": "good"}),
    )
    for trace_id, span, value in saves:
        assert as_anouk.save(f"/ui/traces/{trace_id}/spans/{span}/values", value).status_code == 200
    in_sight = [("anouk", "Refunded without asking why", ""), ("anouk", "good", "llm")]
    assert _v3_values(harness, seeded.trace_id, bram) == in_sight
    assert _v3_values(harness, other, bram) == [("anouk", "good", "")]
    assert _searched(harness, bram) == {seeded.trace_id: in_sight, other: [("anouk", "good", "")]}
    assert _v3_values(harness, seeded.trace_id, ADMIN) == sorted([*in_sight, ("anouk", "bad", "")])
    review(harness.client, seeded, "bram", rating="good")
    everything = sorted([*in_sight, ("anouk", "bad", ""), ("bram", "good", "")])
    assert _v3_values(harness, seeded.trace_id, bram) == everything
    assert _searched(harness, bram)[seeded.trace_id] == everything


def test_a_span_item_hides_the_values_on_its_span_alone(harness: Harness) -> None:
    seeded = seed_blind(harness.client, harness.project_id, span="llm")
    review(harness.client, seeded, "anouk", rating="bad")
    # anouk's word on the agent's span and on the whole trace, under the same key, stays in sight.
    as_anouk = console_client(harness, bearer(seeded.people["anouk"]))
    for span in ("root", seeded.trace_id):
        path = f"/ui/traces/{seeded.trace_id}/spans/{span}/values"
        assert as_anouk.save(path, {"key": "rating", "value": "good"}).status_code == 200
    in_sight = [("anouk", "good", ""), ("anouk", "good", "root")]
    assert _v3_values(harness, seeded.trace_id, seeded.people["bram"]) == in_sight
    review(harness.client, seeded, "bram", rating="good")
    assert _v3_values(harness, seeded.trace_id, seeded.people["bram"]) == sorted(
        [*in_sight, ("anouk", "bad", "llm"), ("bram", "good", "llm")]
    )


def test_half_a_review_is_not_a_review(harness: Harness) -> None:
    seeded = seed_blind(harness.client, harness.project_id, keys=(RATING, NOTE))
    review(harness.client, seeded, "anouk", rating="bad", note="Refunded without asking why")
    review(harness.client, seeded, "bram", rating="good")
    assert _v3_values(harness, seeded.trace_id, seeded.people["bram"]) == [("bram", "good", "")]
    review(harness.client, seeded, "bram", note="Fine")
    assert _v3_values(harness, seeded.trace_id, seeded.people["bram"]) == [
        ("anouk", "Refunded without asking why", ""),
        ("anouk", "bad", ""),
        ("bram", "Fine", ""),
        ("bram", "good", ""),
    ]


def _agreement(harness: Harness, seeded: Blind, headers: dict[str, str]) -> tuple[int, int]:
    answer = ok(harness.client.get(f"/v2/annotation-queues/{seeded.queue_id}/agreement", headers=headers))
    [rating] = answer["keys"]
    return rating["items"], rating["values"]


def test_v2_agreement_counts_only_what_the_reader_may_see(harness: Harness) -> None:
    seeded = seed_blind(harness.client, harness.project_id, places=3)
    review(harness.client, seeded, "anouk", rating="bad")
    review(harness.client, seeded, "carl", rating="good")
    bram = seeded.people["bram"]
    # Two values on the item: the admin and rita count it; bram, who has not reviewed it, counts nothing.
    assert _agreement(harness, seeded, ADMIN) == (1, 2)
    assert _agreement(harness, seeded, seeded.people["rita"]) == (1, 2)
    assert _agreement(harness, seeded, bram) == (0, 0)
    review(harness.client, seeded, "bram", rating="good")
    assert _agreement(harness, seeded, bram) == (1, 3)


def test_the_cli_export_runs_as_the_local_operator_who_sees_them_all(
    harness: Harness, database_url: str, tmp_path: Path
) -> None:
    seeded = seed_blind(harness.client, harness.project_id)
    review(harness.client, seeded, "anouk", rating="bad")
    out = tmp_path / "annotations.ndjson"
    result = CliRunner().invoke(
        cli, ["--database-url", database_url, "annotations", "export", "--output", str(out)]
    )
    assert result.exit_code == 0, result.output
    lines = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    assert [line["author"] for line in lines if line["trace_id"] == seeded.trace_id] == ["anouk"]


def test_a_queue_that_is_not_blind_hides_nothing(harness: Harness) -> None:
    seeded = seed_blind(harness.client, harness.project_id, blind=False)
    review(harness.client, seeded, "anouk", rating="bad")
    assert _rm_values(harness, seeded, seeded.people["bram"]) == _rm_saw(("anouk", "bad"))
    assert _v3_values(harness, seeded.trace_id, seeded.people["bram"]) == [("anouk", "bad", "")]


def test_a_writer_the_queue_does_not_name_sees_them(harness: Harness) -> None:
    seeded = seed_blind(harness.client, harness.project_id)
    named_ids = [principal_id(harness.client, seeded.people[name]) for name in ("anouk", "bram")]
    named = {"reviewers": {"principal_ids": named_ids}}
    ok(harness.client.patch(f"/v2/annotation-queues/{seeded.queue_id}", json=named, headers=ADMIN))
    review(harness.client, seeded, "anouk", rating="bad")
    assert _v3_values(harness, seeded.trace_id, seeded.people["carl"]) == [("anouk", "bad", "")]
    assert _v3_values(harness, seeded.trace_id, seeded.people["bram"]) == []


@contextmanager
def _statements(harness: Harness) -> Iterator[list[str]]:
    """The SQL statements run on the harness's store meanwhile."""
    seen: list[str] = []

    def record(*arguments: Any) -> None:
        seen.append(arguments[2])

    event.listen(harness.db.engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(harness.db.engine, "before_cursor_execute", record)


def test_what_it_costs_a_reader(harness: Harness) -> None:
    dana = harness.caller("dana", role="write")
    with harness.db.read() as session:
        admin = identity.operator(session)
        writer, _ = identity.authenticate(session, dana["Authorization"].removeprefix("Bearer "))
        with _statements(harness) as seen:
            assert hidden_from(session, admin).shown() == ()
        assert seen == []
        with _statements(harness) as seen:
            assert hidden_from(session, writer).shown() == ()
            # Read once in a session, however many readers ask.
            assert hidden_from(session, writer).shown() == ()
        assert len(seen) == 1
    seeded = seed_blind(harness.client, harness.project_id)
    with harness.db.read() as session:
        actor, _ = identity.authenticate(
            session, seeded.people["bram"]["Authorization"].removeprefix("Bearer ")
        )
        found = blindness(session, actor)
        assert found.blinds(uuid.UUID(seeded.queue_id))
        assert [queue.keys for queue in found.queues] == [("rating",)]
        assert len(hidden_from(session, actor).shown()) == 1
