"""Which scopes a request needs: of the tool, prompt, resource or template it uses, for the
HTTP transport to check before any handler runs.

Rules: a request that uses nothing with ``scopes``, names nothing registered, or reads a
resource its ``readable`` rule refuses the caller needs none here (the handler's answer
says "not found", never a 403 telling the resource is there). A resource is found as the
read finds it (``find_resource``). ``scoped`` names the methods a check applies to, empty
(nothing to look up) while nothing has scopes, so the check costs one test then. What has
scopes is named as a refusal names it: a URI quoted, %-encoded where a header's quoted
string could not carry it, cut at 200 characters.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping
from typing import Any

from mcp_elicit.core.subscriptions import MAX_ITEMS
from mcp_elicit.server.auth import Principal
from mcp_elicit.server.resources import ResourceDef, find_resource

__all__ = ["ScopeLookup"]


def _shown_uri(uri: str) -> str:
    """A registered URI as a refusal names it, quoted: what a header's quoted string may not
    carry (a quote, a backslash, a control or non-ASCII character) %-encoded, cut at 200."""
    shown = "".join(
        c if "!" <= c <= "~" and c not in "\"'\\" else urllib.parse.quote(c, safe="") for c in uri
    )
    return f"'{shown[:200]}...'" if len(shown) > 200 else f"'{shown}'"


class ScopeLookup:
    """The scopes of a ``Catalog``'s registrations, looked up for a request (a mixin:
    ``Catalog.__init__`` sets the attributes)."""

    #: The scopes of the tools that need some (``tool(scopes=...)``), by name; of the
    #: prompts, by name; of the resources and templates, by their registered URI.
    tool_scopes: dict[str, tuple[str, ...]]
    prompt_scopes: dict[str, tuple[str, ...]]
    resource_scopes: dict[str, tuple[str, ...]]
    #: The methods a scope check applies to: empty while nothing has scopes.
    scoped: frozenset[str]
    _resources: dict[str, ResourceDef]
    _templates: list[ResourceDef]

    def _rescope(self) -> None:
        """``scoped`` anew, after a registration with scopes came or went."""
        methods = {"tools/call"} if self.tool_scopes else set()
        if self.prompt_scopes:
            methods |= {"prompts/get", "completion/complete"}
        if self.resource_scopes:  # hearing of a change is reading's too
            methods |= {
                "resources/read",
                "resources/subscribe",
                "subscriptions/listen",
                "completion/complete",
            }
        self.scoped = frozenset(methods)

    def scoped_names(self) -> list[str]:
        """What has scopes, as a refusal names it ("tool 'push'", "prompt 'plan'"...)."""
        return [
            *(f"tool {name!r}" for name in self.tool_scopes),
            *(f"prompt {name!r}" for name in self.prompt_scopes),
            *(f"resource {_shown_uri(uri)}" for uri in self.resource_scopes),
        ]

    def needed_scopes(
        self, method: str, params: object, principal: Principal | None
    ) -> tuple[str, tuple[str, ...]] | None:
        """What a request of ``method`` with ``params`` uses that has ``scopes`` (its tool,
        prompt, or resource or template; a completion's prompt or template; the resources
        a ``resources/subscribe`` or ``subscriptions/listen`` would hear of), named for the
        refusal, and those scopes; None when it uses nothing that has some, names nothing
        registered, or reads a resource ``readable`` refuses ``principal`` (the handler's
        answer says so: "not found", never a 403 telling the resource is there)."""
        if not isinstance(params, Mapping):
            return None
        if method == "tools/call" or method == "prompts/get":
            kind, scopes = (
                ("tool", self.tool_scopes) if method == "tools/call" else ("prompt", self.prompt_scopes)
            )
            name = params.get("name")
            needed = scopes.get(name) if isinstance(name, str) else None
            return None if needed is None else (f"{kind} {name!r}", needed)
        if method == "completion/complete":
            ref = params.get("ref")
            ref = ref if isinstance(ref, Mapping) else {}
            name, uri = ref.get("name"), ref.get("uri")
            if ref.get("type") == "ref/prompt" and isinstance(name, str) and name in self.prompt_scopes:
                return f"prompt {name!r}", self.prompt_scopes[name]
            if ref.get("type") == "ref/resource" and isinstance(uri, str) and uri in self.resource_scopes:
                return f"resource {_shown_uri(uri)}", self.resource_scopes[uri]
            return None
        if method == "subscriptions/listen":
            return self._listened(params, principal)
        uri = params.get("uri")
        if method not in ("resources/read", "resources/subscribe") or not isinstance(uri, str):
            return None
        return self._needed_to_read(uri, principal)

    def _needed_to_read(self, uri: str, principal: Principal | None) -> tuple[str, tuple[str, ...]] | None:
        """The resource or template serving ``uri`` and its scopes, found as the read finds
        it (``find_resource``), if it has some and ``readable`` lets ``principal`` read it."""
        try:
            found, variables = find_resource(self._resources, self._templates, uri)
            if not found.scopes or not found.may_read(principal, variables):
                return None
        except Exception:  # not found, or a readable rule that fails: the handler's answer says so
            return None
        return f"resource {_shown_uri(found.uri)}", found.scopes

    def _listened(
        self, params: Mapping[str, Any], principal: Principal | None
    ) -> tuple[str, tuple[str, ...]] | None:
        """The scoped resources a listen's ``resourceSubscriptions`` name, the first named
        (and how many more), and every scope they need together."""
        notifications = params.get("notifications")
        uris = notifications.get("resourceSubscriptions") if isinstance(notifications, Mapping) else None
        if not isinstance(uris, list) or len(uris) > MAX_ITEMS:  # the handler refuses it (-32602)
            return None
        named: dict[str, tuple[str, ...]] = {}
        for uri in uris:
            found = self._needed_to_read(uri, principal) if isinstance(uri, str) else None
            if found is not None:
                named.setdefault(*found)
        if not named:
            return None
        first, *more = named
        what = f"{first} (and {len(more)} more)" if more else first
        return what, tuple(dict.fromkeys(scope for scopes in named.values() for scope in scopes))
