"""Part 5: a dataset of the refunds that went wrong, to test the next prompt against."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy.orm import Session

from redline.datasets import service as datasets
from redline.datasets.models import Dataset
from redline.datasets.schemas import DatasetIn
from redline.db import Database
from redline.demo.runs import DemoRun, completed
from redline.identity.service import Actor

DATASET = "Refunds that went wrong"
# The flaws (`traces.demo`) that end in money going out that shouldn't have.
REFUND_FLAWS = frozenset({"no_lookup", "non_refundable", "wrong_amount"})


def demo_dataset(session: Session, operator: Actor, project_id: uuid.UUID) -> Dataset | None:
    """The project's dataset of the demo's name, if it has one."""
    _, there = datasets.list_datasets(
        session, operator, limit=100, search=DATASET, project_id=str(project_id)
    )
    return next((view.dataset for view in there if view.dataset.name == DATASET), None)


def seed_dataset(
    db: Database, operator: Actor, project_id: uuid.UUID, project: str, runs: Sequence[DemoRun]
) -> str:
    """The dataset and its datapoints in one transaction; skipped when the dataset exists."""
    chosen = [run for run in completed(runs) if run.flaw in REFUND_FLAWS]
    with db.write() as session:
        if demo_dataset(session, operator, project_id) is not None:
            return f'Dataset: "{DATASET}" is already there; left as it is.'
        made = datasets.create_dataset(session, operator, DatasetIn(display_name=DATASET, path=project))
        for run in chosen:
            datasets.add_trace(session, operator, made.dataset.id, run.id)
    return (
        f'Dataset: "{DATASET}" with {len(chosen)} traces '
        "(refunds without a lookup, of final-sale items or of the wrong amount)."
    )
