"""`redline queues agreement QUEUE`, through click's runner on the store a live server writes to: four people
save Krippendorff's worked example through the server's API, then the command (as the local operator, on
the same store) prints the table and the sentences, and `--json` is the API's own answer. A queue above
REDLINE_AGREEMENT_LIVE_ITEMS is answered as the server answers it (being computed, then the job worker's
stored figures with their as-of time), and `--now` computes it in place."""

from __future__ import annotations

import json

import httpx
from click.testing import CliRunner, Result

from redline.cli.main import cli
from redline.db import Database
from tests.conftest import run_waiting_jobs
from tests.liveserver import LiveServer, live_server
from tests.stats.agreement_seed import (
    ADMIN,
    WORKED_EXAMPLE,
    agreement,
    computed_in_the_background,
    seed_codes,
)

__all__ = ["computed_in_the_background", "live_server"]


def invoke(database_url: str, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--database-url", database_url, *args], catch_exceptions=False)


def test_the_table_the_sentences_and_the_apis_json(live_server: LiveServer, database_url: str) -> None:
    with httpx.Client(base_url=live_server.url, headers=ADMIN, timeout=30) as http:
        seeded = seed_codes(http, live_server.project_id, WORKED_EXAMPLE, name="Coding check")
        answer = agreement(http, seeded.queue_id)
    code = answer["keys"][0]
    low, high = code["range"]["low"], code["range"]["high"]

    shown = invoke(database_url, "queues", "agreement", "Coding check")
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    assert lines[0].split() == ["KEY", "METRIC", "ITEMS", "VALUES", "ALPHA", "95%", "RANGE", "AGREED"]
    assert lines[1].split() == [
        "code",
        "nominal",
        "11",
        "40",
        "0.74",
        f"{low:.2f}",
        "to",
        f"{high:.2f}",
        "73%",
    ]
    assert lines[2].split()[:5] == ["level", "interval", "11", "40", "0.85"]
    assert lines[3].split() == ["note", "-", "-", "-", "-", "-", "-"]
    for key in answer["keys"]:
        for sentence in key["sentences"]:
            assert sentence in lines

    by_id = invoke(database_url, "queues", "agreement", seeded.queue_id, "--json")
    assert by_id.exit_code == 0, by_id.output
    assert json.loads(by_id.output) == answer


def test_a_queue_not_there_is_refused(live_server: LiveServer, database_url: str) -> None:
    refused = CliRunner().invoke(cli, ["--database-url", database_url, "queues", "agreement", "Nothing"])
    assert refused.exit_code != 0
    assert "Annotation queue with id Nothing for workspace" in refused.output


def test_a_large_queue_as_the_server_answers_it_or_computed_now(
    computed_in_the_background: None, live_server: LiveServer, database_url: str, db: Database
) -> None:
    with httpx.Client(base_url=live_server.url, headers=ADMIN, timeout=30) as http:
        seed_codes(http, live_server.project_id, WORKED_EXAMPLE, name="Coding check")

    computing = invoke(database_url, "queues", "agreement", "Coding check")
    assert computing.exit_code == 0, computing.output
    assert computing.stdout.splitlines() == [
        "Agreement is being computed: this queue's 12 items are too many to count within a request, so the "
        "job worker counts them; ask again in a moment."
    ]
    assert computing.stderr == "--now computes the figures here, in this process.\n"

    now = invoke(database_url, "queues", "agreement", "Coding check", "--now", "--json")
    assert now.exit_code == 0, now.output
    counted = json.loads(now.output)
    assert (counted["state"], counted["computed_at"], counted["stale"]) == ("live", None, False)
    assert run_waiting_jobs(db) == 1

    stored = invoke(database_url, "queues", "agreement", "Coding check", "--json")
    assert stored.exit_code == 0, stored.output
    answer = json.loads(stored.output)
    assert (answer["state"], answer["stale"]) == ("stored", False)
    assert answer["keys"] == counted["keys"]
    with httpx.Client(base_url=live_server.url, headers=ADMIN, timeout=30) as http:
        assert agreement(http, answer["annotation_queue_id"]) == answer
    shown = invoke(database_url, "queues", "agreement", "Coding check")
    lines = shown.stdout.splitlines()
    assert lines[0] == answer["state_sentence"]
    assert lines[0].startswith("Agreement as of ")
    assert lines[1].split()[0] == "KEY"
    assert lines[2].split()[:5] == ["code", "nominal", "11", "40", "0.74"]
