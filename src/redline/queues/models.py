"""Annotation queues, the runs (and spans) in them, the rules that fill them as runs arrive, and the tallies
of what those rules queued that their results and trends are read from."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from redline.db import Base, JSONDocument, UTCDateTime, new_id, utcnow


class Queue(Base):
    """A named list of traces waiting for people, reviewed with the project's review keys it names."""

    __tablename__ = "queues"
    __table_args__ = (Index("ix_queues_workspace_created", "workspace_id", "created_at", "id"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    workspace_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    project_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(16))
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    # Kept in step with its items in the same transaction (queues/annotation/items.py), so "Item 7 of 43, 12
    # reviewed" and the list's counts are one row read, not a count over a 100,000-item queue.
    items_count: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # Items `reviewers_per_item` distinct people have finished (queues/annotation/places.py).
    reviewed_count: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # How many distinct people review each item, how long the item a reviewer opens is held for them,
    # and whether reviewers are blind to each other's values (None: on when more than one reviews).
    reviewers_per_item: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    hold_minutes: Mapped[int] = mapped_column(Integer, default=10, server_default="10")
    blind: Mapped[bool | None] = mapped_column(Boolean)
    # Who may review besides having write in the project: {principalIds?, groupIds?, minReviewerRole?},
    # any one part met is enough; None when anyone who may write in the project may.
    reviewers: Mapped[dict[str, Any] | None] = mapped_column(JSONDocument, nullable=True)
    created_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("principals.id", ondelete="SET NULL"))
    updated_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("principals.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class QueueReviewKey(Base):
    """A review key a queue is reviewed with, in the queue's order."""

    __tablename__ = "queue_review_keys"

    queue_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("queues.id", ondelete="CASCADE"), primary_key=True)
    review_key_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("review_keys.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    position: Mapped[int] = mapped_column(Integer, default=0)


class QueueItem(Base):
    """One trace (or one span of it, or a datapoint) in one queue, once: adding it again changes nothing.

    `seq` numbers items in the order they came, per queue, so a reviewer's "Item 7 of 43" and next and
    previous are index range reads.
    """

    __tablename__ = "queue_items"
    __table_args__ = (
        UniqueConstraint("queue_id", "trace_id", "span_key"),
        UniqueConstraint("queue_id", "seq"),
        # Reviewed counts and "next unreviewed" are range reads within the NULL (or non-NULL) block.
        Index("ix_queue_items_queue_reviewed", "queue_id", "reviewed_at", "seq"),
    )

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    queue_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("queues.id", ondelete="CASCADE"))
    seq: Mapped[int] = mapped_column(Integer)
    type: Mapped[str] = mapped_column(String(16))
    trace_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("traces.id", ondelete="CASCADE"), index=True
    )
    # The span's own id as the trace reports it; "" for the whole trace, so the unique key holds.
    span_key: Mapped[str] = mapped_column(String(200), default="")
    datapoint_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("datapoints.id", ondelete="CASCADE"))
    # Which rules added it (rule id and version), or none when a person did.
    added_by_rules: Mapped[list[dict[str, Any]] | None] = mapped_column(JSONDocument, nullable=True)
    added_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("principals.id", ondelete="SET NULL"))
    added_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # The review keys a value was saved for, by anyone.
    used_review_key_ids: Mapped[list[str] | None] = mapped_column(JSONDocument, nullable=True)
    # Set once the queue's `reviewers_per_item` people have finished it: by whom the last, and when.
    reviewed_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("principals.id", ondelete="SET NULL"))
    reviewed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class QueueItemReviewer(Base):
    """One person's part in one item: holding it, done with it, or passed over it.

    A person who holds or has reviewed an item takes one of its places, `slot` 0 to reviewers_per_item
    - 1, and the unique key on (item, slot) is what keeps an item from ever having more people than
    places: two people claiming the last place insert the same slot, and only one insert can win. A hold
    is live while `held_until` is ahead; an expired one frees its place without anything cleaning it up
    (the next claimant deletes it, conditionally, before taking the place). A skip takes no place (slot
    None, which a unique key never compares equal) and keeps the item out of that person's "next".
    """

    __tablename__ = "queue_item_reviewers"
    __table_args__ = (
        UniqueConstraint("item_id", "slot"),
        # Per-reviewer progress: one grouped read of the queue's rows.
        Index("ix_queue_item_reviewers_queue_principal", "queue_id", "principal_id", "state"),
    )

    item_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("queue_items.id", ondelete="CASCADE"), primary_key=True
    )
    principal_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("principals.id", ondelete="CASCADE"), primary_key=True
    )
    queue_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("queues.id", ondelete="CASCADE"))
    slot: Mapped[int | None] = mapped_column(Integer)
    # held, reviewed or skipped.
    state: Mapped[str] = mapped_column(String(16))
    held_until: Mapped[datetime | None] = mapped_column(UTCDateTime)
    reviewed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    skipped_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class QueueAdjudication(Base):
    """An admin's settled value for one item of a queue under one of its review keys, where its reviewers
    disagreed: what exports and training take as the item's value. The reviewers' own values stay as
    they were saved; deciding again replaces the settled value, and taking it back deletes the row."""

    __tablename__ = "queue_adjudications"
    __table_args__ = (Index("ix_queue_adjudications_queue", "queue_id", "decided_at"),)

    item_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("queue_items.id", ondelete="CASCADE"), primary_key=True
    )
    review_key_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("review_keys.id", ondelete="CASCADE"), primary_key=True
    )
    queue_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("queues.id", ondelete="CASCADE"))
    # The value as a review value of the key holds it (an option, a list of options, a number, a text).
    value: Mapped[Any] = mapped_column(JSONDocument)
    note: Mapped[str | None] = mapped_column(Text)
    decided_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("principals.id", ondelete="SET NULL"))
    # Kept beside the id, so a settled value still says who settled it once that person is removed.
    decided_by_name: Mapped[str] = mapped_column(String(200))
    decided_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class QueueRule(Base):
    """One version of a rule that picks finished runs into a queue. A change writes a new version; the
    rule's id stays. The corrections document's queue rules and the annotation queues' automations are
    both rules: `when` matches runs, `sample` takes a share of them by a hash of rule and run.

    A rule with no `queue_id` fills its project's expert queue (the runs waiting for a correction); one
    with a queue is an annotation queue's automation."""

    __tablename__ = "queue_rules"
    __table_args__ = (Index("ix_queue_rules_project_live", "project_id", "unregistered_at"),)

    rule_id: Mapped[uuid.UUID] = mapped_column(primary_key=True)
    version: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    queue_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("queues.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(200))
    # {agentIds?, flowIds?, versions?, status?, includeDryRuns?, metadata?: [{path, op, value?}]}
    when: Mapped[dict[str, Any]] = mapped_column(JSONDocument)
    sample: Mapped[float] = mapped_column(Float, default=1.0)
    max_open: Mapped[int | None] = mapped_column(Integer)
    corrector_group_id: Mapped[uuid.UUID | None] = mapped_column()
    # How many distinct correctors (of the wanted group) the expert queue waits for; 1 for automations.
    correctors_wanted: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    # Only the newest version of a rule is live; earlier ones are its history.
    latest: Mapped[bool] = mapped_column(Boolean, default=True)
    created_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("principals.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    unregistered_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class QueueRuleCounter(Base):
    """How many of a rule's runs wait in the expert queue now, over all its versions.

    One row per rule, locked while a run is queued for it or an item of it closes, so `maxOpen` holds
    exactly when runs complete concurrently (PostgreSQL) and the Rules page reads "3 open" in one row.
    """

    __tablename__ = "queue_rule_counters"

    rule_id: Mapped[uuid.UUID] = mapped_column(primary_key=True)
    open_items: Mapped[int] = mapped_column(Integer, default=0)


class ExpertItem(Base):
    """A run in its project's expert queue: waiting for a correction, or how it left the queue.

    Carries what the queue shows of the run (producer, version, how and when it ended) and none of its
    content, so an erased run's item still reads.
    """

    __tablename__ = "expert_items"
    __table_args__ = (
        # Oldest first, within a project and within each state.
        Index("ix_expert_items_project_added", "project_id", "added_at", "run_id"),
        Index("ix_expert_items_project_state_added", "project_id", "state", "added_at", "run_id"),
        Index("ix_expert_items_project_closed", "project_id", "closed_at"),
    )

    run_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("traces.id", ondelete="CASCADE"), primary_key=True)
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    agent_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("agents.id", ondelete="SET NULL"))
    flow_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("flows.id", ondelete="SET NULL"))
    agent_version: Mapped[str | None] = mapped_column(String(200))
    run_status: Mapped[str] = mapped_column(String(16))
    completed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    added_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # open, corrected, dismissed or erased.
    state: Mapped[str] = mapped_column(String(16), default="open")
    closed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    closed_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("principals.id", ondelete="SET NULL"))
    reason: Mapped[str | None] = mapped_column(String(500))
    # How many correctors may hold or keep a place in it now (queues/expert/places.py): those who have
    # corrected it in a place, and as many more as its rules still want. Kept by the engine.
    places: Mapped[int] = mapped_column(Integer, default=1, server_default="1")


