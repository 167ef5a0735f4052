"""Queue rules of the expert queue (corrections-reference.txt, "What a rule matches" to "queueRules
.unregister"; wire-clients.md §3.4–3.7): making, reading and changing them (each change a new version),
stopping them, and trying one on the project's recent runs, with or without queueing what it finds.

A rule here is a `QueueRule` without a queue: every query below says `queue_id IS NULL`, so the
annotation queues' automations (the same table, with a queue) never show here nor these there. Matching
and sampling are the engine's (`queues/matching.py`); queueing is the expert queue's (`engine.py`).

Reading takes read access to the project; changing a rule and queueing its recent matches take write.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session, load_only

from redline.db import new_id, utcnow
from redline.db.keyset import past
from redline.db.paging import Page, check_limit, decode_cursor, decode_time_cursor, encode_cursor, time_cursor
from redline.errors import Conflict, Invalid, NotFound
from redline.groups import service as groups
from redline.identity.service import Actor, require_project_role
from redline.jsonio import is_number, iso
from redline.queues import versions as rule_versions
from redline.queues.expert import engine as expert
from redline.queues.matching import DEFAULT_STATUS, RunFacts, check_sample, check_when, matches, sampled
from redline.queues.models import QueueRule, QueueRuleCounter
from redline.queues.versions import VERSIONED, next_version, stop, unknown_producer
from redline.traces.models import Trace
from redline.traces.service import RULES_SEE

MAX_NAME = 200
MAX_OPEN = 10_000
# How many distinct correctors a rule may want, as an annotation queue's reviewers per item.
MAX_CORRECTORS_WANTED = 20
PREVIEW_LAST = 100
MAX_PREVIEW_LAST = 500
RECENT_LAST = 100
MAX_RECENT_LAST = 1_000
# How many candidate runs a catch-up over `since` alone hands the engine at a time.
RECENT_CHUNK = 1_000

# Each versioned column as the wire names it.
WIRE_NAMES = {
    "name": "name",
    "when": "when",
    "sample": "sample",
    "max_open": "maxOpen",
    "corrector_group_id": "correctorGroupId",
    "correctors_wanted": "correctorsWanted",
    "enabled": "enabled",
}
# What a run's facts are read from: never its content, which a catch-up of 1,000 runs doesn't need.
_FACT_COLUMNS = (
    Trace.id,
    Trace.project_id,
    Trace.agent_id,
    Trace.flow_id,
    Trace.agent_version,
    Trace.version_source,
    Trace.status,
    Trace.dry_run,
    Trace.meta,
    Trace.started_at,
    Trace.ended_at,
)


@dataclass(frozen=True)
class RuleView:
    """A rule's newest version and how many of its runs wait now (over all its versions)."""

    rule: QueueRule
    open_items: int


@dataclass(frozen=True)
class VersionView:
    """One version and what it changed from the one before (nothing for the first)."""

    rule: QueueRule
    changes: list[dict[str, Any]]


@dataclass(frozen=True)
class PreviewAsk:
    """What to try: `when` as the wire has it (None: the rule's own, with `rule_id`), a sample (None:
    the rule's, or all), how many recent runs, and the rule whose sampling to use."""

    when: Mapping[str, Any] | None
    sample: Any
    last: int
    rule_id: uuid.UUID | None


@dataclass(frozen=True)
class Preview:
    considered: int
    matched: int
    estimate: bool


def rule_not_found(ident: object) -> NotFound:
    return NotFound("queue-rule", ident, f'No queue rule "{ident}" in this project.')


def _unregistered(rule: QueueRule) -> Conflict:
    return Conflict(
        f'Queue rule "{rule.rule_id}" is unregistered: it queues nothing more and can\'t be changed.',
        code="queue-rule-unregistered",
        details={"ruleId": str(rule.rule_id)},
    )


def _expert_rules() -> Select[QueueRule]:
    return select(QueueRule).where(QueueRule.queue_id.is_(None))


def _latest(session: Session, project_id: uuid.UUID, rule_id: uuid.UUID) -> QueueRule:
    rule = session.scalar(
        _expert_rules().where(
            QueueRule.rule_id == rule_id, QueueRule.project_id == project_id, QueueRule.latest.is_(True)
        )
    )
    if rule is None:
        raise rule_not_found(rule_id)
    return rule


