"""How a URL or URI from the other side is shown in a log line, an error message or a span:
its user name and password, query and fragment replaced by ``REDACTED`` (where keys and
tokens travel), its scheme, host and path kept. A user name and password read
``REDACTED:REDACTED@``, a user name alone ``REDACTED@``; an empty query or fragment (a
bare ``?`` or ``#`` at the end) hides nothing and stays as written. :func:`redact_urls` finds the URLs in prose,
:func:`redact_uri` takes one URI, :func:`uri_redacted` redacts a message's repetitions of a
known URI (whole, made inert, or cut short). A URL is read as a browser or httpx would send
it: a tab or line break anywhere in it dropped (``ht\\ttps:``), and its user information
running to its authority's last "@" whatever it holds (a quote, a space before a
password's ":"), even where prose would end the URL. Every search is linear in the text,
which may be the other side's. A leaf: it imports only ``inert_text``, so the telemetry attributes,
the log labels and core may all use it.
"""

from __future__ import annotations

import re
from typing import Final

from mcp_elicit.inert_text import inert

__all__ = ["hidden_parts", "redact_uri", "redact_urls", "redact_word", "uri_redacted"]

#: What a browser drops wherever it is in a URL: a tab or a line break (``ht\ttps:``,
#: ``https:/\t/``), also as ``repr`` writes it in a message (``ht\\ttps:``), which a
#: person reads as well. A pattern allows any run of them between a scheme's letters and
#: among the slashes after it.
_DROPPED = "\t\n\r"
_ESCAPED = frozenset(("\\t", "\\n", "\\r"))
_GAP = r"(?:[\t\n\r]|\\(?-i:[tnr]))*"
#: "http" or "https" and its colon, as a browser reads them, tabs and line breaks dropped.
_WEB_SCHEME = _GAP.join("http") + _GAP + f"(?:s{_GAP})?:"
#: The slashes and backslashes after an http(s) scheme, tabs and line breaks among them.
_SLASH_RUN = r"(?:\\(?-i:[tnr])|[/\\\t\n\r])*"
#: What follows a URL's "://" in a message, up to a space or a quote. Found from the "://"
#: whatever the scheme before it: a search from every place a scheme could start takes
#: time quadratic in text made of many such places ("a.a.a.a..."), and the text can be
#: the other side's. Only the few letters right before it are read (:func:`_web_before`):
#: after "http" or "https", the authority follows any further slashes (``https:///me:pw@h``).
_AFTER_SCHEME = re.compile(r"://([^\s'\"]*)")
#: An http(s) URL written without the usual "//" after its scheme (``https:/host/?key``,
#: ``HTTPS:host``, backslashes, ``https:\t//host``): browsers open it as the same page,
#: key and all. Found from the scheme's fixed letters, so linear in any text.
_ODD_WEB = re.compile(rf"(?i)(?<![a-z0-9+.-])({_WEB_SCHEME})(?!//)({_SLASH_RUN})([^\s'\"]*)")
#: A URL written without its scheme (``//host/path?key``, as a message quotes a relative
#: reference): "//" not after a letter, digit, "_", ":", "/" or "\\", then a host's or a
#: user name's first character (a quote, or a backslash, which a browser reads as a slash,
#: too), or the ":" of a password without one (``//:pw@h``). Linear likewise: the run after it is taken whole.
_NO_SCHEME_START = r"(?<![\w:/\\])//(?=[A-Za-z0-9\[%~!$&*+,;=:._'\"\\-])"
_NO_SCHEME = re.compile(_NO_SCHEME_START + r"([^\s'\"]*)")
#: Where an authority starts in prose, for its user information (:func:`_user_info_first`):
#: after a "://", after an http(s) scheme written with other slashes, after "//" alone.
_AUTHORITY = re.compile(rf"://|(?i:(?<![a-z0-9+.-]){_WEB_SCHEME}(?!//){_SLASH_RUN})|{_NO_SCHEME_START}")
#: Where an authority ends, whatever stands before it: its user information (to its
#: last "@") may hold a space, a quote, a tab, a line break (httpx sends ``me x`` and
#: ``me"x`` as a user name, a browser drops a tab).
_AUTHORITY_END = re.compile(r"[/?#]")
#: Characters that end a URL in prose when they end its run (``<https://h/?k>``,
#: ``(see https://h/?k).``): a closing bracket the URL does not open, or punctuation.
_CLOSING = {")": "(", "]": "[", "}": "{", ">": "<"}
_PUNCTUATION = frozenset(".,;:!?")
#: How many such characters at most are kept after a redacted query or fragment: each is
#: one of the few above and says nothing, but a long run of them is the URL's own.
_TRAILING = 4
_QUERY = re.compile(r"[?#]")
#: An http(s) URI's start as a browser reads it: any spaces or control characters before
#: it (a browser drops them), any slashes or backslashes after the scheme, or none, and
#: the authority follows (``https:/h``, ``https:///h``, ``HTTPS:h``, `` https:/h``), tabs
#: and line breaks dropped anywhere in it (``ht\ttps:/\t/h``).
_WEB_START = re.compile(rf"(?i)[\x00-\x20]*{_WEB_SCHEME}{_SLASH_RUN}")
#: Spaces and control characters a browser drops before a URI (``\t//h``).
_LEADING = "".join(map(chr, range(0x21)))
_SLASHES = re.compile(_SLASH_RUN)
#: What ends a URL's run in prose besides a tab or line break (which a browser drops).
_RUN_ENDS = re.compile(r"[^\S\t\n\r]|['\"]")
#: The characters of a scheme besides letters and digits (``svn+ssh``).
_SCHEME_MARKS = frozenset("+.-")


