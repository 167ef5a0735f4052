"""`redline reward-models …`: reward models from a shell, as the local operator.

The same services as /api/v1/rm/reward-models (`learning.service`, `scoring`, `autoscore`): make a model
from traces (its training job is queued with it; a worker trains it), read it, page its pairs out, score
traces with it, make it the model that scores a project's new traces, or fine-tune a transformers model
on its pairs on a GPU (`learning.trl_train`).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource
from sqlalchemy.orm import Session

from redline.cli.context import (
    CliContext,
    as_operator,
    fail,
    output_option,
    pass_context,
    print_table,
    trace_ids,
    tune_gc_for_bulk_work,
    when_text,
    write_json_lines,
)
from redline.cli.progress import ShareProgress, track
from redline.errors import NotFound, RedlineError
from redline.identity import service as identity
from redline.identity.service import Actor
from redline.jsonio import dumps
from redline.learning import autoscore, exports, figures, scoring, trl_train
from redline.learning import service as learning
from redline.learning.figures import Figure
from redline.learning.models import RewardModel
from redline.learning.pair_rules import ADJUDICATED_ONLY, MIN_AGREEMENT
from redline.learning.pairing import DEFAULT_MIN_PAIRS, RULES, SAME_CONTEXT_FIRST
from redline.learning.pairs import DEFAULT_MAX_PAIRS
from redline.sentences import counted


@click.group("reward-models")
def reward_models_group() -> None:
    """Reward models: make one from rated or corrected traces, read it, score traces with it."""


def find_model(session: Session, actor: Actor, name_or_id: str) -> RewardModel:
    """A model by id, or by its exact name when one model has it."""
    try:
        return learning.get_model(session, actor, uuid.UUID(name_or_id))
    except ValueError:
        pass
    named = [model for model in learning.list_models(session, actor) if model.name == name_or_id]
    if not named:
        raise NotFound("reward-model", name_or_id)
    if len(named) > 1:
        raise click.ClickException(
            f'{len(named)} reward models are named "{name_or_id}": name one by its id.'
        )
    return named[0]


def write_pairs(context: CliContext, model_ref: str, export_format: str, output: Path | None) -> None:
    """A model's pairs as JSON lines in `export_format` (`exports.FORMATS`), read a page at a time."""
    with as_operator(context, write=False) as (session, actor):
        model = find_model(session, actor, model_ref)
        name, lines = model.name, exports.records(session, actor, model.id, export_format)
        label = f'Exporting the pairs of "{name}"'
        count = write_json_lines(output, track(lines, label, noun="pair", total=model.num_pairs))
    pairs = counted(count, "pair")
    if output:
        click.echo(f'Wrote {pairs} of "{name}" to {output} ({export_format}).')
    else:
        click.echo(f"{pairs}.", err=True)


# `--pairing` and `--min-pairs`, as `reward-models create` and `pairs preview` take them (docs/api-rm.md,
# "Pairing"): Redline's own tools ask for same-context pairs first.
pairing_option = click.option(
    "--pairing",
    type=click.Choice(RULES),
    default=SAME_CONTEXT_FIRST,
    show_default=True,
    help="same_context_first: pairs of answers to the same context, then cross pairs up to --min-pairs; "
    "every_pair: every chosen with every rejected (the rm API's default).",
)
min_pairs_option = click.option(
    "--min-pairs",
    default=DEFAULT_MIN_PAIRS,
    show_default=True,
    type=click.IntRange(min=0, max=learning.MAX_PAIRS_LIMIT),
    help="With same_context_first: cross pairs are added only to bring the pairs up to this many.",
)


def pairing_config(pairing: str, min_pairs: int) -> dict[str, Any]:
    """The training config's pairing: `min_pairs` only with the rule that reads it; --min-pairs typed
    with every_pair, which would not read it, is refused rather than ignored."""
    if pairing != SAME_CONTEXT_FIRST:
        if click.get_current_context().get_parameter_source("min_pairs") is ParameterSource.COMMANDLINE:
            raise click.BadOptionUsage("min_pairs", "--min-pairs is for --pairing same_context_first.")
        return {"pairing": pairing}
    return {"pairing": pairing, "min_pairs": min_pairs}