def _views(session: Session, rules: Sequence[QueueRule]) -> list[RuleView]:
    waiting = expert.open_counts(session, [rule.rule_id for rule in rules])
    return [RuleView(rule, waiting.get(rule.rule_id, 0)) for rule in rules]


# ------------------------------------------------------------------------------------------------ checks


def _bad(field: str, message: str) -> Invalid:
    return Invalid(f"{field}: {message}", details={"field": field})


def _checked_when(session: Session, project_id: uuid.UUID, when: Any) -> dict[str, Any]:
    """`when` as stored: the engine's checks, then the corrections document's own rule that only a
    completed run is taken, and each agent or flow named one of the project's."""
    if not isinstance(when, Mapping):
        raise _bad("when", 'an object such as {"agentIds": [...]}.')
    checked = check_when(when, field="when")
    if "status" in checked and checked["status"] != list(DEFAULT_STATUS):
        raise _bad("when.status", 'only ["completed"]: only a completed run can be corrected.')
    unknown = unknown_producer(session, project_id, checked)
    if unknown is not None:
        name, index = unknown
        kind = "agent" if name == "agentIds" else "flow"
        raise _bad(f"when.{name}[{index}]", f'no {kind} "{checked[name][index]}" in this project.')
    return checked


def _checked_name(name: Any) -> str:
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME:
        raise _bad("name", f"a name of 1 to {MAX_NAME} characters.")
    return name


def _checked_max_open(value: Any) -> int | None:
    if value is None:
        return None
    if not is_number(value) or int(value) != value or not 1 <= value <= MAX_OPEN:
        raise _bad("maxOpen", f"a whole number from 1 to {MAX_OPEN:,}, or null for no cap.")
    return int(value)


def _checked_correctors_wanted(value: Any) -> int:
    if not is_number(value) or int(value) != value or not 1 <= value <= MAX_CORRECTORS_WANTED:
        raise _bad("correctorsWanted", f"a whole number from 1 to {MAX_CORRECTORS_WANTED}.")
    return int(value)


def _checked_enabled(value: Any) -> bool:
    if not isinstance(value, bool):
        raise _bad("enabled", "true or false.")
    return value


def _checked(
    session: Session, actor: Actor, project_id: uuid.UUID, fields: Mapping[str, Any]
) -> dict[str, Any]:
    """The versioned fields given (by column name), each checked, with the sentence naming its wire field."""
    checked: dict[str, Any] = {}
    for name, value in fields.items():
        if name == "name":
            checked[name] = _checked_name(value)
        elif name == "when":
            checked[name] = _checked_when(session, project_id, value)
        elif name == "sample":
            checked[name] = check_sample(value)
        elif name == "max_open":
            checked[name] = _checked_max_open(value)
        elif name == "corrector_group_id":
            checked[name] = (
                None if value is None else groups.wanted_group(session, actor, project_id, value).id
            )
        elif name == "correctors_wanted":
            checked[name] = _checked_correctors_wanted(value)
        elif name == "enabled":
            checked[name] = _checked_enabled(value)
        else:
            raise ValueError(f"not a field of a queue rule: {name}")
    return checked


# ----------------------------------------------------------------------------------------------- writing


def create_rule(session: Session, actor: Actor, project_id: uuid.UUID, fields: Mapping[str, Any]) -> RuleView:
    """A new rule at version 1; it applies to runs that complete from now on.

    `fields` by column name (`name` needed; `when` {} takes every completed run, `sample` 1 all of
    them, no `max_open` no cap, no `corrector_group_id` any correction, `correctors_wanted` 1 person's,
    `enabled` true)."""
    require_project_role(session, actor, project_id, "write")
    if "name" not in fields:
        raise _bad("name", "a queue rule needs a name.")
    checked = _checked(session, actor, project_id, {"when": {}, **fields})
    rule = QueueRule(
        rule_id=new_id(),
        version=1,
        project_id=project_id,
        queue_id=None,
        name=checked["name"],
        when=checked["when"],
        sample=checked.get("sample", 1.0),
        max_open=checked.get("max_open"),
        corrector_group_id=checked.get("corrector_group_id"),
        correctors_wanted=checked.get("correctors_wanted", 1),
        enabled=checked.get("enabled", True),
        latest=True,
        created_by=actor.principal_id,
        created_at=utcnow(),
    )
    session.add(rule)
    session.flush()
    return RuleView(rule, 0)


