"""The wire: revisions, JSON-RPC framing, per-request ``_meta``, HTTP header rules, SSE.

Everything here is pure: bytes and decoded JSON values in, values out. Protocol models
come from the official ``mcp-types`` package; this package adds only what it lacks.
"""
