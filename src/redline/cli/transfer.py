"""`redline import` and `redline export`: runs in and out of a project as files."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import click
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from sqlalchemy.orm import Session

from redline.cli.context import (
    CliContext,
    fail,
    lock_waits,
    open_output,
    pass_context,
    still_busy,
    tune_gc_for_bulk_work,
)
from redline.cli.progress import progress
from redline.db import Database, LockWaits, StillBusy
from redline.errors import RedlineError
from redline.identity import service as identity
from redline.identity.models import Project
from redline.identity.service import Actor
from redline.ingest import otlp
from redline.ingest import runs as ingest
from redline.ingest.otlp import OtlpLimits
from redline.jsonio import dumps
from redline.sentences import counted
from redline.traces import service as traces
from redline.traces.importers.base import Skipped
from redline.traces.importers.filling import with_agent, with_content_ids
from redline.traces.importers.records import jsonl_record_count
from redline.traces.importers.registry import format_names, iter_text, list_formats
from redline.traces.native import run_to_input_dict
from redline.traces.otlp.decode import Rejected, rejection_message
from redline.traces.otlp.documents import OTLP_FORMAT, export_requests, looks_like_otlp
from redline.traces.schemas import MAX_NAME, RunIn
from redline.traces.service import IngestedRun

# Runs stored per transaction: large enough to amortise a commit, small enough to keep memory flat.
IMPORT_CHUNK = 500


def _format_help() -> str:
    described = "; ".join(f"{name}: {description}" for name, description in list_formats())
    return f"The file's format; auto tries each in turn ({described})."


def _name(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """An agent name or version as runs take them: not empty, at most MAX_NAME characters."""
    if value is not None and not 1 <= len(value) <= MAX_NAME:
        raise click.BadParameter(f"must be 1 to {MAX_NAME} characters.")
    return value


@click.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--project", required=True, help="Project name or id.")
@click.option(
    "--format",
    "format_",
    type=click.Choice(["auto", *format_names()]),
    default="auto",
    show_default=True,
    help=_format_help(),
)
@click.option(
    "--agent",
    callback=_name,
    help="The agent the runs are of, for records that name no agent (OpenAI and Anthropic chats never do).",
)
@click.option(
    "--agent-version",
    callback=_name,
    help="With --agent: the version those runs ran [default: the version the agent pins].",
)
@pass_context
def import_runs(
    context: CliContext,
    file: Path,
    project: str,
    format_: str,
    agent: str | None,
    agent_version: str | None,
) -> None:
    """Import the runs in FILE into a project, keeping the good records and listing the skipped ones.

    A record whose external id is already in the project replaces that run, so when the file holds
    an external id more than once its last record wins. A record without one is given one made from
    its content, so importing the same file again never adds its runs twice. The file's text is read
    whole; its records are parsed and stored 500 at a time, each group in its own transaction: a
    failure part-way keeps the groups before it, and importing the file again stores the rest.
    `--agent` (and `--agent-version`) fill in only records that name no agent or flow of their own.
    """
    if agent_version is not None and agent is None:
        raise click.UsageError("--agent-version needs --agent: the version of which agent?")
    db = context.ready_database()
    tune_gc_for_bulk_work()
    started = time.perf_counter()
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise click.ClickException(f"{file} is not UTF-8 text (byte {error.start}).") from None
    imported = steps = 0
    skipped: list[Skipped] = []
    waits = lock_waits(context)
    try:
        with db.read() as session:
            actor = context.operator(session)
            target = identity.find_project(session, actor, project)
        if format_ == OTLP_FORMAT or (format_ == "auto" and looks_like_otlp(text)):
            if agent is not None:
                raise click.UsageError(
                    "--agent is for records that name no agent; OTLP spans name their service."
                )
            _import_otlp(context, db, text, (actor, target), waits, started)
            return
        resolved, records = iter_text(text, target.id, format_)
        records = with_content_ids(records)
        if agent is not None:
            records = with_agent(records, agent, agent_version)
        label = f"Importing {resolved} records"
        with progress(label, noun="record", total=jsonl_record_count(text)) as shown:
            for group, read in _groups(records, skipped):
                if group:
                    stored = db.write_retrying(partial(_store, actor, group, resolved), waits)
                    imported += len(stored)
                    steps += sum(run.step_count for run in stored)
                shown.advance(read)
    except RedlineError as error:
        raise fail(error) from error
    except StillBusy as error:
        done = f"Stored before that: {counted(imported, 'run')}; importing the file again adds the rest. "
        raise still_busy(error, done) from None
    seconds = time.perf_counter() - started
    runs = f"{counted(imported, 'run')} ({counted(steps, 'step')})"
    click.echo(f"Imported {runs} into {target.name} in {seconds:.1f} s.")
    if skipped:
        click.echo(f"Skipped {len(skipped)}:")
        for skip in skipped:
            click.echo(f"  record {skip.record}: {skip.reason}")


def _import_otlp(
    context: CliContext,
    db: Database,
    text: str,
    into: tuple[Actor, Project],
    waits: LockWaits,
    started: float,
) -> None:
    """OTLP JSON (one export request, or one per line) through the span pipeline a live export takes,
    one request per transaction, as the operator into its project; the file holds whole traces, so its
    runs settle at the end."""
    target = into[1]
    limits = OtlpLimits.of(context.settings())
    run_ids: list[uuid.UUID] = []
    rejected: list[Rejected] = []
    requests = list(export_requests(text))
    with progress(f"Importing {OTLP_FORMAT} export requests", noun="request", total=len(requests)) as shown:
        for request in requests:
            received = db.write_retrying(partial(_receive_request, into, request, limits), waits)
            run_ids.extend(run_id for run_id in received.run_ids if run_id not in run_ids)
            rejected.extend(received.rejected)
            shown.advance(1)
    db.write_retrying(lambda session: otlp.settle_now(session, run_ids), waits)
    with db.read() as session:
        steps = traces.step_total(session, run_ids)
    seconds = time.perf_counter() - started
    runs = f"{counted(len(run_ids), 'run')} ({counted(steps, 'step')})"
    click.echo(f"Imported {runs} into {target.name} in {seconds:.1f} s.")
    if rejected:
        click.echo(rejection_message(rejected))


def _receive_request(
    into: tuple[Actor, Project], request: ExportTraceServiceRequest, limits: OtlpLimits, session: Session
) -> otlp.Received:
    """One export request of a file kept as the operator: a transaction that may be run again."""
    actor, target = into
    return otlp.receive_documents(session, actor, [request], project=target, limits=limits)


def _store(actor: Actor, group: list[RunIn], source_format: str, session: Session) -> list[IngestedRun]:
    """One group of runs stored as the operator: a transaction that may be run again from the start."""
    return ingest.record_runs(session, actor, group, source_format=source_format)


def _groups(records: Iterator[RunIn | Skipped], skipped: list[Skipped]) -> Iterator[tuple[list[RunIn], int]]:
    """Runs in groups of IMPORT_CHUNK, each with how many records were read for it, noting skips as
    they pass.

    Within a group an external id is kept once, at its last record; across groups the later group
    replaces the earlier run when it is stored, so the file's last record wins either way.
    """
    group: dict[object, RunIn] = {}
    read = 0
    for item in records:
        read += 1
        if isinstance(item, Skipped):
            skipped.append(item)
            continue
        key: object = item.external_id if item.external_id is not None else object()
        group.pop(key, None)
        group[key] = item
        if len(group) == IMPORT_CHUNK:
            yield list(group.values()), read
            group, read = {}, 0
    if group or read:
        yield list(group.values()), read


@click.group()
def export() -> None:
    """Write what Redline holds to files."""


@export.command("runs")
@click.option("--project", required=True, help="Project name or id.")
@click.option(
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="File to write [default: standard output].",
)
@pass_context
def export_runs(context: CliContext, project: str, output: Path | None) -> None:
    """Every run of a project as native JSONL, oldest first; `redline import` reads it back."""
    db = context.ready_database()
    count = 0
    try:
        with db.read() as session, open_output(output) as sink:
            actor = context.operator(session)
            target = identity.find_project(session, actor, project)
            total = traces.project_run_count(session, actor, target.id)
            with progress(f"Exporting the runs of {target.name}", noun="run", total=total) as shown:
                for view in traces.iter_project_runs(session, actor, target.id):
                    sink.write(dumps(run_to_input_dict(view)) + b"\n")
                    count += 1
                    shown.advance()
    except RedlineError as error:
        raise fail(error) from error
    if output:
        click.echo(f"Wrote {counted(count, 'run')} to {output}.")
