"""`redline corrections list|export|set` and `redline projects set`, through click's runner against a
fresh store on each backend. Corrections are made through the service as the first admin, since a
correction is one person's word and the operator is no one."""

from __future__ import annotations

import csv
import io
import json
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from redline.audit import service as audit
from redline.cli.main import cli
from redline.corrections import service as corrections
from redline.corrections.schemas import CorrectionIn
from redline.corrections.wire import CSV_COLUMNS, correction_dict
from redline.db import Database
from redline.errors import Invalid
from redline.identity import service as identity
from redline.identity.service import Actor
from redline.ingest import runs as ingest
from redline.queues.expert import correcting
from redline.traces.schemas import RunIn
from tests.conftest import bootstrap_admin
from tests.samples import make_run


@dataclass
class Store:
    """Three corrections, oldest first: support-agent fixed, support-agent end user's (open, unsorted),
    billing-agent's wrong answer (open, sorted to improve)."""

    admin: Actor
    project_id: str
    ids: list[str]
    runs: list[str]


def _store(db: Database) -> Store:
    first = bootstrap_admin(db)
    admin = Actor.of(first.admin)
    project = str(first.project.id)
    with db.write() as session:
        stored = ingest.record_runs(
            session,
            admin,
            [
                RunIn.model_validate(make_run(project)),
                RunIn.model_validate(make_run(project, agent="billing-agent", agentVersion="2.0")),
            ],
        )
    bodies: list[tuple[int, dict[str, Any]]] = [
        (0, {"answer": "right"}),
        (0, {"answer": "wrong", "why": "too curt", "participantId": "customer-7"}),
        (1, {"answer": "wrong", "shouldSay": "Offer the refund."}),
    ]
    ids = []
    for run, body in bodies:
        with db.write() as session:
            made = correcting.create(
                session, admin, CorrectionIn.model_validate({"runId": str(stored[run].id), **body})
            )
            ids.append(str(made.id))
    return Store(admin, project, ids, [str(run.id) for run in stored])


def invoke(database_url: str, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--database-url", database_url, *args], catch_exceptions=False)


def ok(database_url: str, *args: str) -> Result:
    result = invoke(database_url, *args)
    assert result.exit_code == 0, result.output
    return result


def _listed(database_url: str, *args: str) -> list[str]:
    lines = ok(database_url, "corrections", "list", "--json", *args).stdout.splitlines()
    return [json.loads(line)["id"] for line in lines]


def _events(db: Database, kind: str) -> list[Any]:
    with db.read() as session:
        page = audit.list_events(
            session, identity.operator(session), audit.AuditFilters(kinds=(kind,)), limit=50, cursor=None
        )
    return page.items


# ------------------------------------------------------------------------------------------------- list


def test_list_shows_a_table_or_json_lines_and_filters(database_url: str, db: Database) -> None:
    store = _store(db)
    ids = store.ids
    table = ok(database_url, "corrections", "list").stdout.splitlines()
    assert re.split(r"\s{2,}", table[0]) == ["ID", "CREATED", "AGENT", "STATUS", "SORTED TO", "SAYS", "BY"]
    assert [line.split()[0] for line in table[1:]] == ids[::-1]
    assert re.search(r"billing-agent 2\.0\s+open\s+improve\s+answer wrong\s+admin$", table[1])
    assert re.search(r"support-agent v1\s+open\s+-\s+answer wrong\s+admin for customer-7$", table[2])
    assert re.search(r"fixed\s+-\s+answer right\s+admin$", table[3])

    lines = ok(database_url, "corrections", "list", "--json").stdout.splitlines()
    with db.read() as session:
        expected = [correction_dict(corrections.get(session, store.admin, uuid.UUID(i))) for i in ids[::-1]]
    assert [json.loads(line) for line in lines] == expected

    assert _listed(database_url, "--status", "fixed") == [ids[0]]
    assert _listed(database_url, "--status", "open,fixed") == ids[::-1]
    assert _listed(database_url, "--status", "not-fixed") == [ids[2], ids[1]]
    assert _listed(database_url, "--sorted-to", "none") == [ids[1]]
    assert _listed(database_url, "--sorted-to", "improve", "--sorted-to", "none") == [ids[2], ids[1]]
    assert _listed(database_url, "--from", "end-users") == [ids[1]]
    assert _listed(database_url, "--participant", "customer-7") == [ids[1]]
    assert _listed(database_url, "--agent", "billing-agent") == [ids[2]]
    assert _listed(database_url, "--project", "default", "--agent", "support-agent") == [ids[1], ids[0]]
    assert _listed(database_url, "--agent-version", "2.0") == [ids[2]]
    assert _listed(database_url, "--since", "2000-01-01T00:00:00Z", "--until", "2000-01-02T00:00Z") == []

    limited = ok(database_url, "corrections", "list", "--json", "--limit", "2")
    assert [json.loads(line)["id"] for line in limited.stdout.splitlines()] == [ids[2], ids[1]]
    assert "More corrections match: raise --limit (now 2) to see them." in limited.stderr


def test_list_refusals(database_url: str, db: Database) -> None:
    _store(db)
    bad = invoke(database_url, "corrections", "list", "--status", "done")
    assert bad.exit_code == 1
    assert 'Error: status: "done" is not one of' in bad.stderr
    missing = invoke(database_url, "corrections", "list", "--agent", "nobody")
    assert (missing.exit_code, missing.stderr.strip()) == (1, 'Error: No agent "nobody".')
    naive = invoke(database_url, "corrections", "list", "--since", "2025-01-01T00:00:00")
    assert naive.exit_code == 2
    assert "needs a timezone" in naive.stderr
    assert invoke(database_url, "corrections", "list", "--until", "yesterday").exit_code == 2
    ok(database_url, "projects", "create", "billing")
    assert invoke(
        database_url, "corrections", "list", "--project", "billing", "--agent", "billing-agent"
    ).stderr == ('Error: No agent "billing-agent" in that project.\n')


# ----------------------------------------------------------------------------------------------- export


def test_export_writes_both_formats_and_records_it(database_url: str, db: Database, tmp_path: Path) -> None:
    store = _store(db)
    out = tmp_path / "support.jsonl"
    written = ok(
        database_url, "corrections", "export", "--agent", "support-agent", "--format", "jsonl", "-o", str(out)
    )
    assert written.stdout == f"Wrote 2 corrections to {out}.\n"
    assert written.stderr == ""
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["id"] for line in lines] == [store.ids[1], store.ids[0]]

    to_stdout = ok(database_url, "corrections", "export", "--agent", "support-agent", "--status", "fixed")
    rows = list(csv.reader(io.StringIO(to_stdout.stdout, newline="")))
    assert rows[0] == list(CSV_COLUMNS)
    assert [row[0] for row in rows[1:]] == [store.ids[0]]
    assert to_stdout.stderr == ""

    empty = tmp_path / "none.csv"
    ok(
        database_url,
        "corrections",
        "export",
        "--agent",
        "billing-agent",
        "--from",
        "experts",
        "--output",
        str(empty),
    )
    assert empty.read_bytes() == (",".join(CSV_COLUMNS) + "\r\n").encode()

    started = _events(db, "corrections-export-started")
    ended = _events(db, "corrections-exported")
    assert [event.data["format"] for event in started] == ["csv", "csv", "jsonl"]
    assert started[1].data["filters"]["statuses"] == ["fixed"]
    assert [(event.data["rows"], event.data["outcome"]) for event in ended] == [
        (0, "succeeded"),
        (1, "succeeded"),
        (2, "succeeded"),
    ]
    assert [event.data["exportId"] for event in started] == [event.data["exportId"] for event in ended]
    assert {(event.actor_kind, event.actor_id) for event in started + ended} == {("operator", None)}


