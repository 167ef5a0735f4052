"""The console's new-reward-model form: which traces (the traces list's filter, or an annotation queue),
a name and the main options, made into a model through `learning.service.create`, as the API makes one.

The form words what it reads before the service sees it (the options, a selection that is empty or too
large); everything else, too few pairs above all, is the service's own sentence. What chose the traces
is kept in the model's training config (`chosen_by`), so its page says where they came from.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping

from pydantic import BaseModel
from sqlalchemy.orm import Session

from redline.console import traces_listing as listing
from redline.console.forms import form_id, form_number, form_whole
from redline.console.trace_filters import FILTER_PARAMS, filters_from
from redline.errors import Invalid
from redline.identity.models import Project
from redline.identity.service import Actor, default_write_project
from redline.learning import service as learning
from redline.learning.pair_rules import ADJUDICATED_ONLY, MIN_AGREEMENT
from redline.learning.pairing import DEFAULT_MIN_PAIRS, RULES, SAME_CONTEXT_FIRST
from redline.learning.pairs import DEFAULT_MAX_PAIRS
from redline.queues.annotation import service as queues

MAX_NAME = 200
# How the model's page names each filter parameter, and its values where they are codes.
_FILTER_WORDS = {
    "project": "project",
    "agent": "agent",
    "version": "version",
    "status": "status",
    "rated": "ratings",
    "commented": "comments",
    "corrected": "corrections",
    "since": "from",
    "until": "to",
}
_HAS_WORDS = {"yes": "some", "no": "none"}


class ModelForm(BaseModel):
    """The form's fields as typed, so a refused form comes back as it was sent. The filter's fields are
    named as the traces list's address names them."""

    name: str = ""
    source: str = "filter"
    queue: str = ""
    max_pairs: str = str(DEFAULT_MAX_PAIRS)
    # Same-context pairs first, as Redline's own tools ask (docs/api-rm.md, "Pairing"), or every pair,
    # the rm API's default; cross pairs fill up to `min_pairs` under the first only.
    pairing: str = SAME_CONTEXT_FIRST
    min_pairs: str = str(DEFAULT_MIN_PAIRS)
    epochs: str = "1"
    # A checkbox: "on" when ticked, absent (empty) when not.
    adjudicated_only: str = ""
    min_agreement: str = ""
    project: str = ""
    agent: str = ""
    version: str = ""
    status: str = ""
    rated: str = ""
    commented: str = ""
    corrected: str = ""
    since: str = ""
    until: str = ""


def _pairing(form: ModelForm) -> dict[str, str | int]:
    """The config's pairing: the rule chosen, and with same-context pairs first how far cross pairs fill."""
    if form.pairing not in RULES:
        raise Invalid(
            "Pairing: choose same-context pairs first or every pair, the rm API's default.",
            details={"field": "pairing"},
        )
    if form.pairing != SAME_CONTEXT_FIRST:
        return {"pairing": form.pairing}
    least = form_whole(form.min_pairs, "min_pairs", "Cross pairs up to")
    if least is None:
        least = DEFAULT_MIN_PAIRS
    if not 0 <= least <= learning.MAX_PAIRS_LIMIT:
        raise Invalid(
            f"Cross pairs up to: a whole number from 0 to {learning.MAX_PAIRS_LIMIT:,}.",
            details={"field": "min_pairs"},
        )
    return {"pairing": form.pairing, "min_pairs": least}


def _options(form: ModelForm) -> dict[str, str | int | float | bool]:
    max_pairs = form_whole(form.max_pairs, "Pairs at most") or DEFAULT_MAX_PAIRS
    if not learning.MIN_PAIRS <= max_pairs <= learning.MAX_PAIRS_LIMIT:
        raise Invalid(
            f"Pairs at most: a whole number from {learning.MIN_PAIRS} to {learning.MAX_PAIRS_LIMIT:,}.",
            details={"field": "max_pairs"},
        )
    epochs = form_whole(form.epochs, "Epochs") or 1
    if epochs < 1:
        raise Invalid("Epochs: at least 1.", details={"field": "epochs"})
    options: dict[str, str | int | float | bool] = {
        "max_pairs": max_pairs,
        "epochs": epochs,
        **_pairing(form),
    }
    # The pair rules (learning/pair_rules.py) go into the config only when set, as the API's would.
    if form.adjudicated_only:
        options[ADJUDICATED_ONLY] = True
    least = form_number(form.min_agreement, MIN_AGREEMENT, "Least agreement")
    if least is not None:
        if not 0 <= least <= 1:
            raise Invalid(
                "Least agreement: a share from 0 to 1 of an item's reviewers who agree with its value.",
                details={"field": MIN_AGREEMENT},
            )
        options[MIN_AGREEMENT] = least
    return options


def filter_words(session: Session, params: Mapping[str, str]) -> str:
    """ "the traces list's filter: status completed, ratings some" (a project by its name)."""
    said = []
    for name in FILTER_PARAMS:
        value = params.get(name) or ""
        if not value:
            continue
        if name == "project":
            project = session.get(Project, uuid.UUID(value))
            value = project.name if project is not None else value
        said.append(f"{_FILTER_WORDS[name]} {_HAS_WORDS.get(value, value)}")
    return "the traces list's filter: " + ", ".join(said) if said else "every trace in the traces list"


def _chosen(session: Session, actor: Actor, form: ModelForm) -> tuple[list[uuid.UUID], str]:
    """The traces the form chooses, and how to say what chose them."""
    if form.source == "queue":
        queue_id = form_id(form.queue, "Annotation queue")
        if queue_id is None:
            raise Invalid("Annotation queue: choose the queue whose traces the model learns from.")
        queue = queues.get_queue(session, actor, queue_id).queue
        ids = queues.trace_ids(session, actor, queue_id)
        if not ids:
            raise Invalid(f"The queue “{queue.name}” holds no traces yet: add some, or choose by filter.")
        if len(ids) > learning.MAX_TRACES:
            raise Invalid(
                f"The queue “{queue.name}” holds {len(ids):,} traces; "
                f"a reward model learns from at most {learning.MAX_TRACES:,}."
            )
        return ids, f"the annotation queue “{queue.name}”"
    params = {name: getattr(form, name) for name in FILTER_PARAMS}
    filters = filters_from(params)
    count = listing.count_matching(session, actor, filters)
    if count == 0:
        raise Invalid("No trace matches this filter: widen it, or choose a queue.")
    if count > learning.MAX_TRACES:
        raise Invalid(
            f"The filter matches {count:,} traces; a reward model learns from at most "
            f"{learning.MAX_TRACES:,}: narrow it (a project, an agent, a version, dates)."
        )
    return list(listing.matching_ids(session, actor, filters)), filter_words(session, params)


def new_model(session: Session, actor: Actor, form: ModelForm, *, feedback_llm: bool) -> uuid.UUID:
    """The queued model the form asks for; a person who may write in no project is refused, as an
    editor's action."""
    default_write_project(session, actor)
    name = form.name.strip()
    if not name or len(name) > MAX_NAME:
        raise Invalid(
            f"Name: give the model a name of 1 to {MAX_NAME} characters.", details={"field": "name"}
        )
    options = _options(form)
    trace_ids, chosen_by = _chosen(session, actor, form)
    model = learning.create(
        session,
        actor,
        name=name,
        trace_ids=trace_ids,
        config={**options, "chosen_by": chosen_by},
        feedback_llm=feedback_llm,
    )
    return model.id
