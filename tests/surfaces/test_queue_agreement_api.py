"""GET /v2/annotation-queues/{id}/agreement over HTTP, on both stores: Krippendorff's (2011) worked example
seeded as four people's review values on twelve queue items answers the paper's α, with κ per pair of
reviewers, the share agreed and the sentences; too few items say so; a span item counts its span's values
only; a person's later value replaces their earlier one; readers may read it and others can't see it."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import Harness
from tests.samples import make_run
from tests.stats.agreement_seed import (
    ADMIN,
    INTERVAL,
    NOMINAL,
    WORKED_EXAMPLE,
    agreement,
    by_key,
    ok,
    person,
    queue_of,
    review,
    seed_codes,
)


def test_the_worked_example_answers_the_papers_alpha(harness: Harness) -> None:
    seeded = seed_codes(harness.client, harness.project_id, WORKED_EXAMPLE)
    answer = agreement(harness.client, seeded.queue_id)
    assert answer["annotation_queue_id"] == seeded.queue_id
    assert (answer["min_items"], answer["min_shared_items"]) == (10, 10)
    keys = by_key(answer)
    assert list(keys) == ["code", "level", "note"]
    code, level, note = keys["code"], keys["level"], keys["note"]
    assert (code["metric"], level["metric"], note["metric"]) == ("nominal", "interval", None)
    assert round(code["alpha"], 3) == NOMINAL
    assert round(level["alpha"], 3) == INTERVAL
    for key in (code, level):
        # Unit 12 has one value only; 8 of the 11 others have one value throughout.
        assert (key["items"], key["values"]) == (11, 40)
        assert key["share_agreed"] == pytest.approx(8 / 11)
        assert key["range"]["low"] < key["alpha"] <= key["range"]["high"]
        assert key["range"]["method"] == "bootstrap over items, 1,000 resamples, 95%"
        # B and D, C and D coded ten units each; the other four pairs fewer.
        assert [sorted(reviewer["name"] for reviewer in pair["reviewers"]) for pair in key["pairs"]] == [
            ["Observer B", "Observer D"],
            ["Observer C", "Observer D"],
        ]
        assert [pair["shared_items"] for pair in key["pairs"]] == [10, 10]
        assert key["pairs_with_too_few_items"] == 4
        assert key["sentences"][-1] == "4 pairs of reviewers share fewer than 10 items: too few to say."
    # B and D agree on 9 of 10: p_o 0.9, p_e 0.23.
    assert code["pairs"][0]["kappa"] == pytest.approx((0.9 - 0.23) / 0.77)
    assert code["pairs"][0]["sentence"] == "Observer B and Observer D: Cohen's κ 0.87 over 10 shared items"
    assert level["pairs"][0]["sentence"].startswith("Observer B and Observer D: weighted κ 0.87")
    assert code["sentences"][0] == (
        "Code: Krippendorff's α 0.74 (95% range "
        f"{code['range']['low']:.2f} to {code['range']['high']:.2f}) from 11 items and 40 values; "
        "everyone agreed on 73% of the items"
    )
    assert (note["alpha"], note["items"], note["range"]) == (None, None, None)
    assert note["sentences"][0].startswith("Note: free text has no agreement measure")
    # The same data gives the same range.
    assert agreement(harness.client, seeded.queue_id) == answer


def test_too_few_items_say_so(harness: Harness) -> None:
    seeded = seed_codes(harness.client, harness.project_id, {"A": [1, 2, 3, 4], "B": [1, 2, 4, None]})
    code = by_key(agreement(harness.client, seeded.queue_id))["code"]
    assert (code["items"], code["values"]) == (3, 6)
    assert (code["alpha"], code["range"], code["share_agreed"]) == (None, None, None)
    assert code["pairs"] == []
    assert code["sentences"] == [
        "Code: too few items reviewed twice to say (3 so far)",
        "1 pair of reviewers shares fewer than 10 items: too few to say.",
    ]


def _span_run(harness: Harness) -> str:
    run = make_run(
        harness.project_id,
        spans=[
            {"spanId": "root", "kind": "agent", "name": "agent"},
            {"spanId": "llm", "parentSpanId": "root", "kind": "chat_completion", "name": "answer"},
        ],
    )
    made: dict[str, Any] = ok(harness.client.post("/v1/runs", json=run, headers=ADMIN))
    return str(made["id"])


def test_a_span_item_counts_its_spans_values_and_a_later_value_replaces_an_earlier(harness: Harness) -> None:
    client = harness.client
    queue_id, _ = queue_of(client, harness.project_id, 0, reviewers=2, name="Spans")
    runs = [_span_run(harness) for _ in range(12)]
    items = ok(
        client.post(
            f"/v2/annotation-queues/{queue_id}/items",
            json={"items": [{"trace_id": run, "span_id": "llm"} for run in runs]},
            headers=ADMIN,
        )
    )
    first, second = (person(client, harness.project_id, name) for name in ("Ann", "Bo"))
    for number, item in enumerate(items):
        review(client, queue_id, item["_id"], first, code="1" if number % 2 else "2")
        review(client, queue_id, item["_id"], second, code="5")
        # Bo thinks again: the same as Ann.
        review(client, queue_id, item["_id"], second, code="1" if number % 2 else "2")
    # Values on another span of the trace are not the item's.
    for run in runs:
        body = {"annotations": [{"key": "code", "value": "3"}]}
        ok(client.post(f"/v2/traces/{run}/spans/root/annotation", json=body, headers=ADMIN))
    code = by_key(agreement(client, queue_id))["code"]
    assert (code["items"], code["values"]) == (12, 24)
    assert code["alpha"] == pytest.approx(1.0)
    assert code["share_agreed"] == 1.0
    assert code["pairs"][0]["kappa"] == pytest.approx(1.0)
    assert code["pairs"][0]["shared_items"] == 12


def test_readers_may_read_it_and_others_cannot_see_it(harness: Harness) -> None:
    seeded = seed_codes(harness.client, harness.project_id, {"A": [1, 2], "B": [1, 2]})
    reader = person(harness.client, harness.project_id, "Reader", role="read")
    assert by_key(agreement(harness.client, seeded.queue_id, reader))["code"]["items"] == 2
    outsider = harness.caller("Outsider")
    path = f"/v2/annotation-queues/{seeded.queue_id}/agreement"
    for headers in (outsider, {"Authorization": "Bearer rl_nope"}):
        answer = harness.client.get(path, headers=headers)
        assert answer.status_code in (401, 404)
        assert set(answer.json()) == {"message", "code"}
    missing = harness.client.get("/v2/annotation-queues/not-a-queue/agreement", headers=ADMIN)
    assert missing.status_code == 404
    assert missing.json()["code"] == 404