def _progress(session: Session, model: RewardModel) -> str | None:
    progress = learning.progress_of(session, model)
    if progress is None:
        return None
    fraction, note = progress
    return f"{fraction:.0%}" + (f" ({note})" if note else "")


def _echo_figures(heading: str, shown: list[Figure]) -> None:
    """The figures as the console's model page shows them, one a line, each note after it in parentheses."""
    click.echo(f"  {heading}:")
    for figure in shown:
        click.echo(f"    {figure.label}: {figure.value}" + (f" ({figure.note})" if figure.note else ""))


# ------------------------------------------------------------------------------------------- commands


@reward_models_group.command("list")
@pass_context
def list_models(context: CliContext) -> None:
    """The workspace's reward models, newest first."""
    with as_operator(context, write=False) as (session, actor):
        models = learning.list_models(session, actor)
        counts = learning.trace_counts(session, [model.id for model in models])
        rows = [
            (
                str(model.id),
                model.name,
                model.status,
                str(model.num_pairs),
                str(counts[model.id]),
                figures.validation_percent(model.metrics),
                when_text(model.created_at),
            )
            for model in models
        ]
    if not rows:
        click.echo("No reward models yet: make one with redline reward-models create.")
        return
    print_table(rows, ("ID", "NAME", "STATUS", "PAIRS", "TRACES", "ACCURACY", "CREATED"))


@reward_models_group.command("show")
@click.argument("model_ref", metavar="MODEL")
@click.option("--json", "as_json", is_flag=True, help="Only the metrics, as one JSON object (for scripts).")
@pass_context
def show_model(context: CliContext, model_ref: str, as_json: bool) -> None:
    """One model (by id or name): its status, training progress and figures, its pairing rule and pairs
    by kind among them."""
    with as_operator(context, write=False) as (session, actor):
        model = find_model(session, actor, model_ref)
        traces = learning.trace_count(session, model.id)
        progress = _progress(session, model)
    if as_json:
        click.echo(dumps(model.metrics, sort_keys=True).decode())
        return
    click.echo(f'Reward model "{model.name}" ({model.id})')
    click.echo(f"  status: {model.status}" + (f" — {model.status_detail}" if model.status_detail else ""))
    if progress is not None:
        click.echo(f"  progress: {progress}")
    if model.error:
        click.echo(f"  error: {model.error}")
    click.echo(f"  pairs: {model.num_pairs} from {counted(traces, 'trace')} (at most {model.max_pairs})")
    click.echo(f"  created: {when_text(model.created_at)}; finished: {when_text(model.finished_at)}")
    _echo_figures("training config", figures.config_figures(model.training_config))
    if model.metrics:
        _echo_figures("metrics", figures.metric_figures(model.metrics))


@reward_models_group.command("create")
@click.option("--name", required=True, help="What to call the model.")
@click.option("--trace", "traces", multiple=True, required=True, help="A trace id; repeat for more traces.")
@click.option(
    "--max-pairs",
    default=DEFAULT_MAX_PAIRS,
    show_default=True,
    type=click.IntRange(min=learning.MIN_PAIRS, max=learning.MAX_PAIRS_LIMIT),
    help="Cap after the seed-0 shuffle.",
)
@click.option(
    "--adjudicated-only",
    is_flag=True,
    help="Keep only pairs whose items are settled: adjudicated, or agreed by two or more reviewers.",
)
@click.option(
    "--min-agreement",
    type=click.FloatRange(0, 1),
    help="Keep only pairs whose items' reviewers agree with the item's value at least this share (0-1).",
)
@pairing_option
@min_pairs_option
@click.option(
    "--wait",
    is_flag=True,
    help="Wait for the training to end, showing how far it has got (a running job worker trains it).",
)
@pass_context
def create_model(
    context: CliContext,
    name: str,
    traces: tuple[str, ...],
    max_pairs: int,
    adjudicated_only: bool,
    min_agreement: float | None,
    pairing: str,
    min_pairs: int,
    wait: bool,
) -> None:
    """Make a model from the traces' ratings and corrections, and queue its training.

    Its pairs are same-context pairs first, unless --pairing every_pair asks for the rm API's default
    rule (docs/api-rm.md, "Pairing"). --adjudicated-only and --min-agreement keep only settled pairs;
    `reward-models show` says how many pairs of each kind the model has, and how many each rule removed.

    With an LLM configured (REDLINE_LLM_BASE_URL, REDLINE_LLM_MODEL), training adds pairs from the
    feedback it finds, so fewer than two rating and correction pairs are not refused here. With --wait
    the command ends when the training does: exit status 0 ready, 1 failed."""
    chosen = trace_ids(traces)
    llm = context.settings().llm_configured
    tune_gc_for_bulk_work()
    config: dict[str, Any] = {"max_pairs": max_pairs, **pairing_config(pairing, min_pairs)}
    if adjudicated_only:
        config[ADJUDICATED_ONLY] = True
    if min_agreement is not None:
        config[MIN_AGREEMENT] = min_agreement
    with as_operator(context) as (session, actor):
        model = learning.create(session, actor, name=name, trace_ids=chosen, config=config, feedback_llm=llm)
        count = learning.trace_count(session, model.id)
    click.echo(
        f'Queued reward model "{model.name}" ({model.id}): '
        f"{counted(model.num_pairs, 'pair')} from {counted(count, 'trace')}."
    )
    click.echo("A job worker trains it: redline worker --once, or the one redline serve runs.")
    if wait:
        _wait_for_training(context, model.id, model.name)


