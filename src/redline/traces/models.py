"""Tables of what agents did: agents and flows, traces (runs), their steps and spans."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    SmallInteger,
    String,
    Text,
    UniqueConstraint,
    false,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from redline.db import Base, JSONDocument, UTCDateTime, new_id, utcnow


class _Producer:
    """What agents and flows share: a name in a project, registered on first use, and a pinned version."""

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(200))
    pinned_version: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class Agent(_Producer, Base):
    """Something that produces runs; registered by name on its first run."""

    __tablename__ = "agents"
    __table_args__ = (UniqueConstraint("project_id", "name"),)


class Flow(_Producer, Base):
    """A multi-step workflow that produces runs; registered by name on its first run."""

    __tablename__ = "flows"
    __table_args__ = (UniqueConstraint("project_id", "name"),)


class AgentVersion(Base):
    """What one version of an agent declares about itself: the tools it may call.

    Corrections of a run check the tools they name against the version that ran, when it declared them.
    """

    __tablename__ = "agent_versions"

    agent_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("agents.id", ondelete="CASCADE"), primary_key=True)
    version: Mapped[str] = mapped_column(String(200), primary_key=True)
    tools: Mapped[list[str]] = mapped_column(JSONDocument)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


# A listed run (not hidden) as each store spells it after its planner has simplified `hidden = false`.
LISTED_WHERE = {"sqlite": "hidden = 0", "postgresql": "NOT hidden"}

# The count behind each "has …" of a run. A partial index keeps the runs whose count is above 0, and the
# list's filter says `<count> > 0` with the 0 a literal, not a parameter: the same condition, which is
# what lets SQLite and PostgreSQL prove the query may use the index.
SAID_COUNTS = {"rated": "rated_count", "commented": "comment_count", "corrected": "correction_count"}


def _where(column: str) -> dict[str, Any]:
    return {"sqlite_where": text(f"{column} > 0"), "postgresql_where": text(f"{column} > 0")}


class Trace(Base):
    """One run of an agent or flow. The corrections document says run; the others say trace."""

    __tablename__ = "traces"
    __table_args__ = (
        UniqueConstraint("project_id", "external_id"),
        # The list's order and its since/until window; filters narrow within it.
        Index("ix_traces_project_started", "project_id", "started_at", "id"),
        # An agent's or a flow's runs in the list's whole order, so a page of one is a keyset walk too.
        Index("ix_traces_agent_started", "agent_id", "started_at", "id"),
        Index("ix_traces_flow_started", "flow_id", "started_at", "id"),
        # The rm surface lists newest-received first: one project's listed runs are one ordered walk of
        # this index (covering, so an offset skips index entries, not rows); several projects' walks merge.
        # Partial rather than keyed on `hidden`: PostgreSQL reads `hidden = false` as `NOT hidden`, which
        # would leave the key's order unusable, but proves the index's own condition from it.
        Index(
            "ix_traces_listed_project_created",
            "project_id",
            "created_at",
            "id",
            # Always false here; in the key so SQLite reads the index alone (a covering index).
            "hidden",
            sqlite_where=text(LISTED_WHERE["sqlite"]),
            postgresql_where=text(LISTED_WHERE["postgresql"]),
        ),
        # ...and when a caller sees more projects than a merge takes, one walk of every run, filtered.
        Index("ix_traces_created", "created_at", "id"),
        # The console's list sorts by step count or status: each a keyset walk on (key, id) in a project.
        Index("ix_traces_project_steps", "project_id", "step_count", "id"),
        Index("ix_traces_project_status", "project_id", "status", "id"),
        # The retention pass erases a project's oldest runs whose content is still there: a walk of only
        # those, so runs it erased before cost it nothing.
        Index(
            "ix_traces_project_unerased_started",
            "project_id",
            "started_at",
            "id",
            sqlite_where=text("erased_at IS NULL"),
            postgresql_where=text("erased_at IS NULL"),
        ),
        # A session's runs (a conversation's turns) in time order: the session page and the runs list's
        # sessionId filter are each one range of it. Partial: most runs name no session.
        Index(
            "ix_traces_project_session_started",
            "project_id",
            "session_id",
            "started_at",
            "id",
            sqlite_where=text("session_id IS NOT NULL"),
            postgresql_where=text("session_id IS NOT NULL"),
        ),
        # OTLP ingest finds a trace id's run in any project, to keep one trace in one project.
        Index("ix_traces_external_id", "external_id"),
        # The console's "has ratings / comments / corrections" filters, newest first: each a walk of only
        # the runs that have one. Partial, so a run nobody spoke of costs ingest nothing here.
        *(
            Index(f"ix_traces_project_{name}_started", "project_id", "started_at", "id", **_where(column))
            for name, column in SAID_COUNTS.items()
        ),
    )

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    external_id: Mapped[str | None] = mapped_column(String(200))
    # The session (conversation) the run is a turn of: its `sessionId`, else its metadata's session_id
    # (`redline.traces.session_ids`). Kept when the run's content is erased, like its external id.
    session_id: Mapped[str | None] = mapped_column(String(200))
    agent_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("agents.id"))
    flow_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("flows.id"))
    agent_version: Mapped[str | None] = mapped_column(String(200))
    version_source: Mapped[str | None] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16))
    dry_run: Mapped[bool] = mapped_column(Boolean, default=False)
    title: Mapped[str | None] = mapped_column(String(500))
    source_format: Mapped[str] = mapped_column(String(40))
    input: Mapped[Any] = mapped_column(JSONDocument, nullable=True)
    output: Mapped[Any] = mapped_column(JSONDocument, nullable=True)
    meta: Mapped[dict[str, Any] | None] = mapped_column("metadata", JSONDocument, nullable=True)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime)
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    step_count: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    erased_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # A run whose spans say nothing about AI (only HTTP and database spans) is kept but left out of run
    # lists and queue rules until a span gives it steps.
    hidden: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # When the run was complete enough for rules and scoring to see it: at once for a run sent whole;
    # for a run assembled from OTLP spans, once no span has come for a while (otlp-ingest §8.9).
    settled_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # What was said about the run, kept on every write of it (`redline.traces.counts`), so the console
    # filters by it with an index walk: unflagged ratings, comments, live corrections.
    rated_count: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    comment_count: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    correction_count: Mapped[int] = mapped_column(Integer, server_default=text("0"))


class ProjectRunCount(Base):
    """How many runs a project lists (hidden ones left out, erased ones in, as the lists show them),
    kept as runs are stored, shown and hidden: the rm list's `total` without counting every run."""

    __tablename__ = "project_run_counts"

    project_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    )
    listed: Mapped[int] = mapped_column(BigInteger, default=0)


