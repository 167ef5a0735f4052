"""`redline queue-rules …` and `redline expert-queue …` through click's runner against a fresh store on
each backend. Runs are recorded through the service as the first admin; the commands act as the
operator."""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from typing import Any

from click.testing import CliRunner, Result

from redline.cli.main import cli
from redline.corrections.schemas import CorrectionIn
from redline.db import Database
from redline.groups import service as groups
from redline.groups.schemas import GroupIn
from redline.identity.service import Actor
from redline.ingest import runs as ingest
from redline.queues.expert import correcting
from redline.queues.matching import sampled
from redline.traces.schemas import RunIn
from tests.conftest import bootstrap_admin
from tests.samples import make_run


@dataclass
class Store:
    admin: Actor
    project_id: str
    db: Database

    def runs(self, count: int = 1, **fields: Any) -> list[str]:
        with self.db.write() as session:
            stored = ingest.record_runs(
                session,
                self.admin,
                [RunIn.model_validate(make_run(self.project_id, **fields)) for _ in range(count)],
            )
        return [str(run.id) for run in stored]

    def correct(self, run_id: str) -> None:
        with self.db.write() as session:
            correcting.create(
                session, self.admin, CorrectionIn.model_validate({"runId": run_id, "answer": "right"})
            )

    def group(self, name: str) -> str:
        with self.db.write() as session:
            body = GroupIn.model_validate(
                {"scope": {"kind": "project", "projectId": self.project_id}, "name": name}
            )
            return str(groups.create(session, self.admin, body).group.id)


def _store(db: Database) -> Store:
    first = bootstrap_admin(db)
    return Store(Actor.of(first.admin), str(first.project.id), db)