def redact_urls(text: str) -> str:
    """``text`` with every URL's user name and password, query and fragment replaced by
    ``REDACTED`` (where keys and tokens travel); its scheme, host and path stay. An http
    or https URL with other than two slashes after its scheme is one too: a browser
    opens ``https:/host/?key`` and ``https:///me:pw@host/`` as ``https://host/?key`` and
    ``https://me:pw@host/``; so is one without its scheme (``//host/path?key``, a
    relative reference a message may quote). So is a URL another's path holds
    (``https://proxy/https://me:pw@host/``, ``//h/a://me:pw@x/``): its user name and
    password are redacted too (its query is the outer URL's, redacted whole).

    A URL runs to a space or a quote, less what ends it in prose, which stays as written
    after it: a closing bracket it does not open, or punctuation (``<https://h/?k>``,
    ``(see https://h/?k).``). Only a few such characters at its very end are so kept,
    none of them anything but such a character: a query ``?k=S)ECRET`` is the URL's to
    its end, and is redacted whole.

    A URL's user information is not cut short by what ends it in prose: it runs to the
    last "@" before the first "/", "?" or "#" after its start, whatever lies between (a
    quote, a tab; a space where a password's ":" stands before that "@": httpx sends
    ``https://me x:pw@h/`` with ``me x`` as its user name), as :func:`redact_uri` reads
    one URI. A URL with no path that an e-mail address follows in prose
    (``see https://example.com or mail help@example.com``) keeps both, unless a ":" that
    neither a "/" nor a space follows stands between them (``https://h:8443 or ...``):
    then that text is redacted with the URL's user information."""
    if "@" in text:
        text = _user_info_first(text)
    if "://" in text:
        text = _AFTER_SCHEME.sub(_redacted, text)
    if ":" in text:
        text = _ODD_WEB.sub(_odd_redacted, text)
    if "//" in text:
        text = _NO_SCHEME.sub(_no_scheme_redacted, text)
    return text


