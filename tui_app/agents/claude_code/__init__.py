"""The Claude Code driver: the user's `claude` CLI under Vigil's supervision, through the
stream-json control protocol its Agent SDKs speak (docs/architecture.md §11). May import the runtime and agents/.
"""
