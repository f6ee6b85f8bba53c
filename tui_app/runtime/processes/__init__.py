"""Processes: the groups a session starts, the reaper that ends them however Vigil dies, orderly
shutdown, the worker process, and the session lock. May import the runtime's base modules (events);
never the pipeline, a tool or the UI.
"""
