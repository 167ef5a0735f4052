"""The store: everything between Redline and SQLite or PostgreSQL, and the only place that knows which.

The names here are the store's interface, gathered from the modules that hold them: `engine` (the
engine, its pragmas and transactions), `types` (portable columns and ids) and `bulk` (many rows at
once). Paging (`paging`, `id_pages`, `keyset`, `wire_text`), upkeep (`wal_checkpoints`, `backups`) and
migrations (`migrate`) are imported by module.

Services get a `Session` and may `flush()`, never `commit()`: the transaction is the visible
`with db.write() as s:` block at the edge (handler, CLI command, job).
"""

from redline.db.bulk import (
    IN_LIST_CHUNK,
    DriverRows,
    StoredId,
    StoredIds,
    Unindexed,
    add_to_counts,
    among,
    any_of,
    bulk_insert,
    driver_rows,
    execute_many,
    in_chunks,
    insert_ignoring_conflicts,
    insert_missing,
    insert_missing_rows,
    pairs_table,
    row_exists,
)
from redline.db.engine import (
    SQLITE_WAL_BACKSTOP_PAGES,
    Database,
    LockWaits,
    StillBusy,
    give_back_space,
    is_busy,
    is_transient,
    make_engine,
    sqlite_file_name,
    vacuum_file,
    writing,
)
from redline.db.types import Base, JSONDocument, UTCDateTime, in_utc, new_id, parse_id, utcnow

__all__ = [
    "IN_LIST_CHUNK",
    "SQLITE_WAL_BACKSTOP_PAGES",
    "Base",
    "Database",
    "DriverRows",
    "JSONDocument",
    "LockWaits",
    "StillBusy",
    "StoredId",
    "StoredIds",
    "UTCDateTime",
    "Unindexed",
    "add_to_counts",
    "among",
    "any_of",
    "bulk_insert",
    "driver_rows",
    "execute_many",
    "give_back_space",
    "in_chunks",
    "in_utc",
    "insert_ignoring_conflicts",
    "insert_missing",
    "insert_missing_rows",
    "is_busy",
    "is_transient",
    "make_engine",
    "new_id",
    "pairs_table",
    "parse_id",
    "row_exists",
    "sqlite_file_name",
    "utcnow",
    "vacuum_file",
    "writing",
]
