"""Instrumented agents, one program per instrumentor, run as subprocesses by tests/otlp/test_instrumentors.py.

They run in a virtualenv of their own (requirements.txt here), never the suite's: instrumentors patch
httpx, openai and more for the whole process, which the suite's `filterwarnings = error` would not survive.
"""