def invoke(database_url: str, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--database-url", database_url, *args], catch_exceptions=False)


def ok(database_url: str, *args: str) -> Result:
    result = invoke(database_url, *args)
    assert result.exit_code == 0, result.output
    return result


def _rule_id(result: Result) -> str:
    found = re.search(r"\(([0-9a-f-]{36})\)", result.stdout)
    assert found, result.stdout
    return found.group(1)


def _json_lines(result: Result) -> list[dict[str, Any]]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_rules_are_made_listed_changed_versioned_and_stopped(database_url: str, db: Database) -> None:
    store = _store(db)
    store.runs(status="running")
    expert = store.group("expert")
    made = ok(
        database_url,
        "queue-rules",
        "create",
        "Echo half",
        "--project",
        store.project_id,
        "--agent",
        "support-agent",
        "--version",
        "pinned",
        "--sample",
        "0.5",
        "--max-open",
        "5",
    )
    rule_id = _rule_id(made)
    assert made.stdout.startswith(f'Made queue rule "Echo half" ({rule_id}), version 1.')
    table = made.stdout.splitlines()[1:]
    assert re.split(r"\s{2,}", table[0]) == [
        "ID",
        "NAME",
        "VERSION",
        "MATCHES",
        "TAKES",
        "WANTS",
        "CAP",
        "OPEN",
        "ENABLED",
    ]
    assert re.search(
        r"Echo half\s+1\s+\{.*\"versions\":\[\"pinned\"\]\}\s+50%\s+any correction\s+5\s+0\s+yes$", table[1]
    )

    [listed] = _json_lines(ok(database_url, "queue-rules", "list", "--project", "default", "--json"))
    assert (listed["ruleId"], listed["sample"], listed["maxOpen"], listed["when"]["versions"]) == (
        rule_id,
        0.5,
        5,
        ["pinned"],
    )
    assert listed["createdAt"]
    assert "createdBy" not in listed  # the operator is no one

    changed = ok(database_url, "queue-rules", "set", rule_id, "--no-cap", "--group", expert, "--any-run")
    assert "version 2" in changed.stdout
    assert re.search(r"\{\}\s+50%\s+expert\s+none\s+0\s+yes$", changed.stdout.splitlines()[-1])
    got = json.loads(ok(database_url, "queue-rules", "get", rule_id, "--json").stdout)
    assert (got["version"], got["when"], got["correctorGroupId"]) == (2, {}, expert)
    assert "maxOpen" not in got

    versions = ok(database_url, "queue-rules", "versions", rule_id).stdout.splitlines()
    assert re.split(r"\s{2,}", versions[0]) == ["VERSION", "BY", "AT", "CHANGED"]
    assert versions[1].startswith("2 ")
    assert "maxOpen: 5 → null" in versions[1]
    assert f'correctorGroupId: null → "{expert}"' in versions[1]
    assert versions[2].startswith("1 ")
    assert versions[2].endswith("created")

    stopped = ok(database_url, "queue-rules", "remove", rule_id)
    assert (
        stopped.stdout
        == f'Stopped queue rule "Echo half" ({rule_id}); the 0 runs it has waiting stay in the queue.\n'
    )
    assert "Stopped" in ok(database_url, "queue-rules", "get", rule_id).stdout
    assert ok(database_url, "queue-rules", "list", "--project", "default", "--json").stdout == ""
    refused = invoke(database_url, "queue-rules", "set", rule_id, "--name", "x")
    assert refused.exit_code == 1
    assert f'Queue rule "{rule_id}" is unregistered' in refused.output


def test_refusals_are_the_apis_sentences(database_url: str, db: Database) -> None:
    store = _store(db)
    bad = invoke(database_url, "queue-rules", "create", "x", "--project", store.project_id, "--sample", "0")
    assert bad.exit_code == 1
    assert "Error: sample: a share of matching runs, more than 0 and at most 1 (0.05 for 5%)." in bad.output
    bad = invoke(database_url, "queue-rules", "create", "x", "--project", store.project_id, "--max-open", "0")
    assert "Error: maxOpen: a whole number from 1 to 10,000, or null for no cap." in bad.output
    bad = invoke(
        database_url, "queue-rules", "create", "x", "--project", store.project_id, "--agent", "nobody"
    )
    assert 'Error: No agent "nobody" in that project.' in bad.output
    unknown = str(uuid.uuid4())
    bad = invoke(database_url, "queue-rules", "get", unknown)
    assert f'Error: No queue rule "{unknown}" in this project.' in bad.output
    bad = invoke(database_url, "queue-rules", "get", "nope")
    assert bad.exit_code == 2
    assert '"nope" is not a queue rule id.' in bad.output
    bad = invoke(database_url, "queue-rules", "set", unknown, "--no-cap", "--max-open", "3")
    assert "Give --max-open or --no-cap, not both." in bad.output


def test_preview_queue_recent_and_results(database_url: str, db: Database) -> None:
    store = _store(db)
    # Enough runs that a half sample surely takes two or more (the rule's sampling follows the run ids).
    runs = store.runs(30)
    store.runs(2, agent="billing-agent")
    estimate = ok(
        database_url,
        "queue-rules",
        "preview",
        "--project",
        "default",
        "--agent",
        "support-agent",
        "--sample",
        "0.5",
    )
    assert estimate.stdout == "It would have queued about 15 of the last 32 runs.\n"
    rule_id = _rule_id(
        ok(
            database_url,
            "queue-rules",
            "create",
            "Half",
            "--project",
            "default",
            "--agent",
            "support-agent",
            "--sample",
            "0.5",
        )
    )
    taken = [run for run in runs if sampled(uuid.UUID(rule_id), uuid.UUID(run), 0.5)]
    exact = ok(
        database_url, "queue-rules", "preview", "--project", "default", "--rule", rule_id, "--last", "5"
    )
    assert exact.stdout.endswith("of the last 5 runs.\n")
    assert "about" not in exact.stdout
    store.correct(taken[0])

    recent = ok(database_url, "queue-rules", "queue-recent", rule_id, "--last", "100")
    assert recent.stdout == (
        f"Queued {len(taken) - 1}; already waiting for it: 0; already corrected or dismissed: 1.\n"
    )
    results = ok(database_url, "queue-rules", "results", rule_id).stdout.splitlines()
    assert results[0].split()[:4] == ["RULE", "VERSION", "AGENT", "VERSION"]
    assert re.match(rf"1\s+v1\s+{len(taken) - 1}\s+{len(taken) - 1}\s+0\s+0\s+0\s+0\s+0\s+0\s+-$", results[1])


def test_the_expert_queue_lists_dismisses_and_reopens(database_url: str, db: Database) -> None:
    store = _store(db)
    rule_id = _rule_id(ok(database_url, "queue-rules", "create", "Everything", "--project", "default"))
    runs = store.runs(3)
    store.correct(runs[2])

    listed = invoke(database_url, "expert-queue", "list", "--project", "default")
    assert listed.exit_code == 0, listed.output
    lines = listed.stdout.splitlines()
    assert re.split(r"\s{2,}", lines[0]) == [
        "RUN",
        "AGENT",
        "VERSION",
        "STATE",
        "RULES",
        "WANTS",
        "CORRECTIONS",
        "ADDED",
    ]
    assert [line.split()[0] for line in lines[1:]] == runs
    assert re.search(r"support-agent\s+v1\s+open\s+Everything\s+any\s+0\s+\S+$", lines[1])
    assert re.search(r"corrected\s+Everything\s+any\s+1\s+\S+$", lines[3])
    assert listed.stderr == "3 in all.\n"

    dismissed = ok(database_url, "expert-queue", "dismiss", runs[0], "--reason", "A test order")
    assert dismissed.stdout == f"Dismissed run {runs[0]} from the expert queue: A test order\n"
    [item] = _json_lines(
        ok(database_url, "expert-queue", "list", "--project", "default", "--state", "dismissed", "--json")
    )
    assert (item["runId"], item["reason"], item["rules"][0]["ruleId"]) == (runs[0], "A test order", rule_id)
    again = invoke(database_url, "expert-queue", "dismiss", runs[0])
    assert again.exit_code == 1
    assert (
        f'Run "{runs[0]}" is dismissed in the expert queue: only open items can be dismissed.' in again.output
    )

    assert (
        ok(database_url, "expert-queue", "reopen", runs[0]).stdout
        == f"Run {runs[0]} waits in the expert queue again.\n"
    )
    open_now = ok(database_url, "expert-queue", "list", "--project", "default", "--state", "open", "--json")
    assert [item["runId"] for item in _json_lines(open_now)] == runs[:2]
    counted = ok(
        database_url, "expert-queue", "list", "--project", "default", "--limit", "0", "--rule", rule_id
    )
    assert (counted.stdout.splitlines()[1:], counted.stderr) == ([], "3 in all.\n")
    by_agent = ok(
        database_url, "expert-queue", "list", "--project", "default", "--agent", "support-agent", "--json"
    )
    assert len(_json_lines(by_agent)) == 3
    missing = invoke(database_url, "expert-queue", "reopen", str(uuid.uuid4()))
    assert missing.exit_code == 1
    assert "No run" in missing.output


def test_a_rule_wanting_several_correctors_and_each_correctors_progress(
    database_url: str, db: Database
) -> None:
    store = _store(db)
    made = ok(
        database_url, "queue-rules", "create", "Pairs", "--project", store.project_id, "--correctors", "2"
    )
    rule_id = _rule_id(made)
    assert "any correction, from 2 people" in made.stdout
    changed = ok(database_url, "queue-rules", "set", rule_id, "--correctors", "3")
    assert "any correction, from 3 people" in changed.stdout
    versions = ok(database_url, "queue-rules", "versions", rule_id)
    assert "correctorsWanted: 2 → 3" in versions.stdout
    refused = invoke(database_url, "queue-rules", "set", rule_id, "--correctors", "21")
    assert (refused.exit_code, refused.output.strip()) == (
        1,
        "Error: correctorsWanted: a whole number from 1 to 20.",
    )

    [run] = store.runs()
    store.correct(run)
    progress = ok(database_url, "expert-queue", "progress", "--project", store.project_id)
    [header, row] = progress.stdout.splitlines()
    assert header.split() == ["CORRECTOR", "ID", "CORRECTED", "HOLDS"]
    assert row.split() == ["admin", str(store.admin.principal_id), "1", "0"]
    assert progress.stderr.strip() == "1 waiting, 0 of them held now."
    as_json = ok(database_url, "expert-queue", "progress", "--project", store.project_id, "--json")
    assert json.loads(as_json.stdout) == {
        "waiting": 1,
        "held": 0,
        "correctors": [{"userId": str(store.admin.principal_id), "name": "admin", "corrected": 1, "held": 0}],
    }
