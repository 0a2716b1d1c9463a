"""Arguments that do not fit a handler's signature (``server.signature``): the error that
says so, every fault with its place, and which of its words are a validator's own.

Rules:

* ``ArgumentsError`` lists every fault pydantic found (``describe_invalid``), and keeps
  pydantic's account of them (``invalid``) to say them again redacted.
* A validator's own words (its ``ValueError`` or ``AssertionError``, or a
  ``PydanticCustomError`` whose words are not pydantic's) may name what the handler's
  code knows (paths, hosts, SQL): redacted (``ArgumentsError.redacted``), they are
  withheld, a reference said in their place and logged with them. pydantic's own words (a
  type, a bound), mcp-elicit's format checks (``FormatMismatch``) and what the
  ``ipaddress`` module itself says of the value sent are kept: they say only what the
  caller sent.
"""

from __future__ import annotations

import ipaddress
import logging
import re
import secrets
from collections.abc import Mapping
from typing import Any, Final

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from mcp_elicit.forms.formats import FormatMismatch

__all__ = ["VALIDATOR_ERRORS", "ArgumentsError", "describe_invalid", "validators_spoke", "validators_words"]

log = logging.getLogger("mcp_elicit.server")


class ArgumentsError(ValueError):
    """Arguments that do not fit a handler's signature; the message lists every fault.
    ``invalid`` is pydantic's account of them, when it found them, to say them again with
    a validator's own text withheld (``describe_invalid``)."""

    def __init__(self, message: str, invalid: ValidationError | None = None) -> None:
        super().__init__(message)
        self.invalid = invalid

    @classmethod
    def found(cls, invalid: ValidationError) -> ArgumentsError:
        return cls(describe_invalid(invalid), invalid)

    def redacted(self, what: str) -> str:
        """The message with a validator's own words withheld (``describe_invalid``), the
        log line of ``what`` ("tool NAME") holding them under the reference said; the
        message as it is when no validator spoke."""
        if self.invalid is None or not validators_spoke(self.invalid):
            return str(self)
        reference = secrets.token_hex(4)
        log.warning("%s: %s (reference %s)", what, self, reference)
        return describe_invalid(self.invalid, reference=reference)


#: pydantic's error types for a validator's own ``ValueError`` or ``AssertionError``: the
#: message is the handler's code's (it may name paths, hosts, SQL), not pydantic's.
VALIDATOR_ERRORS: Final = frozenset({"value_error", "assertion_error"})


def describe_invalid(exc: ValidationError, *, reference: str | None = None) -> str:
    """What ``exc`` says is wrong with arguments: each fault, with its place. With
    ``reference``, a validator's own message (``validators_words``) is withheld, the
    reference said in its place; pydantic's own words (a type, a bound) and a format
    check's stay."""
    parts = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error.get("loc", ())) or "arguments"
        said = error.get("msg", "invalid")
        if reference is not None and validators_words(error):
            said = f"the validator's message withheld (reference {reference} in the server's log)"
        parts.append(f"{where}: {said}")
    return "Invalid arguments: " + "; ".join(parts)


def validators_spoke(exc: ValidationError) -> bool:
    """Whether a fault of ``exc`` is a validator's own message (``validators_words``)."""
    return any(validators_words(error) for error in exc.errors())


def validators_words(error: ErrorDetails) -> bool:
    """Whether the fault's message is a validator's own text: its ``ValueError`` or
    ``AssertionError`` (``VALIDATOR_ERRORS``; not mcp-elicit's ``FormatMismatch``, nor the
    words the ``ipaddress`` module itself raises about the value sent), or a
    ``PydanticCustomError``, whose type is its own or whose words are not those pydantic
    writes for that type (of a Python value or of one decoded from JSON, or in its own
    checks: ``_PYDANTICS_CHECKS``)."""
    ctx = error.get("ctx") or {}
    if error["type"] in VALIDATOR_ERRORS:
        cause = ctx.get("error")
        about_the_value = (
            isinstance(cause, _ADDRESS_ERRORS)
            and _raised_in_ipaddress(cause)
            and repr(str(error.get("input"))) in str(cause)
        )
        return not (isinstance(cause, FormatMismatch) or about_the_value)
    said = error["msg"]
    for written in _PYDANTICS_CHECKS.get(error["type"], ()):
        if written.fullmatch(said) if isinstance(written, re.Pattern) else _filled(written, ctx) == said:
            return False
    return said not in _pydantics_words(error["type"], ctx)


def _pydantics_words(kind: str, ctx: Mapping[str, Any]) -> set[str]:
    """What pydantic-core writes for a fault of ``kind``, of a Python value and of one
    decoded from JSON ("Input should be an object" for a model): none for a type it does
    not know."""
    words = set()
    for input_type in ("python", "json"):
        line: Any = {"type": kind, "loc": (), "input": None}
        if ctx:
            line["ctx"] = dict(ctx)
        try:
            said = ValidationError.from_exception_data("words", [line], input_type=input_type)
        except (KeyError, TypeError, ValueError):  # a type pydantic-core does not know
            return set()
        words.add(said.errors()[0]["msg"])
    return words


def _filled(template: str, ctx: Mapping[str, Any]) -> str | None:
    try:
        return template.format_map(ctx)
    except (KeyError, IndexError, ValueError):
        return None


def _raised_in_ipaddress(cause: BaseException) -> bool:
    """Whether ``cause`` was raised by the ``ipaddress`` module itself, not by a validator
    using its exception for its own words ("'10.1.2.3' is not on db.internal")."""
    trace = cause.__traceback__
    while trace is not None and trace.tb_next is not None:
        trace = trace.tb_next
    return trace is not None and trace.tb_frame.f_code.co_filename == ipaddress.__file__


#: The exceptions of the ``ipaddress`` module, which pydantic's address types let through
#: as a ``value_error`` naming the value sent ("Expected 4 octets in '1.2.3'").
_ADDRESS_ERRORS: Final = (ipaddress.AddressValueError, ipaddress.NetmaskValueError)
#: pydantic's own checks written in Python, whose error types pydantic-core does not know:
#: the words pydantic writes for each (``{key}`` filled from the fault's ``ctx``), or a
#: pattern where they name the function checked.
_PYDANTICS_CHECKS: Final[Mapping[str, tuple[str | re.Pattern[str], ...]]] = {
    **{
        f"ip_{version}_{what}": (f"Input is not a valid IP{version} {what}",)
        for version in ("v4", "v6")
        for what in ("address", "interface", "network")
    },
    **{
        f"ip_any_{what}": (f"value is not a valid IPv4 or IPv6 {what}",)
        for what in ("address", "interface", "network")
    },
    "path_not_file": ("Path does not point to a file",),
    "path_not_directory": ("Path does not point to a directory",),
    "path_exists": ("Path already exists",),
    "zoneinfo_str": ("invalid timezone: {value}",),
    "byte_size_unit": ("could not interpret byte unit: {unit}", "Could not interpret byte unit: {unit}"),
    "base64_decode": ("Base64 decoding error: '{error}'",),
    "predicate_failed": (re.compile(r"Predicate ('[\w.<>]+' )?failed"),),
    "not_operation_failed": (re.compile(r"Not of ('[\w.<>]+' )?failed"),),
}
