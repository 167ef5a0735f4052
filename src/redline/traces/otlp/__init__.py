"""OpenTelemetry traces: spans as an exporter sent them, and the run each trace's spans make.

`model` holds the shapes every part shares; `decode` reads OTLP (protobuf or JSON) into spans;
`classify`, `messages` and `steps` read one span; `assemble` turns a trace's spans into one run
(`derive`, a pure function of the span set). Storage of spans lives in `traces.spans`; the arrival of a
batch (store, derive, settle, offer to rules) is `redline.ingest`'s.
"""
