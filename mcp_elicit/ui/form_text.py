"""Forms as text: labels, constraints, defaults, and typed answers read back into values, on
server text made safe to print (``server_text``). No terminal library: any text interface can use it.

Rules:

* Everything a server wrote is made inert (``clean``) and bounded (``fit``) first:
  ``server_text``'s rules (re-exported here). Options cut short the same show where they
  differ (``option_names``).
* What a person types is read per kind of field. Text is kept exactly as typed, spaces
  around it included, but text with a lone surrogate (an invalid byte from the terminal,
  a page's ``"\\ud800"``) is refused: no JSON reply can carry it. The other kinds ignore
  spaces around what was typed: numbers and integers are read exactly (a whole number
  beyond the safe range, ``-(2**53-1)..2**53-1``, or any number beyond what a float
  holds, is refused with the form's message for it, never rounded; digits of any script
  count, underscores between them do not; a minus sign, U+2212 as Swedish writes one or
  the full-width U+FF0D of a Japanese input method, is a minus (and U+FF0B a plus): this is the one reader of
  a typed number, for the terminal and the browser's page alike); booleans as
  yes/no/true/false/y/n/1/0; a choice by its value, else its number in the list, else its
  value or title ignoring case, how accents are written (NFC) and runs of spaces; a
  multi-choice as a comma-separated list of those, each named once, or ``-`` for none of
  them (an answer, unlike an empty line); choices with spaces or semicolons between them
  instead are refused, saying how to write them ("1, 2"). Empty, or only spaces, means
  "no answer" (the field's default applies when it has one; a required field without one
  is "required"). The value read is then checked with the form's own ``check_field``, so
  the message is the one the server would give.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections import Counter
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from typing import Final

from mcp_elicit.core.client_inputs import ElicitationRequest, unsendable_character
from mcp_elicit.forms import Boolean, Choice, FieldSpec, Integer, MultiChoice, Number, Option, String
from mcp_elicit.forms.fields import SAFE_INTEGER, humanize
from mcp_elicit.forms.foreign import NO_EXTRAS, FieldExtras
from mcp_elicit.forms.validate import Invalid, compile_field
from mcp_elicit.ui.server_text import (
    OPTION_ABOUT_MAX,
    SAID_LINES,
    SAID_MAX,
    TITLE_MAX,
    URL_MAX,
    clean,
    fit,
    url_shown,
)

__all__ = [
    "OPTION_ABOUT_MAX",
    "SAID_LINES",
    "SAID_MAX",
    "TITLE_MAX",
    "URL_MAX",
    "Parsed",
    "carried_by",
    "clean",
    "constraints",
    "default_text",
    "fit",
    "label",
    "option_about",
    "option_names",
    "option_lines",
    "parse_answer",
    "position",
    "show_value",
    "typed",
    "url_shown",
]

#: Typed for a multi-choice: none of the options (unless an option is called that).
NONE_TYPED: Final = "-"
_LARGEST_FLOAT: Final = sys.float_info.max
#: What a person may put between choices instead of a comma: spaces, a semicolon.
_BETWEEN: Final = re.compile(r"\s*;\s*|\s+")
#: Minus signs other than the hyphen-minus "-" that a number may be written with.
_MINUS: Final = str.maketrans({"\u2212": "-", "\uff0d": "-", "\uff0b": "+"})  # and the full-width plus
_TRUE: Final = frozenset({"y", "yes", "true", "1", "on"})
_FALSE: Final = frozenset({"n", "no", "false", "0", "off"})
_FORMAT_HINTS: Final = {
    "email": "an email address",
    "uri": "a full address, like https://example.com/page",
    "date": "a date, YYYY-MM-DD",
    "date-time": "a date and time with a time zone, like 2026-12-31T18:30:00Z",
}


def label(spec: FieldSpec) -> str:
    """What to call the field: its title, else its name made readable (``TITLE_MAX``)."""
    return fit(spec.title or humanize(spec.name), TITLE_MAX, length=True)


def option_names(options: Sequence[Option], empty: str = "", *, number: bool = True) -> list[str]:
    """What each option is called (its title, else its value; ``empty`` for ""), made inert,
    within about ``TITLE_MAX`` characters: titles cut short alike show where they differ
    ("A seat… by the window…"); any still alike (or alike once made inert) are numbered
    ("Yes (choice 2)") when ``number``. A person must tell them apart."""
    whole = [(o.title if o.title is not None else o.value) or empty for o in options]
    shown = [fit(text, TITLE_MAX, length=True) for text in whole]
    alike: dict[str, list[int]] = {}
    for n, text in enumerate(shown):
        alike.setdefault(text, []).append(n)
    for same in alike.values():
        order = sorted(same, key=whole.__getitem__)  # the closest to each is beside it
        for k, n in enumerate(order):
            beside = [whole[m] for m in order[max(k - 1, 0) : k + 2] if m != n and whole[m] != whole[n]]
            if beside and len(whole[n]) > TITLE_MAX:
                shown[n] = _where_apart(whole[n], max(_common(whole[n], b) for b in beside))
    times = Counter(shown)
    return [f"{text} (choice {n})" if number and times[text] > 1 else text for n, text in enumerate(shown, 1)]


def _common(a: str, b: str) -> int:
    """How many characters ``a`` and ``b`` begin with alike."""
    apart = (n for n, (x, y) in enumerate(zip(a, b, strict=False)) if x != y)
    return next(apart, min(len(a), len(b)))


def _where_apart(text: str, at: int) -> str:
    """``text`` cut short to its start and the part around character ``at``."""
    head, room = TITLE_MAX // 4, TITLE_MAX // 2
    start = max(at - room // 2, head)
    part = " ".join(clean(text[start : start + room]).split())
    tail = "…" if start + room < len(text) else ""
    return f"{' '.join(clean(text[:head]).split())}… {part}{tail} ({len(text)} characters)"


def _num(value: float) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return str(value)


def _option(option: Option, name: str) -> str:
    """An option as listed: its ``name`` (``option_names``) and value, once ("Yes (a)"; a
    title already ending in " (a)", as two options titled "Yes" read, is not followed by it)."""
    if option.title is None or option.title.endswith(f" ({option.value})"):
        return name
    return f"{name} ({fit(option.value, TITLE_MAX, length=True)})"


def constraints(spec: FieldSpec, extras: FieldExtras = NO_EXTRAS) -> list[str]:
    """What the field accepts, in words (without its choices; see ``option_lines``), with
    what it asks beyond its spec (``FormSchema.extras``: exclusive bounds, a step)."""
    out: list[str] = ["required" if spec.required else "optional"]
    if isinstance(spec, String):
        if spec.format is not None:
            out.append(_FORMAT_HINTS[spec.format])
        lo, hi = spec.min_length, spec.max_length
        if lo is not None and lo == hi:
            out.append(f"exactly {lo} characters")
        elif lo and hi is not None:
            out.append(f"{lo} to {hi} characters")
        elif lo:
            out.append(f"at least {lo} characters")
        elif hi is not None:
            out.append(f"at most {hi} characters")
    elif isinstance(spec, Integer | Number):
        out.append(_number_range(spec, extras))
        if extras.multiple_of is not None:
            out.append(f"a multiple of {_num(extras.multiple_of)}")
    elif isinstance(spec, Boolean):
        out.append("yes or no")
    elif isinstance(spec, Choice):
        out.append("pick one: its number, value or title")
    else:
        lo, hi = spec.min_items, spec.max_items
        if lo is not None and lo == hi:
            count = f"exactly {lo}"
        elif lo and hi is not None:
            count = f"{lo} to {hi}"
        elif lo:
            count = f"at least {lo}"
        elif hi is not None:
            count = f"at most {hi}"
        else:
            count = "any number"
        none = f", or {NONE_TYPED} for none" if not lo else ""
        out.append(f"pick {count}: numbers, values or titles, separated by commas{none}")
    return out


def _number_range(spec: Integer | Number, extras: FieldExtras) -> str:
    """The numbers a field takes, in words: an exclusive bound, which is kept only when
    stricter than the inclusive one, is said in its place; an integer field's bounds are
    the whole numbers they allow ("from 1 to 3" for 0.5 and 3.7), as its check says."""
    kind = "a whole number" if isinstance(spec, Integer) else "a number"
    lo, hi = spec.whole_bounds if isinstance(spec, Integer) else (spec.minimum, spec.maximum)
    inclusive = extras.more_than is None and extras.less_than is None
    if inclusive and lo is not None and hi is not None:
        return f"{kind} from {_num(lo)} to {_num(hi)}"
    ends: list[str] = []
    if extras.more_than is not None:
        ends.append(f"more than {_num(extras.more_than)}")
    elif lo is not None:
        ends.append(f"at least {_num(lo)}")
    if extras.less_than is not None:
        ends.append(f"less than {_num(extras.less_than)}")
    elif hi is not None:
        ends.append(f"at most {_num(hi)}")
    return f"{kind}, {' and '.join(ends)}" if ends else kind


def option_lines(spec: FieldSpec) -> list[str]:
    """The numbered choices of a choice field (empty for other kinds)."""
    if not isinstance(spec, Choice | MultiChoice):
        return []
    names = option_names(spec.options, number=False)  # the lines are numbered
    return [
        f"{i}. {_option(o, name)}" for i, (o, name) in enumerate(zip(spec.options, names, strict=True), 1)
    ]


def option_about(spec: FieldSpec, extras: FieldExtras = NO_EXTRAS) -> list[str]:
    """What each option of a choice field is about, beside ``option_lines`` ("" for an
    option without a description): its description (``FormSchema.extras``) on one line,
    made inert, and at most ``OPTION_ABOUT_MAX`` characters ("…" ends one cut short)."""
    if not isinstance(spec, Choice | MultiChoice):
        return []
    out: list[str] = []
    for option in spec.options:
        out.append(fit(extras.option_descriptions.get(option.value, ""), OPTION_ABOUT_MAX))
    return out


def show_value(spec: FieldSpec, value: object) -> str:
    """An answer as a person reads it (option titles for choices), at most ``TITLE_MAX``
    characters of each."""
    if value is None:
        return "(no answer)"
    if isinstance(spec, Boolean) and isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(spec, Choice) and isinstance(value, str):
        return _names(spec).get(value) or fit(value, TITLE_MAX, length=True)
    if isinstance(spec, MultiChoice) and isinstance(value, list | tuple):
        names = _names(spec)  # once per field: a list may tick every option
        return ", ".join(names.get(str(v)) or fit(str(v), TITLE_MAX, length=True) for v in value) or "(none)"
    if isinstance(value, float):
        return _num(value)
    return fit(str(value), TITLE_MAX, length=True)


def _names(spec: Choice | MultiChoice) -> dict[str, str]:
    """What each option is called (``option_names``), by value (the first of a value)."""
    found: dict[str, str] = {}
    for option, name in zip(spec.options, option_names(spec.options), strict=True):
        found.setdefault(option.value, name)
    return found


def default_text(spec: FieldSpec) -> str:
    """The text a prompt starts with: the default, written as a person would type it
    (see ``typed``); empty for a default of no choices, or of text longer than
    ``TITLE_MAX`` (a prompt is drawn again at every key): an empty line gives it too."""
    default = list(spec.default) if isinstance(spec.default, tuple) else spec.default
    if default == [] or (isinstance(default, str) and len(default) > TITLE_MAX):
        return ""
    return typed(spec, default)


def typed(spec: FieldSpec, value: object) -> str:
    """``value`` written as a person would type it for ``spec``, to start a prompt with.

    A prompt shows its text as it is, so server text that ``clean`` would change (an
    escape, a bidirectional override) never goes in: a choice is then written as its
    number in the list (as is one whose value has a comma, in a multi-choice, or spaces
    around it, or longer than ``TITLE_MAX``), each way only if it reads back as that
    choice (``_typed_choice``), and other text is left out (an empty answer takes the
    default), as is a multi-choice with any choice none of them can write."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(spec, Choice | MultiChoice):
        picked = value if isinstance(value, list | tuple) else [value]
        if not picked:
            return NONE_TYPED
        written = [_typed_choice(spec, str(v)) for v in picked]
        return "" if "" in written else ", ".join(written)  # never fewer choices than given
    if isinstance(value, float):
        return _num(value)
    text = str(value)
    return text if clean(text) == text else ""


