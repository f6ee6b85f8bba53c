"""Bash commands as the permission room sees them: the parser, word resolution, the read-only
programs and their options, and the rules' view of a command. May import the permission room's
other modules and the runtime's base modules; never the pipeline, a tool or the UI.
"""
