"""What the commands print: results, the wire trace, JSON.

Rules: results and reports go to stdout, everything else (trace, rounds, errors) to
stderr. ``--json`` prints exactly one JSON object on stdout. Human output is plain text,
coloured only when stdout is a terminal and ``NO_COLOR`` is unset. Anything a server
wrote is passed through ``ui.form_text.clean`` first, so it cannot act on the terminal.
Everything is written as the stream's encoding can show it (``write``, ``print_json``): on
a terminal that can only show ASCII (the C locale, without Python's UTF-8 mode) the
client's own marks in ASCII and any other character by its code, JSON with ``\\uXXXX``
escapes; never a ``UnicodeEncodeError``. The trace shortens ``requestState`` (an opaque
sealed blob) to its start and length.
What nests objects and arrays more than ``MAX_SHOWN_DEPTH`` (500) levels deep (a JSON
reader takes 1024) is shown as ``NESTED``, and refused for ``--json``, on every Python:
how deep ``json.dumps`` and ``repr`` go differs by version (3.11 stops short of 1000
levels, 3.13 does not), and nobody reads 500 levels of brackets.
"""

from __future__ import annotations

import json
import os
import sys
import unicodedata
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal, TextIO

from mcp_elicit.core.quoting import quoted
from mcp_elicit.ui.form_text import SAID_MAX, URL_MAX, clean, fit
from mcp_elicit.ui.server_text import fit_quoted, for_encoding
from mcp_elicit.wire.jsonrpc import nests_past

if TYPE_CHECKING:
    from mcp_elicit.cli.targets import Target
    from mcp_elicit.errors import CliError

__all__ = [
    "HEARD_CHARS",
    "HEARD_COUNT",
    "NAMES_LISTED",
    "NESTED",
    "SAID_MAX",
    "URL_MAX",
    "Heard",
    "Paint",
    "Tracer",
    "print_failure",
    "print_json",
    "print_result",
    "fit",
    "fit_quoted",
    "listed",
    "said",
    "shorten_state",
    "shown_json",
    "sign_in_text",
    "write",
]

_STATE_KEEP = 16
#: The most notifications ``call --json`` keeps, and the most characters of their JSON
#: (``Heard``).
HEARD_COUNT: Final = 1000
HEARD_CHARS: Final = 8_000_000


class Paint:
    """ANSI styles when ``stream`` is a terminal and ``NO_COLOR`` is unset."""

    def __init__(self, stream: TextIO) -> None:
        self.on = stream.isatty() and not os.environ.get("NO_COLOR")

    def __call__(self, text: str, style: str) -> str:
        if not self.on:
            return text
        codes = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "cyan": "36"}
        return f"\x1b[{';'.join(codes[s] for s in style.split())}m{text}\x1b[0m"


#: What is shown for a value nested too deeply to write out.
NESTED: Final = "(nested too deeply to show)"
#: The deepest nesting of objects and arrays written out.
MAX_SHOWN_DEPTH: Final = 500


def shown_json(value: object, **options: Any) -> str:
    """``json.dumps(value, **options)``, or ``NESTED`` when it is too deep for that."""
    if nests_past(value, MAX_SHOWN_DEPTH):
        return NESTED
    try:
        return json.dumps(value, **options)
    except RecursionError:
        return NESTED


class Heard:
    """What the server said while a call ran, for ``--json``'s ``notifications``: the first
    notifications, whole, up to ``HEARD_COUNT`` of them and ``HEARD_CHARS`` of their JSON;
    once one does not fit (or is nested too deeply to write: ``NESTED``), it and every
    later one is only counted (``left_out``), so a server sending without end cannot grow
    the client without bound, nor one deep message keep ``--json`` from writing the answer."""

    def __init__(self) -> None:
        self.kept: list[dict[str, Any]] = []
        self.left_out = 0
        self._chars = 0

    def __call__(self, method: str, params: Mapping[str, Any]) -> None:
        if not self.left_out and len(self.kept) < HEARD_COUNT:
            note = {"method": method, "params": dict(params)}
            # as --json writes it, in the list in the document: nested too deeply there
            # (NESTED), the whole document could not be written
            shown = shown_json({"notifications": [note]}, ensure_ascii=False, default=str)
            size = len(shown)
            if shown is not NESTED and self._chars + size <= HEARD_CHARS:
                self.kept.append(note)
                self._chars += size
                return
        self.left_out += 1

    def closing(self, more_logs: int, shown: int, *, listed: bool, asked: bool) -> str:
        """The line that ends a call on stderr, "" when nothing was left out: how many log
        messages were not shown (``more_logs`` past the ``shown`` first) and, when the call's
        ``--json`` lists notifications (``listed``: the call succeeded), what it would leave
        out of them; with fewer, what it left out only when ``--json`` was ``asked`` for
        (without it, every message was shown and no list left any out)."""
        if more_logs > 0:
            kept = f"the first {len(self.kept)} notifications" if self.left_out else "them all"
            where = f"--json lists {kept} under notifications, " if listed else ""
            return (
                f"… {more_logs} more log messages from the server were not shown (the first "
                f"{shown} were); {where}--trace prints every message"
            )
        if asked and listed and self.left_out:  # fewer log messages, but too many or too large to keep
            return (
                f"… --json lists the first {len(self.kept)} notifications under notifications and "
                f"counts the other {self.left_out} under notifications_left_out (it keeps at most "
                f"{HEARD_COUNT}, {HEARD_CHARS:,} characters in all); --trace prints every message"
            )
        return ""


