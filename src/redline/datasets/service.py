"""Rules of datasets and their datapoints (wire-clients.md §1.6): curated test cases for experiments.

A dataset lives in a project: reading it takes `read` there, changing it or its datapoints `write`.
Every change to its datapoints bumps its `version`, and each datapoint records the version it was
last written at (`snapshot_version`), so an experiment can say what it ran against.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from redline.datasets.from_trace import datapoint_from
from redline.datasets.models import Datapoint, Dataset
from redline.datasets.schemas import DatapointIn, DatasetChange, DatasetIn
from redline.db import in_chunks, new_id, parse_id, utcnow
from redline.db.id_pages import IdPage, id_page, named_and_updated_by
from redline.errors import NotFound, not_in_workspace
from redline.identity.models import Project
from redline.identity.service import (
    Actor,
    ProjectRole,
    check_role,
    default_write_project,
    in_project,
    project_role,
    visible_projects,
    wire_project,
)
from redline.traces.models import Step, Trace
from redline.traces.selection import Added, batches
from redline.traces.service import readable_trace


@dataclass(frozen=True)
class DatasetView:
    dataset: Dataset
    datapoints_count: int


def dataset_not_found(actor: Actor, ident: object) -> NotFound:
    return not_in_workspace("dataset", "Dataset", ident, actor.workspace_id)


def datapoint_not_found(actor: Actor, ident: object) -> NotFound:
    return not_in_workspace("datapoint", "Datapoint", ident, actor.workspace_id)


def dataset_for(session: Session, actor: Actor, dataset_id: uuid.UUID, needed: ProjectRole) -> Dataset:
    """The dataset, if the actor holds `needed` in its project; not found if it can't see it."""
    return in_project(session, actor, Dataset, dataset_id, needed, dataset_not_found(actor, dataset_id))


def _counts(session: Session, dataset_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, int]:
    found = dict.fromkeys(dataset_ids, 0)
    for chunk in in_chunks(list(dataset_ids)):
        rows = session.execute(
            select(Datapoint.dataset_id, func.count())
            .where(Datapoint.dataset_id.in_(chunk))
            .group_by(Datapoint.dataset_id)
        )
        for dataset_id, count in rows:
            found[dataset_id] = count
    return found


def views(session: Session, datasets: Sequence[Dataset]) -> list[DatasetView]:
    numbers = _counts(session, [dataset.id for dataset in datasets])
    return [DatasetView(dataset, numbers[dataset.id]) for dataset in datasets]


def _view(session: Session, dataset: Dataset) -> DatasetView:
    [one] = views(session, [dataset])
    return one


def _project_of_path(session: Session, actor: Actor, path: str | None) -> tuple[Project, str | None]:
    """Where a new dataset goes: `project/folder/sub` files it in the project named by the first part
    (by name, among the projects the caller can see); a path whose first part names none of those, or
    none at all, files it in the caller's oldest writable project, keeping the path as its folder.

    A project the caller has no role in is passed over exactly as a missing one: refusing it would
    confirm that it exists, and name its id (docs/access.md)."""
    cleaned = "/".join(part for part in (path or "").split("/") if part) or None
    if cleaned:
        first = cleaned.split("/", 1)[0]
        project = session.scalar(
            select(Project).where(Project.workspace_id == actor.workspace_id, Project.name == first)
        )
        if project is not None and project_role(session, actor, project) is not None:
            return check_role(session, actor, project, "write"), cleaned
    return default_write_project(session, actor), cleaned


# ---------------------------------------------------------------------------------------------- datasets


def list_datasets(
    session: Session,
    actor: Actor,
    *,
    limit: int,
    starting_after: str | None = None,
    ending_before: str | None = None,
    search: str | None = None,
    updated_by: str | None = None,
    project_id: str | None = None,
) -> tuple[IdPage[Dataset], list[DatasetView]]:
    """Datasets of every project the actor can read (or of one), newest first; `search` matches the
    name in any case, `updated_by` takes comma-separated principal ids."""
    if project_id is not None:
        projects = [wire_project(session, actor, project_id, "read").id]
    else:
        projects = [project.id for project, _ in visible_projects(session, actor)]
    query = select(Dataset).where(
        Dataset.workspace_id == actor.workspace_id, Dataset.project_id.in_(projects)
    )
    query = named_and_updated_by(
        query, Dataset.name, Dataset.updated_by, search=search, updated_by=updated_by
    )
    page = id_page(
        session,
        query,
        [Dataset.created_at, Dataset.id],
        limit=limit,
        starting_after=starting_after,
        ending_before=ending_before,
    )
    return page, views(session, page.items)


