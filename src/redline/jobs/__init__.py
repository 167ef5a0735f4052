"""Background work as rows of one table: queued in the transaction that asks for it, claimed by a worker,
reported on as it goes, and finished or failed with its reason (DESIGN §4)."""
