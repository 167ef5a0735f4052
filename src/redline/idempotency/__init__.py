"""Idempotency keys: a retried create or change answers as the first attempt did, and does nothing twice."""