def test_export_needs_an_agent_and_good_filters(database_url: str, db: Database) -> None:
    _store(db)
    assert invoke(database_url, "corrections", "export").exit_code == 2
    bad = invoke(database_url, "corrections", "export", "--agent", "support-agent", "--sorted-to", "nobody")
    assert bad.exit_code == 1
    assert 'Error: sortedTo: "nobody" is not one of improve, developer, owner or none.' in bad.stderr
    assert _events(db, "corrections-export-started") == []


# -------------------------------------------------------------------------------------------------- set


def test_set_changes_a_correction_as_the_operator(database_url: str, db: Database) -> None:
    store = _store(db)
    improve = store.ids[2]
    fixing = ok(database_url, "corrections", "set", improve, "--status", "being-fixed", "--link", "ir-42")
    assert fixing.stdout == f"Correction {improve} is being-fixed, sorted to improve.\n  link: ir-42\n"
    resorted = ok(database_url, "corrections", "set", improve, "--sorted-to", "developer", "--reason", "code")
    assert resorted.stdout.startswith(f"Correction {improve} is being-fixed, sorted to developer.")
    url = ok(
        database_url,
        "corrections",
        "set",
        store.ids[1],
        "--status",
        "being-fixed",
        "--link",
        "https://x.test/7",
    )
    assert url.stdout == f"Correction {store.ids[1]} is being-fixed, unsorted.\n  link: https://x.test/7\n"
    wont = ok(database_url, "corrections", "set", improve, "--status", "wont-fix", "--reason", "by design")
    assert wont.stdout == f"Correction {improve} is wont-fix, sorted to developer.\n  note: by design\n"
    with db.read() as session:
        changed = corrections.get(session, store.admin, uuid.UUID(improve))
    assert changed.sorted is not None
    assert changed.sorted["by"] == {"kind": "user", "id": "operator"}
    assert changed.status_note is not None
    assert changed.status_note["by"] == "operator"
    moves = _events(db, "correction-status-changed")
    assert [(event.data["from"], event.data["to"]) for event in moves][-1] == ("open", "being-fixed")
    assert {event.actor_kind for event in moves} == {"operator"}


