"""The arrival of runs, from every path (the run APIs, imports, OTLP): store them, derive what spans
make, settle, and only then tell the consumers (queue rules, automations, auto-scoring).

This sits above the domains it joins: `traces` stores and derives and knows nobody who consumes a run;
`queues` and `learning` are told here, in the same transaction as the write.
"""