def redact_word(word: str) -> str:
    """One word of a command line (an argument, ``--db=redis://me:pw@h/0?k=a b``) as
    :func:`redact_urls` shows a URL in it, read as one word: a space or a quote in it
    ends no URL's query or fragment (prose's would), so no part of a key is left after
    one. A command is redacted word by word, then quoted: redacting the quoted line
    (``'https://h/?k=a'"'"'KEY'``) left what followed a space or a quote in clear."""
    ends = dict.fromkeys(_RUN_ENDS.findall(word))
    free = (chr(code) for code in range(0xE000, 0xF900) if chr(code) not in word)
    stand_ins = dict(zip(ends, free, strict=False))  # each, as a character that ends no run
    if not ends or len(stand_ins) < len(ends):  # none, or the word holds the private use area
        return redact_urls(word)
    shown = redact_urls(word.translate({ord(end): stand for end, stand in stand_ins.items()}))
    return shown.translate({ord(stand): end for end, stand in stand_ins.items()})


def redact_uri(uri: str) -> str:
    """One URI (a resource's, for ``mcp.resource.uri``) with its user name and password,
    query and fragment replaced by ``REDACTED``, whatever its scheme and characters; its
    scheme, authority and path stay. Its authority follows a "//" at its start or its
    first "://" before any query or fragment, never one its query or fragment holds
    (``x:y?token=k&u=https://h``). What comes before that "://" need not be a scheme RFC
    3986 allows (`` https://``, ``1x://``, ``x_y://``): the authority after it is redacted
    all the same; an http or https one is read as a browser reads it, whatever slashes
    follow its scheme (``https:/me:pw@h``, ``https:///me:pw@h``: :func:`redact_urls`'s
    rule), also after spaces or control characters a browser drops (`` https:/me:pw@h``)
    and after letters (``xhttps:///me:pw@h``, as :func:`redact_urls` reads one). A URL
    its path holds has its user name and password redacted too
    (``//h/a://me:pw@x/``), as :func:`redact_urls` does. Given alone, it ends where the
    string does: unlike a URL in prose, nothing it ends with is kept after ``REDACTED``
    (a ``)`` there is its query's)."""
    web = _WEB_START.match(uri)
    if web is not None:
        return web[0] + _kept(uri[web.end() :], web=True)
    lead = len(uri) - len(uri.lstrip(_LEADING))
    if uri.startswith("//", lead):  # a network-path reference: its authority, without a scheme
        return uri[: lead + 2] + _kept(uri[lead + 2 :])
    scheme, sep, rest = uri.partition("://")
    if sep and _QUERY.search(scheme) is None:
        return scheme + sep + _kept(rest, web=_web_before(scheme, len(scheme)))
    return _kept(uri, authority=False)


def hidden_parts(uri: str) -> str:
    """What :func:`redact_uri` shows of ``uri`` as ``REDACTED``, named for a person who has
    to write it out to use the address (``its user name and password and its query``);
    "" when it hides nothing, and the address as shown can be used as it is."""
    redacted = redact_uri(uri)
    if redacted == uri:
        return ""
    parts = []
    if redacted.count("REDACTED:REDACTED@") > uri.count("REDACTED:REDACTED@"):
        parts.append("its user name and password")
    elif redacted.count("REDACTED@") > uri.count("REDACTED@"):
        parts.append("its user name")
    query = _QUERY.search(uri)  # where redact_uri's query or fragment starts, whatever the form
    if query is not None and redacted.endswith("REDACTED"):
        tail = uri[query.start() :]
        parts.append(
            "its fragment" if tail[0] == "#" else "its query and fragment" if "#" in tail else "its query"
        )
    return " and ".join(parts)


def uri_redacted(message: str, uri: str) -> str:
    """``message`` with each repetition of ``uri`` as :func:`redact_uri` gives it: the URI as
    is, or inert (``inert_text.inert``, its space separators kept or not), as an error's
    message quotes a URI a request gave (``Resource not found: ...``). A repetition cut
    short (``urn:x?token=S… (300 characters)``) is redacted from where ``redact_uri``
    would first change it. Without this, a URI with no "://" (which :func:`redact_urls`
    finds) repeated other than whole kept its query on the span's status."""
    for form in dict.fromkeys((inert(uri), inert(uri, spaces=True), uri)):  # the longest first
        message = _repeats_redacted(message, form)
    return message


