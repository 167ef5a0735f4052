"""The reviews surface (/v2, /v3): human reviews, span annotations, annotation queues, datasets, traces."""