def test_set_refusals_print_the_sentence(database_url: str, db: Database) -> None:
    store = _store(db)
    fixed = store.ids[0]
    refused = invoke(database_url, "corrections", "set", fixed, "--status", "being-fixed", "--link", "sc-9")
    assert (refused.exit_code, refused.stderr) == (
        1,
        "Error: A correction that's fixed can't become being-fixed.\n",
    )
    needs = invoke(database_url, "corrections", "set", store.ids[2], "--status", "wont-fix")
    assert (needs.exit_code, needs.stderr) == (1, 'Error: status: "wont-fix" needs a reason.\n')
    nothing = invoke(database_url, "corrections", "set", fixed)
    assert (nothing.exit_code, nothing.stderr) == (1, "Error: A change sets sortedTo, status, or both.\n")
    missing = invoke(
        database_url, "corrections", "set", "00000000-0000-0000-0000-000000000001", "--status", "open"
    )
    assert missing.exit_code == 1
    assert "00000000-0000-0000-0000-000000000001" in missing.stderr
    assert invoke(database_url, "corrections", "set", "nope", "--status", "open").exit_code == 2
    empty = invoke(database_url, "corrections", "set", fixed, "--status", "wont-fix", "--reason", "")
    assert empty.exit_code == 2
    assert "--reason" in empty.stderr
    assert invoke(database_url, "corrections", "set", fixed, "--status", "done").exit_code == 2


# ---------------------------------------------------------------------------------------- projects set


def test_projects_set_sorts_end_users_corrections(database_url: str, db: Database) -> None:
    store = _store(db)
    on = ok(database_url, "projects", "set", "default", "--sort-end-user-corrections")
    assert on.stdout == "default sorts its end users' corrections on save.\n"
    with db.write() as session:
        made = correcting.create(
            session,
            store.admin,
            CorrectionIn.model_validate(
                {"runId": store.runs[1], "participantId": "customer-9", "answer": "wrong", "why": "x"}
            ),
        )
        assert (made.status, made.sorted_to) == ("open", "improve")
    off = ok(database_url, "projects", "set", store.project_id, "--no-sort-end-user-corrections")
    assert off.stdout == "default doesn't sort its end users' corrections on save.\n"
    nothing = invoke(database_url, "projects", "set", "default")
    assert nothing.exit_code == 2
    assert "Nothing to set" in nothing.stderr
    assert invoke(database_url, "projects", "set", "nope", "--no-sort-end-user-corrections").exit_code == 1


def test_list_pages_past_the_services_limit_and_names_each_subject(database_url: str, db: Database) -> None:
    store = _store(db)
    project = store.project_id
    with db.write() as session:
        stored = ingest.record_runs(
            session,
            store.admin,
            [
                RunIn.model_validate(make_run(project, agent=None, agentVersion=None, flow="triage")),
                RunIn.model_validate(make_run(project, agent=None, agentVersion=None)),
            ],
        )
        for run in stored:
            correcting.create(
                session,
                store.admin,
                CorrectionIn.model_validate(
                    {
                        "runId": str(run.id),
                        "decisions": "wrong",
                        "mustNotCall": ["issue_refund"],
                        "items": [{"key": "a", "verdict": "wrong"}, {"key": "b", "verdict": "right"}],
                    }
                ),
            )
        for i in range(200):
            correcting.create(
                session,
                store.admin,
                CorrectionIn.model_validate(
                    {"runId": store.runs[0], "participantId": f"p{i}", "answer": "right"}
                ),
            )
    table = ok(database_url, "corrections", "list", "--limit", "250", "--status", "with-owner").stdout
    assert re.search(
        rf"flow {stored[0].flow_id}\s+with-owner\s+owner\s+decisions wrong, items 1/2 wrong", table
    )
    assert re.search(r"  -\s+with-owner\s+owner\s+decisions wrong", table)
    every = ok(database_url, "corrections", "list", "--json", "--limit", "250")
    assert len(every.stdout.splitlines()) == 205
    assert every.stderr == ""


def test_an_agent_name_in_two_projects_needs_the_project(database_url: str, db: Database) -> None:
    store = _store(db)
    with db.write() as session:
        other = identity.create_project(session, store.admin, "staging")
        ingest.record_runs(session, store.admin, [RunIn.model_validate(make_run(str(other.id)))])
    both = invoke(database_url, "corrections", "list", "--agent", "support-agent")
    assert (both.exit_code, both.stderr) == (
        1,
        'Error: Agent "support-agent" is in several projects: name one with --project.\n',
    )
    assert _listed(database_url, "--agent", "support-agent", "--project", "staging") == []


def test_an_export_that_breaks_is_recorded_as_failed(
    database_url: str, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    _store(db)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise Invalid("The store went away.")

    monkeypatch.setattr(corrections, "export_page", broken)
    failed = invoke(database_url, "corrections", "export", "--agent", "support-agent")
    assert (failed.exit_code, failed.stderr) == (1, "Error: The store went away.\n")
    [ended] = _events(db, "corrections-exported")
    assert (ended.data["rows"], ended.data["outcome"]) == (0, "failed")