def create_dataset(session: Session, actor: Actor, body: DatasetIn) -> DatasetView:
    project, path = _project_of_path(session, actor, body.path)
    now = utcnow()
    dataset = Dataset(
        id=new_id(),
        workspace_id=actor.workspace_id,
        project_id=project.id,
        name=body.display_name,
        path=path,
        version=0,
        created_by=actor.principal_id,
        updated_by=actor.principal_id,
        created_at=now,
        updated_at=now,
    )
    session.add(dataset)
    session.flush()
    return DatasetView(dataset, 0)


def get_dataset(session: Session, actor: Actor, dataset_id: uuid.UUID) -> DatasetView:
    return _view(session, dataset_for(session, actor, dataset_id, "read"))


def update_dataset(
    session: Session, actor: Actor, dataset_id: uuid.UUID, change: DatasetChange
) -> DatasetView:
    """Rename it, or move it (with its datapoints) to another project the caller may write to."""
    dataset = dataset_for(session, actor, dataset_id, "write")
    sent = change.model_fields_set
    if "display_name" in sent and change.display_name is not None:
        dataset.name = change.display_name
    if "project_id" in sent and change.project_id is not None:
        dataset.project_id = wire_project(session, actor, change.project_id, "write").id
    _touch(dataset, actor, bump=False)
    session.flush()
    return _view(session, dataset)


def delete_dataset(session: Session, actor: Actor, dataset_id: uuid.UUID) -> None:
    dataset = dataset_for(session, actor, dataset_id, "write")
    session.execute(delete(Datapoint).where(Datapoint.dataset_id == dataset.id))
    session.delete(dataset)
    session.flush()


def clear_dataset(session: Session, actor: Actor, dataset_id: uuid.UUID) -> None:
    """Every datapoint goes; the dataset stays, one version on."""
    dataset = dataset_for(session, actor, dataset_id, "write")
    session.execute(delete(Datapoint).where(Datapoint.dataset_id == dataset.id))
    _touch(dataset, actor, bump=True)
    session.flush()


def _touch(dataset: Dataset, actor: Actor, *, bump: bool) -> None:
    dataset.updated_at = utcnow()
    dataset.updated_by = actor.principal_id
    if bump:
        dataset.version += 1


# -------------------------------------------------------------------------------------------- datapoints


def list_datapoints(
    session: Session,
    actor: Actor,
    dataset_id: uuid.UUID,
    *,
    limit: int,
    starting_after: str | None = None,
    ending_before: str | None = None,
) -> IdPage[Datapoint]:
    """A dataset's datapoints newest first."""
    dataset = dataset_for(session, actor, dataset_id, "read")
    return id_page(
        session,
        select(Datapoint).where(Datapoint.dataset_id == dataset.id),
        [Datapoint.created_at, Datapoint.id],
        limit=limit,
        starting_after=starting_after,
        ending_before=ending_before,
    )


def _new_datapoints(
    session: Session,
    actor: Actor,
    dataset: Dataset,
    contents: Sequence[DatapointIn],
    trace_id: uuid.UUID | None = None,
) -> list[Datapoint]:
    _touch(dataset, actor, bump=True)
    return _insert_datapoints(session, actor, dataset, [(content, trace_id) for content in contents])


def _insert_datapoints(
    session: Session,
    actor: Actor,
    dataset: Dataset,
    contents: Sequence[tuple[DatapointIn, uuid.UUID | None]],
    first: int = 0,
) -> list[Datapoint]:
    """The datapoints, at the dataset's current version; `first` is the batch's place in a longer one."""
    now = utcnow()
    made = [
        Datapoint(
            id=new_id(),
            dataset_id=dataset.id,
            inputs=content.inputs,
            messages=content.messages,
            expected_output=content.expected_output,
            trace_id=trace_id,
            snapshot_version=dataset.version,
            created_by=actor.principal_id,
            updated_by=actor.principal_id,
            # A microsecond apart, so a batch lists in the order it was sent.
            created_at=now + timedelta(microseconds=first + offset),
            updated_at=now,
        )
        for offset, (content, trace_id) in enumerate(contents)
    ]
    session.add_all(made)
    session.flush()
    return made


def create_datapoints(
    session: Session, actor: Actor, dataset_id: uuid.UUID, contents: Sequence[DatapointIn]
) -> list[Datapoint]:
    return _new_datapoints(session, actor, dataset_for(session, actor, dataset_id, "write"), contents)


def datapoint_of(session: Session, actor: Actor, dataset: Dataset, datapoint_id: uuid.UUID) -> Datapoint:
    datapoint = session.get(Datapoint, datapoint_id)
    if datapoint is None or datapoint.dataset_id != dataset.id:
        raise datapoint_not_found(actor, datapoint_id)
    return datapoint