# How often --wait looks at the training's progress, and after how long queued it asks for a worker.
WAIT_POLL_SECONDS = 0.5
NO_WORKER_SECONDS = 10.0


def _wait_for_training(context: CliContext, model_id: uuid.UUID, name: str) -> None:
    """Follow the model's job until it ends; a failed training ends the command with its error."""
    db = context.ready_database()
    shown = ShareProgress(f'Training "{name}"')
    queued_since = time.monotonic()
    asked = False
    while True:
        # A plain read each time: opening the store as a command does would take its write lock to check.
        try:
            with db.read() as session:
                model = learning.get_model(session, context.operator(session), model_id)
                progress = learning.progress_of(session, model)
        except RedlineError as error:  # the model was removed meanwhile
            raise fail(error) from error
        if progress is None:
            break
        shown.reach(*progress)
        if model.status == "queued" and not asked and time.monotonic() - queued_since > NO_WORKER_SECONDS:
            asked = True
            click.echo(
                "No job worker has taken it yet: is redline serve (or redline worker) running on this store?",
                err=True,
            )
        time.sleep(WAIT_POLL_SECONDS)
    shown.close(model.status)
    if model.status != "ready":
        raise click.ClickException(f'Training "{name}" failed: {model.error or model.status_detail}')
    accuracy = figures.validation_text(model.metrics)
    click.echo(f'Reward model "{name}" is ready: validation accuracy {accuracy}.')


@reward_models_group.command("pairs")
@click.argument("model_ref", metavar="MODEL")
@output_option
@pass_context
def model_pairs(context: CliContext, model_ref: str, output: Path | None) -> None:
    """The pairs a model was built with, as the API lists them, one JSON object per line.

    The same as `redline pairs export MODEL --format jsonl`.
    """
    write_pairs(context, model_ref, "jsonl", output)


@reward_models_group.command("score")
@click.argument("model_ref", metavar="MODEL")
@click.option("--trace", "traces", multiple=True, required=True, help="A trace id; repeat for more traces.")
@pass_context
def score(context: CliContext, model_ref: str, traces: tuple[str, ...]) -> None:
    """Score traces with a ready model and keep the scores, each assistant action credited."""
    chosen = trace_ids(traces)
    with as_operator(context) as (session, actor):
        model = find_model(session, actor, model_ref)
        scores = scoring.score_traces(session, actor, model.id, chosen)
        rows = [_score_row(scored.trace_id, scored.score, scored.exact, scored.credits) for scored in scores]
    print_table(rows, ("TRACE", "SCORE", "ACTIONS", "LOWEST CREDIT"))


def _score_row(
    trace_id: uuid.UUID, value: float, exact: bool, credits: list[dict[str, Any]]
) -> tuple[str, ...]:
    lowest = min(credits, key=lambda entry: (entry["credit"], entry["index"])) if credits else None
    shown = "-" if lowest is None else f"step {lowest['index']} ({lowest['credit']:+.4f})"
    return (str(trace_id), f"{value:.4f}", f"{len(credits)}{'' if exact else ' (approximate)'}", shown)


