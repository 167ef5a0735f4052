"""Several correctors per run on the expert queue, over HTTP against the real app on both stores: a rule
wanting N distinct correctors (checked, versioned, shown), a run staying in the others' `forMe` until N
people corrected it, holds (409 when no place is left, skipped by `forMe`, lapsing by themselves, one at a
time per person), "next", and each corrector's progress."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import update

from redline.db import utcnow
from redline.queues.models import ExpertItemCorrector
from tests.conftest import Harness
from tests.surfaces.test_expert_queue_api import (
    _correct,
    _error,
    _group,
    _ids,
    _me,
    _page,
    _queue,
    _rule,
    _run,
)

RULES = "/v1/projects/{}/queue-rules"


def _hold(harness: Harness, run_id: str, headers: dict[str, str]) -> Any:
    return harness.client.post(_queue(harness, run_id, "hold"), headers=headers)


def _next(harness: Harness, headers: dict[str, str], **params: Any) -> dict[str, Any]:
    answer = harness.client.post(_queue(harness, "next"), headers=headers, params=params)
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def _progress(harness: Harness) -> dict[str, Any]:
    answer = harness.client.get(_queue(harness, "progress"), headers=harness.admin)
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def _lapse(harness: Harness) -> None:
    """Every hold lapsed a minute ago, as if its corrector walked away."""
    with harness.db.write() as session:
        session.execute(update(ExpertItemCorrector).values(held_until=utcnow() - timedelta(minutes=1)))


# ------------------------------------------------------------------------------------------------ rules


def test_a_rule_wanting_several_correctors_says_so_and_each_change_is_a_version(harness: Harness) -> None:
    rules = RULES.format(harness.project_id)
    made = harness.client.post(rules, json={"name": "Pairs", "correctorsWanted": 2}, headers=harness.admin)
    assert made.status_code == 201, made.text
    assert made.json()["correctorsWanted"] == 2
    one = _rule(harness, "Singles")
    single = harness.client.get(f"{rules}/{one}", headers=harness.admin).json()
    assert "correctorsWanted" not in single  # the default, left out as the corrections document has it

    rule_id = made.json()["ruleId"]
    changed = harness.client.patch(f"{rules}/{rule_id}", json={"correctorsWanted": 3}, headers=harness.admin)
    assert changed.status_code == 200, changed.text
    assert (changed.json()["version"], changed.json()["correctorsWanted"]) == (2, 3)
    [newest, first] = harness.client.get(f"{rules}/{rule_id}/versions", headers=harness.admin).json()["data"]
    assert newest["changes"] == [{"field": "correctorsWanted", "from": 2, "to": 3}]
    assert first["correctorsWanted"] == 2


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"name": "r", "correctorsWanted": 0}, "correctorsWanted: a whole number from 1 to 20."),
        ({"name": "r", "correctorsWanted": 21}, "correctorsWanted: a whole number from 1 to 20."),
    ],
)
def test_correctors_wanted_is_one_to_twenty(harness: Harness, body: dict[str, Any], message: str) -> None:
    answer = harness.client.post(RULES.format(harness.project_id), json=body, headers=harness.admin)
    _error(answer, 400, "bad-input", message)


def test_correctors_wanted_cannot_be_removed(harness: Harness) -> None:
    rule_id = _rule(harness, "Pairs", correctorsWanted=2)
    answer = harness.client.patch(
        f"{RULES.format(harness.project_id)}/{rule_id}",
        json={"correctorsWanted": None},
        headers=harness.admin,
    )
    _error(
        answer,
        400,
        "bad-input",
        "correctorsWanted: can't be null: only maxOpen and correctorGroupId can be removed.",
    )


# --------------------------------------------------------------------------------------- distinct people


def test_a_run_waits_for_as_many_distinct_correctors_as_its_rule_wants(harness: Harness) -> None:
    rule_id = _rule(harness, "Triples", correctorsWanted=3)
    ana, ben, cy = (harness.caller(name, role="write") for name in ("ana", "ben", "cy"))
    run = _run(harness)["id"]
    [item] = _page(harness)["data"]
    assert item["rules"] == [{"ruleId": rule_id, "version": 1, "name": "Triples", "correctorsWanted": 3}]

    _correct(harness, run, ana)
    _correct(harness, run, ana, answer="wrong", why="off")  # the same person again: still one corrector
    [item] = _page(harness)["data"]
    assert (item["state"], item["progress"]["total"]) == ("open", 1)
    # Out of ana's "for me" (her correction counts once), still in the others'.
    assert _ids(harness, ana, forMe="true") == []
    assert _ids(harness, ben, forMe="true") == [run]

    _correct(harness, run, ben)
    assert _page(harness)["data"][0]["state"] == "open"
    _correct(harness, run, cy)
    [item] = _page(harness)["data"]
    assert (item["state"], item["closedBy"]) == ("corrected", _me(harness, cy))


def test_a_rule_wanting_a_group_counts_only_its_corrections(harness: Harness) -> None:
    expert = _group(harness, "expert")
    _rule(harness, "Expert pairs", correctorGroupId=expert, correctorsWanted=2)
    ana, ben = harness.caller("ana", role="write"), harness.caller("ben", role="write")
    run = _run(harness)["id"]
    _correct(harness, run, ana)  # of no group: not what the rule wants
    _correct(harness, run, ben, correctorGroupId=expert)
    assert _page(harness)["data"][0]["state"] == "open"
    _correct(harness, run, ana, correctorGroupId=expert)  # ana's again, now as an expert
    assert _page(harness)["data"][0]["state"] == "corrected"


# ------------------------------------------------------------------------------------------------- holds


def test_holding_takes_a_place_and_the_last_place_is_nobody_elses(harness: Harness) -> None:
    _rule(harness, "Pairs", correctorsWanted=2)
    ana, ben, cy = (harness.caller(name, role="write") for name in ("ana", "ben", "cy"))
    run = _run(harness)["id"]

    held = _hold(harness, run, ana)
    assert held.status_code == 200, held.text
    hold = held.json()["hold"]
    assert (hold["state"], hold["places"], hold["takenByOthers"]) == ("held", 2, 0)
    assert held.json()["item"]["runId"] == run
    assert _hold(harness, run, ben).json()["hold"]["takenByOthers"] == 1
    # Both places are held: cy can't take one, and her "for me" passes the run over.
    _error(
        _hold(harness, run, cy),
        409,
        "queue-item-taken",
        "This run has all the correctors its rules want (2), or its last places are held by others for now: "
        "take the next one instead.",
    )
    assert _ids(harness, cy, forMe="true") == []
    assert _ids(harness, cy, forMe="false") == [run]

    # Ana corrects in her place; ben's hold lapses: cy takes the place it frees.
    _correct(harness, run, ana)
    _lapse(harness)
    assert _ids(harness, cy, forMe="true") == [run]
    again = _hold(harness, run, cy).json()["hold"]
    assert (again["state"], again["takenByOthers"]) == ("held", 1)
    _error(_hold(harness, run, ben), 409, "queue-item-taken")
    # Ana corrected it: her place is hers, and holding again is refused for what it is.
    assert _hold(harness, run, ana).json()["hold"] == {"state": "corrected", "places": 2, "takenByOthers": 1}


def test_a_hold_is_refused_for_a_run_not_waiting_or_not_for_the_caller(harness: Harness) -> None:
    expert = _group(harness, "expert", assertableBy={"principalKinds": ["service"]})
    _rule(harness, "Experts", correctorGroupId=expert)
    ana = harness.caller("ana", role="write")
    run = _run(harness)["id"]
    _error(
        _hold(harness, run, ana),
        409,
        "queue-item-not-for-you",
        "None of this run's rules still waits for a correction you may give: it waits for other correctors.",
    )
    harness.client.post(_queue(harness, run, "dismiss"), json={}, headers=harness.admin)
    _error(
        _hold(harness, run, ana),
        409,
        "queue-item-not-open",
        f'Run "{run}" is dismissed in the expert queue: only open items can be held.',
    )
    reader = harness.caller("rita", role="read")
    _error(_hold(harness, run, reader), 403, "permission-denied")


def test_a_corrector_holds_one_run_at_a_time_and_next_takes_the_oldest_open_to_them(harness: Harness) -> None:
    _rule(harness, "Everything")
    ana, ben = harness.caller("ana", role="write"), harness.caller("ben", role="write")
    first, second, third = (_run(harness)["id"] for _ in range(3))

    taken = _next(harness, ana)
    assert (taken["item"]["runId"], taken["hold"]["state"]) == (first, "held")
    # Ben's next passes over the run ana holds; hers is the one she holds until she lets it go.
    assert _next(harness, ben)["item"]["runId"] == second
    assert _next(harness, ana)["item"]["runId"] == first
    # Holding another lets go of her first, which is then ben's next.
    assert _hold(harness, third, ana).json()["hold"]["state"] == "held"
    assert _next(harness, ben)["item"]["runId"] == first
    assert _progress(harness)["held"] == 2

    _correct(harness, second, ben)
    _correct(harness, third, ana)
    _correct(harness, first, harness.caller("cy", role="write"))
    assert _next(harness, ana) == {"item": None, "hold": None}


def test_progress_counts_each_correctors_corrected_and_held_runs(harness: Harness) -> None:
    _rule(harness, "Pairs", correctorsWanted=2)
    ana, ben = harness.caller("ana", role="write"), harness.caller("ben", role="write")
    runs = [_run(harness)["id"] for _ in range(3)]
    for run in runs[:2]:
        _hold(harness, run, ana)
        _correct(harness, run, ana)
    _hold(harness, runs[0], ben)
    assert _progress(harness) == {
        "waiting": 3,
        "held": 1,
        "correctors": [
            {"userId": _me(harness, ana), "name": "ana", "corrected": 2, "held": 0},
            {"userId": _me(harness, ben), "name": "ben", "corrected": 0, "held": 1},
        ],
    }
    _lapse(harness)
    assert _progress(harness)["correctors"] == [
        {"userId": _me(harness, ana), "name": "ana", "corrected": 2, "held": 0}
    ]


def test_a_removed_correction_frees_its_place(harness: Harness) -> None:
    _rule(harness, "Everything")
    ana, ben = harness.caller("ana", role="write"), harness.caller("ben", role="write")
    expert = _group(harness, "expert")
    _rule(harness, "Expert", correctorGroupId=expert)
    run = _run(harness)["id"]
    _hold(harness, run, ana)
    made = harness.client.post("/v1/corrections", json={"runId": run, "answer": "right"}, headers=ana)
    assert made.status_code == 201, made.text
    assert _ids(harness, ben, forMe="true") == [run]  # the expert's rule still wants a place: 2 in all
    removed = harness.client.post(f"/v1/corrections/{made.json()['id']}/unregister", headers=ana)
    assert removed.status_code == 200, removed.text
    assert _progress(harness)["correctors"] == []
    assert uuid.UUID(_hold(harness, run, ana).json()["item"]["runId"]) == uuid.UUID(run)
