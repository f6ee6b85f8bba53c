"""Hooks: the interface the pipeline calls, and command hooks speaking Claude Code's JSON in and out.
May import the runtime's base modules (contract, events); never the pipeline, a tool or the UI.
"""
