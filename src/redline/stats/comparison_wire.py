"""A comparison of two experiments as `/v2/experiments/{id}/compare/{other_id}` answers it: the reviews
surface's list (`object`, `data`, `has_more`), each datapoint a row with both results and A's mark, and the
`summary` beside the page."""

from __future__ import annotations

from typing import Any

from redline.experiments.results import ResultView
from redline.experiments.wire import result_dict
from redline.stats.comparison import ComparedRow, Comparison, ComparisonSummary

# The method behind `difference.low` and `difference.high`, as docs/experiments.md names it.
METHOD = "paired t interval, 95%"


def _side(view: ResultView | None, score: float | None) -> dict[str, Any] | None:
    return None if view is None else {**result_dict(view), "score": score}


def row_dict(row: ComparedRow) -> dict[str, Any]:
    either = row.a or row.b
    assert either is not None, "a compared datapoint has a result in one experiment at least"
    return {
        "_id": str(row.datapoint_id),
        "datapoint_id": str(row.datapoint_id),
        "inputs": either.result.inputs,
        "expected_output": either.result.expected_output,
        "mark": row.mark,
        "a": _side(row.a, row.score_a),
        "b": _side(row.b, row.score_b),
    }


def summary_dict(comparison: Comparison) -> dict[str, Any]:
    summary: ComparisonSummary = comparison.summary
    criterion = comparison.criterion
    difference = summary.difference
    return {
        "experiment_a_id": str(comparison.experiment_a.id),
        "experiment_b_id": str(comparison.experiment_b.id),
        "by": {"evaluator": criterion.evaluator}
        if criterion.evaluator is not None
        else {"key": criterion.key, "value": criterion.value},
        "higher_is_better": criterion.higher_is_better,
        "datapoints": summary.datapoints,
        "in_both": summary.in_both,
        "only_a": summary.only_a,
        "only_b": summary.only_b,
        "compared": summary.compared,
        "wins": summary.wins,
        "losses": summary.losses,
        "ties": summary.ties,
        "mean_a": summary.mean_a,
        "mean_b": summary.mean_b,
        "difference": None
        if difference is None
        else {"mean": difference.mean, "low": difference.low, "high": difference.high, "method": METHOD},
    }


def comparison_dict(comparison: Comparison) -> dict[str, Any]:
    return {
        "object": "list",
        "data": [row_dict(row) for row in comparison.rows],
        "has_more": comparison.has_more,
        "summary": summary_dict(comparison),
    }
