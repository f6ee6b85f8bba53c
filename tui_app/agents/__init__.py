"""Agents: the built-in turn loop over a provider, and the drivers of external agents (docs/architecture.md §11).
May import the runtime; never tools, providers, the app or the composition root (those are injected).
"""
