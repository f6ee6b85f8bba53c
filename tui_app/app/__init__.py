"""The Textual app: screens, dialogs, palette commands, controls and the bridge to the runtime's thread.
May import widgets, the runtime, the composition root and headless helpers; widgets never import it.
"""