def _repeats_redacted(message: str, form: str) -> str:
    redacted = redact_uri(form)
    kept = 0  # how much of ``form`` redact_uri leaves as it is, from its start
    for a, b in zip(form, redacted, strict=False):
        if a != b:
            break
        kept += 1
    if kept >= len(form):
        return message
    needle = form[: kept + 1]  # a repetition holds at least one character redacted
    parts, at = [], 0
    while (start := message.find(needle, at)) >= 0:
        if message.startswith(form, start):
            parts += [message[at:start], redacted]
            at = start + len(form)
            continue
        low, high = len(needle), min(len(form), len(message) - start)  # how much of it is repeated
        while low < high:
            middle = (low + high + 1) // 2
            low, high = (middle, high) if message.startswith(form[:middle], start) else (low, middle - 1)
        parts += [message[at:start], form[:kept] + "REDACTED"]
        at = start + low
    return "".join(parts) + message[at:] if parts else message


def _redacted(found: re.Match[str]) -> str:
    return "://" + _kept_in_prose(found[1], web=_web_before(found.string, found.start()))


def _user_info_first(text: str) -> str:
    """``text`` with the user information of every URL in it redacted, read to the last
    "@" before its authority's end (:data:`_AUTHORITY_END`), past any space or quote a
    run in prose stops at. Linear: the authorities that share an end are searched for it
    and for its last "@" once, and a redacted one is not searched again."""
    parts: list[str] = []
    done = at = 0
    end = last = -1  # the last authority end found, and its last "@" from where it was sought
    ends = _ProseEnds(text)
    while (found := _AUTHORITY.search(text, at)) is not None:
        start = found.end()
        if found[0] == "://" and _web_before(text, found.start()):
            slashes = _SLASHES.match(text, start)
            start = start if slashes is None else slashes.end()
        if start > end:
            stop = _AUTHORITY_END.search(text, start)
            end = len(text) if stop is None else stop.start()
            last = text.rfind("@", start, end)
        at = max(start, found.start() + 1)
        sign = ends.last_sign(start, last)
        if sign >= start:
            parts += (text[done:start], _user_info_shown(text[start:sign]))
            done = at = sign
    return "".join(parts) + text[done:] if parts else text


class _ProseEnds:
    """Which "@" ends a URL's user information in prose, from where it starts. Past a
    space (where prose ends a URL's run) only if a password's ":" (one neither a "/" nor
    a space follows: ``https://h: failed``, prose's) stands before that "@": a user name and password with a space (httpx sends
    ``https://me x:pw@h/``) are hidden, while a URL with no path followed by an e-mail
    address (``see https://example.com or mail help@example.com``) is two things, as a
    person reads them. A user name alone with a space in it is no token or key (those
    have none). A quote, or a tab or line break (which a browser drops), ends nothing.
    Linear: the starts asked about only grow, and each search goes on from where the
    last stopped."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.stop = _Next(text, re.compile(r"[^\S\t\n\r]"))  # a space, but for a tab or line break
        self.colon = _Next(
            text, re.compile(r":(?!/|[^\S\t\n\r])")
        )  # a password's: not a scheme's, nor prose's
        self.sign = self.sign_stop = -1  # the last "@" before the last stop asked about

    def last_sign(self, start: int, last: int) -> int:
        """The "@" that ends the user information of a URL whose authority starts at
        ``start`` and whose last "@" before the authority's end is ``last``; -1 if none."""
        if last < start:
            return -1
        stop = self.stop.after(start)
        if stop < 0 or stop > last:
            return last
        if 0 <= self.colon.after(start) < last and self._short(start, last):
            return last
        if self.sign_stop != stop:  # sought once per stop: a later start is past the one before
            self.sign, self.sign_stop = self.text.rfind("@", start, stop), stop
        return self.sign if self.sign >= start else -1

    def _short(self, start: int, last: int) -> bool:
        """Whether the run from ``start`` to the "@" at ``last`` can be a user name and
        password with spaces in them: at most :data:`_MOST_SPACED` characters and
        :data:`_MOST_SPACES` runs of spaces. Past that it is prose (a port, then a
        sentence that writes ``user:password@`` as advice). Read at most that far:
        constant time, so the whole stays linear."""
        return last - start <= _MOST_SPACED and len(_SPACES.findall(self.text, start, last)) <= _MOST_SPACES


