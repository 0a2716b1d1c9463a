"""Options shared by the commands that talk to a server (``check``, ``call``, ``prompt``,
``read``), and reading a TARGET and ``NAME=VALUE`` arguments from them.

Rules: ``--header``, ``--timeout``, ``--protocol``, ``--json``, ``--trace`` and the sign-in
options (``--no-login``, ``--client-id``, ``--client-secret``, ``--callback-port``:
``cli.sign_in``) mean the same everywhere. ``NAME=VALUE`` is text unless the tool's input schema says the property is not
a string (its ``type``, the values of its ``enum`` or ``const``, or every branch of its
``anyOf`` / ``oneOf``, as ``Optional[int]`` gives; then VALUE is read as JSON); ``NAME:=JSON`` is always JSON; ``--args`` (once) gives a
JSON object, beside which ``NAME=VALUE`` pairs give other names: a name given twice (both
ways, or by two pairs) is a usage error (which one was meant?), never one silently overriding the other. An argument name the input schema
does not know (not in ``properties``, matching no ``patternProperties``) is refused before
the call, naming the closest name and those the tool takes (``output.listed``: twenty,
and how many more), when the schema refuses it:
``additionalProperties: false``, or a ``required`` property is missing beside it (the schema
refuses the call either way, and the unknown name is likely its misspelling); otherwise
JSON Schema allows it (``additionalProperties`` true or absent), so it is sent, with a
warning. A name in ``required`` is one the tool takes, listed in ``properties`` or not. A
schema that lists no name and allows others (``{"type": "object"}``, a map) questions none,
nor does one that composes its properties (``allOf``, ``$ref``...). An argument an object
schema (``"type": "object"``) names in its top-level ``required`` and the call leaves out
is refused before the call too, naming each with its JSON types and the start of its
description, and how to give it (``NAME=VALUE``; in ``--args`` for a name no pair
carries: empty, holding "=", ending in ":") (the schema refuses such a call whatever
else it says); one whose property
has a ``default`` is not (a server may fill it), nor is anything in a schema of another
``type``, or none.
JSON is strict: ``NaN``,
``Infinity``, numbers beyond a double (``1e400``) and integers beyond 64 bits are usage
errors, not sent. ``--timeout`` is a finite number of
seconds more than 0 (not ``nan`` or ``inf``).
"""

from __future__ import annotations

import argparse
import difflib
import itertools
import json
import math
import re
import shlex
from collections.abc import Mapping, Sequence
from typing import Any, Final

from mcp_elicit.cli import output
from mcp_elicit.cli.sign_in import add_sign_in_options, sign_in_from_args
from mcp_elicit.cli.targets import Target, parse_target
from mcp_elicit.errors import UsageError
from mcp_elicit.wire.versions import SUPPORTED

__all__ = [
    "Once",
    "add_connection_options",
    "client_options",
    "missing_names",
    "parse_args_target",
    "parse_pairs",
    "unknown_names",
]


