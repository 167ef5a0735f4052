"""The audit log: who did what, when, for the things an admin must be able to account for."""
