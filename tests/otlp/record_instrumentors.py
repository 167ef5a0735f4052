"""Record what each instrumented scenario really sends, as fixtures for tests that need no instrumented
venv: `python -m tests.otlp.record_instrumentors [--python PATH] [--describe]` from the repo root.

It runs every scenario against the stand-in model server and a capture endpoint that answers as an
OTLP/HTTP receiver does (200, empty `ExportTraceServiceResponse`) and keeps each request body. Bodies
are normalized before they are written (see tests/otlp/recorded/README.md): strings naming this
machine (the repo and venv paths, the home and temp folders, the host name) are replaced, and resource
attributes that describe the process or host are dropped. `--describe` prints each span's name, parent,
kinds, scope and attribute keys, the facts the derivation has to match.
"""

from __future__ import annotations

import argparse
import re
import socket
import struct
import sys
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from tests.llmserver import serving
from tests.otlp import instrumentors

RECORDED_DIR = Path(__file__).resolve().parent / "recorded"
# Resource attributes that say which process on which machine sent the spans.
MACHINE_RESOURCE_KEYS = frozenset(
    {
        "host.name",
        "host.id",
        "host.arch",
        "os.description",
        "process.pid",
        "process.parent_pid",
        "process.command",
        "process.command_line",
        "process.command_args",
        "process.executable.name",
        "process.executable.path",
        "process.owner",
        "process.runtime.description",
    }
)
LENGTH = struct.Struct(">I")


@contextmanager
def capture_endpoint() -> Iterator[tuple[str, list[bytes]]]:
    """An OTLP/HTTP trace receiver on loopback that keeps the protobuf bodies it is sent."""
    bodies: list[bytes] = []
    answer = ExportTraceServiceResponse().SerializeToString()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            known = self.path == "/v1/traces" and self.headers.get("Content-Type") == "application/x-protobuf"
            if known:
                bodies.append(body)
            self.send_response(200 if known else 415)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", bodies
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _neutral(text: str, replacements: Replacements) -> str:
    for machine, neutral in replacements.substrings.items():
        text = text.replace(machine, neutral)
    return replacements.host.sub("<host>", text)


def _replace_in(value: AnyValue, replacements: Replacements) -> None:
    kind = value.WhichOneof("value")
    if kind == "string_value":
        value.string_value = _neutral(value.string_value, replacements)
    elif kind == "array_value":
        for item in value.array_value.values:
            _replace_in(item, replacements)
    elif kind == "kvlist_value":
        for pair in value.kvlist_value.values:
            _replace_in(pair.value, replacements)


def normalize(body: bytes, replacements: Replacements) -> bytes:
    """The request with nothing of this machine in it; everything else (ids, times) as sent."""
    request = ExportTraceServiceRequest.FromString(body)
    for resource_spans in request.resource_spans:
        attributes = resource_spans.resource.attributes
        kept = [pair for pair in attributes if pair.key not in MACHINE_RESOURCE_KEYS]
        del attributes[:]
        attributes.extend(kept)
        for pair in attributes:
            _replace_in(pair.value, replacements)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                for pair in span.attributes:
                    _replace_in(pair.value, replacements)
                for event in span.events:
                    for pair in event.attributes:
                        _replace_in(pair.value, replacements)
    return bytes(request.SerializeToString())


def record(python: Path, scenario: instrumentors.Scenario, llm_url: str, home: Path) -> list[bytes]:
    """The request bodies the scenario exports, as sent, with the stand-in model server at `llm_url`."""
    with capture_endpoint() as (endpoint, bodies):
        environment = instrumentors.scenario_environment(endpoint, "recording", llm_url, "default")
        instrumentors.run_scenario(python, scenario, environment, home)
    return list(bodies)


# One span as the derivation sees its structure: name, parent's name ("" for none, "?" when the parent
# was not sent), OTel kind, scope name and attribute keys; values and ids left out, as they vary.
SpanShape = tuple[str, str, int, str, tuple[str, ...]]


def scoped_spans(requests: Sequence[ExportTraceServiceRequest]) -> list[tuple[str, Span]]:
    """Every span of the exports, in the order sent, with its instrumentation scope's name."""
    return [
        (scope_spans.scope.name, span)
        for request in requests
        for resource_spans in request.resource_spans
        for scope_spans in resource_spans.scope_spans
        for span in scope_spans.spans
    ]


def span_shapes(requests: Sequence[ExportTraceServiceRequest]) -> list[SpanShape]:
    """Every span's shape, sorted, so two exports of one scenario compare whatever their order."""
    spans = scoped_spans(requests)
    names = {span.span_id: span.name for _, span in spans}
    shapes = [
        (
            span.name,
            names.get(span.parent_span_id, "?") if span.parent_span_id else "",
            int(span.kind),
            scope,
            tuple(sorted(pair.key for pair in span.attributes)),
        )
        for scope, span in spans
    ]
    return sorted(shapes)