@reward_models_group.command("activate")
@click.argument("model_ref", metavar="MODEL")
@click.option("--project", required=True, help="Project name or id.")
@pass_context
def activate(context: CliContext, model_ref: str, project: str) -> None:
    """Score every new trace of the project with this ready model, in the background."""
    with as_operator(context) as (session, actor):
        target = identity.find_project(session, actor, project)
        model = find_model(session, actor, model_ref)
        autoscore.set_active_model(session, actor, target.id, model.id)
    click.echo(f'Project "{target.name}" now scores its new traces with "{model.name}" ({model.id}).')


@reward_models_group.command("deactivate")
@click.argument("model_ref", metavar="[MODEL]", required=False)
@click.option("--project", required=True, help="Project name or id.")
@pass_context
def deactivate(context: CliContext, model_ref: str | None, project: str) -> None:
    """Stop scoring the project's new traces; scores already given stay.

    MODEL, as `activate` takes it, is optional: given, nothing changes unless it is the model the
    project scores with."""
    with as_operator(context) as (session, actor):
        target = identity.find_project(session, actor, project)
        if model_ref is not None:
            _check_active(session, actor, target.id, target.name, find_model(session, actor, model_ref))
        autoscore.set_active_model(session, actor, target.id, None)
    click.echo(f'Project "{target.name}" no longer scores its new traces.')


def _check_active(
    session: Session, actor: Actor, project_id: uuid.UUID, project: str, model: RewardModel
) -> None:
    active = autoscore.active_model(session, actor, project_id)
    if active is None:
        raise click.ClickException(
            f'Project "{project}" scores its new traces with no model: nothing changed.'
        )
    if active.reward_model_id != model.id:
        current = learning.get_model(session, actor, active.reward_model_id)
        raise click.ClickException(
            f'Project "{project}" scores its new traces with "{current.name}" ({current.id}), not '
            f'"{model.name}" ({model.id}): nothing changed.'
        )


@reward_models_group.command("train-gpu")
@click.argument("model_ref", metavar="MODEL")
@click.option(
    "--base-model",
    required=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="A local transformers model folder (a chat model); nothing is downloaded.",
)
@click.option(
    "--output",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder to save the trained reward model and its tokenizer in.",
)
@click.option(
    "--max-length",
    type=click.IntRange(min=1),
    help="Tokens per side of a pair [default: the longest pair]; shorter than some pairs is refused.",
)
@click.option("--epochs", default=1, show_default=True, type=click.IntRange(min=1))
@click.option("--batch-size", default=8, show_default=True, type=click.IntRange(min=1), help="Per device.")
@pass_context
def train_gpu(
    context: CliContext,
    model_ref: str,
    base_model: Path,
    output: Path,
    max_length: int | None,
    epochs: int,
    batch_size: int,
) -> None:
    """Fine-tune a local model on a reward model's pairs with TRL's RewardTrainer (the `gpu` extra).

    The pairs go in TRL's conversational format, tool calls included, as `redline pairs export --format
    trl` writes them. Every pair is tokenized first; no pair is dropped for its length.
    """
    try:
        trl_train.require_gpu_extra()
    except trl_train.GpuTrainingRefused as refused:
        raise click.ClickException(str(refused)) from None
    db = context.ready_database()
    try:
        with db.read() as session:
            actor = context.operator(session)
            model = find_model(session, actor, model_ref)
            run = trl_train.train(
                _conversations(session, actor, model.id),
                base_model=base_model,
                output=output,
                max_length=max_length,
                epochs=epochs,
                batch_size=batch_size,
                say=click.echo,
            )
    except RedlineError as error:
        raise fail(error) from error
    except trl_train.GpuTrainingRefused as refused:
        raise click.ClickException(str(refused)) from None
    pairs = counted(run.plan.pairs, "pair")
    click.echo(
        f'Trained a reward model on {pairs} of "{model.name}" in {run.seconds:.0f} s '
        f"(max_length {run.plan.max_length}); saved to {run.output}."
    )


def _conversations(session: Session, actor: Actor, model_id: uuid.UUID) -> Iterator[dict[str, Any]]:
    return exports.records(session, actor, model_id, "trl")
