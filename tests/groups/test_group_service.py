"""What other services ask of corrector groups, on both stores: the group a queue rule wants, the groups
that apply to a project, and the weights results count with."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import pytest

from redline.db import Database
from redline.errors import Invalid, NotFound
from redline.groups import service as groups
from redline.groups.schemas import GroupIn
from redline.identity import service as identity
from redline.identity.service import Actor
from redline.ingest import runs as ingest
from redline.traces.schemas import RunIn
from tests.conftest import bootstrap_admin
from tests.samples import make_run


@dataclass
class Store:
    admin: Actor
    project: uuid.UUID
    second: uuid.UUID
    agent: uuid.UUID
    second_agent: uuid.UUID


def _store(db: Database) -> Store:
    first = bootstrap_admin(db)
    admin = Actor.of(first.admin)
    with db.write() as session:
        second = identity.create_project(session, admin, "second")
        [run] = ingest.record_runs(session, admin, [RunIn.model_validate(make_run(str(first.project.id)))])
        [other] = ingest.record_runs(session, admin, [RunIn.model_validate(make_run(str(second.id)))])
        agent, second_agent = run.agent_id, other.agent_id
        assert agent is not None
        assert second_agent is not None
    return Store(admin, first.project.id, second.id, agent, second_agent)


def _make(db: Database, actor: Actor, name: str, scope: dict[str, Any], weight: float = 1) -> uuid.UUID:
    with db.write() as session:
        view = groups.create(
            session, actor, GroupIn.model_validate({"scope": scope, "name": name, "weight": weight})
        )
        return view.group.id


def test_a_rule_may_want_a_live_group_that_applies_to_its_project(db: Database) -> None:
    store = _store(db)
    workspace = _make(db, store.admin, "peer", {"kind": "tenant"})
    project = _make(db, store.admin, "expert", {"kind": "project", "projectId": str(store.project)})
    agent = _make(
        db,
        store.admin,
        "agent",
        {"kind": "agent", "projectId": str(store.project), "agentId": str(store.agent)},
    )
    elsewhere = _make(db, store.admin, "second", {"kind": "project", "projectId": str(store.second)})
    with db.write() as session:
        for group_id in (workspace, project, agent):
            assert groups.wanted_group(session, store.admin, store.project, group_id).id == group_id
        with pytest.raises(Invalid) as refused:
            groups.wanted_group(session, store.admin, store.project, elsewhere)
        assert refused.value.code == "corrector-group-not-applicable"
        assert refused.value.message == (
            'Corrector group "second" applies to the runs of project "second", not to this project\'s: '
            "a rule here can't want it."
        )
        with pytest.raises(NotFound) as missing:
            groups.wanted_group(session, store.admin, store.project, uuid.uuid4())
        assert missing.value.code == "corrector-group-not-found"
        groups.remove(session, store.admin, workspace)
        with pytest.raises(Invalid) as removed:
            groups.wanted_group(session, store.admin, store.project, workspace)
        assert removed.value.code == "corrector-group-not-applicable"


def test_the_groups_that_apply_to_a_project_and_their_weights(db: Database) -> None:
    store = _store(db)
    workspace = _make(db, store.admin, "peer", {"kind": "tenant"}, weight=1)
    project = _make(db, store.admin, "expert", {"kind": "project", "projectId": str(store.project)}, weight=3)
    agent = _make(
        db,
        store.admin,
        "agent",
        {"kind": "agent", "projectId": str(store.project), "agentId": str(store.agent)},
        weight=0.5,
    )
    second = _make(db, store.admin, "second", {"kind": "project", "projectId": str(store.second)}, weight=2)
    second_agent = _make(
        db,
        store.admin,
        "second agent",
        {"kind": "agent", "projectId": str(store.second), "agentId": str(store.second_agent)},
    )
    removed = _make(db, store.admin, "gone", {"kind": "project", "projectId": str(store.project)}, weight=7)
    with db.write() as session:
        groups.remove(session, store.admin, removed)
    with db.read() as session:
        applying = [group.id for group in groups.applying_to_project(session, store.project)]
        assert applying == [workspace, project, agent]
        assert [group.id for group in groups.applying_to_project(session, store.second)] == [
            workspace,
            second,
            second_agent,
        ]
        # Removed groups keep their weight: their corrections still count with it.
        assert groups.weights(session, [project, agent, removed, uuid.UUID(int=0)]) == {
            project: 3,
            agent: 0.5,
            removed: 7,
        }
        assert groups.weights(session, []) == {}
