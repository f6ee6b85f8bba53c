"""The artifact viewer: a background line index, virtual scrolling, search and follow, at any size.
Render data only: may import the runtime's results (artifacts, sanitising); never run tools.
"""
