"""The queue-rule engine at ingest: as runs are written, each live rule of their project queues those it
matches and samples, in the same transaction: an annotation queue's automations into their queue (here),
the expert-queue rules into the project's expert queue (`expert.engine.evaluate`, which holds `maxOpen`).

The project's rules are loaded once per batch (one indexed query; a batch in a project without rules
costs only that), each run is matched in Python against each rule, and every queue gets its new items
in one insert. An item already in a queue — added by hand, by another rule, or by this rule when a run
is sent again — is skipped by the queue's unique key, so a run is never queued twice.

Imports no traces service: the traces service calls in here.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from typing import Any, cast

from sqlalchemy import Connection, Table, bindparam, func, select
from sqlalchemy.orm import Session

from redline.queues import versions as rule_versions
from redline.queues.annotation.items import WHOLE_TRACE, insert_items
from redline.queues.expert import engine as expert
from redline.queues.matching import LiveRule, RunFacts, matches, sampled
from redline.queues.models import QueueRule

_LIVE_RULE_COLUMNS = (
    QueueRule.rule_id,
    QueueRule.version,
    QueueRule.project_id,
    QueueRule.queue_id,
    QueueRule.when,
    QueueRule.sample,
    QueueRule.max_open,
    QueueRule.corrector_group_id,
    QueueRule.correctors_wanted,
)


# The rules of a project change rarely and are read for every run recorded. A process keeps the last
# list it read per store and project and uses it while the project's rule rows look the same (as many
# rows, as many removed, the same newest): a new version, a removal or a deleted queue in any process
# changes that, and checking it is one index read instead of decoding every rule.
_KNOWN_LIMIT = 1024
_known: dict[tuple[str, uuid.UUID], tuple[tuple[Any, ...], list[LiveRule]]] = {}


_RULES = cast(Table, QueueRule.__table__).c
_STAMP = select(func.count(), func.count(_RULES.unregistered_at), func.max(_RULES.created_at)).where(
    _RULES.project_id == bindparam("project")
)


def _stamp(connection: Connection, project_id: uuid.UUID) -> tuple[Any, ...]:
    # Core on the session's connection: no ORM compilation and no autoflush for a three-number read.
    return tuple(connection.execute(_STAMP, {"project": project_id}).one())


def _read_live_rules(session: Session, project_id: uuid.UUID) -> list[LiveRule]:
    rows = session.execute(
        select(*_LIVE_RULE_COLUMNS).where(
            QueueRule.project_id == project_id, rule_versions.LIVE, QueueRule.enabled.is_(True)
        )
    )
    return [LiveRule(*row) for row in rows]


def live_rules(session: Session, project_ids: Sequence[uuid.UUID]) -> list[LiveRule]:
    """The latest, enabled, not removed version of every rule of these projects."""
    connection = session.connection()
    store = str(connection.engine.url)
    found: list[LiveRule] = []
    for project_id in project_ids:
        stamp = _stamp(connection, project_id)
        known = _known.get((store, project_id))
        if known is None or known[0] != stamp:
            if len(_known) >= _KNOWN_LIMIT:
                _known.clear()
            known = _known[(store, project_id)] = (stamp, _read_live_rules(session, project_id))
        found.extend(known[1])
    return found


def facts_of_row(row: Mapping[str, Any]) -> RunFacts:
    """A trace row as ingest writes it (new rows carry `id`, replaced ones `b_id`)."""
    return RunFacts(
        id=row["id"] if "id" in row else row["b_id"],
        project_id=row["project_id"],
        agent_id=row["agent_id"],
        flow_id=row["flow_id"],
        version=row["agent_version"],
        version_source=row["version_source"],
        status=row["status"],
        dry_run=bool(row["dry_run"]),
        metadata=row["metadata"],
        ended_at=row.get("ended_at"),
    )


def picks(
    rules: Sequence[LiveRule], runs: Sequence[RunFacts]
) -> dict[uuid.UUID, dict[uuid.UUID, list[dict[str, Any]]]]:
    """For each annotation queue, the runs its automations take, each with the rules (and versions) that
    took it."""
    by_project: dict[uuid.UUID, list[tuple[uuid.UUID, LiveRule]]] = defaultdict(list)
    for rule in rules:
        if rule.queue_id is not None:
            by_project[rule.project_id].append((rule.queue_id, rule))
    chosen: dict[uuid.UUID, dict[uuid.UUID, list[dict[str, Any]]]] = defaultdict(dict)
    for run in runs:
        for queue_id, rule in by_project.get(run.project_id, ()):
            if matches(rule.when, run) and sampled(rule.rule_id, run.id, rule.sample):
                chosen[queue_id].setdefault(run.id, []).append(
                    {"ruleId": str(rule.rule_id), "version": rule.version}
                )
    return chosen


def queue_runs(
    session: Session, runs: Sequence[RunFacts], *, replaced: Collection[uuid.UUID] | None = None
) -> int:
    """Queue the runs the projects' live rules pick; how many picks the automations made (items already
    in their queue included)."""
    if not runs:
        return 0
    rules = live_rules(session, sorted({run.project_id for run in runs}, key=str))
    if not rules:
        return 0
    expert.evaluate(session, [rule for rule in rules if rule.queue_id is None], runs, replaced=replaced)
    chosen = picks(rules, runs)
    for queue_id, taken in sorted(chosen.items(), key=lambda pair: str(pair[0])):
        insert_items(
            session,
            queue_id,
            [
                {
                    "type": "span",
                    "trace_id": run_id,
                    "span_key": WHOLE_TRACE,
                    "datapoint_id": None,
                    "added_by_rules": by,
                    "added_by": None,
                }
                for run_id, by in taken.items()
            ],
        )
    return sum(len(taken) for taken in chosen.values())


def on_ingest(session: Session, trace_rows: Sequence[Mapping[str, Any]]) -> None:
    """The ingest hook: the rows just written, new and replaced."""
    replaced = {row["b_id"] for row in trace_rows if "b_id" in row}
    queue_runs(session, [facts_of_row(row) for row in trace_rows], replaced=replaced)


def on_erase(session: Session, run_id: uuid.UUID) -> None:
    """The erase hook: a run whose content is gone leaves the expert queue."""
    expert.on_run_erased(session, run_id)
