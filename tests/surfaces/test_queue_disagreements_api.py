"""GET /v2/annotation-queues/{id}/disagreements and PUT/DELETE …/items/{item_id}/adjudications/{key} over
HTTP, on both stores: the most apart first (a categorical key by the share of values off the most common
one, a range key by its spread over the scale, then distinct values, queue order, key order), each value
with who gave it; paging by `_id`; the key and `open` filters; settling, replacing and taking back a value
checked as a review value is, leaving the reviewers' own; admins only, in the surface's sentences."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import Harness
from tests.samples import make_run
from tests.stats.agreement_seed import ADMIN, WORKED_EXAMPLE, ok, person, queue_of, review, seed_codes

# Three people on four units: (1, 1, 5), (2, 3, 4), (1, 2, 2) and (3, 3, 3), under both the categorical
# key "code" and the range key "level" (1 to 5).
CODES: dict[str, list[int | None]] = {"A": [1, 2, 1, 3], "B": [1, 3, 2, 3], "C": [5, 4, 2, 3]}


def listed(harness: Harness, queue_id: str, headers: dict[str, str] = ADMIN, **params: Any) -> Any:
    return harness.client.get(
        f"/v2/annotation-queues/{queue_id}/disagreements", params=params, headers=headers
    )


def rows(harness: Harness, queue_id: str, **params: Any) -> list[dict[str, Any]]:
    answer: list[dict[str, Any]] = ok(listed(harness, queue_id, limit=200, **params))["data"]
    return answer


def settle(harness: Harness, queue_id: str, item_id: str, key: str, body: Any, headers: Any = ADMIN) -> Any:
    path = f"/v2/annotation-queues/{queue_id}/items/{item_id}/adjudications/{key}"
    return harness.client.put(path, json=body, headers=headers)


def take_back(harness: Harness, queue_id: str, item_id: str, key: str, headers: Any = ADMIN) -> Any:
    path = f"/v2/annotation-queues/{queue_id}/items/{item_id}/adjudications/{key}"
    return harness.client.delete(path, headers=headers)


def refused(answer: Any, status: int, message: str) -> None:
    assert answer.status_code == status, answer.text
    assert answer.json() == {"message": message, "code": status}


def test_the_most_apart_come_first_with_each_value_and_who_gave_it(harness: Harness) -> None:
    seeded = seed_codes(harness.client, harness.project_id, CODES)
    found = rows(harness, seeded.queue_id)
    assert [(row["seq"], row["key"]) for row in found] == [
        (1, "level"),  # 1, 1 and 5: the whole scale apart
        (2, "code"),  # three values, none shared: 2/3 off the most common
        (2, "level"),  # 2 to 4: half the scale
        (1, "code"),  # two of three agree: 1/3, two distinct values, first in the queue
        (3, "code"),  # the same, later in the queue
        (3, "level"),  # 1 to 2: a quarter of the scale
    ]
    assert [row["difference"] for row in found] == pytest.approx([1.0, 2 / 3, 0.5, 1 / 3, 1 / 3, 0.25])
    assert [row["distinct_values"] for row in found] == [2, 3, 3, 2, 2, 2]
    assert [row["spread"] for row in found] == [4.0, None, 2.0, None, None, 1.0]
    first = found[0]
    item_id = seeded.item_ids[0]
    trace = ok(harness.client.get(f"/v2/annotation-queues/{seeded.queue_id}/items/{item_id}", headers=ADMIN))
    keys = {key["key"]: key for key in ok(harness.client.get("/v2/human-reviews", headers=ADMIN))["data"]}
    reviewers = [one.pop("reviewer") for one in first.pop("values")]
    assert first == {
        "_id": f"{item_id}:level",
        "annotation_queue_id": seeded.queue_id,
        "item_id": item_id,
        "seq": 1,
        "trace_id": trace["trace_id"],
        "span_id": trace["trace_id"],
        "trace_name": "Unit 1",
        "human_review_id": keys["level"]["_id"],
        "key": "level",
        "display_name": "Level",
        "type": "range",
        "difference": 1.0,
        "distinct_values": 2,
        "values_count": 3,
        "spread": 4.0,
        "adjudication": None,
    }
    assert [(one["name"], one["identity_id"]) for one in reviewers] == [
        ("Observer A", None),
        ("Observer B", None),
        ("Observer C", None),
    ]
    assert all(isinstance(one["id"], str) for one in reviewers)
    assert [one["value"] for one in found[1]["values"]] == ["2", "3", "4"]


def test_the_worked_example_lists_the_three_units_that_split(harness: Harness) -> None:
    seeded = seed_codes(harness.client, harness.project_id, WORKED_EXAMPLE)
    found = rows(harness, seeded.queue_id)
    # Unit 6: four values, all different; units 2 and 8: one of four apart. Unit 12 has one value only,
    # and free text ("note") is never listed.
    assert [(row["seq"], row["key"]) for row in found] == [
        (6, "code"),
        (6, "level"),
        (2, "code"),
        (2, "level"),
        (8, "code"),
        (8, "level"),
    ]
    assert [row["difference"] for row in found] == pytest.approx([0.75, 0.75, 0.25, 0.25, 0.25, 0.25])
    assert [[one["value"] for one in row["values"]] for row in found[:2]] == [
        ["1", "2", "3", "4"],
        [1, 2, 3, 4],
    ]


def test_pages_walk_the_list_both_ways(harness: Harness) -> None:
    seeded = seed_codes(harness.client, harness.project_id, CODES)
    every = [row["_id"] for row in rows(harness, seeded.queue_id)]
    first = ok(listed(harness, seeded.queue_id, limit=4))
    assert (first["object"], first["has_more"]) == ("list", True)
    assert [row["_id"] for row in first["data"]] == every[:4]
    second = ok(listed(harness, seeded.queue_id, limit=4, starting_after=every[3]))
    assert ([row["_id"] for row in second["data"]], second["has_more"]) == (every[4:], False)
    back = ok(listed(harness, seeded.queue_id, limit=2, ending_before=every[4]))
    assert ([row["_id"] for row in back["data"]], back["has_more"]) == (every[2:4], True)
    refused(
        listed(harness, seeded.queue_id, starting_after="nothing"),
        400,
        "starting_after: no item has the id nothing.",
    )
    refused(
        listed(harness, seeded.queue_id, starting_after=f"{seeded.item_ids[3]}:code"),
        400,
        f"starting_after: no item has the id {seeded.item_ids[3]}:code.",
    )
    refused(
        listed(harness, seeded.queue_id, limit=201), 400, "limit: Input should be less than or equal to 200"
    )


def test_filters_by_key_and_by_not_yet_settled(harness: Harness) -> None:
    seeded = seed_codes(harness.client, harness.project_id, CODES)
    assert [row["seq"] for row in rows(harness, seeded.queue_id, key="code")] == [2, 1, 3]
    assert [row["seq"] for row in rows(harness, seeded.queue_id, key="level")] == [1, 2, 3]
    ok(settle(harness, seeded.queue_id, seeded.item_ids[1], "code", {"value": "3"}))
    assert [(row["seq"], row["key"]) for row in rows(harness, seeded.queue_id, open="true")] == [
        (1, "level"),
        (2, "level"),
        (1, "code"),
        (3, "code"),
        (3, "level"),
    ]
    assert [row["seq"] for row in rows(harness, seeded.queue_id, key="code", open="true")] == [1, 3]
    refused(
        listed(harness, seeded.queue_id, key="note"),
        400,
        'key: "note" is free text: two texts can say the same thing in other words, so its values are not '
        "compared and it has no disagreements.",
    )
    workspace = ok(harness.client.get("/v1/me", headers=ADMIN))["workspaceId"]
    refused(
        listed(harness, seeded.queue_id, key="tone"),
        404,
        f'The human review with key "tone" for workspace {workspace} was not found.',
    )


def test_settling_replacing_and_taking_back_leave_the_reviewers_values(harness: Harness) -> None:
    seeded = seed_codes(harness.client, harness.project_id, CODES)
    item_id = seeded.item_ids[1]
    before = rows(harness, seeded.queue_id)
    settled = ok(settle(harness, seeded.queue_id, item_id, "code", {"value": "3", "note": "  B is right  "}))
    keys = {key["key"]: key for key in ok(harness.client.get("/v2/human-reviews", headers=ADMIN))["data"]}
    decided_at = settled.pop("decided_at")
    assert settled == {
        "annotation_queue_id": seeded.queue_id,
        "item_id": item_id,
        "human_review_id": keys["code"]["_id"],
        "key": "code",
        "value": "3",
        "note": "B is right",
        "decided_by_id": harness.admin_id,
        "decided_by_name": ok(harness.client.get("/v1/me", headers=ADMIN))["name"],
    }
    assert decided_at.endswith("+00:00")
    shown = {row["_id"]: row for row in rows(harness, seeded.queue_id)}
    assert shown[f"{item_id}:code"]["adjudication"] == {**settled, "decided_at": decided_at}
    assert shown[f"{item_id}:level"]["adjudication"] is None
    # A single-select's one-item list is stored as its option; the note goes when none is sent.
    again = ok(settle(harness, seeded.queue_id, item_id, "code", {"value": ["4"]}))
    assert (again["value"], again["note"]) == ("4", None)
    after = rows(harness, seeded.queue_id)
    assert [row["values"] for row in after] == [row["values"] for row in before]
    assert after[1]["adjudication"]["value"] == "4"
    assert take_back(harness, seeded.queue_id, item_id, "code").status_code == 204
    assert rows(harness, seeded.queue_id) == before
    refused(
        take_back(harness, seeded.queue_id, item_id, "code"),
        404,
        f'No value is settled for item {item_id} under "code".',
    )


def test_a_settled_value_is_checked_as_a_review_value_is(harness: Harness) -> None:
    seeded = seed_codes(harness.client, harness.project_id, CODES)
    queue_id, item_id = seeded.queue_id, seeded.item_ids[0]
    workspace = ok(harness.client.get("/v1/me", headers=ADMIN))["workspaceId"]
    review = 'The human review "{}" '
    not_found = f'The human review with key "tone" for workspace {workspace} was not found.'
    cases = [
        ("code", {"value": "9"}, 400, "Invalid value: 9. Valid options are: 1, 2, 3, 4, 5."),
        (
            "code",
            {"value": ["1", "2"]},
            400,
            review.format("code") + "takes one option: send a string or a one-item list.",
        ),
        (
            "code",
            {},
            400,
            review.format("code")
            + "is categorical: its value is one of its options (1, 2, 3, 4, 5), as a string.",
        ),
        ("level", {"value": 7}, 400, "Value 7 is out of range [1, 5]."),
        (
            "level",
            {"value": "high"},
            400,
            review.format("level") + "is a range: its value must be a number from 1 to 5.",
        ),
        ("note", {"value": " "}, 400, review.format("note") + "is text: its value must say something."),
        ("note", {"value": "x" * 201}, 400, "String value exceeds maximum length of 200 characters."),
        ("code", {"value": "1", "note": "n" * 2001}, 400, "note: a note is at most 2,000 characters."),
        ("tone", {"value": "1"}, 404, not_found),
    ]
    for key, body, status, message in cases:
        refused(settle(harness, queue_id, item_id, key, body), status, message)
    missing = "00000000-0000-4000-8000-000000000000"
    refused(
        settle(harness, queue_id, missing, "code", {"value": "1"}),
        404,
        f"Annotation queue item with id {missing} for workspace {workspace} was not found.",
    )
    elsewhere = _item_of_another_queue(harness)
    refused(
        settle(harness, queue_id, elsewhere, "code", {"value": "1"}),
        404,
        f"Annotation queue item with id {elsewhere} for workspace {workspace} was not found.",
    )
    # Nothing was settled by the refusals; a text key and a range value are settled as given.
    assert all(row["adjudication"] is None for row in rows(harness, queue_id))
    assert ok(settle(harness, queue_id, item_id, "note", {"value": "fine"}))["value"] == "fine"
    assert ok(settle(harness, queue_id, item_id, "level", {"value": 4.5}))["value"] == 4.5


def _item_of_another_queue(harness: Harness) -> str:
    body = {"display_name": "Other", "description": "", "project_id": harness.project_id}
    other = ok(harness.client.post("/v2/annotation-queues", json=body, headers=ADMIN))["_id"]
    trace = ok(harness.client.post("/v1/runs", json=make_run(harness.project_id), headers=ADMIN))["id"]
    items = {"items": [{"trace_id": trace, "span_id": trace}]}
    [item] = ok(harness.client.post(f"/v2/annotation-queues/{other}/items", json=items, headers=ADMIN))
    return str(item["_id"])


def test_a_multi_select_is_compared_as_a_set(harness: Harness) -> None:
    client = harness.client
    tags = {"key": "tags", "type": "categorical", "options": ["a", "b", "c"], "multiple": True}
    key = ok(client.post("/v2/human-reviews", json={**tags, "project_id": harness.project_id}, headers=ADMIN))
    queue_id, items = queue_of(client, harness.project_id, 2, 2, name="Tags")
    ok(
        client.patch(
            f"/v2/annotation-queues/{queue_id}", json={"human_review_ids": [key["_id"]]}, headers=ADMIN
        )
    )
    first, second = (person(client, harness.project_id, name) for name in ("Ann", "Bo"))
    review(client, queue_id, items[0], first, tags=["a", "b"])
    review(client, queue_id, items[0], second, tags=["b", "a"])
    review(client, queue_id, items[1], first, tags=["a"])
    review(client, queue_id, items[1], second, tags=["c", "a"])
    [row] = rows(harness, queue_id)
    assert (row["item_id"], row["difference"], row["distinct_values"]) == (items[1], 0.5, 2)
    assert [one["value"] for one in row["values"]] == [["a"], ["c", "a"]]
    settled = ok(settle(harness, queue_id, items[1], "tags", {"value": ["c", "a", "c"]}))
    assert settled["value"] == ["c", "a"]


def test_only_admins_of_the_project_may_list_and_settle(harness: Harness) -> None:
    seeded = seed_codes(harness.client, harness.project_id, CODES)
    queue_id, item_id = seeded.queue_id, seeded.item_ids[0]
    project = ok(harness.client.get(f"/v1/projects/{harness.project_id}", headers=ADMIN))["name"]
    lead = person(harness.client, harness.project_id, "Lead", role="admin")
    assert len(rows_as(harness, queue_id, lead)) == 6
    assert ok(settle(harness, queue_id, item_id, "code", {"value": "1"}, lead))["decided_by_name"] == "Lead"
    for role in ("read", "write", "publish"):
        who = person(harness.client, harness.project_id, f"A {role}r", role=role)
        sentence = f'This needs the admin role in project "{project}"; you have {role}.'
        refused(listed(harness, queue_id, who), 403, sentence)
        refused(settle(harness, queue_id, item_id, "code", {"value": "2"}, who), 403, sentence)
        refused(take_back(harness, queue_id, item_id, "code", who), 403, sentence)
    # A reviewer who has finished the item is still no admin: the list shows everyone's values.
    refused(
        listed(harness, queue_id, seeded.people["A"]),
        403,
        f'This needs the admin role in project "{project}"; you have write.',
    )
    workspace = ok(harness.client.get("/v1/me", headers=ADMIN))["workspaceId"]
    outsider = harness.caller("Outsider")
    hidden = f"Annotation queue with id {queue_id} for workspace {workspace} was not found."
    refused(listed(harness, queue_id, outsider), 404, hidden)
    refused(settle(harness, queue_id, item_id, "code", {"value": "2"}, outsider), 404, hidden)
    # The refusals changed nothing.
    [settled] = [row["adjudication"] for row in rows(harness, queue_id) if row["adjudication"]]
    assert (settled["value"], settled["decided_by_name"]) == ("1", "Lead")


def rows_as(harness: Harness, queue_id: str, headers: dict[str, str]) -> list[dict[str, Any]]:
    answer: list[dict[str, Any]] = ok(listed(harness, queue_id, headers, limit=200))["data"]
    return answer
