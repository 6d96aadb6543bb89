"""Mnemo as an MCP server: the tools and resources (tools.py), the SDK server that serves
them (server.py) and the /mcp endpoint on the site's own workers (views.py)."""
