"""Queues of runs waiting for people: annotation queues with their items, and the rules that fill them."""
