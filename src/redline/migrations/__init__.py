"""Alembic migrations: the only way Redline's schema is made, in tests too."""
