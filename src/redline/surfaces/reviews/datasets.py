"""Datasets and their datapoints on the reviews surface, exactly as orq-ai-sdk 4.17.13 and @orq-ai/node
call them (§1.6): create 200, delete and clear 204; datapoints made from a bare JSON array or
`{"items": [...]}` (both 200 with the list made), deleted one at a time or in bulk (204). Errors carry
the status as text in `code` (surface.py's DATASETS)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Depends
from starlette.responses import Response

from redline.datasets import service as datasets
from redline.datasets.schemas import (
    MAX_DATAPOINTS_PER_CALL,
    DatapointIdsIn,
    DatapointIn,
    DatapointsIn,
    DatasetChange,
    DatasetIn,
)
from redline.datasets.wire import datapoint_dict, dataset_dict
from redline.db import Database
from redline.identity.service import Actor
from redline.surfaces.auth import current_actor, database
from redline.surfaces.responses import JSONBody
from redline.surfaces.reviews.openapi import DATASETS_ERROR_RESPONSES
from redline.surfaces.reviews.wire import PageQuery, list_body, wire_id

router = APIRouter(prefix="/v2/datasets", tags=["datasets"], responses=DATASETS_ERROR_RESPONSES)

ActorDep = Annotated[Actor, Depends(current_actor)]
DatabaseDep = Annotated[Database, Depends(database)]
DATASET = "dataset"
DATAPOINT = "datapoint"


@router.get("", summary="Datasets of the projects you can read (or of one), newest first")
def list_datasets(
    actor: ActorDep,
    db: DatabaseDep,
    page_asked: PageQuery,
    search: str | None = None,
    updated_by: str | None = None,
    project_id: str | None = None,
) -> JSONBody:
    with db.read() as session:
        page, views = datasets.list_datasets(
            session,
            actor,
            **page_asked.asked(),
            search=search,
            updated_by=updated_by,
            project_id=project_id,
        )
        answer = list_body(page, [dataset_dict(view) for view in views])
    return JSONBody(answer)


@router.post("", summary="Make a dataset; path `project/folder/sub` files it in that project")
def create_dataset(body: DatasetIn, actor: ActorDep, db: DatabaseDep) -> JSONBody:
    with db.write() as session:
        answer = dataset_dict(datasets.create_dataset(session, actor, body))
    return JSONBody(answer)


@router.get("/{dataset_id}", summary="One dataset, with its datapoint count and versions")
def get_dataset(dataset_id: str, actor: ActorDep, db: DatabaseDep) -> JSONBody:
    with db.read() as session:
        answer = dataset_dict(datasets.get_dataset(session, actor, wire_id(dataset_id, DATASET)))
    return JSONBody(answer)


@router.patch("/{dataset_id}", summary="Rename a dataset, or move it to another project")
def update_dataset(dataset_id: str, body: DatasetChange, actor: ActorDep, db: DatabaseDep) -> JSONBody:
    with db.write() as session:
        answer = dataset_dict(datasets.update_dataset(session, actor, wire_id(dataset_id, DATASET), body))
    return JSONBody(answer)


@router.delete("/{dataset_id}", status_code=204, response_class=Response, summary="Delete a dataset")
def delete_dataset(dataset_id: str, actor: ActorDep, db: DatabaseDep) -> Response:
    with db.write() as session:
        datasets.delete_dataset(session, actor, wire_id(dataset_id, DATASET))
    return Response(status_code=204)


@router.delete(
    "/{dataset_id}/clear", status_code=204, response_class=Response, summary="Delete every datapoint"
)
def clear_dataset(dataset_id: str, actor: ActorDep, db: DatabaseDep) -> Response:
    with db.write() as session:
        datasets.clear_dataset(session, actor, wire_id(dataset_id, DATASET))
    return Response(status_code=204)


@router.get("/{dataset_id}/datapoints", summary="A dataset's datapoints, newest first")
def list_datapoints(
    dataset_id: str,
    actor: ActorDep,
    db: DatabaseDep,
    page_asked: PageQuery,
) -> JSONBody:
    with db.read() as session:
        page = datasets.list_datapoints(
            session,
            actor,
            wire_id(dataset_id, DATASET),
            **page_asked.asked(),
        )
        answer = list_body(page, [datapoint_dict(point, actor.workspace_id) for point in page.items])
    return JSONBody(answer)


@router.post("/{dataset_id}/datapoints", summary="Add datapoints: the body is a bare JSON array of them")
def create_datapoint(
    dataset_id: str,
    body: Annotated[list[DatapointIn], Body(max_length=MAX_DATAPOINTS_PER_CALL)],
    actor: ActorDep,
    db: DatabaseDep,
) -> JSONBody:
    with db.write() as session:
        made = datasets.create_datapoints(session, actor, wire_id(dataset_id, DATASET), body)
        answer = [datapoint_dict(point, actor.workspace_id) for point in made]
    return JSONBody(answer)


@router.post("/{dataset_id}/datapoints/bulk", summary='Add datapoints: `{"items": [...]}`')
def create_datapoints(dataset_id: str, body: DatapointsIn, actor: ActorDep, db: DatabaseDep) -> JSONBody:
    with db.write() as session:
        made = datasets.create_datapoints(session, actor, wire_id(dataset_id, DATASET), body.items)
        answer = [datapoint_dict(point, actor.workspace_id) for point in made]
    return JSONBody(answer)


@router.post(
    "/{dataset_id}/datapoints-bulk-delete",
    status_code=204,
    response_class=Response,
    summary="Delete the datapoints named by item_ids",
)
def delete_datapoints(dataset_id: str, body: DatapointIdsIn, actor: ActorDep, db: DatabaseDep) -> Response:
    with db.write() as session:
        datasets.delete_datapoints(session, actor, wire_id(dataset_id, DATASET), body.item_ids)
    return Response(status_code=204)


@router.get("/{dataset_id}/datapoints/{datapoint_id}", summary="One datapoint")
def get_datapoint(dataset_id: str, datapoint_id: str, actor: ActorDep, db: DatabaseDep) -> JSONBody:
    with db.read() as session:
        point = datasets.get_datapoint(
            session, actor, wire_id(dataset_id, DATASET), wire_id(datapoint_id, DATAPOINT)
        )
        answer = datapoint_dict(point, actor.workspace_id)
    return JSONBody(answer)


@router.patch("/{dataset_id}/datapoints/{datapoint_id}", summary="Change the fields sent of a datapoint")
def update_datapoint(
    dataset_id: str, datapoint_id: str, body: DatapointIn, actor: ActorDep, db: DatabaseDep
) -> JSONBody:
    with db.write() as session:
        point = datasets.update_datapoint(
            session, actor, wire_id(dataset_id, DATASET), wire_id(datapoint_id, DATAPOINT), body
        )
        answer = datapoint_dict(point, actor.workspace_id)
    return JSONBody(answer)


@router.delete(
    "/{dataset_id}/datapoints/{datapoint_id}",
    status_code=204,
    response_class=Response,
    summary="Delete a datapoint",
)
def delete_datapoint(dataset_id: str, datapoint_id: str, actor: ActorDep, db: DatabaseDep) -> Response:
    with db.write() as session:
        datasets.delete_datapoint(
            session, actor, wire_id(dataset_id, DATASET), wire_id(datapoint_id, DATAPOINT)
        )
    return Response(status_code=204)
