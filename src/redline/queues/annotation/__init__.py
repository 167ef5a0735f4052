"""Annotation queues (annotation-queues.txt): named queues of traces for review, their automations, and
the review screen that steps through them."""
