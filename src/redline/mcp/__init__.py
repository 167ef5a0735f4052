"""Redline's own MCP server: the runs and what people said about them, for an assistant (an IDE, a chat
client, an agent) to search, read, review and correct through the Model Context Protocol.

An edge like the HTTP surfaces: every tool is a thin call of the same services, in one transaction, as
the token's principal, whose roles apply exactly as on the API. `tool` is what a tool is, `table` lists
them, `server` answers the protocol, `callers` says who calls; `stdio` serves `redline mcp` and `http`
serves `/mcp` on the running server. docs/mcp.md describes every tool.
"""
