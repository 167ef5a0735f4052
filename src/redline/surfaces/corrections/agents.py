"""Agents on the corrections surface: which agents a project has, and which version each pins."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends
from pydantic import Field

from redline.db import Database
from redline.identity.service import Actor
from redline.jsonio import iso
from redline.surfaces.auth import current_actor, database
from redline.surfaces.corrections.openapi import ERROR_RESPONSES
from redline.surfaces.corrections.wire import project_id
from redline.surfaces.responses import JSONBody
from redline.traces import service as traces
from redline.traces.models import Agent, AgentVersion
from redline.traces.schemas import PinIn, WireModel
from redline.web.addresses import path_id

router = APIRouter(prefix="/v1", tags=["agents"], responses=ERROR_RESPONSES)

ActorDep = Annotated[Actor, Depends(current_actor)]
DatabaseDep = Annotated[Database, Depends(database)]


def agent_dict(agent: Agent) -> dict[str, Any]:
    body = {"id": str(agent.id), "projectId": str(agent.project_id), "name": agent.name}
    if agent.pinned_version is not None:
        body["pinnedVersion"] = agent.pinned_version
    return body


@router.get("/projects/{projectId}/agents", summary="The agents that have sent runs to a project")
def list_agents(projectId: str, actor: ActorDep, db: DatabaseDep) -> JSONBody:  # noqa: N803
    with db.read() as session:
        agents = traces.list_agents(session, actor, project_id(projectId))
    return JSONBody({"data": [agent_dict(agent) for agent in agents], "hasMore": False})


class ToolsIn(WireModel):
    tools: list[Annotated[str, Field(min_length=1, max_length=200)]] = Field(max_length=1000)


def version_dict(declared: AgentVersion) -> dict[str, Any]:
    return {
        "agentId": str(declared.agent_id),
        "version": declared.version,
        "tools": declared.tools,
        "updatedAt": iso(declared.updated_at),
    }


@router.put(
    "/agents/{agentId}/versions/{version}",
    summary="Declare the tools a version of an agent may call; corrections of its runs may name only these",
)
def declare_tools(agentId: str, version: str, body: ToolsIn, actor: ActorDep, db: DatabaseDep) -> JSONBody:  # noqa: N803
    with db.write() as session:
        declared = traces.declare_tools(
            session, actor, path_id(agentId, "agent"), version, list(dict.fromkeys(body.tools))
        )
        answer = version_dict(declared)
    return JSONBody(answer)


@router.get("/agents/{agentId}/versions/{version}", summary="What a version of an agent declared: its tools")
def get_version(agentId: str, version: str, actor: ActorDep, db: DatabaseDep) -> JSONBody:  # noqa: N803
    with db.read() as session:
        answer = version_dict(traces.declared_tools(session, actor, path_id(agentId, "agent"), version))
    return JSONBody(answer)


@router.patch("/agents/{agentId}", summary="Pin (or with null, unpin) the version an agent's runs use")
def pin_agent(agentId: str, body: PinIn, actor: ActorDep, db: DatabaseDep) -> JSONBody:  # noqa: N803
    with db.write() as session:
        agent = traces.pin_agent_version(session, actor, path_id(agentId, "agent"), body.pinned_version)
        answer = agent_dict(agent)
    return JSONBody(answer)
