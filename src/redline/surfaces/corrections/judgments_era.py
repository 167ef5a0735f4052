"""The judgments era's words, for the routes the kindgi 0.1.10 client calls.

The corrections era renamed things (wire-clients.md §3.7): judgment → correction, judge class → corrector
group, judging rule → queue rule, judging queue → expert queue, `judgeClassId` → `correctorGroupId`,
`judged` → `corrected`, `live` → `pinned`, and the fields built on them. The old client's routes
(`/v1/judgments`, `/v1/judge-classes`, `…/judging-rules`, `…/judging-queue`) are the same services and,
where the shape is the same, the same handlers: this module says their answers and refusals the old way,
and reads the old words in what the client sends. Nothing here decides anything.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping
from typing import Any

from fastapi import Request
from fastapi.routing import APIRoute
from starlette.responses import Response

from redline.errors import NotFound, RedlineError
from redline.jsonio import loads
from redline.queues.matching import PINNED
from redline.surfaces.responses import JSONBody

LIVE = "live"
CORRECTED, JUDGED = "corrected", "judged"
# Fields and detail keys: the corrections era's name, then the judgments era's.
FIELDS = {
    "correctorGroupId": "judgeClassId",
    "wantedGroupIds": "wantedClassIds",
    "anyCorrection": "anyJudgment",
    "byGroup": "byClass",
    "corrected": "judged",
    "corrections": "judgments",
    "runsWithCorrections": "runsWithJudgments",
    "why": "reason",
    "items": "item",
}
# Error codes: a prefix of the corrections era, then the judgments era's.
CODE_PREFIXES = (
    ("correction-", "judgment-"),
    ("corrector-group-", "judge-class-"),
    ("queue-rule-", "judging-rule-"),
    ("queue-item-", "judging-item-"),
)
# Sentences made of fixed words and ids only, whose words the era renames (§3.7) in place.
PHRASES = (
    ("A correction", "A judgment"),
    ("Queue rule", "Judging rule"),
    ("queue rule", "judging rule"),
    ("expert queue", "judging queue"),
    (f" {CORRECTED} ", f" {JUDGED} "),
)
REWORDED_IN_PLACE = frozenset(
    {
        "correction-status-change-not-allowed",
        "queue-rule-not-found",
        "queue-rule-unregistered",
        "queue-item-not-found",
        "queue-item-not-open",
    }
)


# ------------------------------------------------------------------------------------------- refusals


def _code(code: str) -> str:
    for new, old in CODE_PREFIXES:
        if code.startswith(new):
            return old + code.removeprefix(new)
    return code


def _details(details: Mapping[str, Any]) -> dict[str, Any]:
    """Detail keys and the field a bad input names, in the old words."""
    said = {FIELDS.get(key, key): value for key, value in details.items()}
    if isinstance(said.get("field"), str):
        said["field"] = FIELDS.get(said["field"], said["field"])
    return said


def _sentence(error: RedlineError, code: str) -> str:
    """The judgments era's sentence: §3.6's where it gives one, the generic not-found one of the old
    kind, the fixed words renamed in a sentence of ids only; any other stays as Redline says it."""
    details = error.details
    if error.code == "run-not-finished":
        return f'Run "{details["runId"]}" has no output to judge yet (status {details["status"]}).'
    if error.code == "run-erased":
        return f'Run "{details["runId"]}" was erased: there is no output left to judge.'
    if isinstance(error, NotFound) and error.generic:
        return f'No {code.removesuffix("-not-found")} "{details["id"]}".'
    if error.code in REWORDED_IN_PLACE:
        message = error.message
        for new, old in PHRASES:
            message = message.replace(new, old)
        return message
    return error.message


def in_old_words(error: RedlineError) -> RedlineError:
    """The refusal as the judgments-era server gave it: its code, its sentence, its detail keys."""
    code = _code(error.code)
    return RedlineError(
        _sentence(error, code), code=code, details=_details(error.details), status=error.status
    )


class JudgmentsEraRoute(APIRoute):
    """A route of the old client's: whatever refuses a request on it, a service or a handler shared
    with the corrections routes, is answered in the judgments era's words."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def in_old_words_handler(request: Request) -> Response:
            try:
                return await handler(request)
            except RedlineError as error:
                raise in_old_words(error) from error

        return in_old_words_handler


