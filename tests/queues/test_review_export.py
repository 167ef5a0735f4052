"""The annotation export's review values (issue 23): each carries its key and value, who gave it, and every
annotation queue it belongs to with the item's adjudication under its key; other lines stay exactly the
document's. Over the real app (GET /api/v1/rm/export/annotations) and the CLI, on both stores."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from sqlalchemy import select

from redline.annotations.models import Annotation
from redline.cli.main import cli
from redline.queues.models import QueueAdjudication, QueueItem
from redline.reviews.models import ReviewKey
from tests.conftest import Harness
from tests.queues.test_overlap import Person, _keys, _ok, _person, _save
from tests.samples import EXPORT_KEYS
from tests.surfaces.test_reviews_api import _annotate, _evaluation, _trace

QUEUES = "/v2/annotation-queues"
DECIDED_AT = datetime(2026, 12, 6, 9, 30, tzinfo=UTC)


@dataclass
class Reviewed:
    """Two queues over the same first run: Alpha asks rating and score of runs 0 and 1, Beta only rating
    of run 0; ana and ben reviewed run 0 in Alpha, ben run 1; one rm rating on run 1."""

    alpha: str
    beta: str
    runs: list[dict[str, Any]]
    items: dict[tuple[str, int], str]
    ana: Person
    ben: Person


def _queue(
    harness: Harness, name: str, key_ids: list[str], runs: list[dict[str, Any]]
) -> tuple[str, list[str]]:
    body = {
        "display_name": name,
        "description": "",
        "project_id": harness.project_id,
        "reviewers_per_item": 2,
    }
    queue = _ok(harness.client.post(QUEUES, json=body, headers=harness.admin))
    _ok(
        harness.client.patch(
            f"{QUEUES}/{queue['_id']}", json={"human_review_ids": key_ids}, headers=harness.admin
        )
    )
    added = _ok(
        harness.client.post(
            f"{QUEUES}/{queue['_id']}/items",
            json={"items": [{"trace_id": run["id"], "span_id": run["id"]} for run in runs]},
            headers=harness.admin,
        )
    )
    return queue["_id"], [item["_id"] for item in added]


def _reviewed(harness: Harness) -> Reviewed:
    rating, score = _keys(harness)
    runs = [
        _ok(harness.client.post("/v1/runs", json=harness.run(externalId=f"r{n}"), headers=harness.admin), 201)
        for n in range(2)
    ]
    alpha, alpha_items = _queue(harness, "Alpha", [rating, score], runs)
    beta, beta_items = _queue(harness, "Beta", [rating], runs[:1])
    ana, ben = _person(harness, "ana"), _person(harness, "ben")
    _ok(_save(harness, alpha, alpha_items[0], ana, rating="good", score=7))
    _ok(_save(harness, alpha, alpha_items[0], ben, rating="bad", score=2))
    _ok(_save(harness, alpha, alpha_items[1], ben, rating="good", score=9))
    rated = harness.client.post(
        f"/api/v1/rm/traces/{runs[1]['id']}/annotations", json={"rating": 1}, headers=harness.admin
    )
    assert rated.status_code == 200, rated.text
    items = {("alpha", 0): alpha_items[0], ("alpha", 1): alpha_items[1], ("beta", 0): beta_items[0]}
    return Reviewed(alpha, beta, runs, items, ana, ben)


def _adjudicate(harness: Harness, item_id: str, key: str, value: Any, note: str | None) -> None:
    """An admin's settled value, written as the adjudication service writes it."""
    with harness.db.write() as session:
        item = session.get_one(QueueItem, uuid.UUID(item_id))
        key_id = session.scalar(select(ReviewKey.id).where(ReviewKey.key == key))
        session.add(
            QueueAdjudication(
                item_id=item.id,
                review_key_id=key_id,
                queue_id=item.queue_id,
                value=value,
                note=note,
                decided_by=uuid.UUID(harness.admin_id),
                decided_by_name="admin",
                decided_at=DECIDED_AT,
            )
        )


def _created_at(harness: Harness) -> dict[tuple[str, str, str | None], str]:
    """Each review value's time as the wire writes it, by (run, author, key)."""
    with harness.db.read() as session:
        rows = session.execute(
            select(Annotation.trace_id, Annotation.author_name, Annotation.key, Annotation.created_at).where(
                Annotation.key.is_not(None)
            )
        )
        return {(str(run), author, key): at.isoformat() for run, author, key, at in rows}


def _line(
    reviewed: Reviewed,
    at: dict[tuple[str, str, str | None], str],
    run: int,
    who: Person,
    name: str,
    key: str,
    value: Any,
    queues: list[dict[str, Any]],
) -> dict[str, Any]:
    trace_id = reviewed.runs[run]["id"]
    return {
        "trace_id": trace_id,
        "trace_external_id": f"r{run}",
        "step_index": None,
        "rating": None,
        "comment": None,
        "quote": None,
        "label_error": False,
        "label_error_note": None,
        "author": name,
        "created_at": at[(trace_id, name, key)],
        "key": key,
        "value": value,
        "author_id": who.id,
        "identity_id": None,
        "queues": queues,
    }


