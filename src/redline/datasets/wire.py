"""Datasets and datapoints as orq-ai-sdk 4.17.13 and @orq-ai/node read them (wire-clients.md §1.6). Every
field their Dataset model requires is present, ids of a creator the store no longer knows as "";
`snapshot_version` is text, as the SDKs type it.

A datapoint's `inputs`, `messages` and `expected_output` are left out when it has none: @orq-ai/node takes
each as absent or a value, never null. Its chat-message model requires `tool_call_id` on a tool message
(null allowed), so a tool message that names no call carries it as null.

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


def _message(message: Any) -> Any:
    if isinstance(message, dict) and message.get("role") == "tool" and "tool_call_id" not in message:
        return {**message, "tool_call_id": None}
    return message


def datapoint_dict(datapoint: Datapoint, workspace_id: object) -> dict[str, Any]:
    content = {
        "inputs": datapoint.inputs,
        "messages": None if datapoint.messages is None else [_message(m) for m in datapoint.messages],
        "expected_output": datapoint.expected_output,
    }
    return {
        "_id": str(datapoint.id),
        "dataset_id": str(datapoint.dataset_id),
        "workspace_id": str(workspace_id),
        "created_by_id": _id_text(datapoint.created_by),
        "updated_by_id": _id_text(datapoint.updated_by),
        **{name: value for name, value in content.items() if value is not None},
        "evaluations": [],
        "snapshot_version": str(datapoint.snapshot_version),
        "trace_id": str(datapoint.trace_id) if datapoint.trace_id is not None else None,
        "created": iso(datapoint.created_at),
        "updated": iso(datapoint.updated_at),
    }