class Once(argparse.Action):
    """An option given at most once: a second would replace the first without a word
    (``--args``: the later JSON object, whole)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option: str | None = None,
    ) -> None:
        if getattr(namespace, self.dest, None) is not None:
            raise argparse.ArgumentError(self, "given twice: give it once")
        setattr(namespace, self.dest, values)


def add_connection_options(parser: argparse.ArgumentParser, *, timeout: float) -> None:
    parser.add_argument(
        "-H",
        "--header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="an HTTP header for every request (repeatable); 'Authorization: Bearer TOKEN' uses that token "
        "and does not sign in",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=timeout,
        metavar="SECONDS",
        help=f"network time allowed per request; time spent answering questions does not count (default {timeout:g})",
    )
    parser.add_argument(
        "--protocol",
        action="append",
        choices=SUPPORTED,
        metavar="REVISION",
        help=f"offer only this protocol revision (repeatable; default all: {', '.join(SUPPORTED)})",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout, for machines")
    parser.add_argument(
        "--trace", action="store_true", help="print every JSON-RPC message on stderr (requestState shortened)"
    )
    add_sign_in_options(parser)


def parse_args_target(
    args: argparse.Namespace,
    url: str | None,
    *,
    stdio_usage: str = "check --",
    then: Sequence[str] | None = None,
) -> Target:
    return parse_target(url, args.server_command, args.header, stdio_usage=stdio_usage, then=then)


def client_options(args: argparse.Namespace, target: Target) -> dict[str, Any]:
    if not math.isfinite(args.timeout):
        # float() reads "nan" and "inf", which would wait forever
        raise UsageError(f"--timeout must be a finite number of seconds more than 0, not {args.timeout}")
    if args.timeout <= 0:
        raise UsageError("--timeout must be more than 0 seconds")
    return {
        "timeout": args.timeout,
        "versions": list(args.protocol) if args.protocol else None,
        "trace": output.Tracer() if args.trace else None,
        "sign_in": sign_in_from_args(args, target),
    }


def parse_pairs(
    pairs: Sequence[str], *, base: str | None = None, schema: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Arguments from ``--args`` JSON (``base``) and ``NAME=VALUE`` / ``NAME:=JSON`` pairs."""
    out: dict[str, Any] = {}
    if base is not None:
        try:
            loaded = _loads(base)
        except json.JSONDecodeError as exc:
            raise UsageError(f"--args is not valid JSON: {exc}") from None
        except _NotANumber as exc:
            raise UsageError(f"--args: {exc}") from None
        if not isinstance(loaded, dict):
            raise UsageError("--args must be a JSON object of argument name to value")
        out.update(loaded)
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    props = props if isinstance(props, Mapping) else {}
    given = dict.fromkeys(out, "in --args")  # where each name was given
    for at, pair in enumerate(pairs):
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise UsageError(
                f"arguments are NAME=VALUE or NAME:=JSON, not {pair!r}{_split_by_spaces(pairs, at)}"
            )
        bare = name.removesuffix(":")
        if bare in given:
            raise UsageError(
                f"the argument {bare!r} is given twice, {given[bare]} and as {name}=...; give it once"
            )
        given[bare] = f"as {name}=..."
        if name.endswith(":"):
            out[name[:-1]] = _json(name[:-1], value)
            continue
        kinds = _kinds(props.get(name))
        if kinds is None or "string" in kinds:
            out[name] = value
        else:
            out[name] = _json(name, value, typed=kinds)
    return out


#: Keywords by which a schema takes properties its ``properties`` do not list.
_COMPOSED = ("allOf", "anyOf", "oneOf", "$ref", "$dynamicRef", "if", "dependentSchemas")


def unknown_names(arguments: Mapping[str, Any], schema: Mapping[str, Any] | None, tool: str) -> str:
    """A warning about argument names the tool's input ``schema`` does not list, or "";
    a ``UsageError`` instead when the schema refuses them (the module's rules)."""
    if schema is None or any(key in schema for key in _COMPOSED):
        return ""
    props = schema.get("properties")
    required = schema.get("required")
    named = [str(name) for name in props] if isinstance(props, Mapping) else []
    # a required name is one too, listed in properties or not
    needs = [n for n in required if isinstance(n, str)] if isinstance(required, list) else []
    known = named + [n for n in needs if n not in named]
    closed = schema.get("additionalProperties") is False
    if not known and not closed and "properties" not in schema:  # any names: a map the tool reads
        return ""
    patterns = schema.get("patternProperties")
    unknown = [
        name
        for name in arguments
        if name not in known and not (isinstance(patterns, Mapping) and _matches(name, patterns))
    ]
    if not unknown:
        return ""
    missing = [n for n in needs if n not in arguments]
    listed = ", ".join(repr(name) for name in unknown)
    what = f"{tool} has no argument {listed}" if len(unknown) == 1 else f"{tool} has no arguments {listed}"
    close = difflib.get_close_matches(unknown[0], known, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    takes = f"; it takes: {output.listed(known)}" if known else "; it takes no named arguments"
    if closed:
        raise UsageError(f"{what}{hint}{takes}")
    if missing:
        needed = f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} required"
        raise UsageError(f"{what}{hint}{takes}; {needed}")
    listing = takes if known else "; the schema lists none"
    return f"{what} in its input schema{hint}{listing}; sent anyway, as the schema allows other names"


