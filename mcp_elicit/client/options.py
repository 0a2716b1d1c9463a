"""``Client``'s options, checked when the client is made: a value that cannot work is an
error naming the option there, not a ``TypeError`` in the middle of a call. ``ClientOptions``
types them for the ``connect_*`` helpers, which pass them on (``**options``), so a misspelt
option is a type checker's error where it is written."""

from __future__ import annotations

import importlib.metadata
import math
from collections.abc import Callable, Mapping, Sequence

from typing_extensions import TypedDict

from mcp_elicit.client.answerers import RootsCallback, SamplingCallback
from mcp_elicit.client.connection import NotificationCallback
from mcp_elicit.core.client import ClientInfo
from mcp_elicit.core.rounds import RoundLimits
from mcp_elicit.core.tasks import TASKS_EXTENSION
from mcp_elicit.errors import ConfigError, MissingClientCapability
from mcp_elicit.telemetry import Telemetry
from mcp_elicit.wire.meta import LOG_LEVELS
from mcp_elicit.wire.versions import SUPPORTED, is_handshake, is_modern

__all__ = [
    "ClientOptions",
    "checked_log_level",
    "checked_versions",
    "limits_or_default",
    "client_hint",
    "required_revision",
    "say_what_to_pass",
    "seconds",
]


class ClientOptions(TypedDict, total=False):
    """``Client``'s keyword arguments but ``answerer`` (see ``Client``), for ``connect_*``."""

    sampling: SamplingCallback | None
    roots: RootsCallback | None
    versions: Sequence[str]
    info: ClientInfo | None
    timeout: float
    probe_timeout: float
    limits: RoundLimits | None
    on_notification: NotificationCallback | None
    report: Callable[[str], None] | None
    tasks: bool
    progress: bool
    log_level: str | None
    telemetry: bool | Telemetry | None


def seconds(option: str, value: object) -> float:
    """``value``, a finite number of seconds above zero; ``ConfigError`` naming ``option``."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value > 0:
        return float(value)
    raise ConfigError(f"{option} {value!r}: expected a finite number of seconds, above 0")


def checked_versions(versions: Sequence[str]) -> tuple[str, ...]:
    """``versions`` without repeats, each one a revision the client speaks."""
    if isinstance(versions, str):
        raise TypeError(f"versions is a list of revisions (['2026-07-28']), not the string {versions!r}")
    chosen = tuple(dict.fromkeys(versions))
    unknown = [v for v in chosen if not (is_modern(v) or is_handshake(v))]
    if unknown or not chosen:
        raise ValueError(
            f"versions must be revisions this client speaks ({', '.join(SUPPORTED)}), not {unknown or 'none'}"
        )
    return chosen


def limits_or_default(limits: object) -> RoundLimits:
    if limits is None:
        return RoundLimits()
    if not isinstance(limits, RoundLimits):
        raise ConfigError(f"limits {limits!r}: expected a RoundLimits (RoundLimits(max_rounds=3))")
    return limits


def checked_log_level(level: object) -> str | None:
    """The least severe log message the client asks for (None: no logs)."""
    if level is None or (isinstance(level, str) and level in LOG_LEVELS):
        return level
    raise ConfigError(f"log_level {level!r}: expected one of {', '.join(LOG_LEVELS)}, or None for no logs")


def say_what_to_pass(error: MissingClientCapability) -> None:
    """Add to a server's -32021 which ``Client`` option declares what it needs (an answerer
    with the mode, a sampling or roots callback, ``tasks=True``): the server names it in its
    own terms. When the session's revision cannot carry it (``requiredProtocolVersion``),
    no option but a later revision helps, and that is what it says."""
    if "(pass Client " in error.message:
        return  # said already
    if hint := client_hint(error):
        error.message = f"{error.message} ({hint})"
        error.args = (error.message,)


def required_revision(error: MissingClientCapability) -> str | None:
    """The revision a -32021 says the request needs (``requiredProtocolVersion``), or None."""
    data = error.data if isinstance(error.data, Mapping) else {}
    since = data.get("requiredProtocolVersion")
    return since if isinstance(since, str) and since in SUPPORTED else None


def client_hint(error: MissingClientCapability) -> str:
    """The words ``say_what_to_pass`` adds, in parentheses, to the server's (empty: none)."""
    since = required_revision(error)
    # with a revision named, elicitation is what it lacks; a capability beside it (sampling,
    # roots: every revision has them, questions gathered together) the client did not declare
    said = [
        option
        for name, value in error.required.items()
        if (since is None or name != "elicitation") and (option := _option_for(name, value))
    ]
    options = f"pass Client {' and '.join(said)}" if said else ""
    if since is None:
        return options
    later = (
        f"pass Client versions= that include {since} or a later revision: the revision in use cannot carry it"
    )
    return f"{later}; and {options}" if options else later


def _option_for(capability: str, value: object) -> str | None:
    """The ``Client`` option that declares ``capability`` (None: none does)."""
    if capability == "elicitation":
        asked = sorted(value) if isinstance(value, Mapping) and value else ["form"]
        modes = [mode for mode in asked if mode in ("form", "url")] or ["form"]  # keys: server text
        return f"an answerer= whose modes include {' and '.join(modes)}"
    if capability in ("sampling", "roots"):
        return f"a {capability}= callback"
    if capability == "extensions" and isinstance(value, Mapping) and TASKS_EXTENSION in value:
        return "tasks=True"
    return None


def package_version() -> str:
    """This package's version, for the ``clientInfo`` a client sends by default."""
    try:
        return importlib.metadata.version("mcp-elicit")
    except importlib.metadata.PackageNotFoundError:
        return ClientInfo().version
