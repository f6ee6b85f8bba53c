"""Files: read-before-write file state, watching, and the line diffs that edits are shown as.
May import the runtime's base modules (contract, events, display); never the pipeline, a tool or the UI.
"""
