"""MCP servers: configuration, connections, and their tools projected into ToolSpecs.
May import the runtime; never agents, providers or the app."""
