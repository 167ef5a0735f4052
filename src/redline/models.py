"""Every table, imported in one place so Alembic and `redline db check` see the whole schema."""

from redline.db import Base
from redline.identity import models as identity_models
from redline.traces import models as trace_models

__all__ = ["Base", "identity_models", "trace_models"]