class ExpertItemRule(Base):
    """One rule that queued a run, at the version that did, and whether it has the correction it wants.

    The item closes as corrected once every one of its rules is satisfied. The row also names the
    results bucket (rule version, agent version, day) the run counts in.
    """

    __tablename__ = "expert_item_rules"
    __table_args__ = (Index("ix_expert_item_rules_rule_added", "rule_id", "added_at"),)

    run_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("expert_items.run_id", ondelete="CASCADE"), primary_key=True
    )
    rule_id: Mapped[uuid.UUID] = mapped_column(primary_key=True)
    rule_version: Mapped[int] = mapped_column(Integer)
    wanted_group_id: Mapped[uuid.UUID | None] = mapped_column()
    # How many distinct correctors it wants, as at the version that queued it.
    correctors_wanted: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    satisfied: Mapped[bool] = mapped_column(Boolean, default=False)
    # "" for a run that reports no version (it is a key of the results).
    agent_version: Mapped[str] = mapped_column(String(200), default="")
    added_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    day: Mapped[str] = mapped_column(String(10))


class ExpertItemCorrector(Base):
    """One corrector's part in one run of the expert queue: holding one of its places, or having
    corrected it in one; the expert queue's `QueueItemReviewer`, claimed by the same code
    (queues/holds.py).

    `slot` is 0 to the item's `places` - 1, and the unique key on (run, slot) keeps two people from
    taking one place. A hold is live while `held_until` is ahead. A correction made while every place
    was held by others still counts (corrections are never refused) and keeps a row without a slot.
    """

    __tablename__ = "expert_item_correctors"
    __table_args__ = (
        UniqueConstraint("run_id", "slot"),
        # Per-corrector progress: one grouped read of the project's rows.
        Index("ix_expert_item_correctors_project_principal", "project_id", "principal_id", "state"),
    )

    run_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("expert_items.run_id", ondelete="CASCADE"), primary_key=True
    )
    principal_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("principals.id", ondelete="CASCADE"), primary_key=True
    )
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    slot: Mapped[int | None] = mapped_column(Integer)
    # held or corrected.
    state: Mapped[str] = mapped_column(String(16))
    held_until: Mapped[datetime | None] = mapped_column(UTCDateTime)
    corrected_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class RuleResultTally(Base):
    """One count of a rule version's results, for one agent version and one day.

    Every event that changes a result (a run queued or skipped by the cap, an item closing or reopening,
    a correction made, replaced or removed on a queued run) adds to these rows in its own transaction,
    so results and trends read a few hundred rows however many corrections there are.

    `day` is the UTC day the run was queued (or skipped by the cap): a period ("the last 30 days") is
    the runs a rule queued in it, with every correction they have. `measure` names the count:
    `added`, `open`, `corrected`, `dismissed`, `erased`, `skippedByCap`, `runsWithCorrections`,
    `corrections:<group id>` and `yes:<group id>` (the group id empty for corrections without one).
    """

    __tablename__ = "rule_result_tallies"

    rule_id: Mapped[uuid.UUID] = mapped_column(primary_key=True)
    rule_version: Mapped[int] = mapped_column(Integer, primary_key=True)
    # "" for runs that report no version.
    agent_version: Mapped[str] = mapped_column(String(200), primary_key=True)
    day: Mapped[str] = mapped_column(String(10), primary_key=True)
    measure: Mapped[str] = mapped_column(String(60), primary_key=True)
    count: Mapped[int] = mapped_column(Integer, default=0)
