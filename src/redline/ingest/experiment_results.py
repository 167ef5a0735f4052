"""Results of an experiment, some bringing their runs inline: the runs arrive as any run sent whole does
(stored, then offered to queue rules, automations and auto-scoring, `runs.record_runs`), then the results
are recorded against them. Here because it joins the arrival of runs with the experiments domain below.

All in the caller's one transaction: a result refused after its run was stored leaves neither.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy.orm import Session

from redline.experiments import results
from redline.experiments.results import ResultView
from redline.experiments.schemas import ResultIn
from redline.identity.service import Actor
from redline.ingest.runs import record_runs


def record_results(
    session: Session, actor: Actor, experiment_id: uuid.UUID | str, sent: Sequence[ResultIn]
) -> list[ResultView]:
    """Record up to 1,000 results, all or none; answers them in the order sent."""
    batch = results.prepare(session, actor, experiment_id, sent)
    inline = [
        (index, results.inline_run(batch.experiment, result.run, batch.datapoints[index]))
        for index, result in enumerate(sent)
        if result.run is not None
    ]
    stored = record_runs(session, actor, [run for _, run in inline]) if inline else []
    runs = {index: run.id for (index, _), run in zip(inline, stored, strict=True)}
    return results.record(session, actor, batch, runs)
