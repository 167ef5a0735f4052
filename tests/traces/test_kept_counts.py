"""The counts kept on write stay exactly what counting the rows says, whatever mix of writes made them.

A seeded random walk drives every path that changes them through the real app over HTTP: runs sent
whole and re-sent (replacing steps, so annotations on dropped steps go), OTLP traces that are hidden,
then shown, then hidden again by their spans, annotations made, changed, flagged and deleted (rm
surface and console), corrections made, replaced and removed, runs erased. After each write every
kept count is compared with a COUNT(*) of the rows it stands for, and the rm list's `total` with the
listed runs.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from sqlalchemy import and_, false, func, select

from redline.annotations.models import Annotation
from redline.corrections.models import COUNTED, Correction
from redline.migrations import commands as migrate
from redline.traces.models import ProjectRunCount, Trace
from tests.conftest import Harness
from tests.console.conftest import console_client
from tests.otlp.builders import raw_spans
from tests.otlp.payloads import export_request
from tests.samples import REFUND_STEPS

EXTERNAL_IDS = [f"ticket-{n}" for n in range(6)]
OTLP_TRACES = [f"otlp-{n}" for n in range(3)]
ANSWERS = ["Your order was delivered on May 3.", "It is late.", "Refunded."]


def _steps(chance: random.Random) -> list[dict[str, Any]]:
    """The refund run's steps, sometimes fewer, sometimes with the answer saying something else."""
    steps = [dict(step) for step in REFUND_STEPS[: chance.randint(2, len(REFUND_STEPS))]]
    steps[-1] = {"role": "assistant", "content": chance.choice(ANSWERS)}
    return steps


def _ai_span(trace: str, answer: str) -> list[Any]:
    return raw_spans(
        [
            {
                "span": "root",
                "parent": None,
                "name": "agent",
                "attributes": {
                    "openinference.span.kind": "AGENT",
                    "input.value": "Where is my order?",
                    "output.value": answer,
                },
            }
        ],
        trace=trace,
    )


def _plain_span(trace: str) -> list[Any]:
    """The same span id as `_ai_span`'s root, saying nothing about AI: the run is hidden again."""
    return raw_spans(
        [
            {
                "span": "root",
                "parent": None,
                "name": "GET /items",
                "kind": 2,
                "attributes": {"http.method": "GET"},
            }
        ],
        trace=trace,
    )


