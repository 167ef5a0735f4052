"""An export's pages: every match, read a page per short transaction and encoded in one format. The
HTTP export and `redline corrections export` both stream these, so they send the same bytes."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

from redline.corrections import service
from redline.corrections.wire import csv_chunk, export_keyset, jsonl_chunk, stores_json_text
from redline.db import Database
from redline.identity.service import Actor


def encoded_pages(
    db: Database, actor: Actor, filters: service.CorrectionFilters, format_: str
) -> Iterator[tuple[int, bytes]]:
    """(rows, bytes) for each page, newest first. No transaction stays open between pages, so a slow
    reader holds nothing in the store; access is checked again on each page."""
    encode = partial(
        jsonl_chunk if format_ == "jsonl" else csv_chunk, json_text=stores_json_text(db.dialect_name)
    )
    after = None
    while True:
        with db.read() as session:
            page = service.export_page(session, actor, filters, after)
        if not page:
            return
        after = export_keyset(page[-1])
        yield len(page), encode(page)
