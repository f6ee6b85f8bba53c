"""The diff view: a line diff model, unified and side-by-side rendering, highlighting, hunk navigation.
Render data only: may import the runtime's data modules; never run tools.
"""
