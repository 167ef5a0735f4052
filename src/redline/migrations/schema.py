"""Every table, imported in one place so Alembic and `redline db check` see the whole schema."""

from redline.annotations import models as annotation_models
from redline.audit import models as audit_models
from redline.corrections import models as correction_models
from redline.datasets import models as dataset_models
from redline.db import Base
from redline.experiments import models as experiment_models
from redline.groups import models as group_models
from redline.idempotency import models as idempotency_models
from redline.identity import models as identity_models
from redline.jobs import models as job_models
from redline.learning import models as learning_models
from redline.queues import models as queue_models
from redline.reviews import models as review_models
from redline.traces import models as trace_models

__all__ = [
    "Base",
    "annotation_models",
    "audit_models",
    "correction_models",
    "dataset_models",
    "experiment_models",
    "group_models",
    "idempotency_models",
    "identity_models",
    "job_models",
    "learning_models",
    "queue_models",
    "review_models",
    "trace_models",
]
