"""Experiments, their results, summaries and preferences as `/v2/experiments` answers them, in the reviews
surface's conventions (snake_case, `_id`, ISO times). Shared with `redline experiments export`, so a
result reads the same in a file and over HTTP.

A result's `annotations` and `evaluations` are what was said about its run, shaped exactly as the span
annotation and evaluation routes answer them (`reviews/wire.py`), with `made_in_experiment`
added to each annotation: whether it was made while reviewing this experiment.
"""

from __future__ import annotations

from typing import Any

from redline.experiments.preferences import PreferenceView
from redline.experiments.results import ResultView
from redline.experiments.service import ExperimentView
from redline.experiments.summary import Summary
from redline.jsonio import iso
from redline.reviews.wire import evaluation_dict, said_dict


def _id_text(value: object) -> str | None:
    return str(value) if value is not None else None


def experiment_dict(view: ExperimentView) -> dict[str, Any]:
    experiment = view.experiment
    return {
        "_id": str(experiment.id),
        "display_name": experiment.name,
        "description": experiment.description,
        "project_id": str(experiment.project_id),
        "workspace_id": str(experiment.workspace_id),
        "dataset_id": str(experiment.dataset_id),
        "dataset_version": experiment.dataset_version,
        "agent": experiment.agent,
        "flow": experiment.flow,
        "version": experiment.version,
        "metadata": experiment.meta or {},
        "state": experiment.state,
        "human_review_ids": view.review_key_ids,
        "results_count": experiment.results_count,
        "errored_count": experiment.errored_count,
        "created_by_id": _id_text(experiment.created_by),
        "updated_by_id": _id_text(experiment.updated_by),
        "created": iso(experiment.created_at),
        "updated": iso(experiment.updated_at),
        "finished": iso(experiment.finished_at),
    }


def summary_dict(summary: Summary) -> dict[str, Any]:
    return {
        "results_count": summary.results_count,
        "errored_count": summary.errored_count,
        "reviewed_count": summary.reviewed_count,
        "metrics": {
            name: {"count": figure.count, "mean": figure.mean, "total": figure.total, "max": figure.max}
            for name, figure in summary.figures.items()
        },
        "evaluations": [
            {"evaluator": one.evaluator, "output_type": one.output_type, "count": one.count, "mean": one.mean}
            for one in summary.evaluators
        ],
        "reviews": [
            {
                "key": one.key,
                "count": one.count,
                "results": one.results,
                "made_in_experiment": one.made_here,
                "mean": one.mean,
            }
            for one in summary.reviews
        ],
    }


def result_dict(view: ResultView) -> dict[str, Any]:
    result = view.result
    return {
        "_id": str(result.id),
        "experiment_id": str(result.experiment_id),
        "datapoint_id": str(result.datapoint_id),
        "datapoint_version": result.datapoint_version,
        "trace_id": str(result.run_id),
        "inputs": result.inputs,
        "messages": result.messages,
        "expected_output": result.expected_output,
        "output": view.output,
        "run_status": view.run_status,
        "error": result.error,
        "metrics": {
            "latency_ms": result.latency_ms,
            "input_tokens": result.input_tokens,
            "output_tokens": result.output_tokens,
            "total_tokens": result.total_tokens,
            "cost": result.cost,
        },
        "evaluations": [evaluation_dict(said) for said in view.said if said.is_evaluation],
        "annotations": [
            {**said_dict(said), "made_in_experiment": said.annotation.id in view.made_here}
            for said in view.said
            if not said.is_evaluation
        ],
        "created": iso(result.created_at),
        "updated": iso(result.updated_at),
    }


def preference_dict(view: PreferenceView) -> dict[str, Any]:
    preference = view.preference
    return {
        "_id": str(preference.id),
        "project_id": str(preference.project_id),
        "experiment_a_id": str(view.experiment_a_id),
        "experiment_b_id": str(view.experiment_b_id),
        "datapoint_id": str(preference.datapoint_id),
        "trace_a_id": str(view.run_a_id),
        "trace_b_id": str(view.run_b_id),
        "choice": view.choice,
        "author_id": _id_text(preference.principal_id),
        "author_name": preference.author_name,
        "created": iso(preference.created_at),
        "updated": iso(preference.updated_at),
    }
