"""The Bash tool: process groups, streaming output to artifacts, background tasks, TaskOutput/TaskStop.
May import the runtime and tools/common; nothing from the app, providers or agents.
"""
