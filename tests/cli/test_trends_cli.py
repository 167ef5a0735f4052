"""`redline trends`, through click's runner against a fresh store on each backend: the Trends page's
sentences for each rule, earlier rule versions apart, the weights, and refusals. The rule and the
corrections are made through the services, as the first admin."""

from __future__ import annotations

import re
import uuid

from click.testing import CliRunner, Result

from redline.cli.main import cli
from redline.corrections.schemas import CorrectionIn
from redline.db import Database
from redline.identity.service import Actor
from redline.ingest import runs as ingest
from redline.queues.expert import correcting
from redline.queues.expert import rules as expert_rules
from redline.traces.schemas import RunIn
from tests.conftest import bootstrap_admin, run_waiting_jobs
from tests.samples import make_run

AS_OF = re.compile(r"as of \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC")
COMPUTING = (
    "Agreement between corrector groups is being computed: counting the corrections of the rules' runs "
    "takes longer than a request may, so the job worker counts them; ask again in a moment."
)
FRESH = "Agreement between corrector groups as of <time>, computed by the job worker; no change seen since."


def invoke(database_url: str, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--database-url", database_url, *args], catch_exceptions=False)


def computed(db: Database, database_url: str, *args: str) -> str:
    """The command's output once the job worker has computed the agreement its first run asked for (that
    it was being computed), with the figures' as-of time as `as of <time>`."""
    first = invoke(database_url, *args)
    assert first.exit_code == 0, first.output
    assert COMPUTING in first.output
    assert run_waiting_jobs(db) == 1
    again = invoke(database_url, *args)
    assert again.exit_code == 0, again.output
    return AS_OF.sub("as of <time>", again.output)


def _corrected(db: Database, admin: Actor, project: str, version: str, right: int, wrong: int) -> None:
    """`right + wrong` runs of `version`, each corrected once by the admin."""
    for index in range(right + wrong):
        with db.write() as session:
            [run] = ingest.record_runs(
                session, admin, [RunIn.model_validate(make_run(project, agentVersion=version))]
            )
            verdict = (
                {"answer": "right"} if index < right else {"answer": "wrong", "why": "Not what was asked."}
            )
            correcting.create(session, admin, CorrectionIn.model_validate({"runId": str(run.id), **verdict}))


def _store(db: Database) -> tuple[Actor, uuid.UUID]:
    first = bootstrap_admin(db)
    return Actor.of(first.admin), first.project.id


def test_trends_say_each_rules_sentences(db: Database, database_url: str) -> None:
    admin, project = _store(db)
    with db.write() as session:
        rule = expert_rules.create_rule(session, admin, project, {"name": "Trend check"}).rule.rule_id
    _corrected(db, admin, str(project), "1.0.0", 3, 9)
    with db.write() as session:
        expert_rules.update_rule(session, admin, project, rule, {"sample": 0.9999})
    _corrected(db, admin, str(project), "1.0.0", 10, 0)
    _corrected(db, admin, str(project), "1.1.0", 1, 1)

    first = invoke(database_url, "trends", "--project", "default")
    assert first.output.splitlines()[6] == f"  {COMPUTING}"
    output = computed(db, database_url, "trends", "--project", "default")
    assert output == (
        "Trend check (version 2)\n"
        "  1.0.0: about 100% marked right, from 10 corrections (10 runs corrected so far); range 72–100%\n"
        "  1.1.0: too few corrections to say (2 so far)\n"
        "  Earlier versions of the rule are shown apart, never added in: each is a sample of its own.\n"
        "  Version 1:\n"
        "    1.0.0: about 25% marked right, from 12 corrections (12 runs corrected so far); range 9–53%\n"
        f"  {FRESH}\n"
        "  Agreement between corrector groups: too few runs corrected by two groups to say (0 so far)\n"
        "\n"
        "Every correction counts the same: no corrector group applies to this project.\n"
    )
    # Everything was queued today, so the last 30 days say the same.
    assert computed(db, database_url, "trends", "--project", str(project), "--period", "30d") == output


def test_trends_without_rules_and_refusals(db: Database, database_url: str) -> None:
    _store(db)
    empty = invoke(database_url, "trends", "--project", "default")
    assert empty.exit_code == 0, empty.output
    assert empty.output == (
        "No queue rules in this project: trends come from the runs a rule queues.\n"
        "Every correction counts the same: no corrector group applies to this project.\n"
    )
    unknown = invoke(database_url, "trends", "--project", "nope")
    assert (unknown.exit_code, unknown.output) == (1, 'Error: No project "nope".\n')
    period = invoke(database_url, "trends", "--project", "default", "--period", "7d")
    assert period.exit_code == 2
    assert "Invalid value for '--period': '7d' is not one of 'all', '90d', '30d'." in period.output
