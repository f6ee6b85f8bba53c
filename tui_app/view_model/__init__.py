"""What a screen shows of a session, folded once from its events: plain Python, no Textual.

`SessionView` holds the tool-call rows, the call records, the header, the reports, the pending
requests and the changed files; the chat, the table, the detail pane and the replay render it, and any other client (the
host, a browser page) can fold the same events into the same view.
"""
