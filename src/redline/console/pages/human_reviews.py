"""Settings › Human reviews: a project's review keys (categorical, range, text) — list, create, change,
delete, and add the document's default ones — through `reviews.service`, as /v2/human-reviews does.

Writers of the project get the forms; readers only the list. A refusal re-renders the page with the
service's sentence beside the form that was sent, holding what was typed.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any, Unpack

from fastapi import APIRouter, Form, Request
from pydantic import BaseModel, ValidationError
from starlette.responses import Response

from redline.console.deps import Changer, Db, Viewer
from redline.console.forms import form_number, refusal, text_or_none, unparsed
from redline.console.notices import Outcome, notice, see_other
from redline.console.projects import choose_project
from redline.console.session import SignedIn
from redline.console.settings_area import settings_page
from redline.db import Database
from redline.db.id_pages import MAX_LIMIT
from redline.errors import RedlineError
from redline.reviews import service as reviews
from redline.reviews.models import ReviewKey
from redline.reviews.schemas import REVIEW_TYPES, ReviewKeyChange, ReviewKeyIn

router = APIRouter()
BASE = "/ui/settings/human-reviews"
# Between an option's value and what it means, on one line of the options field.
OPTION_SEPARATOR = " | "


class ReviewForm(BaseModel):
    """A human review's fields as typed (the create and edit forms post them; the edit form has no key);
    options one per line, `value | what it means`."""

    key: str = ""
    title: str = ""
    description: str = ""
    type: str = "categorical"
    options: str = ""
    multiple: str = ""
    min: str = ""
    max: str = ""

    @classmethod
    def of(cls, review_key: ReviewKey) -> ReviewForm:
        lines = [
            option["value"] + (OPTION_SEPARATOR + option["description"] if option.get("description") else "")
            for option in review_key.options or []
        ]
        return cls(
            key=review_key.key,
            title=review_key.title,
            description=review_key.description or "",
            type=review_key.type,
            options="\n".join(lines),
            multiple="on" if review_key.multiple else "",
            min="" if review_key.min is None else f"{review_key.min:g}",
            max="" if review_key.max is None else f"{review_key.max:g}",
        )

    def option_list(self) -> list[dict[str, Any]] | None:
        """The options typed, or None for a type that has none (the service refuses options there)."""
        if self.type != "categorical":
            return None
        options = []
        for line in self.options.splitlines():
            value, _, meaning = line.partition(OPTION_SEPARATOR.strip())
            if value.strip():
                options.append({"value": value.strip(), "description": meaning.strip() or None})
        return options

    def fields(self) -> dict[str, Any]:
        """What a definition and a change share, in the schema's names."""
        ranged = self.type == "range"
        return {
            "display_name": text_or_none(self.title),
            "description": text_or_none(self.description),
            "type": self.type,
            "options": self.option_list(),
            "multiple": self.multiple == "on" if self.type == "categorical" else None,
            "min": form_number(self.min, "min") if ranged else None,
            "max": form_number(self.max, "max") if ranged else None,
        }


def _view(
    request: Request,
    db: Database,
    who: SignedIn,
    project: str | None,
    *,
    create: ReviewForm | None = None,
    editing: tuple[str, ReviewForm] | None = None,
    **outcome: Unpack[Outcome],
) -> Response:
    with db.read() as session:
        choice = choose_project(session, who.actor, project)
        keys: list[ReviewKey] = []
        more = False
        if choice.project is not None:
            listed = reviews.list_keys(session, who.actor, project_id=choice.project.id, limit=MAX_LIMIT)
            keys, more = listed.items, listed.has_more
    forms = {str(key.id): ReviewForm.of(key) for key in keys}
    if editing is not None:
        forms[editing[0]] = editing[1]
    return settings_page(
        request,
        who,
        "human-reviews",
        "Human reviews",
        outcome,
        choice=choice,
        keys=keys,
        more=more,
        forms=forms,
        create=create or ReviewForm(),
        types=REVIEW_TYPES,
        separator=OPTION_SEPARATOR,
    )


# What a finished change says on the page it returns to. The address carries only which one and the key,
# so a link can't put words of its own on the page.
DONE = {
    "created": 'Added the human review "{key}".',
    "changed": 'Changed the human review "{key}".',
    "deleted": 'Deleted the human review "{key}"; the values recorded under its key stay on their traces.',
    "defaults": "Added the default reviews: {key}.",
    "had-defaults": "The project has the default reviews already.",
}


def _back(project: str, done: str, key: str = "") -> Response:
    return see_other(
        BASE, {"project": project, "done": done, "key": key} if key else {"project": project, "done": done}
    )


@router.get("/settings/human-reviews")
def human_reviews_page(request: Request, who: Viewer, db: Db, project: str | None = None) -> Response:
    return _view(request, db, who, project, notice=notice(DONE, request))


FormText = Annotated[str, Form()]


@router.post("/settings/human-reviews")
def create_human_review(
    request: Request,
    who: Changer,
    db: Db,
    project: FormText,
    typed: Annotated[ReviewForm, Form()],
) -> Response:
    try:
        with db.write() as session:
            choice = choose_project(session, who.actor, project)
            try:
                body = ReviewKeyIn.model_validate(
                    {"key": typed.key.strip(), "project_id": choice.id, **typed.fields()}
                )
            except ValidationError as error:
                raise unparsed(error, camel=False) from None
            made = reviews.create(session, who.actor, body).key
    except RedlineError as error:
        return _view(request, db, who, project, **refusal(error), error_at="create", create=typed)
    return _back(project, "created", made)


@router.post("/settings/human-reviews/defaults")
def add_default_reviews(request: Request, who: Changer, db: Db, project: FormText) -> Response:
    try:
        with db.write() as session:
            choice = choose_project(session, who.actor, project)
            added = reviews.add_defaults(session, who.actor, choice.id)
    except RedlineError as error:
        return _view(request, db, who, project, **refusal(error), error_at="defaults")
    if not added:
        return _back(project, "had-defaults")
    return _back(project, "defaults", ", ".join(key.key for key in added))


@router.post("/settings/human-reviews/{review_id}")
def change_human_review(
    request: Request,
    review_id: uuid.UUID,
    who: Changer,
    db: Db,
    project: FormText,
    typed: Annotated[ReviewForm, Form()],
) -> Response:
    try:
        with db.write() as session:
            try:
                body = ReviewKeyChange.model_validate(typed.fields())
            except ValidationError as error:
                raise unparsed(error, camel=False) from None
            changed = reviews.change(session, who.actor, review_id, body).key
    except RedlineError as error:
        return _view(
            request,
            db,
            who,
            project,
            **refusal(error),
            error_at=str(review_id),
            editing=(str(review_id), typed),
        )
    return _back(project, "changed", changed)


@router.post("/settings/human-reviews/{review_id}/delete")
def delete_human_review(
    request: Request, review_id: uuid.UUID, who: Changer, db: Db, project: FormText
) -> Response:
    try:
        with db.write() as session:
            key = reviews.get(session, who.actor, review_id, "write").key
            reviews.delete(session, who.actor, review_id)
    except RedlineError as error:
        return _view(request, db, who, project, **refusal(error), error_at=str(review_id))
    return _back(project, "deleted", key)
