"""Reward models, the traces each was asked to learn from, the exact pairs it was built with, what
training made of them, and the scores it gives traces."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, Float, ForeignKey, Index, Integer, LargeBinary, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from redline.db import Base, JSONDocument, UTCDateTime, new_id, utcnow


class RewardModel(Base):
    """A model to be trained from preference pairs; the pairs are persisted with it as evidence."""

    __tablename__ = "reward_models"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    workspace_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("workspaces.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(20))
    status_detail: Mapped[str | None] = mapped_column(Text)
    base_model: Mapped[str | None] = mapped_column(String(200))
    compute: Mapped[str] = mapped_column(String(40))
    epochs: Mapped[int] = mapped_column(Integer)
    max_pairs: Mapped[int] = mapped_column(Integer)
    num_pairs: Mapped[int] = mapped_column(Integer)
    # The caller's training_config as sent, unknown keys included (input_version, rubric, ...).
    training_config: Mapped[dict[str, Any]] = mapped_column(JSONDocument)
    metrics: Mapped[dict[str, Any] | None] = mapped_column(JSONDocument, nullable=True)
    error: Mapped[str | None] = mapped_column(Text)
    created_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("principals.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # The training job, whose progress a model in training shows.
    job_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("jobs.id", ondelete="SET NULL"))


class RewardModelTrace(Base):
    """A trace a reward model was asked to learn from: only these supply its pairs."""

    __tablename__ = "reward_model_traces"

    reward_model_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("reward_models.id", ondelete="CASCADE"), primary_key=True
    )
    trace_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("traces.id", ondelete="CASCADE"), primary_key=True)


class PreferencePair(Base):
    """One pair as the model was built with it: the texts themselves, not a recipe to rebuild them."""

    __tablename__ = "preference_pairs"
    __table_args__ = (UniqueConstraint("reward_model_id", "position"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    reward_model_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("reward_models.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column(Integer)
    granularity: Mapped[str] = mapped_column(String(10))
    source: Mapped[str] = mapped_column(String(40))
    chosen: Mapped[str] = mapped_column(Text)
    rejected: Mapped[str] = mapped_column(Text)
    # Where each side came from: {"chosen": {"trace_id", "step_id"?, "annotation_ids"}, "rejected": {...}}.
    source_ids: Mapped[dict[str, Any]] = mapped_column(JSONDocument)
    # "same_context", "cross" or "preference" (`learning/pairing.py`); None for a model built before pairs
    # said their kind.
    kind: Mapped[str | None] = mapped_column(String(20), nullable=True)
    # What the two sides share (`learning/contexts.py`): the same for the same context on any store and
    # on re-imported traces; None for a cross pair.
    context_id: Mapped[str | None] = mapped_column(String(80), nullable=True)


class RewardModelArtifact(Base):
    """What training produced: the model kind and the self-contained bytes that score with it. In the
    store, not on a disk, so every API process and worker can score with every model."""

    __tablename__ = "reward_model_artifacts"

    reward_model_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("reward_models.id", ondelete="CASCADE"), primary_key=True
    )
    kind: Mapped[str] = mapped_column(String(60))
    blob: Mapped[bytes] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class TraceScore(Base):
    """One scoring of a trace by a ready reward model: the score, and each assistant action's credit.

    Learned scores stay apart from annotations (rm-annotations.txt): people's feedback is never
    rewritten by a model's opinion of it."""

    __tablename__ = "trace_scores"
    __table_args__ = (Index("ix_trace_scores_trace_scored", "trace_id", "scored_at"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    trace_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("traces.id", ondelete="CASCADE"))
    reward_model_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("reward_models.id", ondelete="CASCADE"), index=True
    )
    score: Mapped[float] = mapped_column(Float)
    # [{"step_id", "index", "credit"}], one per assistant action, in step order.
    credits: Mapped[list[dict[str, Any]]] = mapped_column(JSONDocument)
    # The credits add up to the score exactly (an additive model), or are prefix-score differences.
    exact: Mapped[bool] = mapped_column(Boolean)
    scored_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class ProjectScoring(Base):
    """A project's active reward model: every trace stored in the project from `since` on is scored by
    it in the background (`learning.autoscore`)."""

    __tablename__ = "project_scoring"

    project_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    )
    reward_model_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("reward_models.id", ondelete="CASCADE"))
    since: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    set_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("principals.id", ondelete="SET NULL"))


class FeedbackAssessment(Base):
    """What the LLM made of one assistant action of a model's trace and the feedback about it ("View
    learning"): its verdict, what it relied on, the alternative, and whether that became a pair or why
    not. A snapshot kept with the model, like its pairs; it never becomes an annotation."""

    __tablename__ = "feedback_assessments"
    __table_args__ = (UniqueConstraint("reward_model_id", "position"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    reward_model_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("reward_models.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column(Integer)
    trace_id: Mapped[uuid.UUID] = mapped_column()
    step_id: Mapped[uuid.UUID] = mapped_column()
    step_index: Mapped[int] = mapped_column(Integer)
    target: Mapped[str] = mapped_column(String(20))  # "response" | "tool_call"
    verdict: Mapped[str] = mapped_column(String(20))
    basis: Mapped[str | None] = mapped_column(String(20))
    # As the LLM cited it (it may cite something that doesn't exist: that is why it was skipped).
    source_id: Mapped[str | None] = mapped_column(Text)
    source_kind: Mapped[str | None] = mapped_column(String(20))  # user_message | step_comment | response
    evidence_quote: Mapped[str | None] = mapped_column(Text)
    rationale: Mapped[str | None] = mapped_column(Text)
    # A text, or {"tool", "args"} for a tool call.
    alternative: Mapped[Any] = mapped_column(JSONDocument, nullable=True)
    # The independent review of a tool-call alternative: {"better", "rationale", "confirmed"}.
    review: Mapped[dict[str, Any] | None] = mapped_column(JSONDocument, nullable=True)
    skipped_reason: Mapped[str | None] = mapped_column(Text)
    # The pair's texts while it may still become one; its position among the model's pairs once it has.
    chosen: Mapped[str | None] = mapped_column(Text)
    rejected: Mapped[str | None] = mapped_column(Text)
    pair_position: Mapped[int | None] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