#: How long, and with how many runs of spaces, a user name and password with spaces in
#: them may be (``https://my name:a pass phrase@h``); a longer run is prose.
_MOST_SPACED: Final = 128
_MOST_SPACES: Final = 4
_SPACES: Final = re.compile(r"[^\S\t\n\r]+")


class _Next:
    """Where ``pattern`` is next found in ``text`` at or after a place that only grows:
    each search starts where the last one's find was passed, so all read the text once."""

    def __init__(self, text: str, pattern: re.Pattern[str]) -> None:
        self.text, self.pattern = text, pattern
        self.found, self.since = -1, len(text) + 1  # not sought yet

    def after(self, start: int) -> int:
        if self.since > start or 0 <= self.found < start:
            match = self.pattern.search(self.text, start)
            self.found, self.since = (-1 if match is None else match.start()), start
        return self.found


def _web_before(text: str, colon: int) -> bool:
    """Whether the scheme that ends at ``colon`` ends in "http" or "https", whatever its
    case, the letters before them or the tabs and line breaks among them: a browser
    reads such a URL's authority after any slashes (``https:///me:pw@h``), and it takes
    no more to be safe."""
    return _web_start(text, colon) >= 0


def _web_start(text: str, colon: int) -> int:
    """Where the "http" or "https" that ends at ``colon`` starts, or -1: read backwards,
    tabs and line breaks skipped (a browser drops them), so each ":" reads only back to
    the first character that is none of these."""
    at = colon
    for i, letter in enumerate("sptth"):
        while at > 0 and (text[at - 1] in _DROPPED or (at > 1 and text[at - 2 : at] in _ESCAPED)):
            at -= 1 if text[at - 1] in _DROPPED else 2
        if at > 0 and text[at - 1].lower() == letter:
            at -= 1
        elif i:  # only the "s" may be missing
            return -1
    return at


def _inner_start(head: str, at: int) -> tuple[int, bool] | None:
    """Where the authority of the next URL ``head`` holds from ``at`` starts, and whether
    it is an http(s) one's (its slashes not yet skipped): after a "://" (``h/a://me@x``),
    or an http(s) scheme written with other than two slashes not after another scheme's
    character (``h/go/https:/me@x``, as :data:`_ODD_WEB` finds one in prose). Found from
    each ":" and the few characters before it: a search for every pattern at every
    place reads the text several times over."""
    while (colon := head.find(":", at)) >= 0:
        at = colon + 1
        scheme = _web_start(head, colon)
        if head.startswith("//", at):
            return at + 2, scheme >= 0
        if scheme >= 0:
            mark = head[scheme - 1] if scheme > 0 else ""
            if not (mark.isascii() and (mark.isalnum() or mark in _SCHEME_MARKS)):
                return at, True
    return None


def _odd_redacted(found: re.Match[str]) -> str:
    return found[1] + found[2] + _kept_in_prose(found[3], web=True)


def _no_scheme_redacted(found: re.Match[str]) -> str:
    return "//" + _kept_in_prose(found[1])


