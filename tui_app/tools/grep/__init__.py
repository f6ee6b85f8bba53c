"""The Grep tool: ripgrep when present, a Python backend otherwise, both with the same results.
May import the runtime and tools/common; nothing from the app, providers or agents.
"""
