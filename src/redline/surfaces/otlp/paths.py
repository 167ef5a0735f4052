"""The paths of the OTLP surface, which the app's shared middleware and renderers treat apart."""

from __future__ import annotations

TRACES_PATH = "/v1/traces"
LOGS_PATH = "/v1/logs"
METRICS_PATH = "/v1/metrics"
OTLP_PATHS = frozenset({TRACES_PATH, LOGS_PATH, METRICS_PATH})
