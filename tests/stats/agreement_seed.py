"""Queues whose reviewers agree by known amounts, seeded over the HTTP API as its clients would: people with
their own tokens saving values on a queue's items through `POST …/items/{id}/review`.

The worked example is Krippendorff (2011), *Computing Krippendorff's Alpha-Reliability*, p. 8: four
observers coding twelve units on a 1–5 scale, some units left uncoded, for which the paper gives α
nominal 0.743, ordinal 0.815 and interval 0.849.

`http` is anything with `get`, `post`, `put` and `patch` taking a path and `json=`/`headers=`: a
Starlette TestClient in-process, or an httpx.Client on a live server.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from tests.conftest import ADMIN_TOKEN
from tests.samples import make_run

ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}

# One row per observer, one column per unit; None: the observer left the unit uncoded.
WORKED_EXAMPLE: dict[str, list[int | None]] = {
    "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
}
# The paper's figures.
NOMINAL, ORDINAL, INTERVAL = 0.743, 0.815, 0.849
# A live limit the worked example (12 items times 2 measured keys: 24) is above.
LIVE_ITEMS_BELOW_THE_EXAMPLE = "10"


@pytest.fixture
def computed_in_the_background(monkeypatch: pytest.MonkeyPatch) -> None:
    """REDLINE_AGREEMENT_LIVE_ITEMS below the worked example, so its queue's agreement is the job worker's.
    Request it before the app or server it is for: their settings are read when they are made."""
    monkeypatch.setenv("REDLINE_AGREEMENT_LIVE_ITEMS", LIVE_ITEMS_BELOW_THE_EXAMPLE)


# The same codes under a categorical key (its options the codes as text), a range key and a text key.
DEFINITIONS: list[dict[str, Any]] = [
    {
        "key": "code",
        "display_name": "Code",
        "type": "categorical",
        "options": ["1", "2", "3", "4", "5"],
    },
    {"key": "level", "display_name": "Level", "type": "range", "min": 1, "max": 5},
    {"key": "note", "display_name": "Note", "type": "text"},
]


def ok(answer: Any) -> Any:
    assert answer.status_code in (200, 201), answer.text
    return answer.json() if answer.content else None


@dataclass
class Seeded:
    queue_id: str
    item_ids: list[str]
    people: dict[str, dict[str, str]]


def person(http: Any, project_id: str, name: str, role: str = "write") -> dict[str, str]:
    """Headers of a new user holding `role` in the project."""
    made = ok(http.post("/v1/users", json={"name": name, "kind": "user"}, headers=ADMIN))
    ok(http.put(f"/v1/projects/{project_id}/members/{made['id']}", json={"role": role}, headers=ADMIN))
    token = ok(http.post(f"/v1/users/{made['id']}/tokens", json={"name": "t"}, headers=ADMIN))
    return {"Authorization": f"Bearer {token['token']}"}


def queue_of(
    http: Any, project_id: str, units: int, reviewers: int, name: str = "Coding check"
) -> tuple[str, list[str]]:
    """A queue reviewed with the three keys by `reviewers` people an item, holding `units` new traces
    (whole), in order."""
    keys = [
        ok(http.post("/v2/human-reviews", json={**definition, "project_id": project_id}, headers=ADMIN))[
            "_id"
        ]
        for definition in DEFINITIONS
    ]
    traces = [
        ok(http.post("/v1/runs", json=make_run(project_id, title=f"Unit {n + 1}"), headers=ADMIN))["id"]
        for n in range(units)
    ]
    queue = ok(
        http.post(
            "/v2/annotation-queues",
            json={"display_name": name, "description": "", "project_id": project_id},
            headers=ADMIN,
        )
    )
    change = {"human_review_ids": keys, "reviewers_per_item": reviewers}
    ok(http.patch(f"/v2/annotation-queues/{queue['_id']}", json=change, headers=ADMIN))
    items = ok(
        http.post(
            f"/v2/annotation-queues/{queue['_id']}/items",
            json={"items": [{"trace_id": trace, "span_id": trace} for trace in traces]},
            headers=ADMIN,
        )
    )
    return queue["_id"], [item["_id"] for item in items]


def review(http: Any, queue_id: str, item_id: str, headers: dict[str, str], **values: Any) -> None:
    body = {"values": [{"key": key, "value": value} for key, value in values.items()]}
    ok(http.post(f"/v2/annotation-queues/{queue_id}/items/{item_id}/review", json=body, headers=headers))


def seed_codes(
    http: Any, project_id: str, codes: dict[str, list[int | None]], name: str = "Coding check"
) -> Seeded:
    """A queue of as many items as the rows have units, each person (a row) saving their code on each
    unit they coded, under the categorical key (as text) and the range key (as a number)."""
    units = len(next(iter(codes.values())))
    queue_id, items = queue_of(http, project_id, units, len(codes), name)
    people = {observer: person(http, project_id, f"Observer {observer}") for observer in codes}
    for observer, row in codes.items():
        for item, code in zip(items, row, strict=True):
            if code is not None:
                review(http, queue_id, item, people[observer], code=str(code), level=code)
    return Seeded(queue_id, items, people)


def agreement(http: Any, queue_id: str, headers: dict[str, str] = ADMIN) -> dict[str, Any]:
    answer: dict[str, Any] = ok(http.get(f"/v2/annotation-queues/{queue_id}/agreement", headers=headers))
    return answer


def by_key(answer: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {key["key"]: key for key in answer["keys"]}
