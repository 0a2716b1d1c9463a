"""How a ``RedisStore``'s errors read (``stores/redis.py`` lists what each says): redis-py's
error raised again, of the same class, with the store's URL (password hidden) in front and
what to do about it after, where redis-py's words do not say.

Rules:

* ``worded`` gives the error to raise for one redis-py raised: a password missing or
  refused says where it goes in the URL; a refused connection asks whether Redis runs
  there; a ``ssl_ca_certs`` file that cannot be read is named; a key or channel an ACL
  user may not use (``NOPERM``) names the prefix's patterns; a command it may not run
  names every command the store sends; a database number the server lacks says to give
  one below its ``databases``; a pool's wait that ran out names ``max_connections``; a
  ``rediss://`` that cannot connect asks whether TLS is on there. A reply redis-py cannot
  make sense of (something that is not Redis on the port) is a ``redis.InvalidResponse``.
  Anything else is no Redis error: None, raised as it is.
* ``first_error`` raises a pipeline's first failing command's error as Redis gave it.
  redis-py's own raise puts ``Command # N (the command) of pipeline caused error:`` in
  front, quoting the values sent (a marker, a message: what a log must not hold), and
  its text then no longer starts as a single command's refusal does, so no advice was
  added. Cutting that note off the text afterwards cannot tell where a value holding the
  note's own words ends; the note is never made instead.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from urllib.parse import urlsplit

from mcp_elicit.stores.redis_pubsub import import_redis

__all__ = ["first_error", "worded"]

#: The commands a store sends (besides the connection's own: HELLO, AUTH, SELECT, CLIENT).
_COMMANDS = "GET, SET, GETDEL, DEL, PUBLISH, SUBSCRIBE, UNSUBSCRIBE, PING"
#: An ACL refusal as redis-py words it, with or without Redis's code in front: of a key or
#: channel (6: "this user has no permissions to access one of the keys..."; 7: "No
#: permissions to access a key") or of a command ("... to run the 'set' command").
_NOPERM = re.compile(
    r"(?i)(NOPERM )?(this user has no permissions|no permissions|user \S+ has no permissions)"
)
_REFUSED_COMMAND = re.compile(r"(?i)permissions to run the '[^']*' command")
#: Redis's answer to ``SELECT`` with a database number it lacks (7: "DB index is out of
#: range"; before: "invalid DB index").
_NO_DATABASE = re.compile(r"(?i)\bDB index\b")
#: What redis-py raises, beyond its own errors, on replies no Redis sends (seen: an
#: ``AttributeError`` when a server answers ``+OK`` to ``HELLO``).
_GARBLED = (AttributeError, IndexError, KeyError, TypeError, ValueError)


def worded(
    exc: Exception, *, url: str, prefix: str, ca_file: str | None, cap: Callable[[], object]
) -> BaseException | None:
    """The error to raise (from ``exc``) for ``exc``, raised by redis-py for the store shown
    as ``url`` with keys under ``prefix``; None when ``exc`` is no Redis error. ``ca_file``
    is the URL's ``ssl_ca_certs``, ``cap`` gives its pool's ``max_connections``."""
    aioredis = import_redis()
    if isinstance(exc, aioredis.AuthenticationError):  # redis-py's text names HELLO, not the fix
        if "@" in urlsplit(url).netloc:
            fix = "the server refused the user name or password given in the URL; check them"
        else:
            fix = "the server wants a password: give it in the URL, redis://:PASSWORD@host:port/db"
        return _renamed(exc, f"Redis store {url}: {fix} ({exc})")
    if isinstance(exc, aioredis.RedisError):
        text = str(exc)
        said = text.rstrip().removesuffix(".")  # redis-py's sentence, then ours: one stop
        if _caused_by(exc, ConnectionRefusedError):
            text = said + "; nothing accepts connections there: is Redis running at that address?"
        elif ca_file is not None and _caused_by(exc, FileNotFoundError, PermissionError, IsADirectoryError):
            text = said + f"; ssl_ca_certs cannot be read: {ca_file!r}"  # ssl names no file
        elif _refused_command(exc, text):
            text = said + (  # Redis names the one command: say every one the store uses
                f"; the store uses {_COMMANDS}: give the user "
                f"{' '.join('+' + c.lower() for c in _COMMANDS.split(', '))} +@connection"
            )
        elif isinstance(exc, aioredis.ResponseError) and _NOPERM.match(text):
            text = said + (  # Redis names no key: say which ones the store uses
                f"; this store's keys and channels start with {prefix}: give the user "
                f"~{prefix}:* &{prefix}:*, or set ?prefix= to keys it may use"
            )
        elif isinstance(exc, aioredis.ResponseError) and _NO_DATABASE.search(text):
            text = said + (
                "; the server has fewer databases than that (its 'databases' setting, 16 "
                "unless changed): give a number below it as the URL's path, as in /0"
            )
        elif text == "No connection available.":  # BlockingConnectionPool's wait ran out
            text = (
                f"no connection came free within the socket timeout: all max_connections={cap()} "
                "connections are in use, and each subscription holds one while it lasts (the "
                "server's relay, each retry waiting for a page; serving needs 2 at least): raise "
                "max_connections"
            )
        elif url.startswith("rediss:") and re.search(r"(?i)connecting|ssl", text):
            # a plain Redis takes the TLS hello for a command and never answers as TLS does
            text = said + "; rediss:// speaks TLS: is TLS on at that port? A plain Redis takes redis://"
        return _renamed(exc, f"Redis store {url}: {text}")
    if isinstance(exc, _GARBLED):  # redis-py choking on a reply no Redis sends
        return aioredis.InvalidResponse(  # type: ignore[no-any-return]
            f"Redis store {url}: the server did not answer as Redis does "
            f"({type(exc).__name__}: {exc}); is it a Redis server?"
        )
    return None


async def first_error(results: Awaitable[Sequence[object]]) -> None:
    """Raise the first error among a pipeline's ``results`` (``execute(raise_on_error=False)``),
    as Redis gave it; nothing when every command succeeded."""
    for result in await results:
        if isinstance(result, Exception):
            raise result


def _refused_command(exc: Exception, text: str) -> bool:
    """Whether ``exc`` is an ACL user refused a command (not a key or channel)."""
    return type(exc).__name__ == "NoPermissionError" and bool(_REFUSED_COMMAND.search(text))


def _renamed(exc: Exception, message: str) -> Exception:
    """``exc``'s class with ``message``; ``exc`` itself when that class wants other arguments."""
    try:
        return type(exc)(message)
    except Exception:
        return exc


def _caused_by(exc: BaseException, *kinds: type[BaseException]) -> bool:
    """Whether ``exc`` came of one of ``kinds`` (a refused connection, a CA file that
    cannot be read), as its chain of causes says."""
    seen: BaseException | None = exc
    for _ in range(8):  # the chain redis-py builds is short; never loop on a cycle
        if seen is None:
            return False
        if isinstance(seen, kinds):
            return True
        seen = seen.__cause__ or seen.__context__
    return False