@dataclass(frozen=True)
class Replacements:
    """What names this machine in a recording: paths and URLs (replaced wherever they occur) and the
    host name (replaced as a whole word only: a short host name is a substring of many words)."""

    substrings: Mapping[str, str]
    host: re.Pattern[str]


def machine_replacements(python: Path, home: Path, llm_url: str) -> Replacements:
    """Longest first, so a venv inside the repo becomes <venv>, not <repo>/.otel-venv. The stand-in
    server's URL has a new port each run; it becomes one that never resolves."""
    found = {
        str(python.parent.parent): "<venv>",
        str(instrumentors.REPO_ROOT): "<repo>",
        str(home): "<home>",
        str(Path.home()): "<home>",
        tempfile.gettempdir(): "<tmp>",
        llm_url.removesuffix("/v1"): "http://stand-in.invalid",
    }
    ordered = dict(sorted(found.items(), key=lambda item: -len(item[0])))
    return Replacements(ordered, re.compile(rf"(?<![\w.-]){re.escape(socket.gethostname())}(?![\w.-])"))


def write_recording(path: Path, bodies: Sequence[bytes]) -> None:
    path.write_bytes(b"".join(LENGTH.pack(len(body)) + body for body in bodies))


def read_recording(path: Path) -> list[ExportTraceServiceRequest]:
    """The requests of a recording, in the order the exporter sent them."""
    data = path.read_bytes()
    requests: list[ExportTraceServiceRequest] = []
    offset = 0
    while offset < len(data):
        (size,) = LENGTH.unpack_from(data, offset)
        offset += LENGTH.size
        if offset + size > len(data):
            raise ValueError(f"{path}: the recording ends inside a request ({size} bytes announced)")
        requests.append(ExportTraceServiceRequest.FromString(data[offset : offset + size]))
        offset += size
    return requests


def _plain(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_plain(item) for item in value.array_value.values]
    if kind == "kvlist_value":
        return {pair.key: _plain(pair.value) for pair in value.kvlist_value.values}
    return None if kind is None else getattr(value, kind)


# Attribute values --describe prints in full; every other key is listed by name only.
SHOWN_VALUES = (
    "openinference.span.kind",
    "gen_ai.operation.name",
    "gen_ai.request.model",
    "gen_ai.response.model",
    "llm.model_name",
    "llm.token_count.prompt",
    "llm.token_count.completion",
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.prompt_tokens",
    "gen_ai.usage.completion_tokens",
    "traceloop.span.kind",
    "llm.request.type",
    "gen_ai.tool.name",
    "gen_ai.tool.call.id",
    "tool.name",
    "gen_ai.agent.name",
    "session.id",
    "gen_ai.conversation.id",
    "logfire.msg",
)


def describe(requests: Sequence[ExportTraceServiceRequest]) -> Iterator[str]:
    names: dict[bytes, str] = {}
    spans = []
    for request_index, request in enumerate(requests):
        for resource_spans in request.resource_spans:
            resource = {pair.key: _plain(pair.value) for pair in resource_spans.resource.attributes}
            yield f"request {request_index} resource {resource}"
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    names[span.span_id] = span.name
                    spans.append((scope_spans.scope.name, scope_spans.scope.version, span))
    spans.sort(key=lambda item: item[2].start_time_unix_nano)
    for scope, version, span in spans:
        attributes = {pair.key: _plain(pair.value) for pair in span.attributes}
        parent = names.get(span.parent_span_id, "<none>" if not span.parent_span_id else "<not sent>")
        shown = {key: attributes[key] for key in SHOWN_VALUES if key in attributes}
        yield (
            f"- {span.name!r} parent={parent!r} otel_kind={span.kind} status={span.status.code} "
            f"scope={scope}@{version} events={[event.name for event in span.events]}"
        )
        yield f"    values {shown}"
        yield f"    keys {sorted(attributes)}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--python", type=Path, help="the instrumented venv's python (default: as the tests)")
    parser.add_argument("--describe", action="store_true", help="print what each scenario's spans carry")
    parser.add_argument("scenarios", nargs="*", choices=[[], *instrumentors.SCENARIOS], default=[])
    options = parser.parse_args(argv)
    python = options.python or instrumentors.instrumented_python()
    RECORDED_DIR.mkdir(exist_ok=True)
    chosen = options.scenarios or list(instrumentors.SCENARIOS)
    with serving() as llm, tempfile.TemporaryDirectory() as home:
        llm.otherwise = instrumentors.weather_script()
        replacements = machine_replacements(python, Path(home), llm.url)
        for name in chosen:
            bodies = record(python, instrumentors.SCENARIOS[name], llm.url, Path(home))
            path = RECORDED_DIR / f"{name}.pb"
            write_recording(path, [normalize(body, replacements) for body in bodies])
            print(f"{name}: {len(bodies)} requests, {path.stat().st_size} bytes")
            if options.describe:
                for line in describe(read_recording(path)):
                    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