def update_rule(
    session: Session, actor: Actor, project_id: uuid.UUID, rule_id: uuid.UUID, changes: Mapping[str, Any]
) -> RuleView:
    """A new version with the fields given (by column name; None for `max_open` or
    `corrector_group_id` removes it); runs queued from now on count toward it. The sample keeps its
    picks across versions: the same run and rule always give the same answer."""
    require_project_role(session, actor, project_id, "write")
    old = _latest(session, project_id, rule_id)
    if old.unregistered_at is not None:
        raise _unregistered(old)
    if not changes:
        raise Invalid(
            "Send at least one of name, when, sample, maxOpen, correctorGroupId, correctorsWanted and "
            "enabled.",
            details={"field": "body"},
        )
    for name in ("name", "when", "sample", "correctors_wanted", "enabled"):
        if name in changes and changes[name] is None:
            raise _bad(WIRE_NAMES[name], "can't be null: only maxOpen and correctorGroupId can be removed.")
    new = next_version(session, old, actor, _checked(session, actor, project_id, changes))
    [view] = _views(session, [new])
    return view


def unregister(session: Session, actor: Actor, project_id: uuid.UUID, rule_id: uuid.UUID) -> QueueRule:
    """Stop the rule: it queues nothing more; its versions and the runs it queued stay."""
    require_project_role(session, actor, project_id, "write")
    rule = _latest(session, project_id, rule_id)
    if rule.unregistered_at is not None:
        raise _unregistered(rule)
    stop(session, rule.rule_id)
    return rule


# ----------------------------------------------------------------------------------------------- reading


def get_rule(
    session: Session, actor: Actor, project_id: uuid.UUID, rule_id: uuid.UUID, missing: NotFound | None = None
) -> RuleView:
    """The rule's newest version, stopped or not; a project the actor can't see hides it (as `missing`,
    when given)."""
    require_project_role(session, actor, project_id, "read", missing)
    [view] = _views(session, [_latest(session, project_id, rule_id)])
    return view


def find_rule(session: Session, actor: Actor, rule_id: uuid.UUID) -> RuleView:
    """A rule by its id alone, in whichever project holds it (the CLI's way of naming one)."""
    rule = session.scalar(_expert_rules().where(QueueRule.rule_id == rule_id, QueueRule.latest.is_(True)))
    if rule is None:
        raise rule_not_found(rule_id)
    return get_rule(session, actor, rule.project_id, rule_id, rule_not_found(rule_id))


# How the rules list may be ordered: oldest made first (the wire's order), by name, by runs waiting.
RULE_SORTS = ("made", "name", "open")


def list_rules(
    session: Session,
    actor: Actor,
    project_id: uuid.UUID,
    *,
    limit: int,
    cursor: str | None = None,
    search: str | None = None,
    sort: str = "made",
    descending: bool = False,
) -> Page[RuleView]:
    """The project's live rules (each its newest version), oldest first by when each was made, or by
    `sort` (`RULE_SORTS`: its name, any case; how many of its runs wait); `search` keeps those whose
    name holds it (any case). Each page is a range read after the cursor, however deep."""
    require_project_role(session, actor, project_id, "read")
    check_limit(limit)
    if sort not in RULE_SORTS:
        raise _bad("sort", f'"{sort}" is not one of {", ".join(RULE_SORTS)}.')
    made = (
        select(QueueRule.rule_id, func.min(QueueRule.created_at).label("made"))
        .where(QueueRule.project_id == project_id, QueueRule.queue_id.is_(None))
        .group_by(QueueRule.rule_id)
        .subquery()
    )
    key: Any = {
        "made": made.c.made,
        "name": func.lower(QueueRule.name),
        "open": func.coalesce(QueueRuleCounter.open_items, 0),
    }[sort]
    query = (
        _expert_rules()
        .add_columns(key)
        .join(made, made.c.rule_id == QueueRule.rule_id)
        .where(rule_versions.LIVE)
    )
    if sort == "open":
        query = query.outerjoin(QueueRuleCounter, QueueRuleCounter.rule_id == QueueRule.rule_id)
    if search:
        query = query.where(func.lower(QueueRule.name).contains(search.lower(), autoescape=True))
    if cursor:
        at, after = _rules_cursor(cursor, sort)
        query = query.where(past((key, QueueRule.rule_id), (at, after), descending=descending))
    order = (key.desc(), QueueRule.rule_id.desc()) if descending else (key, QueueRule.rule_id)
    rows = session.execute(query.order_by(*order).limit(limit + 1)).all()
    more = len(rows) > limit
    rows = rows[:limit]
    next_cursor = _rules_cursor_at(sort, rows[-1][1], rows[-1][0].rule_id) if more else None
    return Page(_views(session, [rule for rule, _ in rows]), next_cursor)


