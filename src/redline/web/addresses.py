"""Ids read out of addresses (an API path, a console page): an id that isn't a UUID names nothing, so the
address is not found, in the sentence of the kind it names."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from redline.db import parse_id
from redline.errors import NotFound


def path_id(value: str, kind: str, missing: Callable[[str], NotFound] | None = None) -> uuid.UUID:
    """An id from an address (an API path, a console page); one that isn't a UUID names nothing, so it is
    not found (in the sentence of `missing`, when the kind has one of its own)."""
    ident = parse_id(value)
    if ident is None:
        raise missing(value) if missing is not None else NotFound(kind, value)
    return ident
