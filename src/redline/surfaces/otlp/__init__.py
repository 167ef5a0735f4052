"""The OTLP/HTTP surface (otlp-ingest): `POST /v1/traces` from stock OpenTelemetry exporters, protobuf or
JSON, answered in the request's own encoding; `/v1/logs` and `/v1/metrics` answered without storing."""