def get_datapoint(
    session: Session, actor: Actor, dataset_id: uuid.UUID, datapoint_id: uuid.UUID
) -> Datapoint:
    return datapoint_of(session, actor, dataset_for(session, actor, dataset_id, "read"), datapoint_id)


def update_datapoint(
    session: Session, actor: Actor, dataset_id: uuid.UUID, datapoint_id: uuid.UUID, change: DatapointIn
) -> Datapoint:
    """The fields sent replace the stored ones (null clears one)."""
    dataset = dataset_for(session, actor, dataset_id, "write")
    datapoint = datapoint_of(session, actor, dataset, datapoint_id)
    sent = change.model_fields_set
    if "inputs" in sent:
        datapoint.inputs = change.inputs
    if "messages" in sent:
        datapoint.messages = change.messages
    if "expected_output" in sent:
        datapoint.expected_output = change.expected_output
    _touch(dataset, actor, bump=True)
    datapoint.snapshot_version = dataset.version
    datapoint.updated_by = actor.principal_id
    datapoint.updated_at = utcnow()
    session.flush()
    return datapoint


def delete_datapoint(session: Session, actor: Actor, dataset_id: uuid.UUID, datapoint_id: uuid.UUID) -> None:
    dataset = dataset_for(session, actor, dataset_id, "write")
    session.delete(datapoint_of(session, actor, dataset, datapoint_id))
    _touch(dataset, actor, bump=True)
    session.flush()


def delete_datapoints(session: Session, actor: Actor, dataset_id: uuid.UUID, item_ids: Sequence[str]) -> None:
    """Delete the datapoints named; ids that name none of the dataset's are passed over."""
    dataset = dataset_for(session, actor, dataset_id, "write")
    ids = sorted({parsed for ident in item_ids if (parsed := parse_id(ident))}, key=str)
    for chunk in in_chunks(ids):
        session.execute(delete(Datapoint).where(Datapoint.dataset_id == dataset.id, Datapoint.id.in_(chunk)))
    _touch(dataset, actor, bump=True)
    session.flush()


def add_trace(session: Session, actor: Actor, dataset_id: uuid.UUID, trace_id: uuid.UUID) -> Datapoint:
    """A datapoint made from a trace and linked to it (`from_trace.py` says what goes where); it takes
    reading the trace and writing the dataset. Annotations are not copied."""
    dataset = dataset_for(session, actor, dataset_id, "write")
    trace: Trace = readable_trace(session, actor, trace_id, "read")
    steps = list(session.scalars(select(Step).where(Step.trace_id == trace.id).order_by(Step.index)))
    [made] = _new_datapoints(session, actor, dataset, [_content_of(trace, steps)], trace_id=trace.id)
    return made


def _content_of(trace: Trace, steps: Sequence[Step]) -> DatapointIn:
    content = datapoint_from(trace, steps)
    return DatapointIn(
        inputs=content.inputs, messages=content.messages, expected_output=content.expected_output
    )


def add_traces(
    session: Session, actor: Actor, dataset_id: uuid.UUID, trace_ids: Iterable[uuid.UUID]
) -> Added:
    """A datapoint from each trace (as `add_trace` makes one), for a selection of many: the traces list's
    rows or every trace matching its filter, read a chunk at a time.

    A trace the dataset already has a datapoint from is already there and gets no second one; a trace
    the actor can't read (or that is gone) is not found, named by its id. However many chunks, it is one
    change to the dataset: its version moves on once.
    """
    dataset = dataset_for(session, actor, dataset_id, "write")
    readable = [project.id for project, _ in visible_projects(session, actor)]
    done = Added()
    touched = False
    for chunk in batches(trace_ids):
        found = {
            trace.id: trace
            for trace in session.scalars(
                select(Trace).where(Trace.id.in_(chunk), Trace.project_id.in_(readable))
            )
        }
        there = set(
            session.scalars(
                select(Datapoint.trace_id).where(
                    Datapoint.dataset_id == dataset.id, Datapoint.trace_id.in_(list(found))
                )
            )
        )
        new = [trace_id for trace_id in chunk if trace_id in found and trace_id not in there]
        steps: dict[uuid.UUID, list[Step]] = {trace_id: [] for trace_id in new}
        if new:
            for step in session.scalars(
                select(Step).where(Step.trace_id.in_(new)).order_by(Step.trace_id, Step.index)
            ):
                steps[step.trace_id].append(step)
            if not touched:
                _touch(dataset, actor, bump=True)
                touched = True
            contents = [(_content_of(found[trace_id], steps[trace_id]), trace_id) for trace_id in new]
            _insert_datapoints(session, actor, dataset, contents, first=done.added)
        not_found = [str(trace_id) for trace_id in chunk if trace_id not in found]
        done += Added(len(new), len(found) - len(new), not_found)
    return done