class Walk:
    """The random walk's view of the store, read back through the API, and its checks."""

    def __init__(self, harness: Harness, seed: int) -> None:
        self.harness = harness
        self.chance = random.Random(seed)
        self.second = harness.caller("second", role="admin")
        self.console = console_client(harness)

    def post(self, path: str, body: Any, headers: dict[str, str] | None = None) -> Any:
        return self.harness.client.post(path, json=body, headers=headers or self.harness.admin)

    def runs(self) -> list[dict[str, Any]]:
        answer = self.harness.client.get("/api/v1/rm/traces?limit=500", headers=self.harness.admin)
        assert answer.status_code == 200, answer.text
        return list(answer.json()["traces"])

    def annotations(self) -> list[dict[str, Any]]:
        found = []
        for run in self.runs():
            answer = self.harness.client.get(f"/api/v1/rm/traces/{run['id']}", headers=self.harness.admin)
            found.extend(answer.json()["annotations"])
        return found

    def corrections(self) -> list[dict[str, Any]]:
        answer = self.harness.client.get("/v1/corrections?limit=100", headers=self.harness.admin)
        assert answer.status_code == 200, answer.text
        return [c for c in answer.json()["data"] if c["status"] != "removed"]

    # ------------------------------------------------------------------------------------- the writes

    def send_runs(self) -> None:
        ids = self.chance.sample(EXTERNAL_IDS, self.chance.randint(1, 3))
        runs = [self.harness.run(externalId=ident, steps=_steps(self.chance)) for ident in ids]
        answer = self.post("/v1/runs/batch", {"runs": runs})
        assert answer.status_code == 201, answer.text

    def send_spans(self) -> None:
        trace = self.chance.choice(OTLP_TRACES)
        spans = (
            _ai_span(trace, self.chance.choice(ANSWERS)) if self.chance.random() < 0.6 else _plain_span(trace)
        )
        body = export_request(spans).SerializeToString()
        headers = {**self.harness.admin, "content-type": "application/x-protobuf"}
        answer = self.harness.client.post("/v1/traces", content=body, headers=headers)
        # Spans of an erased trace are refused, and change nothing.
        assert answer.status_code == 200 or "was erased" in answer.text, answer.text

    def annotate(self) -> None:
        runs = self.runs()
        if not runs:
            return
        run = self.harness.client.get(
            f"/api/v1/rm/traces/{self.chance.choice(runs)['id']}", headers=self.harness.admin
        ).json()
        body: dict[str, Any] = {}
        steps = [step for step in run["steps"] if step["role"] != "system"]
        if steps and self.chance.random() < 0.5:
            body["step_id"] = self.chance.choice(steps)["id"]
        if self.chance.random() < 0.7:
            body["rating"] = self.chance.choice([1, -1])
        if "rating" not in body or self.chance.random() < 0.4:
            body["comment"] = "Checked the policy first."
        if self.chance.random() < 0.3:
            answer = self.console.save(f"/ui/traces/{run['id']}/annotations", body)
        else:
            answer = self.post(f"/api/v1/rm/traces/{run['id']}/annotations", body)
        assert answer.status_code in (200, 201), answer.text

    def change_annotation(self) -> None:
        said = self.annotations()
        if not said:
            return
        annotation = self.chance.choice(said)
        changes: list[dict[str, Any]] = [
            {"label_error": not annotation["label_error"], "label_error_note": "wrong label"},
            {"rating": self.chance.choice([1, -1, None]), "comment": "Changed my mind."},
            {"comment": None, "rating": 1},
        ]
        change = self.chance.choice(changes)
        if self.chance.random() < 0.3:
            answer = self.console.save(f"/ui/annotations/{annotation['id']}", change)
        else:
            answer = self.harness.client.patch(
                f"/api/v1/rm/annotations/{annotation['id']}", json=change, headers=self.harness.admin
            )
        assert answer.status_code in (200, 422), answer.text

    def delete_annotation(self) -> None:
        said = self.annotations()
        if not said:
            return
        gone = self.chance.choice(said)["id"]
        if self.chance.random() < 0.3:
            answer = self.console.save(f"/ui/annotations/{gone}/delete", {})
        else:
            answer = self.harness.client.delete(f"/api/v1/rm/annotations/{gone}", headers=self.harness.admin)
        assert answer.status_code in (200, 204), answer.text

    def correct(self) -> None:
        runs = self.runs()
        if not runs:
            return
        who = self.chance.choice([self.harness.admin, self.second])
        body = {"runId": self.chance.choice(runs)["id"], "answer": "wrong", "why": "Promised a refund."}
        answer = self.post("/v1/corrections", body, who)
        # Refused when the run has no output to correct (unfinished, or erased).
        assert answer.status_code in (201, 400, 409), answer.text

    def remove_correction(self) -> None:
        live = self.corrections()
        if live:
            gone = self.chance.choice(live)
            answer = self.harness.client.post(
                f"/v1/corrections/{gone['id']}/unregister", headers=self.harness.admin
            )
            assert answer.status_code == 200, answer.text

    def erase(self) -> None:
        runs = self.runs()
        if runs:
            answer = self.post(f"/v1/runs/{self.chance.choice(runs)['id']}/erase", None)
            assert answer.status_code == 200, answer.text

    def step(self) -> None:
        writes = [
            (self.send_runs, 3),
            (self.send_spans, 3),
            (self.annotate, 5),
            (self.change_annotation, 3),
            (self.delete_annotation, 2),
            (self.correct, 3),
            (self.remove_correction, 1),
            (self.erase, 1),
        ]
        write = self.chance.choices([w for w, _ in writes], weights=[n for _, n in writes])[0]
        write()

    # ------------------------------------------------------------------------------------- the checks

    def check(self) -> None:
        """Every kept count equals the COUNT(*) of what it stands for; the rm total is the listed runs."""
        rated = and_(Annotation.rating.is_not(None), Annotation.label_error.is_(False))

        def counted(model: Any, key: Any, condition: Any) -> Any:
            return select(func.count()).select_from(model).where(key == Trace.id, condition).scalar_subquery()

        with self.harness.db.read() as session:
            kept = session.execute(
                select(
                    Trace.id,
                    Trace.rated_count,
                    Trace.comment_count,
                    Trace.correction_count,
                    counted(Annotation, Annotation.trace_id, rated),
                    counted(Annotation, Annotation.trace_id, Annotation.comment.is_not(None)),
                    counted(Correction, Correction.run_id, COUNTED),
                )
            ).all()
            for row in kept:
                assert tuple(row[1:4]) == tuple(row[4:7]), (
                    f"run {row[0]}: kept {row[1:4]}, counted {row[4:7]}"
                )
            listed = dict(
                session.execute(
                    select(Trace.project_id, func.count())
                    .where(Trace.hidden == false())
                    .group_by(Trace.project_id)
                ).all()
            )
            kept_listed = dict(
                session.execute(select(ProjectRunCount.project_id, ProjectRunCount.listed)).all()
            )
        assert {p: n for p, n in kept_listed.items() if n} == listed
        answer = self.harness.client.get("/api/v1/rm/traces?limit=1", headers=self.harness.admin)
        assert answer.json()["total"] == sum(listed.values())


