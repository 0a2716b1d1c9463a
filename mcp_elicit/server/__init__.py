"""The framework tool authors use: ``Server``, decorators, ``Context``."""
