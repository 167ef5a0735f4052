"""Everything said about some runs the caller has read: ratings and comments, review values and
evaluator results, and live corrections. What `get_run` shows beside a run and `export_runs` writes with
each: read in a query per kind for the whole page (corrections, one short list per run)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy.orm import Session

from redline.annotations import service as annotation_service
from redline.corrections import service as corrections
from redline.corrections.wire import correction_dict
from redline.db.paging import MAX_LIMIT
from redline.identity.service import Actor
from redline.mcp.shapes import annotation_dict, said_dict
from redline.queues.annotation.blind import hidden_from
from redline.reviews.said import said_about


def said_about_runs(
    session: Session, actor: Actor, run_ids: Sequence[uuid.UUID]
) -> dict[uuid.UUID, dict[str, list[dict[str, Any]]]]:
    """Per run: `annotations` (ratings, comments), `reviewValues` (values for review keys but those
    blind review hides from the actor, evaluator results with their corrections) and `corrections` (the
    live ones, newest first: one per person, so a page of the list holds them all)."""
    feedback = annotation_service.feedback_on(session, run_ids)
    reviewed = said_about(session, run_ids, hidden_from(session, actor))
    found: dict[uuid.UUID, dict[str, list[dict[str, Any]]]] = {}
    for run_id in run_ids:
        live = corrections.list_corrections(
            session, actor, corrections.CorrectionFilters(run_id=run_id), limit=MAX_LIMIT, cursor=None
        )
        found[run_id] = {
            "annotations": [annotation_dict(annotation) for annotation in feedback[run_id]],
            "reviewValues": [said_dict(said) for said in reviewed[run_id]],
            "corrections": [correction_dict(correction) for correction in live.items],
        }
    return found