# -------------------------------------------------------------------------------------------- answers


def renamed(body: Mapping[str, Any], names: Mapping[str, str] = FIELDS) -> dict[str, Any]:
    """`body` with its keys in the old words, in their order."""
    return {names.get(key, key): value for key, value in body.items()}


def live_versions(versions: list[str]) -> list[str]:
    """`versions` of a rule's `when` as the old client says them: `live` for `pinned`."""
    return [LIVE if version == PINNED else version for version in versions]


def pinned_versions(versions: list[str]) -> list[str]:
    """`versions` as the client sent them, read in today's words: `pinned` for `live`."""
    return [PINNED if version == LIVE else version for version in versions]


def _when(when: Any) -> Any:
    if isinstance(when, dict) and "versions" in when:
        return {**when, "versions": live_versions(when["versions"])}
    return when


def rule(body: Mapping[str, Any]) -> dict[str, Any]:
    """A queue rule's version as a judging rule: `judgeClassId`, and `live` in `when.versions`."""
    said = renamed(body)
    said["when"] = _when(said["when"])
    return said


def rule_version(body: Mapping[str, Any]) -> dict[str, Any]:
    """A version with what it changed, each change's field and `when` in the old words."""
    said = rule(body)
    said["changes"] = [
        {
            **change,
            "field": FIELDS.get(change["field"], change["field"]),
            "from": _when(change["from"]) if change["field"] == "when" else change["from"],
            "to": _when(change["to"]) if change["field"] == "when" else change["to"],
        }
        for change in body["changes"]
    ]
    return said


# The most principal ids the old client reads in a restriction (Redline takes up to 1,000).
OLD_MAX_PRINCIPAL_IDS = 100


def judge_class(body: Mapping[str, Any]) -> dict[str, Any]:
    """A corrector group as a judge class: the same object, but a restriction naming more principals
    than the old client reads says how many (`principalCount`), as it does to whom it doesn't name them."""
    said = dict(body)
    restriction = said.get("assertableBy")
    if restriction is not None and len(restriction.get("principalIds", ())) > OLD_MAX_PRINCIPAL_IDS:
        shown = {name: value for name, value in restriction.items() if name != "principalIds"}
        said["assertableBy"] = {**shown, "principalCount": len(restriction["principalIds"])}
    return said


def queue_item(body: Mapping[str, Any]) -> dict[str, Any]:
    """An expert-queue item as a judging-queue item: `wantedClassIds`, `anyJudgment`, `progress.byClass`,
    state `judged`."""
    said = renamed(body)
    progress = body["progress"]
    said["progress"] = {
        "total": progress["total"],
        "byClass": [renamed(count) for count in progress["byGroup"]],
    }
    if said["state"] == CORRECTED:
        said["state"] = JUDGED
    return said


def results(body: Mapping[str, Any]) -> dict[str, Any]:
    """A rule's results in the old words; `since` as the old client reads it, a time (the UTC day's
    start), where today's answer gives the day; without the agreement between corrector groups, which
    that era never had and would name in today's words."""
    said = {name: value for name, value in body.items() if name != "agreement"}
    if "since" in said:
        said["since"] = f"{said['since']}T00:00:00+00:00"
    said["groups"] = [
        {**renamed(group), "byClass": [renamed(tally) for tally in group["byGroup"]]}
        for group in body["groups"]
    ]
    return said


def page(item: Callable[[Mapping[str, Any]], dict[str, Any]]) -> Callable[[Any], Any]:
    """A page's words: each of its items in `item`'s, the page's own keys as they are."""

    def said(body: Any) -> Any:
        return {**body, "data": [item(element) for element in body["data"]]}

    return said


def reworded(answer: Response, words: Callable[[Any], Any]) -> JSONBody:
    """The answer of a route shared with the corrections era, in the judgments era's words; its status
    and headers (an idempotent replay's) as they were."""
    kept = {
        name: value
        for name, value in answer.headers.items()
        if name.lower() not in ("content-length", "content-type")
    }
    return JSONBody(words(loads(bytes(answer.body))), status_code=answer.status_code, headers=kept)
