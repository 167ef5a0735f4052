"""The traces list's filter as its address spells it (`project`, `agent`, `version`, `status`, `rated`,
`commented`, `corrected`, `since`, `until`), read into `listing.ListFilters`.

One reading for every page that chooses traces by that filter: the list itself, its "add the selected
traces" action and the reward-model form, so the same address always means the same traces.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, date, datetime, time, timedelta

from redline.console.traces_listing import ListFilters
from redline.errors import Invalid
from redline.web.addresses import path_id

FILTER_PARAMS = ("project", "agent", "version", "status", "rated", "commented", "corrected", "since", "until")


def _day(value: str | None, name: str) -> date | None:
    if not value:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise Invalid(f"{name}: {value!r} is not a date (YYYY-MM-DD).", details={"field": name}) from None


def _has(value: str | None, name: str) -> bool | None:
    if value in (None, ""):
        return None
    if value in ("yes", "no"):
        return value == "yes"
    raise Invalid(f'{name} is "yes" or "no".', details={"field": name})


def _start_of(day: date | None) -> datetime | None:
    return datetime.combine(day, time.min, tzinfo=UTC) if day else None


def filters_from(params: Mapping[str, str | None]) -> ListFilters:
    """The filter the parameters name; an empty or missing one leaves that filter out."""
    project = params.get("project")
    first_day, last_day = _day(params.get("since"), "since"), _day(params.get("until"), "until")
    return ListFilters(
        project_id=path_id(project, "project") if project else None,
        agent=params.get("agent") or None,
        version=params.get("version") or None,
        status=params.get("status") or None,
        has_ratings=_has(params.get("rated"), "rated"),
        has_comments=_has(params.get("commented"), "commented"),
        has_corrections=_has(params.get("corrected"), "corrected"),
        since=_start_of(first_day),
        # `until` names the last day shown, so the window ends when the next day starts.
        until=_start_of(last_day + timedelta(days=1)) if last_day else None,
    )


def filter_values(params: Mapping[str, str | None]) -> dict[str, str]:
    """The filter's fields as a form shows them again: each parameter's value, empty when not given."""
    return {name: params.get(name) or "" for name in FILTER_PARAMS}
