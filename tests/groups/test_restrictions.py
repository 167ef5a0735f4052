"""Who may correct as a group (`may_give`) and which runs a group applies to (`applies_to`): properties
over every restriction and caller, with no store needed."""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Any, Literal

from hypothesis import given
from hypothesis import strategies as st

from redline.groups import service as groups
from redline.groups.models import CorrectorGroup
from redline.identity.service import PRINCIPAL_KINDS, REVIEWER_ROLES, Actor

WORKSPACE = uuid.UUID(int=1)
# A small pool, so callers and restrictions name the same ids often.
IDS = [uuid.UUID(int=100 + number) for number in range(6)]
PROJECT, OTHER_PROJECT = uuid.UUID(int=2), uuid.UUID(int=3)
AGENT, OTHER_AGENT = uuid.UUID(int=4), uuid.UUID(int=5)


def _group(restriction: dict[str, Any] | None, **scope: Any) -> CorrectorGroup:
    return CorrectorGroup(
        workspace_id=WORKSPACE, scope_kind=groups.WORKSPACE, assertable_by=restriction, **scope
    )


@st.composite
def callers(draw: st.DrawFn) -> Actor:
    kind: Literal["user", "service", "operator"] = draw(st.sampled_from(["user", "service", "operator"]))
    return Actor(
        workspace_id=WORKSPACE,
        principal_id=None if kind == "operator" else draw(st.sampled_from(IDS)),
        name="someone",
        kind=kind,
        reviewer_role=draw(st.sampled_from(REVIEWER_ROLES)) if kind == "user" else None,
        token_id=None if kind == "operator" else draw(st.sampled_from(IDS)),
    )


PARTS = {
    "minReviewerRole": st.sampled_from(REVIEWER_ROLES),
    "principalKinds": st.lists(st.sampled_from(PRINCIPAL_KINDS), min_size=1, max_size=2, unique=True),
    "principalIds": st.lists(
        st.sampled_from([str(ident) for ident in IDS]), min_size=1, max_size=4, unique=True
    ),
}
restrictions = st.fixed_dictionaries({}, optional=PARTS).filter(bool)


def _meets(actor: Actor, part: str, value: Any) -> bool:
    """One part of a restriction, as the reference words it."""
    if part == "minReviewerRole":
        # "a reviewer of that role or above"
        return actor.reviewer_role is not None and REVIEWER_ROLES.index(
            actor.reviewer_role
        ) >= REVIEWER_ROLES.index(value)
    if part == "principalKinds":
        # "user for people, or service for service tokens"
        return actor.kind in value
    # "named users or tokens, by id"
    return str(actor.principal_id) in value or str(actor.token_id) in value


@given(callers())
def test_without_a_restriction_anyone_may_give_a_group(actor: Actor) -> None:
    assert groups.may_give(actor, _group(None))


@given(callers(), restrictions)
def test_a_caller_must_meet_each_part_set(actor: Actor, restriction: dict[str, Any]) -> None:
    expected = all(_meets(actor, part, value) for part, value in restriction.items())
    assert groups.may_give(actor, _group(restriction)) is expected
    assert (
        all(groups.may_give(actor, _group({part: value})) for part, value in restriction.items()) is expected
    )


@given(callers(), restrictions, restrictions)
def test_adding_parts_never_lets_more_callers_in(
    actor: Actor, first: dict[str, Any], more: dict[str, Any]
) -> None:
    if groups.may_give(actor, _group({**more, **first})):
        assert groups.may_give(actor, _group(first))


@given(callers(), restrictions)
def test_a_higher_reviewer_role_never_loses_a_group(actor: Actor, restriction: dict[str, Any]) -> None:
    if actor.reviewer_role is None or not groups.may_give(actor, _group(restriction)):
        return
    for role in REVIEWER_ROLES[REVIEWER_ROLES.index(actor.reviewer_role) :]:
        promoted = replace(actor, reviewer_role=role)
        assert groups.may_give(promoted, _group(restriction))


def test_a_named_token_or_its_holder_may_give_a_group() -> None:
    holder = Actor(WORKSPACE, IDS[0], "sam", "user", "standard", token_id=IDS[1])
    assert groups.may_give(holder, _group({"principalIds": [str(IDS[0])]}))
    assert groups.may_give(holder, _group({"principalIds": [str(IDS[1])]}))
    other_token = Actor(WORKSPACE, IDS[0], "sam", "user", "standard", token_id=IDS[2])
    assert not groups.may_give(other_token, _group({"principalIds": [str(IDS[1])]}))


def test_the_operator_meets_no_restriction() -> None:
    operator = Actor(WORKSPACE, None, "operator", "operator", workspace_admin=True)
    for part, value in (
        ("minReviewerRole", "standard"),
        ("principalKinds", ["user", "service"]),
        ("principalIds", [str(IDS[0])]),
    ):
        assert not groups.may_give(operator, _group({part: value}))


@given(
    project=st.sampled_from([PROJECT, OTHER_PROJECT]),
    agent=st.sampled_from([AGENT, OTHER_AGENT, None]),
)
def test_a_group_applies_to_the_runs_of_its_scope(project: uuid.UUID, agent: uuid.UUID | None) -> None:
    workspace = _group(None)
    of_project = CorrectorGroup(scope_kind=groups.PROJECT, project_id=PROJECT)
    of_agent = CorrectorGroup(scope_kind=groups.AGENT, project_id=PROJECT, agent_id=AGENT)
    assert groups.applies_to(workspace, project, agent)
    assert groups.applies_to(of_project, project, agent) is (project == PROJECT)
    assert groups.applies_to(of_agent, project, agent) is (project == PROJECT and agent == AGENT)