def _rules_cursor_at(sort: str, at: Any, rule_id: uuid.UUID) -> str:
    """The cursor after a row whose sort key is `at`: the wire's time cursor when sorted as made."""
    return time_cursor(at, rule_id) if sort == "made" else encode_cursor(str(at), str(rule_id))


def _rules_cursor(cursor: str, sort: str) -> tuple[Any, uuid.UUID]:
    """The sort key and rule id a cursor of the list in this order carries; anything else is bad input."""
    if sort == "made":
        return decode_time_cursor(cursor)
    at, ident = decode_cursor(cursor, 2)
    try:
        return (int(at) if sort == "open" else at), uuid.UUID(ident)
    except ValueError:
        raise Invalid(
            f'"{cursor}" is not a cursor this list gave out.', details={"field": "cursor"}
        ) from None


def _wire_value(rule: QueueRule, name: str) -> Any:
    value = getattr(rule, name)
    return str(value) if isinstance(value, uuid.UUID) else value


def changes_between(older: QueueRule | None, newer: QueueRule) -> list[dict[str, Any]]:
    """What `newer` changed from `older`, field by field as the wire names them: `[{field, from, to}]`;
    nothing for a first version."""
    if older is None:
        return []
    return [
        {"field": WIRE_NAMES[name], "from": _wire_value(older, name), "to": _wire_value(newer, name)}
        for name in VERSIONED
        if _wire_value(older, name) != _wire_value(newer, name)
    ]


def versions(
    session: Session,
    actor: Actor,
    project_id: uuid.UUID,
    rule_id: uuid.UUID,
    *,
    limit: int,
    cursor: str | None = None,
) -> Page[VersionView]:
    """Every version of the rule, newest first, each with what it changed. One row more than the page
    is read: it tells whether there is more, and is what the page's last version changed from."""
    require_project_role(session, actor, project_id, "read")
    check_limit(limit)
    _latest(session, project_id, rule_id)
    query = _expert_rules().where(QueueRule.rule_id == rule_id)
    if cursor:
        [before] = decode_cursor(cursor, 1)
        if not before.isdigit():
            raise Invalid(f'"{cursor}" is not a cursor this list gave out.', details={"field": "cursor"})
        query = query.where(QueueRule.version < int(before))
    rows = list(session.scalars(query.order_by(QueueRule.version.desc()).limit(limit + 1)))
    page = rows[:limit]
    # Versions are numbered from 1 without gaps, so the one before version n is n - 1.
    before_page = rows[limit] if len(rows) > limit else None
    views = [
        VersionView(rule, changes_between(page[i + 1] if i + 1 < len(page) else before_page, rule))
        for i, rule in enumerate(page)
    ]
    return Page(views, encode_cursor(str(page[-1].version)) if len(rows) > limit else None)


# ------------------------------------------------------------------------------------------- recent runs


def _recent(
    session: Session, project_id: uuid.UUID, *, last: int | None, since: datetime | None
) -> Iterator[list[RunFacts]]:
    """The project's runs newest first (by start), their content never erased, in chunks: the `last`
    of them, those completed at or after `since`, or the last of those. A run that reports no end
    counts as completed when it started."""
    query = (
        select(Trace)
        .options(load_only(*_FACT_COLUMNS))
        .where(Trace.project_id == project_id, Trace.erased_at.is_(None), RULES_SEE)
    )
    if since is not None:
        query = query.where(func.coalesce(Trace.ended_at, Trace.started_at) >= since)
    newest_first = (Trace.started_at.desc(), Trace.id.desc())
    if last is not None:
        yield [
            expert.facts_of_trace(trace)
            for trace in session.scalars(query.order_by(*newest_first).limit(last))
        ]
        return
    after: tuple[datetime, uuid.UUID] | None = None
    while True:
        page = query
        if after is not None:
            page = page.where(past((Trace.started_at, Trace.id), after, descending=True))
        traces = list(session.scalars(page.order_by(*newest_first).limit(RECENT_CHUNK)))
        if not traces:
            return
        yield [expert.facts_of_trace(trace) for trace in traces]
        after = (traces[-1].started_at, traces[-1].id)


