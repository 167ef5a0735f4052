"""Which store failures Redline answers 503 with Retry-After (`db.is_transient`) and which it treats as
faults (500): real errors from each store, never hand-made ones."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import DBAPIError

from redline.db import Database, is_transient, make_engine
from tests.storelocks import impatient_database, store_locked


def _raised(database_url: str, statement: str) -> DBAPIError:
    engine = make_engine(database_url)
    try:
        with engine.connect() as connection, pytest.raises(DBAPIError) as raised:
            connection.execute(text(statement))
    finally:
        engine.dispose()
    return raised.value


def test_a_missing_table_is_a_fault(database_url: str) -> None:
    assert not is_transient(_raised(database_url, "SELECT * FROM no_such_table"))


def _write_while_held(db: Database, database_url: str, backend: str) -> None:
    with store_locked(database_url, backend, "traces"), db.write() as session:
        session.execute(text("UPDATE traces SET title = 'x'"))


def test_a_lock_held_past_the_wait_is_transient(database_url: str, backend: str) -> None:
    db = impatient_database(database_url, backend)
    try:
        with pytest.raises(DBAPIError) as raised:
            _write_while_held(db, database_url, backend)
    finally:
        db.dispose()
    assert is_transient(raised.value)


def test_a_database_that_cannot_be_reached_is_transient(backend: str) -> None:
    if backend == "sqlite":
        return  # a file store is reached or not there at all (a fault: the path is wrong)
    engine = create_engine(
        "postgresql+psycopg://postgres@127.0.0.1:1/none", connect_args={"connect_timeout": 2}
    )
    try:
        with pytest.raises(DBAPIError) as raised:
            engine.connect()
    finally:
        engine.dispose()
    assert is_transient(raised.value)
