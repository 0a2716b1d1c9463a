"""The methods MCP defines: every request and notification name of the revisions in the
registry (``versions``), and of the tasks extension.

Rules: spelled out, like the registry, because importing ``mcp_types`` builds every wire
model; ``tests/wire/test_registry_matches_mcp_types.py`` checks them against the
official package. What is not here is a name a peer made up (telemetry counts those as
``_OTHER``).
"""

from __future__ import annotations

from typing import Final

__all__ = ["EXTENSION_METHODS", "METHODS"]

#: The tasks extension's own methods (``io.modelcontextprotocol/tasks``, 2026-07-28).
EXTENSION_METHODS: Final = frozenset({"tasks/update", "notifications/tasks"})

#: Every method of the revisions (the ``method`` of each request and notification model
#: of ``mcp_types``), and the extension's.
METHODS: Final = frozenset(
    {
        "completion/complete",
        "elicitation/create",
        "initialize",
        "logging/setLevel",
        "ping",
        "prompts/get",
        "prompts/list",
        "resources/list",
        "resources/read",
        "resources/subscribe",
        "resources/templates/list",
        "resources/unsubscribe",
        "roots/list",
        "sampling/createMessage",
        "server/discover",
        "subscriptions/listen",
        "tasks/cancel",
        "tasks/get",
        "tasks/list",
        "tasks/result",
        "tools/call",
        "tools/list",
        "notifications/cancelled",
        "notifications/elicitation/complete",
        "notifications/initialized",
        "notifications/message",
        "notifications/progress",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
        "notifications/resources/updated",
        "notifications/roots/list_changed",
        "notifications/subscriptions/acknowledged",
        "notifications/tasks/status",
        "notifications/tools/list_changed",
        *EXTENSION_METHODS,
    }
)
