"""Headless: the -p runner and its output formats, a recorded session replayed as text, the export.
May import the runtime and agents; never Textual.
"""
