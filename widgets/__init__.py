"""Reusable Textual widgets that render session data: chat, tool table, detail, diff, viewer, header.
Render data only: may import the runtime's data modules; never tools, providers, the app or screens.
"""
