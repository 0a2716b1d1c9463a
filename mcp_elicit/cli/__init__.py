"""The ``mcp-elicit`` command line."""
