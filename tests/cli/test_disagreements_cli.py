"""`redline queues disagreements QUEUE` and `redline queues adjudicate QUEUE ITEM KEY VALUE`, through
click's runner on the store a live server writes to: three people save their values through the API,
then the commands (as the local operator, on the same store) print the table, its `--json` is the API's
own answer, a value is settled, refused, and taken back, in the API's sentences."""

from __future__ import annotations

import json

import httpx
from click.testing import CliRunner, Result

from redline.cli.main import cli
from tests.liveserver import LiveServer, live_server
from tests.stats.agreement_seed import ADMIN, ok, seed_codes

__all__ = ["live_server"]

CODES: dict[str, list[int | None]] = {"A": [1, 2, 1, 3], "B": [1, 3, 2, 3], "C": [5, 4, 2, 3]}


def invoke(database_url: str, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--database-url", database_url, *args])


def test_the_table_the_json_and_settling(live_server: LiveServer, database_url: str) -> None:
    with httpx.Client(base_url=live_server.url, headers=ADMIN, timeout=30) as http:
        seeded = seed_codes(http, live_server.project_id, CODES, name="Coding check")
        path = f"/v2/annotation-queues/{seeded.queue_id}/disagreements"
        answer = ok(http.get(path, params={"key": "code", "open": "true", "limit": 2}))
    first, second, third, _ = seeded.item_ids

    shown = invoke(database_url, "queues", "disagreements", "Coding check")
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    assert lines[0].split() == ["#", "ITEM", "KEY", "APART", "VALUES", "SETTLED"]
    assert [line.split()[:3] for line in lines[1:]] == [
        ["1", first, "level"],
        ["2", second, "code"],
        ["2", second, "level"],
        ["1", first, "code"],
        ["3", third, "code"],
        ["3", third, "level"],
    ]
    apart, values, settled_column = (
        part.strip() for part in lines[1].split(maxsplit=3)[3].split("  ") if part
    )
    assert (apart, values, settled_column) == (
        "4 apart (100% of the scale)",
        "1: Observer A, Observer B; 5: Observer C",
        "-",
    )
    assert lines[2].split(maxsplit=3)[3].split("  ")[0] == "67% off the most common"

    as_json = invoke(
        database_url,
        "queues",
        "disagreements",
        seeded.queue_id,
        "--key",
        "code",
        "--open",
        "--limit",
        "2",
        "--json",
    )
    assert as_json.exit_code == 0, as_json.output
    assert json.loads(as_json.output) == answer

    settled = invoke(database_url, "queues", "adjudicate", "Coding check", second, "code", "3", "--note", "B")
    assert settled.exit_code == 0, settled.output
    assert settled.output == f'Settled item {second} under "code": 3.\n'
    lines = invoke(
        database_url, "queues", "disagreements", "Coding check", "--key", "code"
    ).output.splitlines()
    assert lines[1].split()[-1] == "3"
    still_open = invoke(database_url, "queues", "disagreements", "Coding check", "--key", "code", "--open")
    assert [line.split()[0] for line in still_open.output.splitlines()[1:]] == ["1", "3"]

    refused = invoke(database_url, "queues", "adjudicate", "Coding check", second, "code", "9")
    assert refused.exit_code != 0
    assert "Invalid value: 9. Valid options are: 1, 2, 3, 4, 5." in refused.output
    bad_range = invoke(database_url, "queues", "adjudicate", "Coding check", second, "level", "high")
    assert 'The human review "level" is a range: its value must be a number from 1 to 5.' in bad_range.output
    ranged = invoke(database_url, "queues", "adjudicate", "Coding check", second, "level", "3.5")
    assert ranged.output == f'Settled item {second} under "level": 3.5.\n'

    taken = invoke(database_url, "queues", "adjudicate", "Coding check", second, "code", "--clear")
    assert taken.output == f'Took back the settled value of item {second} under "code".\n'
    again = invoke(database_url, "queues", "adjudicate", "Coding check", second, "code", "--clear")
    assert again.exit_code != 0
    assert f'No value is settled for item {second} under "code".' in again.output
    neither = invoke(database_url, "queues", "adjudicate", "Coding check", second, "code")
    assert neither.exit_code == 2
    assert "Give VALUE to settle, or --clear to take the settled value back." in neither.output


def test_a_queue_without_disagreements_says_so(live_server: LiveServer, database_url: str) -> None:
    with httpx.Client(base_url=live_server.url, headers=ADMIN, timeout=30) as http:
        seed_codes(http, live_server.project_id, {"A": [1, 2], "B": [1, 2]}, name="Agreed")
    shown = invoke(database_url, "queues", "disagreements", "Agreed")
    assert shown.output == "No disagreements: on every item, its reviewers gave the same values.\n"
