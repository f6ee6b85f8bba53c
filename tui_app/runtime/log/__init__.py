"""The session log: where sessions live, the compact line format, the writer and tolerant reader,
the catalog of recorded sessions and the conversation rebuilt from a log. May import the runtime's
base modules (events, messages); never the pipeline, a tool or the UI.
"""
