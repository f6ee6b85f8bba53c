"""Vigil's tool runtime: the pipeline core (one call, a batch, a session, its log) and its rooms below it.
UI-agnostic: never imports Textual, widgets, tools, providers, MCP, agents or the app.
"""
