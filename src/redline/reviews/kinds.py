"""Which annotations are which, as SQL conditions: an evaluator's own result, and a person's value for a
review key (a correction of an evaluator result is neither).

Written on columns no index serves (`source`, `key`, `output_type`) rather than on `parent_id IS NULL`:
they are checked on the rows a run's annotations index finds. PostgreSQL without statistics on the table
(not yet analyzed) took the index on `parent_id` for a selective one and read every uncorrected
annotation once per run. They rest on how the services write rows (`annotate`, `evaluations`): an
evaluator's result never has a parent, and a correction carries the output type of the result it
corrects, where a person's value has none.
"""

from __future__ import annotations

from sqlalchemy import and_

from redline.annotations.models import Annotation
from redline.reviews.annotate import EVALUATOR, HUMAN

EVALUATOR_RESULT = Annotation.source == EVALUATOR
REVIEW_VALUE = and_(Annotation.source == HUMAN, Annotation.key.is_not(None), Annotation.output_type.is_(None))
