"""`redline experiments create|list|show|results|compare|export`: experiments from a shell, as the local
operator.

The same services as `/v2/experiments`: a refusal is the API's sentence, and `export` writes each result
as JSON lines shaped as the API answers it. An experiment is named by its id or, when one experiment has
it, by its name; a dataset likewise.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
from sqlalchemy.orm import Session

from redline.cli.context import (
    CliContext,
    as_operator,
    open_output,
    output_option,
    pass_context,
    print_table,
    when_text,
)
from redline.cli.datasets import find_dataset
from redline.cli.progress import track
from redline.cli.reviews import key_in
from redline.db.id_pages import MAX_LIMIT, every_item
from redline.experiments import results as results_service
from redline.experiments import service as experiments
from redline.experiments.schemas import EXPERIMENT_STATES, ExperimentIn
from redline.experiments.service import ExperimentView
from redline.experiments.summary import Summary, experiment_summary
from redline.experiments.wire import result_dict
from redline.identity import service as identity
from redline.identity.models import Project
from redline.identity.service import Actor
from redline.jsonio import dumps
from redline.sentences import counted
from redline.stats.comparison import Criterion, compare
from redline.stats.comparison_wire import METHOD

# How much of an output a table row shows.
_CELL = 40


@click.group("experiments")
def experiments_group() -> None:
    """Experiments: a dataset run through a version of an agent, its results, and comparisons."""


def _all(session: Session, actor: Actor, **filters: Any) -> list[ExperimentView]:
    return list(
        every_item(
            lambda after: experiments.list_experiments(
                session, actor, limit=MAX_LIMIT, starting_after=after, **filters
            )
        )
    )


def find_experiment(session: Session, actor: Actor, name_or_id: str) -> ExperimentView:
    """An experiment by id, or by its exact name when one experiment has it."""
    try:
        return experiments.get_experiment(session, actor, uuid.UUID(name_or_id))
    except ValueError:
        pass
    named = [view for view in _all(session, actor) if view.experiment.name == name_or_id]
    if not named:
        raise experiments.experiment_not_found(actor, name_or_id)
    if len(named) > 1:
        raise click.ClickException(f'{len(named)} experiments are named "{name_or_id}": name one by its id.')
    return named[0]


def _cell(value: object) -> str:
    if value is None:
        return "-"
    text = value if isinstance(value, str) else dumps(value).decode()
    text = " ".join(text.split())
    return text if len(text) <= _CELL else text[: _CELL - 1] + "…"


def _number(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}g}"


def _producer(view: ExperimentView) -> str:
    experiment = view.experiment
    name = experiment.agent or f"flow {experiment.flow}"
    return f"{name} {experiment.version}" if experiment.version else name


# ------------------------------------------------------------------------------------------- commands


@experiments_group.command("list")
@click.option("--project", help="Only this project's experiments (name or id) [default: every project].")
@click.option("--dataset", help="Only experiments of this dataset (name or id).")
@click.option("--agent", help="Only experiments of this agent (or flow), by name.")
@click.option("--state", type=click.Choice(EXPERIMENT_STATES), help="Only running or only finished ones.")
@pass_context
def list_experiments(
    context: CliContext, project: str | None, dataset: str | None, agent: str | None, state: str | None
) -> None:
    """Experiments, newest first, with their results and errors."""
    with as_operator(context, write=False) as (session, actor):
        project_id = str(identity.find_project(session, actor, project).id) if project else None
        dataset_id = str(find_dataset(session, actor, dataset).dataset.id) if dataset else None
        rows = [
            (
                str(view.experiment.id),
                view.experiment.name,
                _producer(view),
                view.experiment.state,
                str(view.experiment.results_count),
                str(view.experiment.errored_count),
                when_text(view.experiment.created_at),
            )
            for view in _all(
                session, actor, project_id=project_id, dataset_id=dataset_id, agent=agent, state=state
            )
        ]
    print_table(rows, ("ID", "NAME", "AGENT", "STATE", "RESULTS", "ERRORED", "CREATED"))


@experiments_group.command("create")
@click.argument("name")
@click.option("--dataset", required=True, help="The dataset it runs (name or id).")
@click.option("--agent", help="The agent it runs, by name.")
@click.option("--flow", help="The flow it runs, by name (instead of an agent).")
@click.option("--version", help="The agent's (or flow's) version.")
@click.option("--description", help="What is being tried.")
@click.option("--metadata", help='A JSON object: the git commit, the configuration ({"commit": "4f2a9c1"}).')
@click.option(
    "--review-key",
    "review_keys",
    multiple=True,
    help="A human review key (or id) of the project to review with, in order; repeat for each "
    "[default: every key of the project].",
)
@pass_context
def create_experiment(
    context: CliContext,
    name: str,
    dataset: str,
    agent: str | None,
    flow: str | None,
    version: str | None,
    description: str | None,
    metadata: str | None,
    review_keys: tuple[str, ...],
) -> None:
    """Make the experiment NAME of a dataset, running; record its results through the API or the client."""
    try:
        meta = json.loads(metadata) if metadata is not None else None
    except ValueError:
        raise click.BadParameter("a JSON object.", param_hint="--metadata") from None
    if meta is not None and not isinstance(meta, dict):
        raise click.BadParameter("a JSON object.", param_hint="--metadata")
    with as_operator(context) as (session, actor):
        found = find_dataset(session, actor, dataset).dataset
        project = session.get_one(Project, found.project_id)
        ids = [str(key_in(session, actor, project, key).id) for key in review_keys]
        body = ExperimentIn(
            display_name=name,
            dataset_id=str(found.id),
            agent=agent,
            flow=flow,
            version=version,
            description=description,
            metadata=meta,
            human_review_ids=ids,
        )
        view = experiments.create_experiment(session, actor, body)
        keys = ", ".join(key.key for key in experiments.review_keys(session, view.experiment)) or "none yet"
        click.echo(
            f'Created experiment "{view.experiment.name}" ({view.experiment.id}) of dataset "{found.name}" '
            f"at version {view.experiment.dataset_version}."
        )
        click.echo(f"  reviewed with: {keys}")


def _summary_lines(summary: Summary) -> Iterator[str]:
    yield (
        f"  {counted(summary.results_count, 'result')}, {summary.errored_count} errored, "
        f"{summary.reviewed_count} reviewed here"
    )
    for name, figure in summary.figures.items():
        if figure.count:
            figures = f"mean {_number(figure.mean)}, total {_number(figure.total)}, max {_number(figure.max)}"
            yield f"  {name}: {figures}"
    for evaluator in summary.evaluators:
        mean = f", mean {_number(evaluator.mean)}" if evaluator.mean is not None else ""
        yield f"  evaluator {evaluator.evaluator} ({evaluator.output_type}): {evaluator.count}{mean}"
    for review in summary.reviews:
        mean = f", mean {_number(review.mean)}" if review.mean is not None else ""
        yield f"  review {review.key}: {review.count} on {counted(review.results, 'result')}{mean}"


@experiments_group.command("show")
@click.argument("experiment")
@pass_context
def show_experiment(context: CliContext, experiment: str) -> None:
    """The experiment EXPERIMENT (name or id) and its summary."""
    with as_operator(context, write=False) as (session, actor):
        view, summary = experiment_summary(
            session, actor, find_experiment(session, actor, experiment).experiment.id
        )
        found = view.experiment
        click.echo(f'Experiment "{found.name}" ({found.id}), {found.state}')
        click.echo(f"  {_producer(view)}; dataset {found.dataset_id} at version {found.dataset_version}")
        if found.description:
            click.echo(f"  {found.description}")
        if found.meta:
            click.echo(f"  metadata: {dumps(found.meta).decode()}")
        for line in _summary_lines(summary):
            click.echo(line)


@experiments_group.command("results")
@click.argument("experiment")
@click.option(
    "--limit",
    default=20,
    show_default=True,
    type=click.IntRange(min=1, max=MAX_LIMIT),
    help="Show at most this many.",
)
@pass_context
def show_results(context: CliContext, experiment: str, limit: int) -> None:
    """The first results of EXPERIMENT (name or id) in datapoint order: output, error, evaluators."""
    with as_operator(context, write=False) as (session, actor):
        found = find_experiment(session, actor, experiment).experiment
        page, views = results_service.list_results(session, actor, found.id, limit=limit)
        rows = [
            (
                str(view.result.datapoint_id),
                _cell(view.output),
                _cell(view.result.error),
                ", ".join(
                    f"{said.annotation.key}={dumps(said.annotation.value).decode()}"
                    for said in view.said
                    if said.is_evaluation
                )
                or "-",
                _number(view.result.latency_ms, 4),
            )
            for view in views
        ]
    print_table(rows, ("DATAPOINT", "OUTPUT", "ERROR", "EVALUATORS", "LATENCY MS"))
    if page.has_more:
        click.echo(f"More results: raise --limit (now {limit}) or export them.", err=True)


@experiments_group.command("compare")
@click.argument("experiment")
@click.argument("other")
@click.option("--evaluator", help="Decide by this evaluator's boolean or number results.")
@click.option("--key", help="Decide by this human review (range, or categorical with --value).")
@click.option("--value", help="The option of a categorical --key that counts as good.")
@click.option("--lower-is-better", is_flag=True, help="A lower score is better (a defect, a latency).")
@click.option(
    "--limit",
    default=20,
    show_default=True,
    type=click.IntRange(min=1, max=MAX_LIMIT),
    help="Datapoints to show.",
)
@pass_context
def compare_experiments(
    context: CliContext,
    experiment: str,
    other: str,
    evaluator: str | None,
    key: str | None,
    value: str | None,
    lower_is_better: bool,
    limit: int,
) -> None:
    """EXPERIMENT against OTHER (each a name or id) of the same dataset, datapoint by datapoint: where
    EXPERIMENT did better, worse or the same, and its wins, losses and ties with a 95% range."""
    criterion = Criterion(evaluator=evaluator, key=key, value=value, higher_is_better=not lower_is_better)
    with as_operator(context, write=False) as (session, actor):
        a = find_experiment(session, actor, experiment).experiment
        b = find_experiment(session, actor, other).experiment
        found = compare(session, actor, a.id, b.id, criterion, limit=limit)
    summary = found.summary
    rows = [
        (
            str(row.datapoint_id),
            row.mark or "-",
            _number(row.score_a),
            _number(row.score_b),
            _cell(row.a.output if row.a else None),
            _cell(row.b.output if row.b else None),
        )
        for row in found.rows
    ]
    print_table(rows, ("DATAPOINT", "MARK", "SCORE A", "SCORE B", "OUTPUT A", "OUTPUT B"))
    if found.has_more:
        click.echo(f"More datapoints: raise --limit (now {limit}).", err=True)
    click.echo("")
    click.echo(f'A "{a.name}" against B "{b.name}": {counted(summary.compared, "datapoint")} scored in both')
    click.echo(f"  wins {summary.wins}, losses {summary.losses}, ties {summary.ties}")
    unscored = summary.in_both - summary.compared
    click.echo(f"  only in A {summary.only_a}, only in B {summary.only_b}, unscored {unscored}")
    difference = summary.difference
    if difference is not None:
        spread = (
            f" (95% range {difference.low:+.3f} to {difference.high:+.3f}, {METHOD})"
            if difference.low is not None and difference.high is not None
            else ""
        )
        click.echo(
            f"  mean A {_number(summary.mean_a)}, mean B {_number(summary.mean_b)}, "
            f"difference A - B {difference.mean:+.3f}{spread}"
        )


@experiments_group.command("export")
@click.argument("experiment")
@output_option
@pass_context
def export_experiment(context: CliContext, experiment: str, output: Path | None) -> None:
    """Every result of EXPERIMENT (name or id) in datapoint order, as JSON lines shaped as the API's."""
    with as_operator(context, write=False) as (session, actor):
        found = find_experiment(session, actor, experiment).experiment
        written = 0
        with open_output(output) as sink:
            views = every_item(
                lambda after: results_service.list_results(
                    session, actor, found.id, limit=MAX_LIMIT, starting_after=after
                )
            )
            for view in track(views, f'Exporting "{found.name}"', noun="result", total=found.results_count):
                sink.write(dumps(result_dict(view)) + b"\n")
                written += 1
    if output is not None:
        click.echo(f'Wrote {counted(written, "result")} of "{found.name}" to {output}.')
