"""Text widgets and helpers: untrusted text, ANSI lines, line rendering, a scrolling text view.
Render data only: may import the runtime's data modules (events, display, sanitising); never run tools.
"""