def write(text: str, stream: TextIO | None = None) -> None:
    """``text`` and a line's end on ``stream`` (stdout when None), flushed, as its encoding
    can show it (``server_text.for_encoding``: on an ASCII-only terminal the client's own
    marks in ASCII, any other character it cannot show by its code, as ``\\u5929``)."""
    where = stream or sys.stdout
    print(for_encoding(text, getattr(where, "encoding", None)), file=where, flush=True)


def print_json(value: Mapping[str, Any]) -> None:
    """``value`` as JSON, readable (non-ASCII letters as themselves) but inert: the
    characters ``form_text.clean`` would not let act (control, bidirectional, invisible)
    are written as ``\\uXXXX`` escapes, the same JSON value, so that what a server sent
    cannot act on a terminal showing it. On a stdout that cannot write the letters (an
    ASCII-only terminal) every character past ASCII is such an escape: still the same value.
    ``CheckFailed`` when it is nested too deeply."""
    text = shown_json(value, indent=2, ensure_ascii=False)
    if text is not NESTED and for_encoding(text, getattr(sys.stdout, "encoding", None)) != text:
        text = shown_json(value, indent=2, ensure_ascii=True)
    if text is NESTED:
        from mcp_elicit.errors import CheckFailed

        raise CheckFailed(
            "the server's answer is nested too deeply to write as JSON (objects and arrays more "
            f"than {MAX_SHOWN_DEPTH} levels deep); run without --json to see the rest of it"
        )
    print("".join(_inert(ch) for ch in text), flush=True)


def _inert(ch: str) -> str:
    if ch == "\n" or unicodedata.category(ch) not in ("Cc", "Cf", "Zl", "Zp", "Co", "Cs"):
        return ch  # a newline here is the layout's: json.dumps escapes those in strings
    code = ord(ch)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def print_failure(error: CliError, target: Target | None) -> None:
    """``--json`` when there is no report to give: what failed, and the exit code
    (``target`` is null when the failure came before the TARGET was read); the URL steps
    of a -32042 the CLI did not follow as ``url_steps`` (``cli.url_steps``)."""
    where = target.to_json() if target is not None else None
    failure = {"ok": False, "exit_code": error.exit_code, "target": where, "error": str(error)}
    steps = getattr(error, "steps", None)  # url_steps.UrlStepsRequired: a -32042's URL steps
    print_json(failure if steps is None else {**failure, "url_steps": steps})


def shorten_state(value: Any) -> Any:
    """``value`` with every ``requestState`` string cut to its start and length."""
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if key == "requestState" and isinstance(item, str) and len(item) > _STATE_KEEP + 8:
                out[key] = f"{item[:_STATE_KEEP]}…[{len(item)} chars]"
            else:
                out[key] = shorten_state(item)
        return out
    if isinstance(value, list):
        return [shorten_state(item) for item in value]
    return value


