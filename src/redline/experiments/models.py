"""Experiments: a dataset run through one version of an agent (or flow), a result per datapoint, what
people said while reviewing it, and their preferences between two experiments' outputs."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from redline.db import Base, JSONDocument, UTCDateTime, new_id, utcnow


class Experiment(Base):
    """One run of a dataset's datapoints through an agent or flow at a version, in the dataset's project.

    The dataset is named by its id without a foreign key, as a result names its datapoint: an experiment
    is a record of what ran, and its results carry copies of what they ran on, so deleting the dataset
    later leaves the experiment whole. `dataset_version` is the dataset's version when it was made.
    """

    __tablename__ = "experiments"
    __table_args__ = (
        # The list, newest first, and the same list of one dataset's experiments.
        Index("ix_experiments_workspace_created", "workspace_id", "created_at", "id"),
        Index("ix_experiments_dataset_created", "dataset_id", "created_at", "id"),
    )

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    workspace_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    dataset_id: Mapped[uuid.UUID] = mapped_column()
    dataset_version: Mapped[int] = mapped_column(Integer)
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str | None] = mapped_column(Text)
    # What ran: an agent or a flow, by the name its runs carry, and the version.
    agent: Mapped[str | None] = mapped_column(String(200))
    flow: Mapped[str | None] = mapped_column(String(200))
    version: Mapped[str | None] = mapped_column(String(200))
    # What the harness says about the run: a git commit, the configuration.
    meta: Mapped[dict[str, Any] | None] = mapped_column("metadata", JSONDocument, nullable=True)
    # running, or finished once the harness says so; a finished experiment takes no more results.
    state: Mapped[str] = mapped_column(String(16))
    # Kept in step with its results in the same transaction, so the list reads them from this row.
    results_count: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    errored_count: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    created_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("principals.id", ondelete="SET NULL"))
    updated_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("principals.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class ExperimentReviewKey(Base):
    """A review key an experiment is reviewed with, in its order; deleting the key deletes this row, so
    the experiment stops offering it while the values recorded under it stay on their runs."""

    __tablename__ = "experiment_review_keys"

    experiment_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("experiments.id", ondelete="CASCADE"), primary_key=True
    )
    review_key_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("review_keys.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    position: Mapped[int] = mapped_column(Integer, default=0)


class ExperimentResult(Base):
    """One datapoint of an experiment and the run it produced: one per datapoint (recording it again
    replaces it). The datapoint's inputs, messages and expected output are copies taken when the result
    was recorded, so a datapoint changed or deleted later changes nothing here. The metrics are read
    from the run's spans when recorded (or given); what people and evaluators said stays on the run."""

    __tablename__ = "experiment_results"
    __table_args__ = (
        UniqueConstraint("experiment_id", "datapoint_id"),
        # The results page and the comparison walk an experiment's results in datapoint order.
        Index("ix_experiment_results_experiment_datapoint", "experiment_id", "datapoint_id", "id"),
    )

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    experiment_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("experiments.id", ondelete="CASCADE"))
    datapoint_id: Mapped[uuid.UUID] = mapped_column()
    datapoint_version: Mapped[int] = mapped_column(Integer)
    run_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("traces.id", ondelete="CASCADE"), index=True)
    inputs: Mapped[dict[str, Any] | None] = mapped_column(JSONDocument, nullable=True)
    messages: Mapped[list[Any] | None] = mapped_column(JSONDocument, nullable=True)
    expected_output: Mapped[str | None] = mapped_column(Text)
    # Why the datapoint failed, when it did: the harness recorded it and went on with the others.
    error: Mapped[str | None] = mapped_column(Text)
    latency_ms: Mapped[float | None] = mapped_column(Float)
    input_tokens: Mapped[int | None] = mapped_column(Integer)
    output_tokens: Mapped[int | None] = mapped_column(Integer)
    total_tokens: Mapped[int | None] = mapped_column(Integer)
    cost: Mapped[float | None] = mapped_column(Float)
    created_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("principals.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class ExperimentAnnotation(Base):
    """An annotation made while reviewing the experiment. The annotation itself is an ordinary one on
    the result's run; this row only says where it was made, and goes with it."""

    __tablename__ = "experiment_annotations"

    experiment_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("experiments.id", ondelete="CASCADE"), primary_key=True
    )
    annotation_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("annotations.id", ondelete="CASCADE"), primary_key=True, index=True
    )


class ExperimentPreference(Base):
    """A person's choice between the outputs of one datapoint in two experiments: A better, B better,
    or a tie. One per person per datapoint per pair of experiments, the pair kept in one order (the
    lower id is A), so recording it again from either side changes it.

    It names both runs, so it stays a usable preference pair when an experiment is deleted (its id is
    then cleared): a person's judgment, like an annotation, outlives the experiment it was made in.
    """

    __tablename__ = "experiment_preferences"
    __table_args__ = (
        # Named: the convention's name (every column's) is past PostgreSQL's 63 characters.
        UniqueConstraint(
            "experiment_a_id",
            "experiment_b_id",
            "datapoint_id",
            "principal_id",
            name="uq_experiment_preferences_one_per_person",
        ),
        Index("ix_experiment_preferences_project_created", "project_id", "created_at", "id"),
    )

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    experiment_a_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("experiments.id", ondelete="SET NULL")
    )
    experiment_b_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("experiments.id", ondelete="SET NULL"), index=True
    )
    datapoint_id: Mapped[uuid.UUID] = mapped_column()
    run_a_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("traces.id", ondelete="CASCADE"), index=True)
    run_b_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("traces.id", ondelete="CASCADE"), index=True)
    # "a", "b" or "tie".
    choice: Mapped[str] = mapped_column(String(8))
    principal_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("principals.id", ondelete="SET NULL"))
    # Kept as written, so the record still names who chose after the principal is gone.
    author_name: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
