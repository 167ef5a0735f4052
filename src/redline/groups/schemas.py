"""Corrector groups as a client sends them (camelCase): to make one, and to change one.

Unknown fields are refused with their names, as the kindgi-era server refused them: a misspelt
`assertableBy` must not make a group anyone may give without saying so.
"""

from __future__ import annotations

import uuid
from typing import Any, Literal

from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from redline.identity.service import PrincipalKind, ReviewerRole
from redline.traces.schemas import StrictWireModel

# "tenant" is the wire's word for the workspace; "workspace" is taken as the same.
ScopeKind = Literal["tenant", "workspace", "project", "agent"]
MAX_NAME = 100
MAX_DESCRIPTION = 4000
MAX_PRINCIPAL_IDS = 1000


class ScopeIn(StrictWireModel):
    """Where a group applies: the workspace, a project, or an agent in a project."""

    kind: ScopeKind
    project_id: uuid.UUID | None = None
    agent_id: uuid.UUID | None = None


class AssertableByIn(StrictWireModel):
    """Who may correct as the group; a caller must meet each part that is set."""

    min_reviewer_role: ReviewerRole | None = None
    principal_kinds: list[PrincipalKind] | None = Field(None, min_length=1, max_length=2)
    principal_ids: list[uuid.UUID] | None = Field(None, min_length=1, max_length=MAX_PRINCIPAL_IDS)

    @model_validator(mode="after")
    def _says_something(self) -> AssertableByIn:
        if self.min_reviewer_role is None and self.principal_kinds is None and self.principal_ids is None:
            raise PydanticCustomError(
                "empty_restriction",
                "a restriction sets at least one of minReviewerRole, principalKinds and principalIds; "
                "send assertableBy: null to lift it.",
            )
        if self.min_reviewer_role is not None and self.principal_kinds == ["service"]:
            raise PydanticCustomError(
                "nobody",
                "minReviewerRole is a user's role and services have none: nobody could correct as "
                'a group with principalKinds ["service"] and a minReviewerRole.',
            )
        return self

    def stored(self) -> dict[str, Any]:
        """The restriction as the group keeps it: the parts set, lists without repeats, ids as text."""
        kept: dict[str, Any] = {}
        if self.min_reviewer_role is not None:
            kept["minReviewerRole"] = self.min_reviewer_role
        if self.principal_kinds is not None:
            kept["principalKinds"] = list(dict.fromkeys(self.principal_kinds))
        if self.principal_ids is not None:
            kept["principalIds"] = list(dict.fromkeys(str(ident) for ident in self.principal_ids))
        return kept


class GroupIn(StrictWireModel):
    scope: ScopeIn
    name: str = Field(min_length=1, max_length=MAX_NAME)
    weight: float = Field(1.0, ge=0, allow_inf_nan=False)
    description: str | None = Field(None, max_length=MAX_DESCRIPTION)
    assertable_by: AssertableByIn | None = None


class GroupChange(StrictWireModel):
    """Only the fields sent change (`model_fields_set`); `assertableBy: null` lifts the restriction,
    `description: null` clears it. A group's scope never changes: its corrections were made there."""

    name: str | None = Field(None, min_length=1, max_length=MAX_NAME)
    weight: float | None = Field(None, ge=0, allow_inf_nan=False)
    description: str | None = Field(None, max_length=MAX_DESCRIPTION)
    assertable_by: AssertableByIn | None = None

    @model_validator(mode="before")
    @classmethod
    def _fixed_fields(cls, data: Any) -> Any:
        if isinstance(data, dict):
            if "scope" in data:
                raise PydanticCustomError(
                    "scope_fixed",
                    "scope can't change: a group's corrections were made where it applies; "
                    "make a new group for the other scope.",
                )
            for name in ("name", "weight"):
                if name in data and data[name] is None:
                    raise PydanticCustomError("required", "{name} can't be null.", {"name": name})
        return data
