"""A correction made or taken back, as the expert queue takes it: the correction is saved or removed by
its own rules (`corrections.service`), and in the same transaction the item of its run moves and the
run's rules count it. Every way in (the corrections surface, the console, the demo) comes through here,
as every run comes through `ingest`, so no correction reaches the store without the queue hearing of it.
"""

from __future__ import annotations

import uuid

from sqlalchemy.orm import Session

from redline.corrections import service
from redline.corrections.models import Correction
from redline.corrections.schemas import CorrectionIn
from redline.identity.service import Actor
from redline.queues.expert import engine


def create(session: Session, actor: Actor, body: CorrectionIn) -> Correction:
    """Save a correction (replacing the caller's earlier one on the run) and tell the expert queue."""
    saved = service.save(session, actor, body)
    engine.on_correction_saved(session, saved.correction, saved.replaced)
    return saved.correction


def remove(session: Session, actor: Actor, correction_id: uuid.UUID) -> Correction:
    """Remove a correction for good and take it out of its rules' results; one already replaced by a
    later one was counted out when that one came."""
    correction = service.unregister(session, actor, correction_id)
    if correction.superseded_by is None:
        engine.on_correction_removed(session, correction)
    return correction
