"""What Redline's edges share, the API surfaces, the console and the MCP server: answering unexpected
errors, the request metrics, reading ids out of addresses, and who a bearer token is (`callers`)."""