class Step(Base):
    """One ordered message of a trace; may carry text and a tool call at once."""

    __tablename__ = "steps"
    __table_args__ = (UniqueConstraint("trace_id", "index"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    trace_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("traces.id", ondelete="CASCADE"))
    index: Mapped[int] = mapped_column(Integer)
    role: Mapped[str] = mapped_column(String(16))
    content: Mapped[str] = mapped_column(Text, default="")
    tool_name: Mapped[str | None] = mapped_column(String(200))
    tool_input: Mapped[Any] = mapped_column(JSONDocument, nullable=True)
    tool_call_id: Mapped[str | None] = mapped_column(String(200))
    meta: Mapped[dict[str, Any] | None] = mapped_column("metadata", JSONDocument, nullable=True)


class OtlpResource(Base):
    """The resource (the process that sent spans: service name, SDK, host) of OTLP spans, kept once per
    distinct content in a project and referenced by each span."""

    __tablename__ = "otlp_resources"
    __table_args__ = (UniqueConstraint("project_id", "content_hash"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    content_hash: Mapped[str] = mapped_column(String(64))
    attributes: Mapped[dict[str, Any]] = mapped_column(JSONDocument)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class OtlpScope(Base):
    """The instrumentation scope (the library that made a span) of OTLP spans, kept once per project."""

    __tablename__ = "otlp_scopes"
    __table_args__ = (UniqueConstraint("project_id", "content_hash"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    content_hash: Mapped[str] = mapped_column(String(64))
    name: Mapped[str] = mapped_column(Text)
    version: Mapped[str] = mapped_column(Text)
    attributes: Mapped[dict[str, Any] | None] = mapped_column(JSONDocument, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class Span(Base):
    """One timed operation of a trace (a model call, a tool execution), as tracers report them.

    A span sent over OTLP is kept as received (the columns from `otel_kind` on, otlp-ingest §3.1), so a
    later mapping can be re-run over it; `kind`, `model`, the token counts, `cost` and `error` are what
    Redline read from its attributes.
    """

    __tablename__ = "spans"
    __table_args__ = (UniqueConstraint("trace_id", "span_id"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    trace_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("traces.id", ondelete="CASCADE"))
    span_id: Mapped[str] = mapped_column(String(200))
    parent_span_id: Mapped[str | None] = mapped_column(String(200))
    kind: Mapped[str | None] = mapped_column(String(100))
    name: Mapped[str] = mapped_column(String(500))
    attributes: Mapped[dict[str, Any] | None] = mapped_column(JSONDocument, nullable=True)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    model: Mapped[str | None] = mapped_column(String(200))
    input_tokens: Mapped[int | None] = mapped_column(Integer)
    output_tokens: Mapped[int | None] = mapped_column(Integer)
    cost: Mapped[float | None] = mapped_column(Float)
    error: Mapped[bool | None] = mapped_column(Boolean)
    otel_kind: Mapped[int | None] = mapped_column(SmallInteger)
    start_ns: Mapped[int | None] = mapped_column(BigInteger)
    end_ns: Mapped[int | None] = mapped_column(BigInteger)
    status_code: Mapped[int | None] = mapped_column(SmallInteger)
    status_message: Mapped[str | None] = mapped_column(Text)
    trace_state: Mapped[str | None] = mapped_column(Text)
    flags: Mapped[int | None] = mapped_column(BigInteger)
    events: Mapped[list[Any] | None] = mapped_column(JSONDocument, nullable=True)
    links: Mapped[list[Any] | None] = mapped_column(JSONDocument, nullable=True)
    dropped_attributes: Mapped[int | None] = mapped_column(Integer)
    dropped_events: Mapped[int | None] = mapped_column(Integer)
    dropped_links: Mapped[int | None] = mapped_column(Integer)
    # Ids of rows in otlp_resources and otlp_scopes, without foreign keys: a key would make adding these
    # columns rebuild the spans table on SQLite. Erasing a run removes the rows no span refers to.
    resource_id: Mapped[uuid.UUID | None] = mapped_column()
    scope_id: Mapped[uuid.UUID | None] = mapped_column()
    received_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    content_hash: Mapped[str | None] = mapped_column(String(64))


class IndexedMetadataKey(Base):
    """A metadata key a project filters runs on, declared so searches on it walk an index.

    Declared `backfilling`: runs written from then on are indexed as they are written, and a background
    job indexes the runs the project had, a batch at a time, keeping its place (`after_*`) and its
    progress (`runs_done` of the `runs_total` there were). Searches use the index only once `ready`.
    """

    __tablename__ = "indexed_metadata_keys"
    __table_args__ = (UniqueConstraint("project_id", "key"),)

    # A fresh id per declaration: a backfill job of a key removed and declared again finds it gone.
    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    key: Mapped[str] = mapped_column(String(200))
    state: Mapped[str] = mapped_column(String(12))
    runs_total: Mapped[int] = mapped_column(Integer, default=0)
    runs_done: Mapped[int] = mapped_column(Integer, default=0)
    after_started_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    after_id: Mapped[uuid.UUID | None] = mapped_column()
    declared_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    ready_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class RunMetadataValue(Base):
    """One run's value of one indexed metadata key, as the search filter compares it (text; numbers as
    JSON writes them), beside the run's start time: an equality search on a key walks
    `ix_run_metadata_values_lookup` in the run list's order (started_at, id) and stops at a page.

    Kept exact by every write of runs (`redline.traces.metadata_index.reindex`); a run without the key
    (or with JSON null) has no row, an erased run none at all. A value longer than `MAX_INDEXED_VALUE`
    characters is kept as NULL: present, too long to look up, so a search for such a value goes unindexed.
    """

    __tablename__ = "run_metadata_values"
    __table_args__ = (
        Index("ix_run_metadata_values_lookup", "project_id", "key", "value", "started_at", "run_id"),
    )

    run_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("traces.id", ondelete="CASCADE"), primary_key=True)
    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    value: Mapped[str | None] = mapped_column(Text)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime)