def _typed_choice(spec: Choice | MultiChoice, value: str) -> str:
    """A choice as the person reads it in the list: its title, else its number, else its
    value (without a title: its value, else its number), the first that can start a prompt
    and reads back as this choice (a number can be another choice's value, read first);
    "" when none can."""
    option = next((o for o in spec.options if o.value == value), None)
    number = next((str(n) for n, o in enumerate(spec.options, 1) if o.value == value), None)
    if option is not None and option.title is not None:
        ways = [option.title, number, value]
    else:
        ways = [value, number]
    for text in ways:
        if text is not None and _typable(spec, text) and _pick(spec.options, text) == value:
            return text
    return ""


def _typable(spec: Choice | MultiChoice, text: str) -> bool:
    """Whether ``text`` can start a prompt for ``spec`` as it is (see ``typed``)."""
    as_is = bool(text) and len(text) <= TITLE_MAX and clean(text) == text and text.strip() == text
    return as_is and not (isinstance(spec, MultiChoice) and "," in text)


class Parsed:
    """A typed answer read back: ``value`` (None for no answer) or ``problem``; ``how``:
    how to type it instead, where that is the terminal's own way (a number with a point
    before its decimals: a web page reads the browser language's mark)."""

    __slots__ = ("how", "problem", "value")

    def __init__(self, value: object = None, problem: str | None = None, how: str | None = None) -> None:
        self.value = value
        self.problem = problem
        self.how = how

    def __repr__(self) -> str:
        return f"Parsed({self.value!r}, problem={self.problem!r})"