class Tracer:
    """Prints every message on stderr, one line each: ``→`` sent, ``←`` received."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream

    def __call__(self, direction: Literal["send", "receive"], message: Mapping[str, Any]) -> None:
        stream = self.stream or sys.stderr
        arrow = "→" if direction == "send" else "←"
        # a trace line must never cost the message itself, and says the same whatever
        # the process's recursion limit (``shown_json``)
        text = "(a message nested too deeply to show)"
        if not nests_past(message, MAX_SHOWN_DEPTH):
            text = shown_json(shorten_state(message), ensure_ascii=False, separators=(",", ":"))
            text = "(a message nested too deeply to show)" if text is NESTED else text
        write(f"{arrow} {clean(text)}", stream)


# ---- check (its report: cli.check_text) ----------------------------------------------------


def sign_in_text(authorization: Mapping[str, Any]) -> str:
    """How the connection was authorized, in words."""
    if authorization.get("workload"):
        how = "as a workload, with its platform's token"
    elif authorization.get("signed_in_now"):
        how = "signed in just now"
    else:
        how = "a token kept from an earlier sign-in"
    if authorization.get("token_type") == "DPoP":
        how += "; the token is bound to this client's key (DPoP)"
    return f"with OAuth at {clean(str(authorization.get('issuer')), joiners=False)} ({how})"


# ---- results -----------------------------------------------------------------------------


def print_result(method: str, result: Mapping[str, Any]) -> None:
    """A tool, prompt or resource result as text."""
    if method == "prompts/get":
        lines = _prompt(result)
    elif method == "resources/read":
        lines = _resource(result)
    else:
        lines = _tool(result)
    write("\n".join(lines))


def _tool(result: Mapping[str, Any]) -> list[str]:
    lines = [_block(block) for block in _list(result.get("content"))]
    structured = result.get("structuredContent")
    if structured is not None and not lines:
        lines.append(clean(shown_json(structured, indent=2, ensure_ascii=False), multiline=True))
    return lines or ["(no content)"]


def _prompt(result: Mapping[str, Any]) -> list[str]:
    lines = []
    if isinstance(result.get("description"), str):
        lines.append(clean(result["description"]))
    for message in _list(result.get("messages")):
        role = message.get("role", "?") if isinstance(message, Mapping) else "?"
        content = message.get("content") if isinstance(message, Mapping) else None
        lines.append(f"[{said(role)}] {_block(content)}")
    return lines or ["(no messages)"]


def _resource(result: Mapping[str, Any]) -> list[str]:
    lines = []
    for item in _list(result.get("contents")):
        if not isinstance(item, Mapping):
            continue
        kind = f" ({said(item['mimeType'])})" if item.get("mimeType") else ""
        lines.append(f"{said(item.get('uri', '?'))}{kind}")
        if isinstance(item.get("text"), str):
            lines.append(clean(item["text"], multiline=True))
        elif isinstance(item.get("blob"), str):
            lines.append(f"[binary, {len(item['blob'])} base64 characters]")
    return lines or ["(no contents)"]


def said(value: object) -> str:
    """A value of a server's message, as text on one line (``fit``: inert, at most
    ``SAID_MAX`` characters): ``str`` of it, but a list or an object only three levels deep
    (``str`` recurses, past Python's limit for JSON a reader takes)."""
    return fit(quoted(value) if isinstance(value, list | dict) else str(value), SAID_MAX, length=True)


#: The most names of a server's (tools, arguments) an error lists.
NAMES_LISTED: Final = 20


def listed(names: Sequence[str]) -> str:
    """``names``, a server's, as a message lists them: "a, b, c", each ``said``, at most
    ``NAMES_LISTED`` of them and how many more ("" for none)."""
    shown = ", ".join(said(name) for name in names[:NAMES_LISTED])
    more = len(names) - NAMES_LISTED
    return f"{shown} and {more} more" if more > 0 else shown


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _block(block: object) -> str:
    if not isinstance(block, Mapping):
        if nests_past(block, MAX_SHOWN_DEPTH):
            return NESTED
        try:
            return clean(repr(block))
        except RecursionError:
            return NESTED
    kind = block.get("type")
    if kind == "text":
        text = block.get("text", "")
        return clean(text, multiline=True) if isinstance(text, str) else said(text)
    if kind in ("image", "audio"):
        size = len(block.get("data", "")) if isinstance(block.get("data"), str) else 0
        return f"[{kind}: {said(block.get('mimeType', '?'))}, {size} base64 characters]"
    if kind == "resource_link":
        return f"[link: {said(block.get('uri', '?'))}]"
    if kind == "resource":
        inner = block.get("resource")
        if isinstance(inner, Mapping):
            text = inner.get("text")
            head = f"[resource: {said(inner.get('uri', '?'))}]"
            return f"{head}\n{clean(text, multiline=True)}" if isinstance(text, str) else head
    return clean(shown_json(block, ensure_ascii=False))
