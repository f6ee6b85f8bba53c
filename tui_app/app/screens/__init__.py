"""The app's screens: the main screen, approval and question dialogs, artifacts, sessions, replay, MCP.
May import widgets and the runtime's data (events, display, sanitising); never what executes tools.
"""
