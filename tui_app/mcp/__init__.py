"""MCP servers: configuration, connections, and their tools projected into ToolSpecs."""
