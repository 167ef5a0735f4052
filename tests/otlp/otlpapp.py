"""An app taking OTLP exports over a fresh store, and the calls tests make of it.

Runs settle as soon as the worker looks (settle waits of 0), so a test sees a settled run by running
the waiting jobs, as `redline serve`'s worker would.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pytest
from fastapi.testclient import TestClient

from redline.app import create_app
from redline.config import Settings
from redline.db import Database
from redline.traces.otlp.model import RawSpan
from tests.conftest import ADMIN_TOKEN, bootstrap_admin, run_waiting_jobs
from tests.otlp.payloads import export_json_bytes, export_request, gzipped

BEARER = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
Encoding = Literal["protobuf", "json"]
ENCODINGS: tuple[tuple[Encoding, bool], ...] = (
    ("protobuf", False),
    ("protobuf", True),
    ("json", False),
    ("json", True),
)


@dataclass
class OtlpApp:
    client: TestClient
    db: Database
    project_id: str

    def send(
        self,
        spans: Sequence[RawSpan],
        *,
        encoding: Encoding = "protobuf",
        gzip: bool = False,
        headers: dict[str, str] | None = None,
    ) -> Any:
        """POST one export of these spans, as an exporter would; answers the test client's response."""
        request = export_request(spans)
        body = request.SerializeToString() if encoding == "protobuf" else export_json_bytes(request)
        sent = {"content-type": f"application/{'x-protobuf' if encoding == 'protobuf' else 'json'}", **BEARER}
        if gzip:
            body = gzipped(body)
            sent["content-encoding"] = "gzip"
        return self.client.post("/v1/traces", content=body, headers={**sent, **(headers or {})})

    def send_in_batches(self, spans: Sequence[RawSpan], *, seed: int, **options: Any) -> None:
        """The spans split at random into batches sent in a random order, each one accepted."""
        shuffled = list(spans)
        chance = random.Random(seed)
        chance.shuffle(shuffled)
        cuts = sorted(chance.sample(range(1, len(shuffled)), k=min(len(shuffled) - 1, chance.randint(0, 3))))
        for start, end in zip([0, *cuts], [*cuts, len(shuffled)], strict=True):
            answer = self.send(shuffled[start:end], **options)
            assert answer.status_code == 200, answer.text

    def settle(self) -> int:
        return run_waiting_jobs(self.db)

    def runs(self) -> list[dict[str, Any]]:
        answer = self.client.get("/v1/runs", headers=BEARER)
        assert answer.status_code == 200, answer.text
        return list(answer.json()["data"])

    def run(self, run_id: str) -> dict[str, Any]:
        answer = self.client.get(f"/v1/runs/{run_id}", headers=BEARER)
        assert answer.status_code == 200, answer.text
        return dict(answer.json())


def otlp_settings(database_url: str, **fields: Any) -> Settings:
    """Settings whose runs settle as soon as the worker looks, unless `fields` say otherwise."""
    return Settings(
        **{"database_url": database_url, "otlp_settle_seconds": 0, "otlp_orphan_settle_seconds": 0, **fields}
    )


@pytest.fixture
def otlp_app(db: Database, database_url: str) -> Iterator[OtlpApp]:
    first = bootstrap_admin(db)
    with TestClient(create_app(otlp_settings(database_url), db), raise_server_exceptions=False) as client:
        yield OtlpApp(client, db, str(first.project.id))


def steps_of(run: dict[str, Any]) -> list[dict[str, Any]]:
    """A run's steps as the spec writes them: index, role, content and the tool fields that are set."""
    shown = []
    for step in run["steps"]:
        view = {"index": step["index"], "role": step["role"], "content": step["content"]}
        for wire, name in (
            ("toolName", "tool_name"),
            ("toolInput", "tool_input"),
            ("toolCallId", "tool_call_id"),
        ):
            if step.get(wire) is not None:
                view[name] = step[wire]
        shown.append(view)
    return shown
