"""The disagreements' order as a property, over HTTP on both stores: for any values three people give a
few items under a categorical key and a range key (1 to 5), the list holds exactly the items and keys
whose values differ, with the figures worked out here from the values themselves, in the documented
order (difference, then distinct values, descending; then queue order, then key order), and paging
through it at any size walks the same rows once each."""

from __future__ import annotations

from collections import Counter
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import Harness
from tests.samples import make_run
from tests.stats.agreement_seed import ADMIN, DEFINITIONS, ok, person, review

PEOPLE = ("A", "B", "C")
# Per item, each person's code or None (not given).
codes = st.lists(
    st.lists(st.one_of(st.none(), st.integers(1, 5)), min_size=3, max_size=3), min_size=1, max_size=5
)


def _expected(items: list[list[int | None]]) -> list[tuple[int, str, float, int]]:
    """(seq, key, difference, distinct values) of each disagreement, in the documented order."""
    rows = []
    for seq, given_codes in enumerate(items, start=1):
        values = [code for code in given_codes if code is not None]
        counts = Counter(values)
        if len(counts) < 2:
            continue
        rows.append((seq, "code", 1.0 - max(counts.values()) / len(values), len(counts), 0))
        rows.append((seq, "level", float(max(values) - min(values)) / 4.0, len(counts), 1))
    rows.sort(key=lambda row: (-row[2], -row[3], row[0], row[4]))
    return [row[:4] for row in rows]


class Seeder:
    """The project's keys and three people, made once for every example; a queue each example."""

    def __init__(self, harness: Harness) -> None:
        self.harness = harness
        client = harness.client
        self.keys = [
            ok(
                client.post(
                    "/v2/human-reviews", json={**one, "project_id": harness.project_id}, headers=ADMIN
                )
            )["_id"]
            for one in DEFINITIONS
        ]
        self.people = {name: person(client, harness.project_id, f"Person {name}") for name in PEOPLE}

    def queue(self, items: list[list[int | None]]) -> str:
        client = self.harness.client
        body = {"display_name": "Property", "description": "", "project_id": self.harness.project_id}
        queue_id = str(ok(client.post("/v2/annotation-queues", json=body, headers=ADMIN))["_id"])
        change = {"human_review_ids": self.keys, "reviewers_per_item": 3}
        ok(client.patch(f"/v2/annotation-queues/{queue_id}", json=change, headers=ADMIN))
        traces = [
            ok(client.post("/v1/runs", json=make_run(self.harness.project_id), headers=ADMIN))["id"]
            for _ in items
        ]
        refs = {"items": [{"trace_id": trace, "span_id": trace} for trace in traces]}
        made = ok(client.post(f"/v2/annotation-queues/{queue_id}/items", json=refs, headers=ADMIN))
        for item, given_codes in zip(made, items, strict=True):
            for name, code in zip(PEOPLE, given_codes, strict=True):
                if code is not None:
                    review(client, queue_id, item["_id"], self.people[name], code=str(code), level=code)
        return queue_id


def _walk(harness: Harness, queue_id: str, limit: int) -> list[dict[str, Any]]:
    """Every row, a page of `limit` at a time."""
    seen: list[dict[str, Any]] = []
    after: str | None = None
    while True:
        params: dict[str, Any] = {"limit": limit, **({"starting_after": after} if after else {})}
        page = ok(
            harness.client.get(
                f"/v2/annotation-queues/{queue_id}/disagreements", params=params, headers=ADMIN
            )
        )
        assert len(page["data"]) <= limit
        seen += page["data"]
        if not page["has_more"]:
            return seen
        after = page["data"][-1]["_id"]


def test_the_order_holds_for_any_values(harness: Harness) -> None:
    seeder = Seeder(harness)

    @settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(items=codes, limit=st.integers(1, 4))
    def check(items: list[list[int | None]], limit: int) -> None:
        queue_id = seeder.queue(items)
        found = _walk(harness, queue_id, limit)
        got = [(row["seq"], row["key"], row["difference"], row["distinct_values"]) for row in found]
        assert got == _expected(items)
        assert len({row["_id"] for row in found}) == len(found)

    check()