def parse_answer(spec: FieldSpec, text: str) -> Parsed:
    """Read what was typed for ``spec``; the value is not yet checked against the form.

    Text is kept exactly as typed, spaces around it included; only the other kinds ignore
    spaces around what was typed. Nothing but spaces is no answer, for every kind."""
    if not text.strip():
        return Parsed(None)
    if isinstance(spec, String):
        # a terminal's invalid UTF-8 byte (read with surrogateescape), or a page's "\ud800"
        unpaired = unsendable_character(text)
        if unpaired is not None:  # no JSON can carry it: the answer could never be sent
            return Parsed(problem=f"has a character that is not text ({clean(unpaired)}); type it again")
        return Parsed(text)
    text = text.strip()
    if isinstance(spec, Integer | Number):
        return _parse_number(spec, text)
    if isinstance(spec, Boolean):
        word = text.lower()
        if word in _TRUE:
            return Parsed(True)
        if word in _FALSE:
            return Parsed(False)
        return Parsed(problem="must be yes or no: type y or n")
    if isinstance(spec, Choice):
        value = _pick(spec.options, text)
        if value is None:
            return Parsed(problem=f"{text!r} is not one of the choices; type its number, value or title")
        return Parsed(value)
    if text == NONE_TYPED and _pick(spec.options, text) is None:
        return Parsed([])
    chosen: list[str] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        value = _pick(spec.options, item)
        if value is None:
            apart = _apart(spec.options, item)
            how = f"separate choices with commas: {apart}" if apart else "type numbers, values or titles"
            return Parsed(problem=f"{item!r} is not one of the choices; {how}")
        if value in chosen:  # "1, a": one choice named twice, by its number and its value
            return Parsed(problem=f"names {fit(value, TITLE_MAX)!r} more than once: type each choice once")
        chosen.append(value)
    return Parsed(chosen)


