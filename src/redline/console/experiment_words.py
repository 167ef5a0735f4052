"""How the experiments' pages write their figures: a share as a percentage, a mean with its 95% range, an
evaluator's average as a share of true or a number, and the comparison's summary in sentences. One
place, so the list and the comparison say a figure the same way."""

from __future__ import annotations

from dataclasses import dataclass

from redline.sentences import counted
from redline.stats.comparison import ComparisonSummary, Criterion
from redline.stats.experiment_list import Column, EvaluatorFigure, KeyFigure, ListedExperiment
from redline.stats.paired import PairedDifference

# The method behind every 95% range the experiments' pages show, in the words docs/console.md uses.
RANGE_METHOD = "Student's t interval"


def figure(value: float) -> str:
    """A mean or a score to two decimals at most: 6.25, 0.7, 12."""
    written = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if written == "-0" else written


def share(value: float) -> str:
    return f"{value * 100:.0f}%"


def signed(value: float) -> str:
    return ("+" if value > 0 else "") + figure(value)


def ranged(estimate: PairedDifference) -> str:
    """A mean and its 95% range: "6.2 (5.8 to 6.6)"; with one value there is no range to give."""
    if estimate.low is None or estimate.high is None:
        return figure(estimate.mean)
    return f"{figure(estimate.mean)} ({figure(estimate.low)} to {figure(estimate.high)})"


@dataclass(frozen=True)
class Cell:
    """A figure as a list's cell shows it, with what it rests on on hover."""

    text: str
    title: str


NOTHING = Cell("—", "Nothing recorded yet.")


def _evaluator_cell(found: EvaluatorFigure | None) -> Cell:
    if found is None or found.mean is None:
        return NOTHING
    results = counted(found.count, "result")
    if found.output_type == "boolean":
        return Cell(share(found.mean), f"True in {share(found.mean)} of {results}")
    return Cell(figure(found.mean), f"Mean of {results}")


def _key_cell(column: Column, found: KeyFigure | None) -> Cell:
    if found is None:
        return NOTHING
    values = counted(found.count, "value")
    if column.figure == "count":
        return Cell(f"{found.count:,}", values)
    if column.figure == "share":
        said = found.shares.get(str(column.option), 0.0)
        return Cell(share(said), f"{share(said)} of {values} say {column.option}")
    if found.mean is None:
        return NOTHING
    title = f"Mean of {counted(found.mean.n, 'value')}"
    if found.mean.low is not None:
        title += f"; 95% range by {RANGE_METHOD}"
    return Cell(ranged(found.mean), title)


def cell(row: ListedExperiment, column: Column) -> Cell:
    """A figure column's cell of one experiment."""
    if column.figure == "eval":
        return _evaluator_cell(row.evaluators.get(column.name))
    return _key_cell(column, row.keys.get(column.name))


# --------------------------------------------------------------------------------------- the comparison


def criterion_words(criterion: Criterion) -> str:
    """What decides, as the summary names it: "exact", "Rating: good", "helpfulness"."""
    if criterion.evaluator is not None:
        return f"the evaluator {criterion.evaluator}"
    said = f"the human review {criterion.key}"
    return f"{said} saying {criterion.value}" if criterion.value is not None else said


def summary_sentences(summary: ComparisonSummary, criterion: Criterion) -> list[str]:
    """The comparison's summary in sentences: the wins, losses and ties, the means, the difference with its
    range and method, and what was left out."""
    way = "higher is better" if criterion.higher_is_better else "lower is better"
    said = [
        f"By {criterion_words(criterion)} ({way}): A wins {summary.wins:,}, loses {summary.losses:,} and "
        f"ties {summary.ties:,} of {counted(summary.compared, 'datapoint')} scored in both."
    ]
    if summary.mean_a is not None and summary.mean_b is not None:
        said.append(f"Mean score over those: A {figure(summary.mean_a)}, B {figure(summary.mean_b)}.")
    difference = summary.difference
    if difference is not None:
        if difference.low is None or difference.high is None:
            said.append(f"Difference A − B: {signed(difference.mean)}; one datapoint gives no range.")
        else:
            said.append(
                f"Difference A − B: {signed(difference.mean)}, 95% range {signed(difference.low)} to "
                f"{signed(difference.high)} (paired by datapoint, {RANGE_METHOD} of the differences)."
            )
    left = []
    if summary.only_a:
        left.append(f"{counted(summary.only_a, 'datapoint')} only in A")
    if summary.only_b:
        left.append(f"{counted(summary.only_b, 'datapoint')} only in B")
    unscored = summary.in_both - summary.compared
    if unscored:
        left.append(f"{counted(unscored, 'datapoint')} in both without a score in both")
    if left:
        said.append("Not compared: " + "; ".join(left) + ".")
    return said
