"""The ACP driver: any agent that speaks the Agent Client Protocol (Codex, Gemini CLI, OpenCode,
Claude through its ACP adapter …) under Vigil's supervision, as an ACP client built on the
official Python SDK (docs/architecture.md §11). May import the runtime, tools/ and agents/.
"""
