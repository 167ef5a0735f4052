"""Quote anchors: how each annotation's quote stands in its step's text now (exact, fuzzy or detached)

Revision ID: 0018_quote_anchors
Revises: 0017_experiments
Create Date: 2026-12-07 09:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018_quote_anchors"
down_revision = "0017_experiments"
branch_labels = None
depends_on = None

# Every stored quote was found exactly when it was made. Its offsets still hold its text unless the step
# was re-spaced since (an OTLP message whose whitespace changed kept its step): such a quote is marked
# detached, its offsets cleared, rather than looked for again in SQL without its prefix and suffix; the
# next change to its step looks for it properly. A revision imports no Redline code, so the rules
# (`annotations.quotes`, `annotations.anchoring`) are written out here, for each store.
QUOTED = {
    "sqlite": "json_type(quote) = 'object' AND json_type(quote, '$.text') = 'text'",
    "postgresql": "jsonb_typeof(quote) = 'object' AND jsonb_typeof(quote -> 'text') = 'string'",
}
HOLDS_TEXT = {
    "sqlite": (
        "EXISTS (SELECT 1 FROM steps WHERE steps.id = annotations.step_id"
        " AND substr(steps.content, json_extract(quote, '$.start') + 1,"
        " json_extract(quote, '$.end') - json_extract(quote, '$.start')) = json_extract(quote, '$.text'))"
    ),
    "postgresql": (
        "EXISTS (SELECT 1 FROM steps WHERE steps.id = annotations.step_id"
        " AND substr(steps.content, (quote ->> 'start')::int + 1,"
        " (quote ->> 'end')::int - (quote ->> 'start')::int) = quote ->> 'text')"
    ),
}
NO_OFFSETS = {
    "sqlite": "json_set(quote, '$.start', json('null'), '$.end', json('null'))",
    "postgresql": 'quote || \'{"start": null, "end": null}\'::jsonb',
}


def upgrade() -> None:
    # Plain ADD COLUMN without a default: instant on both stores, never a table rebuild (0010).
    op.add_column("annotations", sa.Column("quote_anchor", sa.String(length=16), nullable=True))
    dialect = op.get_bind().dialect.name
    op.execute(
        f"UPDATE annotations SET quote_anchor = CASE WHEN {HOLDS_TEXT[dialect]} THEN 'exact' "
        f"ELSE 'detached' END WHERE {QUOTED[dialect]}"
    )
    op.execute(f"UPDATE annotations SET quote = {NO_OFFSETS[dialect]} WHERE quote_anchor = 'detached'")


def downgrade() -> None:
    # DROP COLUMN in place (SQLite 3.35 and later), as 0010 does; a detached quote keeps null offsets.
    op.drop_column("annotations", "quote_anchor")
