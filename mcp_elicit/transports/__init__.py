"""Transports: thin adapters between bytes on a socket or pipe and the server core."""
