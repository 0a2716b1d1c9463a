"""The values a field spec holds, and the rules they obey: sendable text, numbers a JSON
peer reads exactly, bounds in order, choice options (their accepted spellings and
normal form) distinct and uniformly titled, their titles distinct too (ignoring case and
spaces: a person tells options apart by them).

Rules: each check raises :class:`FormSchemaError` naming the field and the rule, and
knows nothing of the spec classes (:mod:`mcp_elicit.forms.fields`) beyond a name.
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple, Protocol, TypeAlias

from mcp_elicit.errors import FormSchemaError, shown_repr
from mcp_elicit.forms.formats import FORMAT_LENGTHS

__all__ = [
    "REAL_NEED",
    "SAFE_INTEGER",
    "SAFE_RANGE",
    "Named",
    "Option",
    "OptionsLike",
    "check_format_length",
    "check_options",
    "check_range",
    "check_text",
    "check_whole_range",
    "enum_options",
    "fail",
    "given_multi_default",
    "given_options",
    "humanize",
    "is_count",
    "is_real",
    "multi_default",
    "read_options",
    "normalize_options",
    "shown",
    "title_key",
]

SAFE_INTEGER = 2**53 - 1
"""The largest whole number every JSON peer reads exactly (RFC 7493, I-JSON)."""
_UNPAIRED = re.compile("[\ud800-\udfff]")


class Option(NamedTuple):
    """One choice: the ``value`` sent on the wire and the ``title`` a person reads."""

    value: str
    title: str | None = None


OptionsLike: TypeAlias = (
    Mapping[str, str] | Iterable[str] | Iterable[tuple[str, str | None]] | type[enum.Enum]
)


class Named(Protocol):
    """A field spec, as far as its checks go: a name to put in the error."""

    @property
    def name(self) -> str: ...


def fail(spec: Named, message: str) -> FormSchemaError:
    """The error for a rule ``spec`` breaks."""
    return FormSchemaError(message, field=spec.name or None)


def check_text(spec: Named, what: str, text: str) -> None:
    found = _UNPAIRED.search(text)
    if found is not None:
        raise fail(
            spec,
            f"{what} has a character that is not text (U+{ord(found[0]):04X}), "
            "which no JSON message can carry",
        )


def is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def is_real(value: object) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    if isinstance(value, int):
        return -SAFE_INTEGER <= value <= SAFE_INTEGER
    return math.isfinite(value)


def shown(value: object) -> str:
    """``repr`` for a message, a long one cut short: a very long whole number to its first
    digits, anything else to its first 60 characters (a server's megabyte of text in a
    form it sent is not repeated whole)."""
    if isinstance(value, int) and len(text := repr(value)) > 24:
        return f"{text[:12]}… ({len(text.lstrip('-'))} digits)"
    return shown_repr(value)


SAFE_RANGE = f"between {-SAFE_INTEGER} and {SAFE_INTEGER}"
REAL_NEED = f"a finite number, and a whole one must be {SAFE_RANGE} (write a larger one as a float)"


def check_range(spec: Named, lo: float | None, hi: float | None, what: str, *, counts: bool) -> None:
    test = is_count if counts else is_real
    need = "a whole number of 0 or more" if counts else REAL_NEED
    for label, value in (("minimum", lo), ("maximum", hi)):
        if value is not None and not test(value):
            raise fail(spec, f"the {label} {what} must be {need}, not {shown(value)}")
        if counts and value is not None and value > SAFE_INTEGER:  # a JSON peer may not read it
            raise fail(spec, f"the {label} {what} must be at most {SAFE_INTEGER}, not {shown(value)}")
    if lo is not None and hi is not None and lo > hi:
        raise fail(spec, f"the minimum {what} {lo} is greater than the maximum {what} {hi}")


def check_format_length(spec: Named, fmt: str, lo: int | None, hi: int | None) -> None:
    """Length bounds that leave room for an answer of the format (bounds already checked)."""
    shortest, longest = FORMAT_LENGTHS[fmt]
    if shortest == longest:
        span = f"exactly {shortest}"
    else:
        span = f"at least {shortest}" if longest is None else f"{shortest} to {longest}"
    article = "an" if fmt == "email" else "a"
    for label, bound, fits in (
        ("maximum", hi, hi is None or hi >= shortest),
        ("minimum", lo, lo is None or longest is None or lo <= longest),
    ):
        if not fits:
            raise fail(
                spec,
                f"{article} {fmt} answer is {span} characters long, so no answer fits the {label} length {bound}",
            )


def check_whole_range(spec: Named, lo: float | None, hi: float | None) -> None:
    """Integer bounds inside the safe range."""
    for label, value in (("minimum", lo), ("maximum", hi)):
        if isinstance(value, int | float) and not -SAFE_INTEGER <= value <= SAFE_INTEGER:
            raise fail(spec, f"the {label} value must be {SAFE_RANGE}, not {shown(value)}")


def read_options(spec: Named, options: object) -> tuple[Option, ...]:
    """A choice's ``options`` as (value, title) pairs; those it kept as given
    (:func:`given_options`) are refused here, naming the field."""
    if isinstance(options, tuple) and all(isinstance(option, Option) for option in options):
        return options
    return normalize_options(options, spec.name)  # type: ignore[arg-type]  # refused


def check_options(spec: Named, options: Iterable[tuple[str, str | None]]) -> None:
    options = read_options(spec, options)
    if not options:
        raise fail(spec, "a choice needs at least one option")
    seen: set[str] = set()
    for value, title in options:
        if not isinstance(value, str):
            raise fail(spec, f"option values must be strings, not {shown(value)}")
        if title is not None and not isinstance(title, str):
            raise fail(spec, f"the title of option {shown(value)} must be a string, not {shown(title)}")
        check_text(spec, f"option {shown(value)}", value)
        if title is not None:
            check_text(spec, f"the title of option {shown(value)}", title)
            if not title.strip():
                raise fail(
                    spec,
                    f"option {shown(value)} has a blank title, which a person cannot pick by; "
                    "give it words, or give no option a title",
                )
        if value in seen:
            raise fail(spec, f"option {shown(value)} is listed twice")
        seen.add(value)
    titled = {title is not None for _, title in options}
    if len(titled) > 1:
        raise fail(spec, "options must either all have titles or all have none")
    by_title: dict[str, tuple[str, str]] = {}
    for value, title in options:
        if title is None:
            continue
        first, first_title = by_title.setdefault(title_key(title), (value, title))
        if first != value:
            alike = "" if title == first_title else f" ({shown(title)} reads the same)"
            raise fail(
                spec,
                f"options {shown(first)} and {shown(value)} have the same title {shown(first_title)}{alike}, "
                "so a person cannot tell them apart; give each a title of its own",
            )


def title_key(title: str) -> str:
    """What a person tells an option's title apart by: its words, whatever their case
    and the spaces around them ("Yes" and " yes " read alike)."""
    return " ".join(title.split()).casefold()


def humanize(name: str) -> str:
    """A title from an identifier: ``GLUTEN_FREE`` and ``gluten_free`` become ``Gluten free``."""
    text = name.replace("_", " ").strip()
    if text.isupper():
        text = text.lower()
    return text[:1].upper() + text[1:]


def enum_options(enum_type: type[enum.Enum], name: str = "") -> tuple[Option, ...]:
    """Titled options from an Enum whose values are strings; titles come from member names.
    :class:`FormSchemaError` (naming the field ``name``, when given) for any other value."""
    options = []
    for member in enum_type:
        if not isinstance(member.value, str):
            raise FormSchemaError(
                f"Enum {enum_type.__name__} has the non-string value {member.value!r}; "
                "form choices are strings (use a StrEnum or an Enum of str)",
                field=name or None,
            )
        options.append(Option(member.value, humanize(member.name)))
    return tuple(options)


def normalize_options(options: OptionsLike, name: str = "") -> tuple[Option, ...]:
    """The options as (value, title) pairs; :class:`FormSchemaError` naming the field
    ``name`` (when given) for options of no shape a choice takes."""
    if isinstance(options, type) and issubclass(options, enum.Enum):
        return enum_options(options, name)
    if isinstance(options, Mapping):
        return tuple(Option(value, title) for value, title in options.items())
    if isinstance(options, str):
        raise FormSchemaError(
            f"options must be a list of strings, not the single string {options!r}", field=name
        )
    if isinstance(options, set | frozenset):  # its order is the hash seed's, not the caller's
        raise FormSchemaError(
            "options must be in an order: a list or tuple, not a set (a set's order changes "
            "from one run to the next, and with it what the person sees)",
            field=name,
        )
    if not isinstance(options, Iterable):
        raise FormSchemaError(
            "options must be a list of strings, a {value: title} mapping, (value, title) pairs or a "
            f"str Enum, not {shown(options)}",
            field=name,
        )
    out: list[Option] = []
    for item in options:
        if isinstance(item, str):
            out.append(Option(item))
        elif isinstance(item, tuple) and len(item) == 2:
            out.append(Option(item[0], item[1]))
        else:
            raise FormSchemaError(
                f"option {shown(item)} is neither a string nor a (value, title) pair", field=name
            )
    return tuple(out)


def given_options(options: OptionsLike, name: str) -> object:
    """The options of a choice being built (:func:`normalize_options`). One built with no
    name yet keeps options it cannot read as given: ``Form(size=Choice([1]))`` builds the
    Choice before the form names it, so the form refuses them, naming the field, when it
    builds the field again under its name, or checks it (:func:`check_options`)."""
    if name:
        return normalize_options(options, name)
    given: Any = options  # what normalize_options reads, perhaps nothing it takes
    if isinstance(options, set):
        given = frozenset(options)  # refused as a set, and hashable, as a spec is
    elif isinstance(options, Iterable) and not isinstance(options, str | Mapping | type | frozenset):
        given = list(options)  # read once: a generator could not be read again
    try:
        return normalize_options(given, name)
    except FormSchemaError:
        return tuple(given) if isinstance(given, list) else given  # hashable, as a spec is


def given_multi_default(default: Iterable[str] | None, name: str) -> object:
    """A multi-choice's default being built (:func:`multi_default`); with no name yet, one
    it cannot read is kept as given, for its form to refuse naming the field."""
    try:
        return multi_default(default, name)
    except FormSchemaError:
        if name:
            raise
        return frozenset(default) if isinstance(default, set) else default  # hashable, as a spec is


def multi_default(default: Iterable[str] | None, name: str = "") -> tuple[str, ...] | None:
    """A multi-choice's default as a tuple; :class:`FormSchemaError` naming the field when
    it is a single string, no list at all, or a set (in no order)."""
    if default is None:
        return None
    if isinstance(default, str) or not isinstance(default, Iterable):
        what = f"the string {default!r}" if isinstance(default, str) else shown(default)
        raise FormSchemaError(
            f"the default of a multi-choice must be a list of option values, not {what}", field=name
        )
    if isinstance(default, set | frozenset):  # its order, which the hash seed picks, would be the schema's
        raise FormSchemaError(
            "the default of a multi-choice must be in an order: a list or tuple, not a set", field=name
        )
    return tuple(default)