@pytest.mark.parametrize("seed", [1, 4])
def test_kept_counts_match_the_rows_through_every_write(harness: Harness, seed: int) -> None:
    walk = Walk(harness, seed)
    for _ in range(45):
        walk.step()
        walk.check()
    # The walk reached what it is about: some of each count above zero.
    with harness.db.read() as session:
        totals = session.execute(
            select(
                func.sum(Trace.rated_count), func.sum(Trace.comment_count), func.sum(Trace.correction_count)
            )
        ).one()
    assert all(total and total > 0 for total in totals), totals


def test_correcting_again_after_removing_counts_the_new_correction_once(harness: Harness) -> None:
    run = harness.client.post("/v1/runs", json=harness.run(), headers=harness.admin).json()
    wrong = {"runId": run["id"], "answer": "wrong", "why": "Promised a refund."}
    first = harness.client.post("/v1/corrections", json=wrong, headers=harness.admin).json()
    removed = harness.client.post(f"/v1/corrections/{first['id']}/unregister", headers=harness.admin)
    assert removed.status_code == 200, removed.text
    again = harness.client.post("/v1/corrections", json=wrong, headers=harness.admin)
    assert again.status_code == 201, again.text
    replaced = harness.client.post(
        "/v1/corrections", json={**wrong, "why": "No policy check."}, headers=harness.admin
    )
    assert replaced.status_code == 201, replaced.text
    with harness.db.read() as session:
        assert session.scalar(select(Trace.correction_count)) == 1
    console = console_client(harness).http
    assert run["id"] in console.get("/ui/traces?corrected=yes").text
    assert run["id"] not in console.get("/ui/traces?corrected=no").text


def test_the_migration_counts_what_was_there_before_it(harness: Harness) -> None:
    """Going down below 0013 and up again rebuilds every count from the rows (the backfill)."""
    walk = Walk(harness, seed=3)
    for _ in range(30):
        walk.step()
    read = select(Trace.id, Trace.rated_count, Trace.comment_count, Trace.correction_count)
    with harness.db.read() as session:
        before = set(session.execute(read).all())
        listed_before = set(session.execute(select(ProjectRunCount.project_id, ProjectRunCount.listed)).all())
    migrate.downgrade(harness.db.engine, "0012_indexed_metadata")
    migrate.upgrade(harness.db.engine)
    with harness.db.read() as session:
        assert set(session.execute(read).all()) == before
        listed_after = set(session.execute(select(ProjectRunCount.project_id, ProjectRunCount.listed)).all())
    assert {row for row in listed_before if row[1]} == listed_after
    assert any(row[1] or row[2] or row[3] for row in before)
    walk.check()