#: The most characters of a property's description a missing argument's hint shows.
_HINT_MAX = 60


def missing_names(arguments: Mapping[str, Any], schema: Mapping[str, Any] | None, tool: str) -> None:
    """A ``UsageError`` naming the arguments the tool's input ``schema`` requires and the
    call leaves out, with what the schema says each is; nothing when the case is not clear
    (the module's rules)."""
    if schema is None or schema.get("type") != "object" or not isinstance(schema.get("required"), list):
        return
    props = schema.get("properties")
    props = props if isinstance(props, Mapping) else {}
    missing = [
        name
        for name in dict.fromkeys(n for n in schema["required"] if isinstance(n, str))
        if name not in arguments and not (isinstance(props.get(name), Mapping) and "default" in props[name])
    ]
    if not missing:
        return
    shown = [f"{output.said(name)}{_hint(props.get(name))}" for name in missing[: output.NAMES_LISTED]]
    more = len(missing) - output.NAMES_LISTED
    listed = ", ".join(shown) + (f" and {more} more" if more > 0 else "")
    one = len(missing) == 1
    shown_names = missing[:3]
    # "a=b=VALUE" would give a, "x:=VALUE" x as JSON, "=VALUE" nothing: --args carries any name
    in_args = [name for name in shown_names if not _pair_carries(name)]
    ways = [f"{output.said(name)}=VALUE" for name in shown_names if _pair_carries(name)]
    if in_args:
        members = ", ".join(f"{output.said(json.dumps(name))}: VALUE" for name in in_args)
        ways.append(f"--args '{{{members}}}'")
    give = " ".join(ways) + (" ..." if len(missing) > 3 else "")
    raise UsageError(
        f"{tool} needs the argument{'' if one else 's'} {listed}, which its input schema requires; "
        f"give {'it' if one else 'them'} as {give}"
    )


def _split_by_spaces(pairs: Sequence[str], at: int) -> str:
    """What the shell's splitting of one argument made of ``pairs[at]``, a word that is no
    pair: spaces around ``=`` (``restaurant = noma``), or a value of several words left
    unquoted (``restaurant=Le Bernardin``), said as an "if": the word may as well be a name
    left without its value (``party=4 restaurant``); "" when neither shows."""
    word = pairs[at]
    before = pairs[at - 1] if at > 0 else ""
    after = pairs[at + 1] if at + 1 < len(pairs) else ""
    if word.startswith("=") or before.endswith("=") or after.startswith("="):
        return " (no spaces around =: each argument is one word, NAME=VALUE; quote a value with spaces, NAME='two words')"
    if "=" in before and "=" not in word:  # or a name given no value (party=4 restaurant): "if"
        words = [before, *itertools.takewhile(lambda w: "=" not in w, pairs[at:])]  # all of it
        return f" (if it goes on the value before it, quote them as one word: {shlex.quote(' '.join(words))})"
    return ""


def _pair_carries(name: str) -> bool:
    """Whether ``NAME=VALUE`` gives the argument ``name`` (a pair splits at its first "=",
    and a name ending in ":" reads as ``NAME:=JSON``)."""
    return bool(name) and "=" not in name and not name.endswith(":")


def _hint(prop: Any) -> str:
    """What the input schema says of a property, for a person to give it: " (integer: the
    booking to cancel)", its JSON types and the start of its description; "" for nothing."""
    kinds = _kinds(prop)
    said = " or ".join(kind for _, kind in _JSON_KINDS if kind in kinds) if kinds else ""
    about = prop.get("description") if isinstance(prop, Mapping) else None
    if isinstance(about, str) and about.strip():
        about = output.fit(about, _HINT_MAX)
        said = f"{said}: {about}" if said else about
    return f" ({said})" if said else ""


def _matches(name: str, patterns: Mapping[str, Any]) -> bool:
    for pattern in patterns:
        try:
            if re.search(str(pattern), name):
                return True
        except re.error:  # a pattern Python does not read: the name may match it
            return True
    return False


_JSON_KINDS: tuple[tuple[type, str], ...] = (
    (bool, "boolean"),
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (type(None), "null"),
    (list, "array"),
    (dict, "object"),
)


