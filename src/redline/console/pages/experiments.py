"""Review › Experiments, under Datasets: every experiment the caller can read, filtered and sorted by any
column, each with its figures — results and errors, how many were reviewed in it, each evaluator's
average, and per human review the share of each option, the mean with its 95% range, or the count
(`stats.experiment_list`). An experiment's name opens its review screen (`experiment_review.py`), and
*Compare* its comparison with another of its dataset (`experiment_compare.py`).

The filters, the sort and the page are in the address. Pages are offsets: sorting by a figure orders by a
value the store computes, for which no index gives a cursor, and a workspace holds experiments by the
hundred, not by the million.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from redline.console.areas import Area
from redline.console.deps import Db, Viewer
from redline.console.experiment_words import RANGE_METHOD, cell
from redline.console.forms import form_id
from redline.console.nav import Crumb
from redline.console.paging import offset_page_links
from redline.errors import Invalid
from redline.experiments.schemas import EXPERIMENT_STATES
from redline.identity.service import visible_projects
from redline.stats.experiment_list import ListFilters, filter_choices, list_experiments, parse_sort

router = APIRouter()

PAGE_SIZE = 25
# The deepest page an address may ask for: far past any workspace's experiments.
MAX_OFFSET = 100_000
EXPERIMENTS = Crumb("Experiments", "/ui/experiments")
AREA = Area("experiments", "experiments", (Crumb("Datasets", "/ui/datasets"),))


def _state(value: str | None) -> str | None:
    """The state filter as chosen: none (any state), running or finished."""
    if not value:
        return None
    if value not in EXPERIMENT_STATES:
        raise Invalid(
            f'state: "{value}" is not a state; an experiment is running or finished.',
            details={"field": "state"},
        )
    return value


@router.get("/experiments")
def experiment_list(
    request: Request,
    who: Viewer,
    db: Db,
    project: str | None = None,
    dataset: str | None = None,
    agent: str | None = None,
    state: str | None = None,
    q: str | None = None,
    sort: str | None = None,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
) -> Response:
    filters = ListFilters(
        project_id=form_id(project, "project"),
        dataset_id=form_id(dataset, "dataset"),
        agent=agent or None,
        state=_state(state),
        search=q or None,
    )
    order = parse_sort(sort)
    with db.read() as session:
        listed = list_experiments(session, who.actor, filters, order, offset=offset, limit=PAGE_SIZE)
        choices = filter_choices(session, who.actor)
        projects = visible_projects(session, who.actor)
    return AREA.page(
        request,
        who,
        "list",
        "Experiments",
        Crumb("Experiments"),
        listed=listed,
        choices=choices,
        projects=projects,
        names={project.id: project.name for project, _ in projects},
        filters=filters,
        states=EXPERIMENT_STATES,
        q=q or "",
        sort=order.text,
        filtered=any((project, dataset, agent, state, q)),
        cell=cell,
        range_method=RANGE_METHOD,
        **offset_page_links(request, offset, PAGE_SIZE, listed.total),
    )
