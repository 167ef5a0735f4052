"""The demo's parts in order, each reported as it is done: what `redline demo` and `serve --demo` run."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, time

from redline.db import Database, utcnow
from redline.demo import dataset, experiments, expert, people, review, reward_model, runs
from redline.identity import service as identity

# Told each part's sentence as soon as the part is done (the CLI prints it).
Report = Callable[[str], None]

# How many parts `seed` reports, one sentence each: runs, people, the expert queue, the annotation queue,
# the dataset, the reward model and the experiments (the CLI's progress bar counts them).
PARTS = 7


@dataclass(frozen=True)
class DemoSummary:
    """What the demo made, a sentence per part, in the order the parts ran."""

    project: str
    lines: list[str] = field(default_factory=list)


def today() -> datetime:
    """The start of the current UTC day: the demo's runs end before it, so they are the two weeks up to
    today whenever it runs, and every run of the same day gets the same times."""
    return datetime.combine(utcnow().date(), time(), UTC)


def seed(
    db: Database,
    project: str | None = None,
    *,
    count: int = runs.DEFAULT_COUNT,
    now: datetime | None = None,
    report: Report | None = None,
    workspace: str | None = None,
) -> DemoSummary:
    """Seed the named project (or the first one) of the workspace (the installation's first unless
    named) with every part of the demo, as the operator there."""
    with db.read() as session:
        actor = identity.operator(session, workspace)
        target = (
            identity.find_project(session, actor, project)
            if project
            else identity.visible_projects(session, actor)[0][0]
        )
        project_id, name = target.id, target.name
    summary = DemoSummary(name)

    def done(line: str) -> None:
        summary.lines.append(line)
        if report is not None:
            report(line)

    start = today() if now is None else now
    made = runs.seed_runs(db, actor, project_id, count=count, now=start)
    done(made.sentence(name))
    crew = people.seed_people(db, actor, project_id)
    done(crew.sentence())
    done(expert.seed_expert_queue(db, actor, project_id, made.runs, crew))
    done(review.seed_review_queue(db, actor, project_id, made.runs, crew))
    done(dataset.seed_dataset(db, actor, project_id, name, made.runs))
    done(reward_model.seed_reward_model(db, actor, project_id, made.runs, crew))
    done(experiments.seed_experiments(db, actor, project_id, made.runs, crew, start))
    return summary
