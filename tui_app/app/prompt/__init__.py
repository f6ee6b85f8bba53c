"""The prompt box's side of the screen: what Enter means there (intents, posted as messages the
screen handles), the slash-command views, `#` notes, `@` mentions and shell mode.
"""
