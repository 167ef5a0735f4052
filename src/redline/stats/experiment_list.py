"""The console's experiments list: the experiments the caller can read, filtered, sorted by any column and
read a page at a time, each with its figures: how many results it has and how many erred, how many were
reviewed in it, each evaluator's average, and per review key the share of each option (categorical), the
mean with its 95% range (range) or the number of values (text).

Every figure is added up by the store over the experiments' runs' annotations, one grouped statement per
experiment (`figures_of`), never row by row in Python. Sorted by a column of the experiment's own
(name, dataset, agent, version, state, created, results, errored) the store pages the experiments and the
figures are added up for the page's alone. Sorted by a figure, every listed experiment's figures must be
known to order them, so they are added up for every experiment listed (a filter, a dataset or an
agent, keeps it short) and the experiments, a few dozen rows, are ordered here; sorted by how many were
reviewed, only the annotations made in them are counted.

A range key's 95% range is Student's t interval of the mean, mean ± t(0.975, n − 1) · s / √n, from the
count, sum and sum of squares the store adds up: the arithmetic of `stats.paired` (a paired difference's
interval is the one-sample interval of the differences), so both ranges are computed one way.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from sqlalchemy import ColumnElement, Select, and_, case, false, func, literal, select
from sqlalchemy.orm import Session

from redline.annotations.hidden import Hidden
from redline.annotations.models import Annotation
from redline.datasets.models import Dataset
from redline.db import among
from redline.db.json_values import json_holds_text, json_number
from redline.errors import Invalid
from redline.experiments.models import Experiment, ExperimentResult
from redline.experiments.reviewed import reviewed_counts
from redline.experiments.service import chosen_review_keys
from redline.identity.service import Actor, readable_project_ids, visible_projects
from redline.queues.annotation.blind import hidden_from
from redline.reviews.kinds import EVALUATOR_RESULT, REVIEW_VALUE
from redline.reviews.models import ReviewKey
from redline.stats.paired import PairedDifference, paired_difference

# What an evaluator's average is taken of: true 1, false 0, a number itself.
NUMERIC_RESULTS = ("boolean", "number")
DEFAULT_SORT = "-created"
# The heading over the evaluators' columns.
EVALUATORS = "Evaluators"

FigureKind = Literal["eval", "share", "mean", "count"]
# Columns of the experiment's own row: sorting by one reads no result.
_OWN: dict[str, Any] = {
    "name": Experiment.name,
    "dataset": Dataset.name,
    "agent": func.coalesce(Experiment.agent, Experiment.flow),
    "version": Experiment.version,
    "state": Experiment.state,
    "created": Experiment.created_at,
    "results": Experiment.results_count,
    "errored": Experiment.errored_count,
}
_FIGURE_KINDS: tuple[FigureKind, ...] = ("eval", "share", "mean", "count")


@dataclass(frozen=True)
class Sort:
    """What the list is sorted by: a column of the experiment's own (`column`), `reviewed`, or a figure
    (`figure` with the evaluator's or key's `name`, and the `option` whose share counts)."""

    column: str
    descending: bool
    figure: FigureKind | None = None
    name: str = ""
    option: str | None = None

    @property
    def text(self) -> str:
        """As the address spells it: `-created`, `eval:exact`, `share:rating=good`, `-mean:helpfulness`."""
        sign = "-" if self.descending else ""
        if self.figure is None:
            return sign + self.column
        return f"{sign}{self.figure}:{self.name}" + (f"={self.option}" if self.option is not None else "")


def parse_sort(text: str | None) -> Sort:
    """The sort the address names (`sort=`), newest first when none: a column (`name`, `dataset`,
    `agent`, `version`, `state`, `created`, `results`, `errored`, `reviewed`) or a figure (`eval:<name>`,
    `share:<key>=<option>`, `mean:<key>`, `count:<key>`), `-` before it for descending."""
    given = text or DEFAULT_SORT
    descending = given.startswith("-")
    body = given.removeprefix("-")
    kind, colon, rest = body.partition(":")
    if not colon:
        if body in _OWN or body == "reviewed":
            return Sort(body, descending)
    elif kind in _FIGURE_KINDS and rest:
        name, equals, option = rest.partition("=")
        if (kind == "share") == bool(equals) and name and (option or kind != "share"):
            return Sort(kind, descending, kind, name, option if equals else None)
    raise Invalid(
        f'sort: "{given}" is not a column of the list: sort by name, dataset, agent, version, state, '
        "created, results, errored, reviewed, eval:<evaluator>, share:<key>=<option>, mean:<key> or "
        "count:<key>.",
        details={"field": "sort"},
    )


@dataclass(frozen=True)
class ListFilters:
    """Which experiments are listed: of one project, one dataset, one agent or flow (by name), in one state,
    or whose name holds `search` (any case); none of them, every experiment the caller can read."""

    project_id: uuid.UUID | None = None
    dataset_id: uuid.UUID | None = None
    agent: str | None = None
    state: str | None = None
    search: str | None = None


@dataclass(frozen=True)
class EvaluatorFigure:
    """An evaluator's results on an experiment's runs: how many, and their mean (a boolean's share of
    true)."""

    output_type: str
    count: int
    mean: float | None


@dataclass(frozen=True)
class KeyFigure:
    """A review key's values on an experiment's runs: how many, the share of values saying each option
    (categorical; a multi-valued value may say several), and the mean of the numbers with its 95% range
    (range)."""

    count: int
    shares: dict[str, float] = field(default_factory=dict)
    mean: PairedDifference | None = None


@dataclass(frozen=True)
class Column:
    """A figure column: an evaluator's average, or a review key's option share, mean or count. Columns
    of one `group` (the evaluators, one key's) stand under one heading, each headed by its `label`."""

    figure: FigureKind
    name: str
    group: str
    label: str
    option: str | None = None

    @property
    def key(self) -> str:
        """The column's sort as the address spells it, ascending."""
        return Sort(self.figure, False, self.figure, self.name, self.option).text


@dataclass(frozen=True)
class ListedExperiment:
    experiment: Experiment
    dataset_name: str | None
    reviewed: int
    evaluators: dict[str, EvaluatorFigure]
    keys: dict[str, KeyFigure]


@dataclass(frozen=True)
class ExperimentList:
    """A page of the list: its rows from `offset` of `total`, and the figure columns its rows have."""

    rows: list[ListedExperiment]
    columns: list[Column]
    total: int
    offset: int

    @property
    def groups(self) -> list[tuple[str, int]]:
        """The headings over the figure columns: each group's title and how many columns it spans."""
        spans: list[tuple[str, int]] = []
        for column in self.columns:
            if spans and spans[-1][0] == column.group:
                spans[-1] = (column.group, spans[-1][1] + 1)
            else:
                spans.append((column.group, 1))
        return spans


# ------------------------------------------------------------------------------------------- the query


def _listed(session: Session, actor: Actor, filters: ListFilters) -> Select[Experiment, str]:
    """The experiments the filters keep, of the projects the caller reads, with their dataset's name."""
    projects = readable_project_ids(session, actor, filters.project_id)
    query = (
        select(Experiment, Dataset.name)
        .outerjoin(Dataset, Dataset.id == Experiment.dataset_id)
        .where(Experiment.workspace_id == actor.workspace_id, Experiment.project_id.in_(projects))
    )
    if filters.dataset_id is not None:
        query = query.where(Experiment.dataset_id == filters.dataset_id)
    if filters.agent:
        query = query.where((Experiment.agent == filters.agent) | (Experiment.flow == filters.agent))
    if filters.state:
        query = query.where(Experiment.state == filters.state)
    if filters.search:
        query = query.where(func.lower(Experiment.name).contains(filters.search.lower(), autoescape=True))
    return query


def _order(sort: Sort) -> list[ColumnElement[Any]]:
    """The ORDER BY of a column of the experiment's own: its value (none last, either way), then the id,
    so pages never overlap."""
    value: ColumnElement[Any] = _OWN[sort.column]
    ordered = value.desc() if sort.descending else value.asc()
    return [ordered.nulls_last(), Experiment.id.desc() if sort.descending else Experiment.id.asc()]


# ------------------------------------------------------------------------------------------ the figures


@dataclass(frozen=True)
class Figures:
    """What the store added up over some experiments' results, by experiment."""

    evaluators: dict[uuid.UUID, dict[str, EvaluatorFigure]]
    keys: dict[uuid.UUID, dict[str, KeyFigure]]


def figures_of(
    session: Session,
    experiment_ids: Sequence[uuid.UUID],
    options: Mapping[str, Sequence[str]],
    hidden: Hidden,
) -> Figures:
    """Each evaluator's boolean or number results and each review key's values (the keys of `options`,
    with each key's options) on each experiment's runs (a run two results name counted once): per
    annotation key and kind, the count, the numbers' mean, count and sum of squares, and how many values
    say each option. One grouped statement per experiment, reading its runs' annotations through their
    index (`db.among`). The values `hidden` from the reader (blind review) count in no figure."""
    evaluators: dict[uuid.UUID, dict[str, EvaluatorFigure]] = {ident: {} for ident in experiment_ids}
    keys: dict[uuid.UUID, dict[str, KeyFigure]] = {ident: {} for ident in experiment_ids}
    every = sorted({option for listed in options.values() for option in listed})
    number = json_number(Annotation.value)
    said = and_(REVIEW_VALUE, Annotation.key.in_(list(options)), *hidden.shown()) if options else false()
    # A person's value has no output type. The spread and the options are added up over those alone, and
    # each row's number is read once for all but them: an evaluator's results are most of the rows.
    person = Annotation.output_type.is_(None)
    figures = select(
        Annotation.key,
        Annotation.output_type,
        func.count(),
        func.avg(number),
        func.count(case((person, number))),
        func.sum(case((person, number * number))),
        *(
            func.sum(case((person & json_holds_text(Annotation.value, literal(option)), 1), else_=0))
            for option in every
        ),
    ).group_by(Annotation.key, Annotation.output_type)
    for experiment_id in experiment_ids:
        runs = select(ExperimentResult.run_id).where(ExperimentResult.experiment_id == experiment_id)
        rows = session.execute(
            figures.where(
                among(Annotation.trace_id, runs),
                (EVALUATOR_RESULT & Annotation.output_type.in_(NUMERIC_RESULTS)) | said,
            )
        )
        for key, output_type, count, mean, numbers, squares, *saying in rows:
            if output_type is not None:
                evaluators[experiment_id][str(key)] = EvaluatorFigure(
                    str(output_type), int(count), float(mean) if mean is not None else None
                )
                continue
            counts = dict(zip(every, saying, strict=True))
            total = float(mean) * numbers if mean is not None else 0.0
            keys[experiment_id][str(key)] = KeyFigure(
                int(count),
                {option: int(counts[option] or 0) / count for option in options[str(key)]},
                paired_difference(int(numbers), total, float(squares or 0.0)),
            )
    return Figures(evaluators, keys)


def _key_columns(definitions: Iterable[ReviewKey]) -> list[Column]:
    """A key's columns: one per option of a categorical one (its share), the mean of a range one, the
    count of a text one."""
    columns: list[Column] = []
    for key in definitions:
        if key.type == "categorical":
            columns += [
                Column("share", key.key, key.title, option["value"], option["value"])
                for option in key.options or []
            ]
        elif key.type == "range":
            columns.append(Column("mean", key.key, key.title, "mean (95% range)"))
        else:
            columns.append(Column("count", key.key, key.title, "values"))
    return columns


def _offered(session: Session, experiments: Sequence[Experiment]) -> list[ReviewKey]:
    """The review keys the experiments are reviewed with, each key once, in the experiments' orders: those
    chosen for each, or for one that chose none (or whose chosen keys were all deleted) its project's.
    A deleted key is no longer offered, so it has no column; its values stay on the runs."""
    chosen = chosen_review_keys(session, [experiment.id for experiment in experiments])
    # The keys chosen for an experiment are its project's (checked when it was made).
    definitions = list(
        session.scalars(
            select(ReviewKey)
            .where(ReviewKey.project_id.in_({experiment.project_id for experiment in experiments}))
            .order_by(ReviewKey.key)
        )
    )
    by_id = {str(key.id): key for key in definitions}
    offered: dict[str, ReviewKey] = {}
    for experiment in experiments:
        own = [by_id[key_id] for key_id in chosen[experiment.id] if key_id in by_id]
        if not own:
            own = [key for key in definitions if key.project_id == experiment.project_id]
        for key in own:
            offered.setdefault(key.key, key)
    return list(offered.values())


def _columns(rows: Sequence[ListedExperiment], offered: Sequence[ReviewKey], sort: Sort) -> list[Column]:
    """The figure columns of a page: every evaluator with boolean or number results on its experiments'
    runs, then the review keys they are reviewed with; and the column sorted by, should the page's rows
    have none of it (an evaluator none of them ran)."""
    names = sorted({name for row in rows for name in row.evaluators})
    columns = [Column("eval", name, EVALUATORS, name) for name in names] + _key_columns(offered)
    if sort.figure is not None and not any(
        (column.figure, column.name, column.option) == (sort.figure, sort.name, sort.option)
        for column in columns
    ):
        group = EVALUATORS if sort.figure == "eval" else sort.name
        label = (
            sort.name
            if sort.figure == "eval"
            else (sort.option or ("mean" if sort.figure == "mean" else "values"))
        )
        columns.append(Column(sort.figure, sort.name, group, label, sort.option))
    return columns


def _options(offered: Sequence[ReviewKey], sort: Sort) -> dict[str, list[str]]:
    """The keys whose values are added up, each with its options: those offered, and the one sorted by."""
    options = {key.key: [option["value"] for option in key.options or []] for key in offered}
    if sort.figure in ("share", "mean", "count"):
        listed = options.setdefault(sort.name, [])
        if sort.option is not None and sort.option not in listed:
            listed.append(sort.option)
    return options


def _value(row: ListedExperiment, sort: Sort) -> float | None:
    """The figure a row is sorted by; None when it has none (no result of that evaluator, no value)."""
    if sort.figure == "eval":
        evaluator = row.evaluators.get(sort.name)
        return evaluator.mean if evaluator is not None else None
    said = row.keys.get(sort.name)
    if said is None:
        return None
    if sort.figure == "share":
        return said.shares.get(str(sort.option))
    if sort.figure == "mean":
        return said.mean.mean if said.mean is not None else None
    return said.count


T = TypeVar("T")


def _ordered(
    items: Sequence[T], value: Callable[[T], float | None], ident: Callable[[T], uuid.UUID], descending: bool
) -> list[T]:
    """`items` by `value` (those without one last, either way), then by id, as the store orders a column."""
    valued = [item for item in items if value(item) is not None]
    valued.sort(key=lambda item: (value(item), ident(item)), reverse=descending)
    missing = sorted((item for item in items if value(item) is None), key=ident, reverse=descending)
    return valued + missing


def _rows(
    session: Session,
    listed: Sequence[tuple[Experiment, str | None]],
    options: Mapping[str, Sequence[str]],
    hidden: Hidden,
    reviewed: Mapping[uuid.UUID, int] | None = None,
) -> list[ListedExperiment]:
    """The experiments with their figures (and their reviewed counts, unless already counted)."""
    ids = [experiment.id for experiment, _ in listed]
    found = figures_of(session, ids, options, hidden)
    counts = reviewed if reviewed is not None else reviewed_counts(session, ids)
    return [
        ListedExperiment(
            experiment,
            name,
            counts[experiment.id],
            found.evaluators[experiment.id],
            found.keys[experiment.id],
        )
        for experiment, name in listed
    ]


# -------------------------------------------------------------------------------------------- the list


def list_experiments(
    session: Session, actor: Actor, filters: ListFilters, sort: Sort, *, offset: int, limit: int
) -> ExperimentList:
    """A page of the experiments the caller can read that the filters keep, `limit` from `offset` in the
    order of `sort`, with their figures.

    Sorted by a column of their own, the store orders and pages them, and the figures are added up for
    the page alone. Sorted by how many were reviewed, every listed experiment is counted (from the
    annotations made in each, not its results) and the page's figures added up. Sorted by a figure, the
    figures of every listed experiment are added up and the page taken from them in order."""
    query = _listed(session, actor, filters)
    hidden = hidden_from(session, actor)
    descending = sort.descending
    if sort.column in _OWN:
        total = int(session.scalar(select(func.count()).select_from(query.subquery())) or 0)
        page = [
            (experiment, name)
            for experiment, name in session.execute(query.order_by(*_order(sort)).offset(offset).limit(limit))
        ]
        offered = _offered(session, [experiment for experiment, _ in page])
        rows = _rows(session, page, _options(offered, sort), hidden)
    else:
        listed = [(experiment, name) for experiment, name in session.execute(query)]
        total = len(listed)
        if sort.figure is None:
            counts = reviewed_counts(session, [experiment.id for experiment, _ in listed])
            page = _ordered(listed, lambda item: counts[item[0].id], lambda item: item[0].id, descending)
            page = page[offset : offset + limit]
            offered = _offered(session, [experiment for experiment, _ in page])
            rows = _rows(session, page, _options(offered, sort), hidden, counts)
        else:
            options = _options(_offered(session, [item[0] for item in listed]), sort)
            every = _rows(session, listed, options, hidden)
            rows = _ordered(every, lambda row: _value(row, sort), lambda row: row.experiment.id, descending)
            rows = rows[offset : offset + limit]
            offered = _offered(session, [row.experiment for row in rows])
    return ExperimentList(rows, _columns(rows, offered, sort), total, offset)


@dataclass(frozen=True)
class FilterChoices:
    """What the list's filters offer: the datasets experiments were run on and the agents (and flows)
    that ran them, of the projects the caller reads."""

    datasets: list[tuple[uuid.UUID, str]]
    agents: list[str]


def filter_choices(session: Session, actor: Actor) -> FilterChoices:
    projects = [project.id for project, _ in visible_projects(session, actor)]
    mine = (Experiment.workspace_id == actor.workspace_id) & (
        Experiment.project_id.in_(projects) if projects else false()
    )
    datasets = session.execute(
        select(Dataset.id, Dataset.name)
        .where(Dataset.id.in_(select(Experiment.dataset_id).where(mine)))
        .order_by(Dataset.name, Dataset.id)
    ).all()
    producer = func.coalesce(Experiment.agent, Experiment.flow)
    agents = session.scalars(
        select(producer).where(mine, producer.is_not(None)).distinct().order_by(producer)
    )
    return FilterChoices([(ident, name) for ident, name in datasets], [str(name) for name in agents])