def _expected(harness: Harness, reviewed: Reviewed) -> list[dict[str, Any]]:
    at = _created_at(harness)
    settled = {
        "value": "bad",
        "note": "The refund broke the policy",
        "decided_by": harness.admin_id,
        "decided_by_name": "admin",
        "decided_at": "2026-12-06T09:30:00+00:00",
    }
    alpha: dict[str, Any] = {"queue_id": reviewed.alpha, "queue_name": "Alpha", "adjudication": None}
    beta: dict[str, Any] = {"queue_id": reviewed.beta, "queue_name": "Beta", "adjudication": None}
    rating_0 = [{**alpha, "adjudication": settled}, beta]
    ana, ben = reviewed.ana, reviewed.ben
    return [
        _line(reviewed, at, 0, ana, "ana", "rating", "good", rating_0),
        _line(reviewed, at, 0, ana, "ana", "score", 7, [alpha]),
        _line(reviewed, at, 0, ben, "ben", "rating", "bad", rating_0),
        _line(reviewed, at, 0, ben, "ben", "score", 2, [alpha]),
        _line(reviewed, at, 1, ben, "ben", "rating", "good", [alpha]),
        _line(reviewed, at, 1, ben, "ben", "score", 9, [alpha]),
    ]


def _by_value(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The review values' lines in a set order (two saved together may share a time)."""
    values = [line for line in lines if "key" in line]
    return sorted(values, key=lambda line: (line["trace_external_id"], line["author"], line["key"]))


def test_review_values_carry_reviewer_queues_and_adjudication(harness: Harness) -> None:
    reviewed = _reviewed(harness)
    _adjudicate(harness, reviewed.items[("alpha", 0)], "rating", "bad", "The refund broke the policy")
    answer = harness.client.get("/api/v1/rm/export/annotations", headers=harness.admin)
    assert answer.status_code == 200, answer.text
    lines = [json.loads(line) for line in answer.text.splitlines()]
    assert len(lines) == 7
    values = _by_value(lines)
    assert values == _expected(harness, reviewed)
    assert all(
        list(line) == [*EXPORT_KEYS, "key", "value", "author_id", "identity_id", "queues"] for line in values
    )
    [rated] = [line for line in lines if "key" not in line]
    assert list(rated) == EXPORT_KEYS
    assert (rated["rating"], rated["author"], rated["trace_external_id"]) == (1, "admin", "r1")


def test_a_value_in_no_queue_has_none_and_an_adjudication_under_another_key_is_not_its(
    harness: Harness,
) -> None:
    reviewed = _reviewed(harness)
    _adjudicate(harness, reviewed.items[("alpha", 0)], "score", 5, None)
    # A queue's items moved out: the values stay, in no queue now.
    removed = harness.client.post(
        f"{QUEUES}/{reviewed.alpha}/items/remove",
        json={"span_ids": [reviewed.runs[1]["id"]]},
        headers=harness.admin,
    )
    assert removed.status_code == 204, removed.text
    values = _by_value(
        [
            json.loads(line)
            for line in harness.client.get(
                "/api/v1/rm/export/annotations", headers=harness.admin
            ).text.splitlines()
        ]
    )
    by = {(line["trace_external_id"], line["author"], line["key"]): line["queues"] for line in values}
    alpha = {"queue_id": reviewed.alpha, "queue_name": "Alpha"}
    beta = {"queue_id": reviewed.beta, "queue_name": "Beta", "adjudication": None}
    settled = {
        "value": 5,
        "note": None,
        "decided_by": harness.admin_id,
        "decided_by_name": "admin",
        "decided_at": "2026-12-06T09:30:00+00:00",
    }
    assert by[("r0", "ana", "rating")] == [{**alpha, "adjudication": None}, beta]
    assert by[("r0", "ana", "score")] == [{**alpha, "adjudication": settled}]
    assert by[("r1", "ben", "rating")] == []
    assert by[("r1", "ben", "score")] == []


def test_the_cli_export_writes_the_same_lines(harness: Harness, database_url: str, tmp_path: Path) -> None:
    reviewed = _reviewed(harness)
    _adjudicate(harness, reviewed.items[("alpha", 0)], "rating", "bad", "The refund broke the policy")
    out = tmp_path / "annotations.ndjson"
    done = CliRunner().invoke(
        cli, ["--database-url", database_url, "annotations", "export", "--output", str(out)]
    )
    assert done.exit_code == 0, done.output
    http = harness.client.get("/api/v1/rm/export/annotations", headers=harness.admin).text
    assert out.read_text() == http
    assert _by_value([json.loads(line) for line in http.splitlines()]) == _expected(harness, reviewed)


def test_an_evaluators_result_and_a_correction_of_it_are_not_lines_of_the_export(harness: Harness) -> None:
    """They are not the document's annotations nor people's review values, and a line of its fields says
    nothing of them: each used to be a line with neither a rating nor a comment, which `redline
    annotations import` then skipped as an annotation without either."""
    trace_id = _trace(harness)
    rated = harness.client.post(
        f"/api/v1/rm/traces/{trace_id}/annotations",
        json={"comment": "Checked the policy"},
        headers=harness.admin,
    )
    assert rated.status_code == 200, rated.text
    made = _evaluation(harness, trace_id, "llm", evaluator="judge", output_type="boolean", value=True)
    corrected = _annotate(
        harness, trace_id, "llm", {"annotations": [{"parent_annotation_id": made["_id"], "value": False}]}
    )
    assert corrected.status_code == 200, corrected.text
    with harness.db.read() as session:
        said = session.scalars(
            select(Annotation.source).where(Annotation.trace_id == uuid.UUID(trace_id))
        ).all()
    assert sorted(said) == ["evaluator", "human", "human"]
    answer = harness.client.get("/api/v1/rm/export/annotations", headers=harness.admin)
    assert answer.status_code == 200, answer.text
    [line] = [json.loads(line) for line in answer.text.splitlines()]
    assert (line["trace_id"], line["comment"], list(line)) == (trace_id, "Checked the policy", EXPORT_KEYS)
