"""`redline projects index|unindex|indexed-keys` through the real CLI, read back over the services."""

from __future__ import annotations

from datetime import UTC, datetime

from redline.db import Database
from redline.identity import service as identity
from redline.ingest import runs as ingest
from redline.traces import metadata_index
from redline.traces.schemas import RunIn
from tests.cli.test_cli import invoke, ok
from tests.conftest import run_waiting_jobs
from tests.samples import make_run


def _keys(db: Database, project: str) -> list[tuple[str, str, int]]:
    with db.read() as session:
        actor = identity.operator(session)
        target = identity.find_project(session, actor, project)
        return [
            (v.row.key, v.row.state, v.row.runs_done)
            for v in metadata_index.list_keys(session, actor, target.id)
        ]


def test_index_list_and_unindex_a_key(store_url: str, db: Database) -> None:
    assert ok(store_url, "projects", "index", "default", "tier") == "default indexes the metadata key tier.\n"
    with db.write() as session:
        actor = identity.operator(session)
        project = identity.find_project(session, actor, "default")
        run = RunIn.model_validate(
            make_run(
                str(project.id), metadata={"customer_id": "acme"}, startedAt=datetime.now(UTC).isoformat()
            )
        )
        ingest.record_runs(session, actor, [run])
    said = ok(store_url, "projects", "index", "default", "customer_id")
    assert said == (
        "default indexes the metadata key customer_id once its runs (1 run) are indexed in the background "
        "(redline projects indexed-keys default shows how far).\n"
    )
    listed = ok(store_url, "projects", "indexed-keys", "default").splitlines()
    assert listed[0].split() == ["KEY", "STATE", "INDEXED", "DECLARED"]
    assert listed[1].split()[:5] == ["customer_id", "backfilling", "0", "of", "1"]
    assert listed[2].split()[:2] == ["tier", "ready"]
    run_waiting_jobs(db)
    assert _keys(db, "default") == [("customer_id", "ready", 1), ("tier", "ready", 0)]

    again = invoke(store_url, "projects", "index", "default", "tier")
    assert again.exit_code == 1
    assert 'The metadata key "tier" is indexed already.' in again.output
    assert ok(store_url, "projects", "unindex", "default", "tier") == (
        "default no longer indexes the metadata key tier.\n"
    )
    missing = invoke(store_url, "projects", "unindex", "default", "tier")
    assert missing.exit_code != 0
    assert 'does not index the metadata key "tier"' in missing.output
    assert _keys(db, "default") == [("customer_id", "ready", 1)]
