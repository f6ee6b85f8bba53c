"""Model providers: Anthropic, OpenAI-compatible and the scripted model, all streaming the same events.
May import the runtime's model interface and messages; never tools, agents or the UI.
"""
