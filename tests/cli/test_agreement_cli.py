"""`redline queues agreement QUEUE`, through click's runner on the store a live server writes to: four people
save Krippendorff's worked example through the server's API, then the command (as the local operator, on
the same store) prints the table and the sentences, and `--json` is the API's own answer."""

from __future__ import annotations

import json

import httpx
from click.testing import CliRunner, Result

from redline.cli.main import cli
from tests.liveserver import LiveServer, live_server
from tests.stats.agreement_seed import ADMIN, WORKED_EXAMPLE, agreement, seed_codes

__all__ = ["live_server"]


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
