"""The expert queue's list filters, read from the query in the words of the queue's clients: today's
(`correctorGroupId`, state `corrected`) on the expert queue's route, the kindgi 0.1.10 client's
(`judgeClassId`, `judged`) on the judging queue's, so both routes read one set of parameters.

This module alone among the surface's leaves out `from __future__ import annotations`: the parameters'
aliases are the factory's arguments, and FastAPI reads a dependency's annotations as objects, which a
string annotation naming a closure's variable can't give it.
"""

from collections.abc import Callable
from typing import Annotated

from fastapi import Query

from redline.queues.expert.engine import CORRECTED, STATES
from redline.queues.expert.listing import QueueFilters
from redline.surfaces.corrections.wire import query_id, query_list, query_time


def filters_reading(group: str, corrected: str) -> Callable[..., QueueFilters]:
    """A dependency reading the filters: `group` names the filter on the group the items' rules want,
    `corrected` the state of an item its corrections closed (read as today's `corrected`)."""
    states = ", ".join(corrected if state == CORRECTED else state for state in STATES)

    def filters(
        state: Annotated[
            list[str] | None, Query(description=f"{states}; repeated or comma-separated")
        ] = None,
        rule_id: Annotated[str | None, Query(alias="ruleId")] = None,
        agent_id: Annotated[str | None, Query(alias="agentId")] = None,
        group_id: Annotated[
            str | None, Query(alias=group, description="Items a rule of which wants this group")
        ] = None,
        for_me: Annotated[
            bool, Query(alias="forMe", description="Only the items you can close by correcting the run")
        ] = False,
        added_after: Annotated[
            str | None, Query(alias="addedAfter", description="Queued at or after this ISO 8601 time")
        ] = None,
        closed_after: Annotated[
            str | None, Query(alias="closedAfter", description="Closed at or after this ISO 8601 time")
        ] = None,
    ) -> QueueFilters:
        return QueueFilters(
            states=tuple(CORRECTED if one == corrected else one for one in query_list(state)),
            rule_id=query_id(rule_id, "ruleId"),
            agent_id=query_id(agent_id, "agentId"),
            corrector_group_id=query_id(group_id, group),
            for_me=for_me,
            added_after=query_time(added_after, "addedAfter"),
            closed_after=query_time(closed_after, "closedAfter"),
        )

    return filters
