"""Datasets and datapoints as orq-ai-sdk 4.17.13 reads them (wire-clients.md §1.6). Every field its
Dataset model requires is present, ids of a creator the store no longer knows as ""; `snapshot_version`
is text, as the SDK types it.

Shared by `/v2/datasets` and `redline datasets export`, so a datapoint reads the same in both."""

from __future__ import annotations

from typing import Any

from redline.datasets.models import Datapoint
from redline.datasets.service import DatasetView
from redline.jsonio import iso


def _id_text(value: object) -> str:
    return str(value) if value is not None else ""


def dataset_dict(view: DatasetView) -> dict[str, Any]:
    dataset = view.dataset
    return {
        "_id": str(dataset.id),
        "display_name": dataset.name,
        "path": dataset.path,
        "project_id": str(dataset.project_id),
        "workspace_id": str(dataset.workspace_id),
        "created_by_id": _id_text(dataset.created_by),
        "updated_by_id": _id_text(dataset.updated_by),
        "created": iso(dataset.created_at),
        "updated": iso(dataset.updated_at),
        "metadata": {"total_versions": dataset.version, "datapoints_count": view.datapoints_count},
    }


def datapoint_dict(datapoint: Datapoint, workspace_id: object) -> dict[str, Any]:
    return {
        "_id": str(datapoint.id),
        "dataset_id": str(datapoint.dataset_id),
        "workspace_id": str(workspace_id),
        "created_by_id": _id_text(datapoint.created_by),
        "updated_by_id": _id_text(datapoint.updated_by),
        "inputs": datapoint.inputs,
        "messages": datapoint.messages,
        "expected_output": datapoint.expected_output,
        "evaluations": [],
        "snapshot_version": str(datapoint.snapshot_version),
        "trace_id": str(datapoint.trace_id) if datapoint.trace_id is not None else None,
        "created": iso(datapoint.created_at),
        "updated": iso(datapoint.updated_at),
    }
