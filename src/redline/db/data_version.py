"""Whether another connection has committed to a SQLite file since a moment: for work that read the
store on one connection and writes what it read on another (an import whose reading process resolves
lines while this one writes them).

SQLite's `PRAGMA data_version` on a connection changes exactly when some other connection (of this
process or another) commits to the file, and never for the connection's own commits. So a mark taken on
the connection that will write, before anything else reads, says in each later write transaction on
that same connection whether what was read since the mark is still what the store holds (apart from
that connection's own writes).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.orm import Session


@dataclass(frozen=True)
class OthersCommits:
    """Where other connections' commits stood, as one driver connection saw them."""

    connection: object
    version: int

    @classmethod
    def seen_in(cls, session: Session) -> OthersCommits:
        """The mark, read on the session's connection (SQLite only)."""
        raw = _driver_connection(session)
        return cls(raw, _data_version(raw))

    def none_since(self, session: Session) -> bool:
        """Whether no other connection has committed since the mark, read in the session's transaction.
        A session on another driver connection can't tell, and answers False: the caller then does
        what it would without the mark."""
        raw = _driver_connection(session)
        return raw is self.connection and _data_version(raw) == self.version


def _driver_connection(session: Session) -> object:
    raw = session.connection().connection.dbapi_connection
    if raw is None:
        raise RuntimeError("the session's connection is closed")
    return raw


def _data_version(raw: object) -> int:
    return int(raw.execute("PRAGMA data_version").fetchone()[0])  # type: ignore[attr-defined]