def preview(session: Session, actor: Actor, project_id: uuid.UUID, asked: PreviewAsk) -> Preview:
    """How many of the project's last `asked.last` runs a rule would have queued, with its sample but
    not its cap. With a rule id the sample is drawn as that rule draws it (so the count is what the rule
    itself would take); without one it is the matching count times the share, an estimate."""
    require_project_role(session, actor, project_id, "read")
    if not 1 <= asked.last <= MAX_PREVIEW_LAST:
        raise _bad("last", f"from 1 to {MAX_PREVIEW_LAST} runs.")
    rule = _latest(session, project_id, asked.rule_id) if asked.rule_id is not None else None
    if asked.when is not None:
        when = _checked_when(session, project_id, asked.when)
    else:
        when = rule.when if rule is not None else {}
    if asked.sample is not None:
        sample = check_sample(asked.sample)
    else:
        sample = rule.sample if rule is not None else 1.0
    [runs] = list(_recent(session, project_id, last=asked.last, since=None))
    matching = [run for run in runs if matches(when, run)]
    if rule is None:
        return Preview(len(runs), round(len(matching) * sample), estimate=True)
    taken = sum(1 for run in matching if sampled(rule.rule_id, run.id, sample))
    return Preview(len(runs), taken, estimate=False)


def queue_recent(
    session: Session,
    actor: Actor,
    project_id: uuid.UUID,
    rule_id: uuid.UUID,
    *,
    last: int | None,
    since: datetime | None,
) -> expert.RecentOutcome:
    """Catch a live rule up on runs that ended before it was made: its matches among the project's
    recent runs (the last `last`, those completed at or after `since`, or the last of those; the last
    100 when neither is given), sampled as the rule samples and queued whatever its `maxOpen`."""
    require_project_role(session, actor, project_id, "write")
    if last is not None and not 1 <= last <= MAX_RECENT_LAST:
        raise _bad("last", f"from 1 to {MAX_RECENT_LAST:,} runs.")
    rule = _latest(session, project_id, rule_id)
    if rule.unregistered_at is not None:
        raise _unregistered(rule)
    if last is None and since is None:
        last = RECENT_LAST
    queued = already_queued = already_reviewed = 0
    for runs in _recent(session, project_id, last=last, since=since):
        outcome = expert.queue_recent(session, rule, runs)
        queued += outcome.queued
        already_queued += outcome.already_queued
        already_reviewed += outcome.already_reviewed
    return expert.RecentOutcome(queued, already_queued, already_reviewed)


# ------------------------------------------------------------------------------------------------- wire


def rule_dict(rule: QueueRule, open_items: int | None = None) -> dict[str, Any]:
    """A version as the wire has it (wire-clients.md §3.5, renamed as §3.7); optional fields are left
    out when unset. `openItems`, the runs waiting now, belongs to the rule, not to a past version."""
    body: dict[str, Any] = {
        "ruleId": str(rule.rule_id),
        "projectId": str(rule.project_id),
        "version": rule.version,
        "name": rule.name,
        "when": rule.when,
        "sample": rule.sample,
    }
    if rule.max_open is not None:
        body["maxOpen"] = rule.max_open
    if rule.corrector_group_id is not None:
        body["correctorGroupId"] = str(rule.corrector_group_id)
    if rule.correctors_wanted != 1:
        # Redline's addition: left out at its default, so a rule wanting one correction reads as before.
        body["correctorsWanted"] = rule.correctors_wanted
    body["enabled"] = rule.enabled
    if rule.created_by is not None:
        body["createdBy"] = str(rule.created_by)
    body["createdAt"] = iso(rule.created_at)
    if rule.unregistered_at is not None:
        body["unregisteredAt"] = iso(rule.unregistered_at)
    if open_items is not None:
        body["openItems"] = open_items
    return body


def view_dict(view: RuleView) -> dict[str, Any]:
    return rule_dict(view.rule, view.open_items)


def version_dict(view: VersionView) -> dict[str, Any]:
    return {**rule_dict(view.rule), "changes": view.changes}
