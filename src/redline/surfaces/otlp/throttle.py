"""The OTLP surface's answers to "not now" (otlp-ingest §2.7): a per-token rate of spans, and the
transient store failures an exporter should retry rather than drop its batch over.

Both answer with `Retry-After`, 429 or 503: the only statuses (with 502 and 504) an OTLP exporter
retries. Anything else that goes wrong is a bug and answers 500, which exporters drop.
"""

from __future__ import annotations

import math
import threading
import time
import uuid
from dataclasses import dataclass

from redline.errors import RedlineError
from redline.surfaces.errors import STORE_RETRY_AFTER_SECONDS


class TryLater(RedlineError):
    """Not now, with how long to wait: 429 for the sender's own rate, 503 when Redline is overloaded."""

    def __init__(self, message: str, *, status: int, retry_after: int) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


def store_unavailable() -> TryLater:
    return TryLater(
        "the store is busy or unreachable; nothing of this export was kept, send it again",
        status=503,
        retry_after=STORE_RETRY_AFTER_SECONDS,
    )


@dataclass
class _Bucket:
    tokens: float
    at: float


class SpanRate:
    """A token bucket of spans per second for each Redline token, in this process: a burst of one
    second's worth, refilled continuously. An export larger than a second's worth waits until the bucket
    is full and then goes through alone, so no export is refused forever."""

    def __init__(self, spans_per_second: float) -> None:
        self._rate = spans_per_second
        self._buckets: dict[uuid.UUID, _Bucket] = {}
        self._lock = threading.Lock()

    def take(self, token_id: uuid.UUID, spans: int) -> None:
        """Take `spans` from the token's bucket, or raise TryLater (429) saying when there will be enough."""
        now = time.monotonic()
        with self._lock:
            bucket = self._buckets.setdefault(token_id, _Bucket(self._rate, now))
            bucket.tokens = min(self._rate, bucket.tokens + (now - bucket.at) * self._rate)
            bucket.at = now
            needed = min(float(spans), self._rate)
            if bucket.tokens >= needed:
                bucket.tokens -= spans
                return
            wait = math.ceil((needed - bucket.tokens) / self._rate)
        raise TryLater(
            f"this token may send {self._rate:g} spans per second (REDLINE_OTLP_RATE_SPANS_PER_SEC); "
            f"send again in {wait} s",
            status=429,
            retry_after=max(1, wait),
        )