def _kept_in_prose(run: str, *, web: bool = False) -> str:
    """A URL's run up to a space or quote (after its "://") as :func:`_kept` leaves it,
    less what ends it in prose: at most :data:`_TRAILING` characters at its very end,
    each a closing bracket the URL does not open or punctuation (``.``, ``,``, ``;``,
    ``:``, ``!``, ``?``), kept as written after the redacted URL. Any other character,
    and a bracket the URL opens, is the URL's: a query ``?k=S)ECRET`` is redacted whole,
    as is one that ends in more such characters than are kept."""
    end = len(run)
    while len(run) - end < _TRAILING and end > 0:
        last = run[end - 1]
        opening = _CLOSING.get(last)
        if opening is not None:
            if run.count(opening, 0, end) >= run.count(last, 0, end):
                break  # the URL opens it: its own
        elif last not in _PUNCTUATION:
            break
        end -= 1
    return _kept(run[:end], web=web) + run[end:]


def _kept(rest: str, *, authority: bool = True, web: bool = False) -> str:
    """What follows a URL's "://" (or a whole URI that has no authority, when not
    ``authority``) with its user information, query and fragment redacted, and the user
    information of every URL its path holds. ``web``: an http(s) URL's, whose authority
    follows any slashes or backslashes ``rest`` starts with."""
    query = _QUERY.search(rest)
    head = rest if query is None else rest[: query.start()]
    head = _user_info_redacted(head, 0 if authority else None, web=web)
    if query is None:
        return head
    if query.end() == len(rest):  # an empty query ("...?"): nothing to hide, nothing hidden
        return head + rest[query.start() :]
    return head + rest[query.start()] + "REDACTED"


def _user_info_shown(info: str) -> str:
    """A URL's user information as shown: a user name and password (a ":" in it) as
    ``REDACTED:REDACTED``, a user name alone as one ``REDACTED``."""
    return "REDACTED:REDACTED" if ":" in info else "REDACTED"


def _user_info_redacted(head: str, start: int | None, *, web: bool) -> str:
    """``head`` (a URL's authority from ``start``, if not None, and path: no query or
    fragment) with the user information of that authority and of each URL the path
    holds (:func:`_inner_start`) redacted: up to the authority's last "@", as a browser
    reads it.

    Linear in any text, and quick: the search only goes forward; an authority is read
    once (a URL starting inside one already read shares its end and its "@"); and it
    skips what cannot start an authority holding the next "@" (:func:`_skipped_to`)."""
    parts: list[str] = []
    done, end, searched, at = 0, -1, 0, -1
    while True:
        if start is not None:
            if web:
                slashes = _SLASHES.match(head, start)
                start = start if slashes is None else slashes.end()
            searched = start
            if start > end:  # past the last authority read: a new one
                end = head.find("/", start)  # ``head`` holds no "?" or "#"
                end = len(head) if end < 0 else end
                sign = head.rfind("@", start, end)
                if sign >= 0:
                    parts += (head[done:start], _user_info_shown(head[start:sign]))
                    done = sign
                if end == len(head):
                    break  # no URL starts past its own authority
                searched = _skipped_to(head, start, end)
        if at < searched:  # only a URL whose authority holds the next "@" has user information
            at = head.find("@", searched)
            if at < 0:
                break
            before = head.rfind("/", searched, at)
            if before >= 0:
                searched = _skipped_to(head, searched, before)
        inner = _inner_start(head, searched)
        if inner is None:
            break
        start, web = inner
    return "".join(parts) + head[done:] if parts else head


def _skipped_to(head: str, searched: int, slash: int) -> int:
    """Where to look for the next URL's start, ``slash`` being a "/" at or past
    ``searched``: only one whose authority starts past that "/" can hold what follows
    it, and it starts at the ":" right before the slashes and backslashes that "/" is
    one of (``a://``, ``https:\\/``), or past them."""
    run = slash
    while run > searched and head[run - 1] in "/\\":
        run -= 1
    return max(searched, run - 1)
