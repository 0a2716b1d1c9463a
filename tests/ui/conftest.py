"""Fixtures for the UI tests: a headless Chromium for a module (``browser``) and fresh pages in it
(``new_page``), from support.browser. ``anyio_backend`` is module-scoped here, so one browser
serves a whole module in the tests' own event loop; the UI tests use no other async fixture, so
each test still gets a fresh event loop unless it asks for the browser."""

from __future__ import annotations

from support.browser import anyio_backend, browser, new_page

__all__ = ["anyio_backend", "browser", "new_page"]  # fixtures
