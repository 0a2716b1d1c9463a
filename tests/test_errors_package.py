"""``mcp_elicit.errors`` is a package, a module per concept (``base``, ``protocol``,
``answers``, ``peers``, ``cli``), and everything that was importable from it before the
split still is, under the same names: ``from mcp_elicit.errors import X`` keeps working,
each class still says it is ``mcp_elicit.errors.X`` (tracebacks, reprs), and an error
pickled (a value a process pool sends back) comes back as the same class."""

from __future__ import annotations

import importlib
import pickle

import mcp_elicit.errors as errors

#: Every public name of ``mcp_elicit.errors`` before the split.
NAMES = {
    "AuthorizationError",
    "CannotConnect",
    "CheckFailed",
    "CliError",
    "ConfigError",
    "FormSchemaError",
    "FormValidationError",
    "HeaderMismatch",
    "InternalError",
    "InvalidAnswer",
    "InvalidParams",
    "InvalidRequest",
    "InvalidRequestMeta",
    "InvalidRequestState",
    "InvalidResponse",
    "MCPElicitError",
    "MethodNotFound",
    "MissingClientCapability",
    "OAuthError",
    "ParseError",
    "PrincipalLimitReached",
    "ProtocolError",
    "ProtocolViolation",
    "RateLimited",
    "ReplayMismatchError",
    "RequestTimeout",
    "ResourceNotFound",
    "RoundsExceeded",
    "SensitiveFieldError",
    "ServerBrokeProtocol",
    "StoreUnavailable",
    "TaskCancelled",
    "ToolError",
    "TransportError",
    "URLElicitationRequired",
    "UnsupportedProtocolVersion",
    "UsageError",
    "ValidationProblem",
}
PARTS = ("base", "protocol", "answers", "peers", "cli")


def test_every_name_is_where_it_was_and_says_so() -> None:
    assert set(errors.__all__) == NAMES
    for name in NAMES:
        value = getattr(errors, name)
        assert value.__module__ == "mcp_elicit.errors", name
        assert value.__qualname__ == name
    assert errors.shown_repr("x" * 100).endswith("(102 characters)")


def test_each_part_holds_its_names_once_and_they_are_the_packages() -> None:
    seen: dict[str, str] = {}
    for part in PARTS:
        module = importlib.import_module(f"mcp_elicit.errors.{part}")
        assert list(module.__all__) == sorted(module.__all__), part
        for name in module.__all__:
            assert name not in seen, f"{name} in both {seen.get(name)} and {part}"
            seen[name] = part
            assert getattr(module, name) is getattr(errors, name), name
    assert set(seen) - {"shown_repr"} == NAMES


def test_an_error_pickles_as_the_same_class() -> None:
    sent = errors.RateLimited("slow down", {"retryAfter": 3, "limit": "calls"})
    back = pickle.loads(pickle.dumps(sent))
    assert type(back) is errors.RateLimited
    assert (back.message, back.data, back.retry_after, back.code) == ("slow down", sent.data, 3, -32600)
    assert type(pickle.loads(pickle.dumps(errors.UsageError("bad", exit_code=2)))) is errors.UsageError
