"""What a server offers: its tools, prompts, resources, resource templates and completer,
registered with decorators, and the capabilities they add up to.

Rules: names (and resource URIs) are unique; list results keep registration order. A
tool, prompt, resource or template registered with ``scopes`` needs them of a caller's
token over HTTP, to use it or (a resource) to subscribe to it (``needed_scopes``, of
``scope_lookup``: the transport refuses with 403 ``insufficient_scope`` before any
handler runs). A kind once declared (tools, prompts, resources, completions) stays declared while the
server runs, its list empty once the last one is removed: a client that negotiated it,
or heard its list change, is never told the method does not exist. Every
change after start-up is announced through ``_changed(kind)`` (the server tells the
clients that listen; see ``server.subscriptions``). A change (registering, removing) is
made on the event loop: from a plain-function handler's worker thread it is handed to the
loop (``on_loop``), so a listing never sees a dict change under it; the function is read
(signature, schema) in the calling thread, and a refused registration raises there.
``@app.tool`` and ``@app.prompt`` work without their call; what a decorator accepts, and
its ``TypeError`` otherwise, is ``decorator_args``'s (``listing_extras``'s for icons,
annotations, ``meta`` and a resource's ``size``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

from mcp_elicit.core.tasks import TASKS_EXTENSION
from mcp_elicit.server.auth import Principal, scope_names
from mcp_elicit.server.completion import Suggester, check_reference
from mcp_elicit.server.decorator_args import bare, check_options, taken, text_option
from mcp_elicit.server.listing_extras import listing_extras
from mcp_elicit.server.prompts import PromptDef
from mcp_elicit.server.resources import Readable, ResourceDef, is_template
from mcp_elicit.server.scope_lookup import ScopeLookup
from mcp_elicit.server.threads import on_loop
from mcp_elicit.server.tools import ToolDef

if TYPE_CHECKING:
    import mcp_types

__all__ = ["Catalog"]

F = TypeVar("F", bound=Callable[..., Any])


#: How to resolve a resource registered at a URI already served.
_OWN_URI = "serve this one at a URI of its own, or remove the other first (app.remove_resource({uri!r}))"


class Catalog(ScopeLookup):
    """The registrations of one server (``Server`` is one)."""

    def __init__(self) -> None:
        self._tools: dict[str, ToolDef] = {}
        self.tool_scopes: dict[str, tuple[str, ...]] = {}
        self.prompt_scopes: dict[str, tuple[str, ...]] = {}
        self.resource_scopes: dict[str, tuple[str, ...]] = {}
        self.scoped: frozenset[str] = frozenset()
        self._prompts: dict[str, PromptDef] = {}
        self._resources: dict[str, ResourceDef] = {}
        self._templates: list[ResourceDef] = []
        self._suggest: Suggester | None = None
        #: What answers ``completion/complete``: checks the reference, then asks ``_suggest``.
        self._completer: Callable[..., Any] | None = self._complete
        #: The kinds ``capabilities`` has declared: they stay declared.
        self._declared: set[str] = set()

    def _changed(self, kind: Literal["tools", "prompts", "resources", "completions"]) -> None:
        """Something was registered or removed (the server overrides this)."""

    @overload
    def tool(self, name: F, /) -> F: ...
    @overload
    def tool(
        self,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        input_schema: Mapping[str, Any] | None = None,
        output_schema: Mapping[str, Any] | None = None,
        structured: bool | None = None,
        annotations: Mapping[str, Any] | mcp_types.ToolAnnotations | None = None,
        meta: Mapping[str, Any] | None = None,
        icons: list[Mapping[str, Any] | mcp_types.Icon] | None = None,
        single_use_state: bool = False,
        task: Literal["optional", "required"] | None = None,
        scopes: Sequence[str] = (),
    ) -> Callable[[F], F]: ...
    def tool(
        self,
        name: str | Callable[..., Any] | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        input_schema: Mapping[str, Any] | None = None,
        output_schema: Mapping[str, Any] | None = None,
        structured: bool | None = None,
        annotations: Mapping[str, Any] | mcp_types.ToolAnnotations | None = None,
        meta: Mapping[str, Any] | None = None,
        icons: list[Mapping[str, Any] | mcp_types.Icon] | None = None,
        single_use_state: bool = False,
        task: Literal["optional", "required"] | None = None,
        scopes: Sequence[str] = (),
    ) -> Any:
        """Register a function as a tool; its type hints give the input schema.

        ``scopes``: the OAuth scopes a caller's token must hold (granted, or implied:
        ``ResourceMetadata.implied_scopes``) to call it, besides the endpoint's
        ``required_scopes``. Over HTTP a call without them is refused before the function
        runs, with 403 ``insufficient_scope`` naming the scopes the call needs, so the
        client can step up; a server with scoped tools must have ``auth=`` to be served
        over HTTP. stdio has no token: there the scopes are not checked.

        ``single_use_state=True`` makes every ``requestState`` of this tool redeemable once,
        enforced through the store (shared by every instance): for one-time actions.
        ``task`` lets a call go on as a task at ``await ctx.start_task()`` (the tasks
        extension, 2026-07-28); ``"required"`` refuses a client that did not declare the
        extension (-32021) at 2026-07-28. ``annotations`` and ``icons``: mappings in the
        spec's words or ``mcp_types`` models (``listing_extras``). ``@app.tool`` without its
        call registers the function with the defaults (``decorator_args``)."""
        function = bare(
            *("tool", name, title, description, input_schema, output_schema, structured, annotations, meta),
            *(icons, single_use_state or None, task, scopes or None),
        )
        if function is not None:
            return self.tool()(function)
        named = text_option("tool", "name", name, "")
        check_options(
            "tool",
            title=("text", title),
            description=("text", description),
            input_schema=("mapping", input_schema),
            output_schema=("mapping", output_schema),
            structured=("maybe", structured),
            meta=("mapping", meta),
            single_use_state=("flag", single_use_state),
        )
        extras = listing_extras("tool", icons=icons, annotations=annotations, meta=meta)
        if task not in (None, "optional", "required"):
            raise ValueError(f'task must be "optional", "required" or None, not {task!r}')
        needed = scope_names("app.tool(): scopes", scopes)

        def register(fn: F) -> F:
            tool = ToolDef.build(
                fn,
                name=named,
                title=title,
                description=description,
                input_schema=input_schema,
                output_schema=output_schema,
                structured=structured,
                annotations=extras.get("annotations"),
                meta=extras.get("_meta"),
                icons=extras.get("icons"),
            )
            tool.single_use_state = single_use_state
            tool.task = task
            tool.scopes = needed
            self._add_tool(tool)
            return fn

        return register

    @on_loop
    def _add_tool(self, tool: ToolDef) -> None:
        if tool.name in self._tools:
            raise ValueError(taken("tool", tool.name))
        self._tools[tool.name] = tool
        if tool.scopes:
            self.tool_scopes[tool.name] = tool.scopes
            self._rescope()
        self._changed("tools")

    def names(self, kind: Literal["tools", "prompts", "resources"]) -> list[str]:
        """The names of the registered tools or prompts, or the URIs (templates included)
        of the resources, in registration order."""
        if kind == "tools":
            return list(self._tools)
        if kind == "prompts":
            return list(self._prompts)
        return [*self._resources, *(t.uri for t in self._templates)]

    @on_loop
    def remove_tool(self, name: str) -> None:
        """Stop offering the tool ``name`` (clients listening are told the list changed)."""
        del self._tools[name]
        if self.tool_scopes.pop(name, None):
            self._rescope()
        self._changed("tools")

    @on_loop
    def remove_prompt(self, name: str) -> None:
        """Stop offering the prompt ``name`` (clients listening are told the list changed)."""
        del self._prompts[name]
        if self.prompt_scopes.pop(name, None):
            self._rescope()
        self._changed("prompts")

    @on_loop
    def remove_resource(self, uri: str) -> None:
        """Stop serving the resource (or template) registered at ``uri``."""
        if uri in self._resources:
            del self._resources[uri]
        else:
            template = next((t for t in self._templates if t.uri == uri), None)
            if template is None:
                raise KeyError(uri)
            self._templates.remove(template)
        if self.resource_scopes.pop(uri, None):
            self._rescope()
        self._changed("resources")

    @overload
    def prompt(self, name: F, /) -> F: ...
    @overload
    def prompt(
        self,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        icons: list[Mapping[str, Any] | mcp_types.Icon] | None = None,
        meta: Mapping[str, Any] | None = None,
        scopes: Sequence[str] = (),
    ) -> Callable[[F], F]: ...
    def prompt(
        self,
        name: str | Callable[..., Any] | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        icons: list[Mapping[str, Any] | mcp_types.Icon] | None = None,
        meta: Mapping[str, Any] | None = None,
        scopes: Sequence[str] = (),
    ) -> Any:
        """Register a function as a prompt; its parameters are the prompt's arguments.
        ``scopes``: as a tool's (``tool(scopes=...)``), needed to get it (or complete its
        arguments) over HTTP. ``icons`` and ``meta``: as a tool's (``listing_extras``).
        ``@app.prompt`` without its call: as ``@app.tool``."""
        function = bare("prompt", name, title, description, icons, meta, scopes or None)
        if function is not None:
            return self.prompt()(function)
        named = text_option("prompt", "name", name, "")
        check_options(
            "prompt", title=("text", title), description=("text", description), meta=("mapping", meta)
        )
        extras = listing_extras("prompt", icons=icons, meta=meta)
        needed = scope_names("app.prompt(): scopes", scopes)

        def register(fn: F) -> F:
            prompt = PromptDef.build(fn, name=named, title=title, description=description, extras=extras)
            prompt.scopes = needed
            self._add_prompt(prompt)
            return fn

        return register

    @on_loop
    def _add_prompt(self, prompt: PromptDef) -> None:
        if prompt.name in self._prompts:
            raise ValueError(taken("prompt", prompt.name))
        self._prompts[prompt.name] = prompt
        if prompt.scopes:
            self.prompt_scopes[prompt.name] = prompt.scopes
            self._rescope()
        self._changed("prompts")

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
        annotations: Mapping[str, Any] | mcp_types.Annotations | None = None,
        icons: list[Mapping[str, Any] | mcp_types.Icon] | None = None,
        meta: Mapping[str, Any] | None = None,
        readable: Readable | None = None,
        scopes: Sequence[str] = (),
    ) -> Callable[[F], F]:
        """Register a function serving ``uri``; ``{placeholders}`` make it a template.
        ``readable(principal, **variables) -> bool`` limits who may read it, subscribe to it
        and hear of its changes (to anyone else it is "not found"). ``scopes``: as a tool's
        (``tool(scopes=...)``), needed to read it (or complete a template's variables) over
        HTTP; a caller ``readable`` refuses is told "not found" first. ``annotations``
        (audience, priority, lastModified), ``icons``, ``meta`` and a fixed resource's
        ``size`` in bytes are listed as they are given (``listing_extras``)."""
        text_option("resource", "uri", uri, '"scheme://..."')
        text_option("resource", "name", name, '"scheme://..."')
        check_options(
            "resource",
            title=("text", title),
            description=("text", description),
            mime_type=("text", mime_type),
            meta=("mapping", meta),
        )
        template = isinstance(uri, str) and is_template(uri)
        extras = listing_extras(
            "resource", icons=icons, annotations=annotations, meta=meta, size=size, template=template
        )
        needed = scope_names("app.resource(): scopes", scopes)

        def register(fn: F) -> F:
            res = ResourceDef.build(
                uri,
                fn,
                name=name,
                title=title,
                description=description,
                mime_type=mime_type,
                readable=readable,
                extras=extras,
            )
            res.scopes = needed
            self._add_resource(res)
            return fn

        return register

    @on_loop
    def _add_resource(self, res: ResourceDef) -> None:
        uri = res.uri
        if is_template(uri):
            if any(t.uri == uri for t in self._templates):
                raise ValueError(
                    f"a resource template at {uri!r} is already registered: {_OWN_URI.format(uri=uri)}"
                )
            self._templates.append(res)
        else:
            if uri in self._resources:
                raise ValueError(f"a resource at {uri!r} is already registered: {_OWN_URI.format(uri=uri)}")
            self._resources[uri] = res
        if res.scopes:
            self.resource_scopes[uri] = res.scopes
            self._rescope()
        self._changed("resources")

    def completion(self, misused: object = None, /) -> Callable[[F], F]:
        """Register ``fn(ref, argument, context) -> list[str]`` answering ``completion/complete``
        (``@app.completion()``: it takes no arguments); with a parameter named ``principal``,
        ``fn`` also gets the caller (None when unauthenticated), unless a ``functools.partial``
        bound it (what it bound is kept)."""
        if misused is not None:
            text_option("completion", "argument", misused, "")
            raise TypeError(f"app.completion() takes no arguments, not {misused!r}")

        def register(fn: F) -> F:
            self._set_completer(Suggester.of(fn))  # a principal it could not be given: TypeError now
            return fn

        return register

    @on_loop
    def _set_completer(self, suggester: Suggester) -> None:
        self._suggest = suggester
        self._changed("completions")

    def _complete(
        self,
        ref: Mapping[str, Any],
        argument: Mapping[str, Any],
        context: Mapping[str, Any] | None,
        principal: Principal | None = None,
    ) -> Any:
        """Suggestions for an argument of a prompt or template offered here (-32602 for
        anything else); none without a registered function."""
        check_reference(
            ref,
            argument,
            prompts={name: p.signature.names for name, p in self._prompts.items()},
            resources={
                **{uri: () for uri in self._resources},
                **{t.uri: tuple(t.pattern.groupindex) if t.pattern else () for t in self._templates},
            },
        )
        return [] if self._suggest is None else self._suggest(ref, argument, context, principal)

    def capabilities(self) -> dict[str, Any]:
        """What this server offers, as ``server/discover`` and ``initialize`` declare it."""
        declared = self._declared
        if self._tools:
            declared.add("tools")
        if self._prompts:
            declared.add("prompts")
        if self._resources or self._templates:
            declared.add("resources")
        if self._suggest is not None or self._prompts or self._templates:
            declared.add("completions")
        caps: dict[str, Any] = {"logging": {}}
        if "tools" in declared:
            caps["tools"] = {"listChanged": True}
        if "prompts" in declared:
            caps["prompts"] = {"listChanged": True}
        if "resources" in declared:
            caps["resources"] = {"listChanged": True, "subscribe": True}
        if "completions" in declared:
            caps["completions"] = {}
        if any(t.task for t in self._tools.values()):
            caps["extensions"] = {TASKS_EXTENSION: {}}
        return caps
