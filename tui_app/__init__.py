"""Vigil: supervise an AI coding agent from your terminal.

Rooms bottom up: runtime/ ← tools/ providers/ mcp/ agents/ ← config, assemble ← headless/ app/ ← cli."""

__version__ = "0.1.0"