#: Each JSON type as a sentence names one, and a value of it as a shell word gives it.
_A_KIND: Final = {
    "boolean": "a boolean",
    "integer": "an integer",
    "number": "a number",
    "string": "a string",
    "array": "an array",
    "object": "an object",
}
_EXAMPLES: Final = {
    "boolean": "true",
    "integer": "3",
    "number": "2.5",
    "null": "null",
    "array": "'[...]'",
    "object": "'{...}'",
}


def _kinds(prop: Any) -> set[str] | None:
    """The JSON types a property allows: its ``type``, else those of its ``enum`` or
    ``const`` values, else the union of its ``anyOf`` / ``oneOf`` branches; None when the
    schema does not say (then VALUE is text)."""
    if not isinstance(prop, Mapping):
        return None
    kind = prop.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {k for k in kind if isinstance(k, str)}
    values = prop.get("enum") if isinstance(prop.get("enum"), list) else None
    if values is None and "const" in prop:
        values = [prop["const"]]
    if values is not None:
        return {k for k in map(_kind_of, values) if k is not None} or None
    branches = [b for key in ("anyOf", "oneOf") if isinstance(prop.get(key), list) for b in prop[key]]
    found: set[str] = set()
    for branch in branches:
        more = _kinds(branch)
        if more is None:  # a branch that says nothing allows text too
            return None
        found |= more
    return found or None


def _kind_of(value: Any) -> str | None:
    return next((name for t, name in _JSON_KINDS if isinstance(value, t)), None)


class _NotANumber(ValueError):
    pass


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise _NotANumber(f"{text} is not a number JSON can carry (too large for a double)")
    return number


def _in_range(text: str) -> int:
    # more than 20 digits is past 64 bits, and past about 4300 int() refuses to read
    number = int(text) if len(text) <= 21 else 2**64
    if not -(2**63) <= number < 2**64:
        shown = text if len(text) <= 24 else f"{text[:20]}... ({len(text)} characters)"
        raise _NotANumber(
            f"{shown} is not a number JSON can carry here (more than 64 bits); quote it as text"
        )
    return number


def _no_constant(text: str) -> Any:
    raise _NotANumber(f"{text} is not a number JSON can carry (JSON has no NaN or Infinity)")


def _loads(text: str) -> Any:
    """``json.loads``, refusing what Python reads but JSON does not have: ``NaN``,
    ``Infinity``, and numbers too large for a double (``1e400``), which would go on the
    wire as ``Infinity``, not JSON; and integers beyond 64 bits, which the wire's encoder
    cannot write."""
    return json.loads(text, parse_float=_finite, parse_int=_in_range, parse_constant=_no_constant)


def _json(name: str, value: str, *, typed: set[str] | None = None) -> Any:
    """``value`` read as JSON; ``typed``, the JSON types the tool's input schema allows
    (text not among them), when that is why it is read so: quoting it as text would not help."""
    try:
        return _loads(value)
    except _NotANumber as exc:
        raise UsageError(f"the value of {name!r}: {exc}") from None
    except json.JSONDecodeError:
        if typed is not None:
            kinds = sorted(
                (kind for _, kind in _JSON_KINDS if kind in typed), key=lambda kind: kind == "null"
            )
            if not kinds:  # "type": "int", say: no JSON type to name, nor to give an example of
                typed_as = " or ".join(output.said(kind) for kind in sorted(typed))
                raise UsageError(
                    f"{name!r} is typed {typed_as} in the tool's input schema, which is no JSON type, and "
                    f"{value!r} is not JSON: give it as JSON (--trace shows the tool's inputSchema)"
                ) from None
            takes = " or ".join(_A_KIND.get(kind, kind) for kind in kinds)
            example = _EXAMPLES.get(kinds[0], "...")
            raise UsageError(
                f"{name!r} takes {takes} (the tool's input schema says so), which {value!r} is not: "
                f"give it as JSON, such as {name}={example} (--trace shows the tool's inputSchema)"
            ) from None
        raise UsageError(
            f"the value of {name!r} must be JSON here ({value!r} is not); quote text as {name}:='\"...\"'"
        ) from None