def _apart(options: Sequence[Option], item: str) -> str | None:
    """``item`` as the choices it names with spaces or semicolons between them ("1 2"),
    written as a multi-choice takes them ("1, 2"); None unless it names several that way,
    each once ("1 1" so written would only be refused again, for naming one twice)."""
    parts = _BETWEEN.split(item.strip())
    picked = [_pick(options, part) for part in parts]
    if len(parts) > 1 and None not in picked and len(set(picked)) == len(picked):
        return ", ".join(parts)
    return None


def _parse_number(spec: Integer | Number, text: str) -> Parsed:
    """``text`` read exactly (``Decimal``: ``int`` refuses over 4300 digits and ``float``
    rounds), then made an ``int`` (a whole number within the safe range) or a ``float``;
    one no ``float`` holds (it would arrive as another number) is refused, saying which."""
    whole = isinstance(spec, Integer)
    try:
        if "_" in text:  # Decimal reads "1_0" as 10, a Python literal no person means
            raise InvalidOperation
        exact = Decimal(text.translate(_MINUS))  # a minus sign is a minus
    except InvalidOperation:
        return Parsed(
            problem="must be a whole number" if whole else "must be a number",
            how="type it like 1000, with no commas or spaces"
            if whole
            else "type it like 1000 or 1.5, with a point before any decimals and no commas or spaces",
        )
    if not exact.is_finite():
        return Parsed(problem="must be a finite number")
    integral = exact == exact.to_integral_value()
    if whole and not integral:
        return Parsed(problem="must be a whole number")
    size = exact.copy_abs()
    exponent = exact.as_tuple().exponent  # an int: the number is finite
    written_whole = whole or (isinstance(exponent, int) and exponent >= 0)  # "3", not "3.0"
    if integral and size <= SAFE_INTEGER and written_whole:
        return Parsed(int(exact))
    if whole or size > _LARGEST_FLOAT:
        return _beyond(spec, negative=exact.is_signed())
    carried = float(exact)
    # A JSON number is a double: refused when it is another number than the one typed,
    # both exactly and in its shortest form. "0.1" and the exact value of that double
    # (0.1000000000000000055511151231257827...) arrive as typed; "1.00000000000000001" as 1.0.
    if Decimal(carried) != exact and Decimal(repr(carried)) != exact:
        return Parsed(
            problem=f"has more digits than a number can carry: it would arrive as {carried!r}; "
            "type that, or fewer digits"
        )
    return Parsed(carried)


