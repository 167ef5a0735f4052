"""Redline's native format: the run object of `POST /v1/runs`, one JSON object per line.

`run_to_input_dict` is that object as posted (what `redline export runs` writes, so an export imports
again as is); `run_to_dict` is the API's answer: the same, its producer named as kindgi's client can read
it, plus the ids and times the server adds.
"""

from __future__ import annotations

import uuid
from typing import Any

from redline.jsonio import iso
from redline.traces.service import RunView


def _str(value: uuid.UUID | None) -> str | None:
    return str(value) if value is not None else None


def _omit_none(data: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in data.items() if value is not None}


def run_to_input_dict(view: RunView, *, with_content: bool = True) -> dict[str, Any]:
    """The run as a client posts it; agents and flows by name, so it imports into another project too."""
    trace = view.trace
    data: dict[str, Any] = _omit_none(
        {
            "projectId": str(trace.project_id),
            "externalId": trace.external_id,
            "sessionId": trace.session_id,
            "agent": view.agent_name,
            "flow": view.flow_name,
            "agentVersion": trace.agent_version,
            "versionSource": trace.version_source,
            "status": trace.status,
            "dryRun": trace.dry_run,
            "title": trace.title,
            "input": trace.input,
            "output": trace.output,
            "metadata": trace.meta,
            "startedAt": iso(trace.started_at),
            "endedAt": iso(trace.ended_at),
        }
    )
    if with_content:
        data["steps"] = [
            _omit_none(
                {
                    "role": step.role,
                    "content": step.content,
                    "toolName": step.tool_name,
                    "toolInput": step.tool_input,
                    "toolCallId": step.tool_call_id,
                    "metadata": step.meta,
                }
            )
            for step in view.steps
        ]
        data["spans"] = [
            _omit_none(
                {
                    "spanId": span.span_id,
                    "parentSpanId": span.parent_span_id,
                    "kind": span.kind,
                    "name": span.name,
                    "attributes": span.attributes,
                    "startedAt": iso(span.started_at),
                    "endedAt": iso(span.ended_at),
                }
            )
            for span in view.spans
        ]
    return data


def run_to_dict(view: RunView, *, tenant_id: uuid.UUID, with_content: bool = True) -> dict[str, Any]:
    """The run as the API answers it: the input form plus the ids, step ids and indexes, counts and
    server times the server adds, and the workspace it is in (`tenantId`).

    Two things differ from the input form, for kindgi's client, which reads these answers too
    (docs/api-runs.md, "Answer form"): the producer's name is `agentName` or `flowName`, since that client
    reads `agent` as an object Redline can't fill (it needs a conversation id), and `flowId` and
    `flowVersion` are always there, as it requires: `""` on a run of no flow. A completed run's
    `endedAt` is its `completedAt` too, the name that client reads."""
    trace = view.trace
    data = run_to_input_dict(view, with_content=with_content)
    names = {"agentName": data.pop("agent", None), "flowName": data.pop("flow", None)}
    is_flow = trace.flow_id is not None
    data.update(
        _omit_none(
            {
                "id": str(trace.id),
                "tenantId": str(tenant_id),
                **names,
                "agentId": _str(trace.agent_id),
                "flowId": str(trace.flow_id) if is_flow else "",
                "flowVersion": (trace.agent_version or "") if is_flow else "",
                "sourceFormat": trace.source_format,
                "stepCount": trace.step_count,
                "createdAt": iso(trace.created_at),
                "updatedAt": iso(trace.updated_at),
                "completedAt": iso(trace.ended_at) if trace.status == "completed" else None,
                "erasedAt": iso(trace.erased_at),
            }
        )
    )
    if with_content:
        for step_dict, step in zip(data["steps"], view.steps, strict=True):
            step_dict["id"] = str(step.id)
            step_dict["index"] = step.index
    return data
