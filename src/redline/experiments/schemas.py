"""Experiments, their results and preferences as the reviews surface's callers send them: snake_case,
unknown fields ignored (wire-clients.md §1). A result's run, when it comes inline, is a run as the run
API takes it (its steps and spans in either spelling), without the project and producer: those are the
experiment's."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from redline.reviews.schemas import AnnotationsIn, EvaluationIn
from redline.traces.schemas import (
    MAX_SPANS_PER_RUN,
    MAX_STEPS_PER_RUN,
    Instant,
    RunStatus,
    SpanIn,
    StepIn,
    check_times_and_spans,
)

MAX_NAME = 200
MAX_DESCRIPTION = 2_000
MAX_RESULTS_PER_CALL = 1_000
MAX_EVALUATIONS_PER_RESULT = 50
MAX_ERROR = 10_000
# The largest count an INTEGER column holds on PostgreSQL.
MAX_COUNT = 2**31 - 1
# A bound no real latency or cost reaches, so a fuzzed 1e308 is refused rather than stored.
MAX_FIGURE = 1e15

ExperimentState = Literal["running", "finished"]
EXPERIMENT_STATES: tuple[str, ...] = ("running", "finished")
Choice = Literal["a", "b", "tie"]


class _In(BaseModel):
    model_config = ConfigDict(extra="ignore", str_max_length=1_000_000)


class ExperimentIn(_In):
    """A new experiment of a dataset: an agent or a flow, its version, and what the harness says of it.
    `human_review_ids` chooses the project's review keys it is reviewed with (none: all of them)."""

    display_name: str = Field(min_length=1, max_length=MAX_NAME)
    dataset_id: str = Field(min_length=1, max_length=MAX_NAME)
    agent: str | None = Field(None, min_length=1, max_length=MAX_NAME)
    flow: str | None = Field(None, min_length=1, max_length=MAX_NAME)
    version: str | None = Field(None, min_length=1, max_length=MAX_NAME)
    description: str | None = Field(None, max_length=MAX_DESCRIPTION)
    metadata: dict[str, Any] | None = None
    human_review_ids: list[str] | None = Field(None, max_length=100)


class MetricsIn(_In):
    """Figures a harness measured itself; each one given wins over what the run's spans say."""

    latency_ms: float | None = Field(None, ge=0, le=MAX_FIGURE)
    input_tokens: int | None = Field(None, ge=0, le=MAX_COUNT)
    output_tokens: int | None = Field(None, ge=0, le=MAX_COUNT)
    total_tokens: int | None = Field(None, ge=0, le=MAX_COUNT)
    cost: float | None = Field(None, ge=0, le=MAX_FIGURE)


class InlineRunIn(_In):
    """The run a result produced, sent with it. Its input, when left out, is the datapoint's inputs. It is
    a dry run unless it says otherwise, so queue rules and automations (which leave dry runs out unless
    told) don't take an experiment's runs for production's."""

    external_id: str | None = Field(None, min_length=1, max_length=MAX_NAME)
    title: str | None = Field(None, max_length=500)
    status: RunStatus = "completed"
    dry_run: bool = True
    input: Any = None
    output: Any = None
    metadata: dict[str, Any] | None = None
    started_at: Instant | None = None
    ended_at: Instant | None = None
    steps: list[StepIn] = Field(default_factory=list, max_length=MAX_STEPS_PER_RUN)
    spans: list[SpanIn] = Field(default_factory=list, max_length=MAX_SPANS_PER_RUN)

    @model_validator(mode="after")
    def _consistent(self) -> InlineRunIn:
        # The run API's own checks of a run (traces.schemas.RunIn), in this surface's spelling.
        check_times_and_spans(self.started_at, self.ended_at, self.spans, camel=False)
        return self


class ResultIn(_In):
    """One datapoint's result: its run by `trace_id` (Redline's id, or the id the tracer gave, as an
    OTLP exporter does) or inline as `run`; why it failed, if it did; figures; evaluator results."""

    datapoint_id: str = Field(min_length=1, max_length=MAX_NAME)
    trace_id: str | None = Field(None, min_length=1, max_length=MAX_NAME)
    run: InlineRunIn | None = None
    error: str | None = Field(None, min_length=1, max_length=MAX_ERROR)
    metrics: MetricsIn | None = None
    evaluations: list[EvaluationIn] = Field(default_factory=list, max_length=MAX_EVALUATIONS_PER_RESULT)

    @model_validator(mode="after")
    def _one_run(self) -> ResultIn:
        if (self.trace_id is None) == (self.run is None):
            raise PydanticCustomError(
                "run", "a result names its run by trace_id or sends it as run, and not both"
            )
        return self


class ResultsIn(_In):
    results: list[ResultIn] = Field(min_length=1, max_length=MAX_RESULTS_PER_CALL)


class PreferenceIn(_In):
    """Which of the two experiments' outputs of a datapoint is better: `a` (the experiment the path names
    first), `b` (the other) or `tie`."""

    datapoint_id: str = Field(min_length=1, max_length=MAX_NAME)
    choice: Choice


class ResultAnnotationsIn(AnnotationsIn):
    """Values for the experiment's review keys on a result's run: on the run itself, or on its span
    `span_id`; `metadata` as the span annotation route takes it."""

    span_id: str | None = Field(None, min_length=1, max_length=MAX_NAME)


class ResultReviewRemoval(_In):
    """The keys whose values the caller takes back from a result's run (or its span `span_id`); with an
    `identity_id` in `metadata`, only that identity's, as the span annotation route's DELETE."""

    keys: list[str]
    span_id: str | None = Field(None, min_length=1, max_length=MAX_NAME)
    metadata: dict[str, Any] | None = None