def _beyond(spec: Integer | Number, *, negative: bool) -> Parsed:
    """The problem with a number too large to be an answer (beyond the safe range for a whole
    number, beyond what a float holds): the form's own message for the largest answer past
    that end (its bound, or the safe range), else the range a float holds."""
    edge = (SAFE_INTEGER + 1) if isinstance(spec, Integer) else _LARGEST_FLOAT
    found = compile_field(spec)(-edge if negative else edge)
    if isinstance(found, Invalid):
        return Parsed(problem=found.message)
    return Parsed(problem=f"must be between {-_LARGEST_FLOAT!r} and {_LARGEST_FLOAT!r}")


def position(text: str, count: int) -> int | None:
    """The number typed, when it is one of 1 to ``count`` (a place in a list), else None.

    Only decimal digits count (``str.isdecimal``: "²" is a digit but no number ``int``
    reads), and at most 20 of them (``int`` refuses thousands of digits)."""
    if not text.isdecimal() or len(text) > 20:
        return None
    number = int(text)
    return number if 1 <= number <= count else None


def _pick(options: Sequence[Option], text: str) -> str | None:
    for option in options:
        if option.value == text:
            return option.value
    at = position(text, len(options))
    if at is not None:
        return options[at - 1].value
    folded = _folded(text)
    for option in options:
        if _folded(option.value) == folded or _folded(option.title or "") == folded:
            return option.value
    return None


def _folded(text: str) -> str:
    """``text`` as compared ignoring case, how its accents are written (a letter and a
    mark, or one character: NFC) and runs of spaces (the list shows them as one), as it
    looks."""
    return " ".join(unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).casefold()).split())


def carried_by(request: ElicitationRequest) -> str:
    """What carries an answer given now to the server, when that is still to come
    (``ElicitationRequest.sent_with``), as both answerers say it: at 2026-07-28 "the retry
    of tools/call NAME" or "the task's next update", sent once the round is answered, and
    which may still fail; "" at 2025-11-25, where the answer is the response to the
    server's request and goes at once ("Sent")."""
    if request.sent_with == "retry":
        return f"the retry of {fit(str(request.origin), TITLE_MAX, length=True)}"
    if request.sent_with == "tasks/update":
        return "the task's next update"
    return ""
