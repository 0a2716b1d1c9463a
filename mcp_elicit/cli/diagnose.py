"""Why a command failed, in words a person can act on, with the exit code it deserves.

``explain(exc, target, observed, during=...)`` turns what the client raised (and what the
connection saw, ``targets.Observed``) into a ``CliError``:

* exit 3, ``CannotConnect``: connection refused, a name that does not resolve, TLS (an
  untrusted certificate, ``https://`` to a plain-HTTP port), a sign-in that failed (the
  ``AuthorizationError``'s message: declined, no terminal, discovery, the authorization
  server's refusal), 401/403 (with the ``WWW-Authenticate`` challenge and how to pass a
  token or sign in; a 401 from another origin the server redirected to, with that URL to
  use instead), 421 (the server's DNS-rebinding protection and ``--allow-host``), a wrong
  path or server (404/405/501, pointing at ``/mcp``), a legacy HTTP+SSE server (found by
  the GET the 2025-03-26 spec prescribes for this case), an HTML page, a 2xx in another
  Content-Type than JSON or SSE (plain text: its status, type and start, quoted inert; a
  protocol violation once the server has answered the opening request as MCP), a 301/302/303
  redirect of the POST (which becomes a GET without the message: the new address is named
  to use instead), 5xx, a command that does not start or exits, a server that never answers
  (saying ``--timeout``; once the server has answered the opening request, the message
  names the step that failed instead, and no longer questions the server or its path; the
  TARGET is named once, not again where the transport's reason names it, as a stdio
  server's exit does);
* exit 4, ``ServerBrokeProtocol``: a protocol violation, a round limit hit, an error
  answering the opening request (with an HTTP error status, that too; a 404, with the /mcp hint), no protocol revision in common (-32022: a server that
  answers ``server/discover`` with a 202, a page or an error when ``--protocol`` allows
  no earlier revision is told as that, with the ``--protocol`` that reaches it), a stdio server that writes something other than
  JSON-RPC on stdout and then gives no answer (one message, whether it then waits until
  the request times out or exits first: which comes first is only timing);
* exit 1, ``CheckFailed``: a request refused by the server's rate limit (``RateLimited``:
  one line naming the budget and the wait, at any status), or
  the server answered a later request with a JSON-RPC error (over
  HTTP with an error status, that status too: "HTTP 404, and the server answered..."; a
  404 without a JSON-RPC error in it, plain text, once the server had answered the opening
  request: "the server answered HTTP 404 and no JSON-RPC response..."; a
  bare -32603 "Internal error" from a stdio server with the end of its stderr, where it
  logged the reason), or a scripted answer that never fits.

Rules: the only extra request is that one GET to the TARGET URL itself, and only after a
4xx. A stdio server's non-JSON lines are quoted (cleaned, cut short) in every stdio
failure, because they are the usual cause. httpx is imported only to explain an HTTP
failure. The words for stdio are ``cli.diagnose_stdio``'s.
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import Iterator, Mapping
from typing import Final
from urllib.parse import urljoin, urlsplit, urlunsplit

from mcp_elicit.cli.diagnose_stdio import (
    SLOW,
    log_tail,
    noise_note,
    not_json_rpc,
    says_nothing,
    stdio_failure,
)
from mcp_elicit.cli.era_hints import era_hint
from mcp_elicit.cli.legacy_sse import legacy_sse_endpoint
from mcp_elicit.cli.output import SAID_MAX, fit, fit_quoted
from mcp_elicit.cli.targets import HttpSeen, Observed, Target
from mcp_elicit.client.era_habits import unhinted
from mcp_elicit.errors import (
    AuthorizationError,
    CannotConnect,
    CheckFailed,
    CliError,
    ConfigError,
    FormValidationError,
    InternalError,
    ProtocolError,
    ProtocolViolation,
    RateLimited,
    RequestTimeout,
    RoundsExceeded,
    ServerBrokeProtocol,
    TaskCancelled,
    TransportError,
    UnsupportedProtocolVersion,
    UsageError,
)
from mcp_elicit.ui.form_text import clean
from mcp_elicit.url_redaction import hidden_parts, redact_uri, redact_urls
from mcp_elicit.wire.versions import LATEST_HANDSHAKE, SUPPORTED

__all__ = ["explain", "noise_note"]


async def explain(exc: BaseException, target: Target, observed: Observed, *, during: str) -> CliError:
    """The ``CliError`` for ``exc``, raised while doing ``during`` ("connect", "tools/list"...)."""
    if isinstance(exc, CliError):
        return exc
    if isinstance(exc, ConfigError):
        return UsageError(str(exc))
    if isinstance(exc, ProtocolViolation | RoundsExceeded):
        return ServerBrokeProtocol(f"{target}: {exc}{noise_note(observed)}")
    if target.url is not None and isinstance(exc, ProtocolError | TransportError):
        elsewhere = _redirected_to_a_401(target.url, observed.last_post())
        if elsewhere is not None:
            return elsewhere
    if target.url is not None and isinstance(exc, TransportError):
        failed = _sign_in_failure(exc)
        if failed is not None:
            return _not_signed_in(failed, target, observed)
    if target.url is not None and isinstance(exc, ProtocolError | TransportError):
        moved = _post_redirected(target.url, observed.last_post())
        if moved is not None:
            return moved
        refused = _refusal(target, observed.last_post(), observed)
        if refused is not None:
            return refused
    if isinstance(exc, UnsupportedProtocolVersion) and during == "connect":
        return _no_revision_in_common(exc, target, observed)
    if isinstance(exc, RateLimited):  # one line with the wait, whichever request it was
        budget = f" ({clean(exc.limit[:60])})" if exc.limit else ""
        return CheckFailed(
            f"{during}: refused by the server's rate limit{budget}; try again in {exc.retry_after:g} s"
        )
    if isinstance(exc, ProtocolError):
        if during == "connect":
            status = _came_with(exc, target, observed)
            found = exc.http_status == 404 and any(seen.status == 404 for seen in observed.responses)
            hint = f". {_path_hint(target.url)}" if found and target.url else ""  # said by the error or not
            return ServerBrokeProtocol(
                f"{target} answered the opening request with {status}error {exc.code}: {_told(exc)}"
                f"{hint}{noise_note(observed)}"
            )
        said = _told(exc)
        log = log_tail(observed) if exc.code == InternalError.code and says_nothing(said) else ""
        hint = era_hint(exc, str(target), observed.revision)
        status = _came_with(exc, target, observed)
        return CheckFailed(f"{during}: {status}the server answered with error {exc.code}: {said}{log}{hint}")
    if isinstance(exc, FormValidationError):
        return CheckFailed(f"no answer that fits the form: {exc}")
    if isinstance(exc, TaskCancelled):
        return CheckFailed(f"{during}: {exc}")
    if isinstance(exc, TransportError):
        if during != "connect":
            return _after_connecting(exc, target, observed, during)
        if target.url is not None:
            return await _http(exc, target, observed, during)
        return stdio_failure(exc, target, observed)
    return CliError(f"{type(exc).__name__}: {exc}")


def _came_with(exc: ProtocolError, target: Target, observed: Observed) -> str:
    """ "HTTP 404, and " when a JSON-RPC error came in a response whose status says more than
    the body (an error status, which a proxy or a router may have set): a person needs both;
    "" over stdio, with a 2xx, for a status no response had (an error's default), or when
    the error as shown (``_told``: the server's words cut short, the client's whole) says it
    already ("HTTP 404 in a new session too")."""
    status = exc.http_status
    if target.url is None or status < 300 or f"HTTP {status}" in _told(exc):
        return ""
    return "" if all(seen.status != status for seen in observed.responses) else f"HTTP {status}, and "


def _no_revision_in_common(exc: UnsupportedProtocolVersion, target: Target, observed: Observed) -> CliError:
    """-32022 while connecting, in the CLI's words: when the client found the server speaks
    none of the modern revisions ``--protocol`` allowed (it answered ``server/discover``
    with a 202, a page, an error: ``data.answered``), that, and ``--protocol`` to reach a
    server of the handshake era; otherwise the mismatch as the error states it."""
    data = exc.data if isinstance(exc.data, Mapping) else {}
    answered, allowed, requested = data.get("answered"), data.get("allowed"), data.get("requested")
    if isinstance(answered, str) and isinstance(allowed, list) and isinstance(requested, str):
        offered = ", ".join(clean(str(v)) for v in allowed)
        return ServerBrokeProtocol(
            f"{target} does not speak {clean(requested)}: {clean(answered)}. It is a server of an "
            f"earlier revision ({LATEST_HANDSHAKE} or before), or not an MCP endpoint at all; --protocol "
            f"offered {offered} only. To talk to a {LATEST_HANDSHAKE} server, add --protocol "
            f"{LATEST_HANDSHAKE} (or leave --protocol out, to offer every revision){noise_note(observed)}"
        )
    return ServerBrokeProtocol(
        f"{target}: no protocol revision both sides speak (-32022): {_told(exc)}. --protocol "
        f"chooses the revisions offered (this client speaks {', '.join(SUPPORTED)}; without "
        f"--protocol, all of them){noise_note(observed)}"
    )


def _said(message: str) -> str:
    """A server's error message, its URLs redacted, then inert and cut short (``output.fit``)."""
    return fit(redact_urls(message), SAID_MAX, length=True)


def _told(exc: ProtocolError) -> str:
    """``exc``'s message as shown: the server's words cut short (``_said``), the client's
    own after them (``added``: what it did about the error) whole, but for the ``Client``
    option that would follow it (``era_habits``): the command says that in its own words."""
    added = exc.added if exc.added and exc.message.endswith(exc.added) else ""
    return _said(exc.message[: len(exc.message) - len(added)]) + unhinted(added)


def _after_connecting(exc: TransportError, target: Target, observed: Observed, during: str) -> CliError:
    """A failure once the server had answered the opening request: the server and its
    path are right, so name the step that failed rather than guess at where the server is."""
    if observed.stdout_noise and target.url is None:
        return not_json_rpc(target, observed, f"stopped answering in JSON-RPC at {during}")
    if exc.http_status == 404 and target.url is not None:
        return _refused_later(exc, during)
    last = observed.last_post()
    if last is not None and 200 <= last.status < 300 and _not_mcp_type(last.content_type):
        return ServerBrokeProtocol(  # the address is right: the server broke the transport's rules
            f"{target} answered while connecting, then answered {during} with HTTP {last.status} in "
            f"{clean(last.content_type)}: a Streamable HTTP server answers every request with "
            f"application/json or text/event-stream (or a proxy in front of it answered instead).{_began(exc)}"
        )
    said = str(exc)
    who = "the server" if str(target) in said else str(target)  # named once
    then = said if said.startswith(during) else f"{during} failed: {said}"
    if isinstance(exc, RequestTimeout):
        silent = _proxy_silent(observed)
        if silent is not None:
            return silent
        then = f"did not answer {during}: {said}. {SLOW}"
    return CannotConnect(f"{who} answered while connecting, then {then}{noise_note(observed)}")


def _proxy_silent(observed: Observed) -> CliError | None:
    """A request that ran out of time while it waited on a proxy (``--timeout`` no longer
    than the connect timeout): the proxy is the one not answering, never the server."""
    for wait in observed.proxy_waits:
        if wait.what is not None:
            return CannotConnect(
                f"{wait.proxy} had not {wait.what} when the time ran out: the server was never "
                "reached. Is the proxy up, and the one meant? Check that variable, or list the host in "
                "NO_PROXY to reach it directly; if the proxy is only slow, give it longer: --timeout SECONDS."
            )
    return None


def _refused_later(exc: TransportError, during: str) -> CheckFailed:
    """A 404 without a JSON-RPC error in it (plain text, a web framework's default) once
    the server has spoken MCP at this address: the server refusing the request, as with a
    JSON-RPC error in it (exit 1), not a wrong address; in a new session too, the client's
    words say so."""
    said = str(exc)
    rest = said.partition(" got HTTP 404")[2]  # the transport's words: "METHOD to SERVER got HTTP 404..."
    return CheckFailed(f"{during}: the server answered HTTP 404{rest}" if rest else f"{during}: {said}")


# ---- HTTP --------------------------------------------------------------------------------


def _causes(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _where(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return parts.hostname or "?", port


#: What h11 (under httpx) says of a response whose status line and headers pass its limit.
_HEAD_TOO_LONG: Final = "Receive buffer too long"


def _connect_failure(errors: list[BaseException], url: str, timeout: str) -> CliError | None:
    if not errors:
        return None
    import httpx

    host, port = _where(url)
    for cause in _causes(errors[-1]):
        if isinstance(cause, ssl.SSLCertVerificationError):
            reason = cause.verify_message or str(cause)
            return CannotConnect(
                f"TLS: the certificate of {host} is not trusted ({reason}). If it is signed by a private "
                "CA, point SSL_CERT_FILE at that CA's certificate; if the name does not match, use the "
                "name the certificate is for."
            )
        if isinstance(cause, ssl.SSLError):
            detail = f"{cause.reason or cause}"
            if any(s in str(cause) for s in ("WRONG_VERSION_NUMBER", "record layer", "packet length")):
                return CannotConnect(
                    f"TLS failed with {host}:{port} ({detail}): it does not seem to speak TLS. "
                    "Try http:// instead of https://."
                )
            return CannotConnect(f"TLS handshake with {host}:{port} failed ({detail}).")
        if isinstance(cause, ConnectionRefusedError):
            return CannotConnect(
                f"nothing is listening at {host}:{port} (connection refused). Is the server running? "
                f"Start one with: mcp-elicit serve app.py --http {host}:{port}"
            )
        if isinstance(cause, socket.gaierror):
            return CannotConnect(f"cannot find the host {host!r} ({cause.strerror or cause}). Check the URL.")
        if isinstance(cause, httpx.ConnectTimeout):
            return CannotConnect(
                f"no connection to {host}:{port} within {timeout} (a firewall, or the wrong address?)"
            )
        if isinstance(cause, httpx.RemoteProtocolError) and str(cause) == _HEAD_TOO_LONG:
            return CannotConnect(
                f"{host}:{port} answered HTTP with headers longer than mcp-elicit reads (100 KiB for the "
                "status line and headers): the server, or a proxy in front of it, sends oversized headers."
            )
        if isinstance(cause, httpx.RemoteProtocolError):
            hint = " An https server reached with http://?" if urlsplit(url).scheme == "http" else ""
            return CannotConnect(f"{host}:{port} does not answer like an HTTP server ({cause}).{hint}")
    return None


async def _http(exc: TransportError, target: Target, observed: Observed, during: str) -> CliError:
    url, shown = target.url or "", str(target)
    if isinstance(exc, RequestTimeout):
        return _proxy_silent(observed) or CannotConnect(f"{exc}. {SLOW}")
    failure = _connect_failure(observed.errors, url, "the connect timeout")
    if failure is not None:
        return failure
    last = observed.last_post()
    if last is None:
        return CannotConnect(str(exc))
    status = last.status
    if status == 501:  # Not Implemented: a server (a static file server, say) that takes no POST at all
        return CannotConnect(
            f"HTTP 501 from {shown}: this server does not take POST, so no MCP endpoint here. {_path_hint(url)}"
        )
    if status >= 500:
        said = str(exc).partition(f"failed with HTTP {status}: ")[2] or str(exc)  # core.era's words
        said = said.rstrip(".")
        return CannotConnect(
            f"{shown} failed with HTTP {status}: {clean(said)}. That is the server's own failure: its log says why."
        )
    if 400 <= status < 500:
        endpoint = await legacy_sse_endpoint(url, dict(target.headers))
        if endpoint is not None:
            return CannotConnect(
                f"{shown} is a legacy HTTP+SSE server (MCP 2024-11-05): it streams events on GET and takes "
                f"messages at {clean(redact_uri(endpoint))!r}. mcp-elicit speaks Streamable HTTP (2025-03-26 and later) "
                "only; upgrade the server, or put a Streamable HTTP bridge in front of it."
            )
        if status in (404, 405):
            what = "nothing at this path" if status == 404 else "this path does not take POST"
            return CannotConnect(
                f"HTTP {status} from {shown}: {what}, so no MCP endpoint here. {_path_hint(url)}"
            )
        return CannotConnect(f"{shown} refused the request with HTTP {status}: {exc}")
    if last.content_type == "text/html":
        return CannotConnect(f"{shown} answered with a web page (text/html), not MCP. {_path_hint(url)}")
    if 200 <= status < 300 and _not_mcp_type(last.content_type):
        return CannotConnect(
            f"{shown} answered HTTP {status} with Content-Type {clean(last.content_type)}, not MCP: a "
            f"Streamable HTTP server answers a POST with application/json or text/event-stream.{_began(exc)} "
            f"{_path_hint(url)}"
        )
    return CannotConnect(f"{exc}")


#: The most characters quoted of a body that is not MCP (the start says what answered).
_BEGAN_MAX: Final = 160


def _began(exc: TransportError) -> str:
    """ " It began: '...'." with the start of a body that is not MCP, as the transport quoted
    it (inert already: cut between whole codes), or " Its body was empty." """
    began = str(exc).partition("no JSON-RPC response: ")[2]
    return f" It began: '{fit_quoted(began, _BEGAN_MAX)}'." if began else " Its body was empty."


def _not_mcp_type(kind: str) -> bool:
    """Whether a Content-Type (lower case, no parameters) is none a Streamable HTTP server
    answers a request with; "" (none given) is left to the transport's own words."""
    return bool(kind) and kind not in ("application/json", "text/event-stream") and not kind.endswith("+json")


_PASS_A_TOKEN: Final = "--header 'Authorization: Bearer TOKEN'"


def _sign_in_failure(exc: TransportError) -> str | None:
    """The message of ``exc`` if a sign-in failed (the client raises the flow's
    ``AuthorizationError`` as such)."""
    return str(exc) if isinstance(exc, AuthorizationError) else None


def _not_signed_in(message: str, target: Target, observed: Observed) -> CliError:
    refusals = [seen for seen in observed.responses if seen.status in (401, 403)]
    answered = (
        f" The server answered HTTP {refusals[-1].status}{_challenge(refusals[-1].headers)}."
        if refusals
        else ""
    )
    hint = "" if _PASS_A_TOKEN in message else f" With a token you already have: {_PASS_A_TOKEN}."
    return CannotConnect(f"could not sign in to {target}: {clean(message).rstrip('.')}.{answered}{hint}")


def _redirected_to_a_401(url: str, last: HttpSeen | None) -> CliError | None:
    """A 401 from another origin the server redirected to: no token or header given goes
    there (httpx and the transport drop them), so neither a sign-in nor a header can help."""
    if last is None or last.status != 401:
        return None
    asked, answered = urlsplit(url), urlsplit(last.url)
    if (asked.scheme, *_where(url)) == (answered.scheme, *_where(last.url)):
        return None
    from mcp_elicit.transports.http_redirects import written_out  # httpx: HTTP targets only

    final = urlunsplit((answered.scheme, answered.netloc, answered.path, "", ""))
    origin = redact_uri(f"{answered.scheme}://{answered.netloc}")  # the server's: no password shown
    return CannotConnect(
        f"{redact_uri(url)} redirected to {origin}, which asks for authorization: "
        f"HTTP 401{_challenge(last.headers)}. mcp-elicit does not send tokens or headers across "
        f"origins: use {redact_uri(final)} directly{written_out(final)}."
    )


def _post_redirected(url: str, last: HttpSeen | None) -> CliError | None:
    """A 301, 302 or 303 answering a POST: HTTP clients follow it with a GET that carries
    no message (a plain http:// URL of an https:// server, a path without its trailing
    slash), so whatever comes back next says nothing about the server; name the new
    address instead."""
    if last is None or last.status not in (301, 302, 303):
        return None
    from mcp_elicit.transports.http_redirects import written_out  # httpx: HTTP targets only

    location = clean(urljoin(last.url, last.headers.get("location", "")), joiners=False)
    return CannotConnect(
        f"{redact_uri(url)} redirects (HTTP {last.status}) to {redact_uri(location)}, and a redirected POST "
        f"becomes a GET without the JSON-RPC message: use {redact_uri(location)} as the TARGET"
        f"{written_out(location)}."
    )


def _refusal(target: Target, last: HttpSeen | None, observed: Observed) -> CliError | None:
    """401, 403 and 421: the server is there and refuses us, whatever the body says."""
    if last is None:
        return None
    status = last.status
    url, shown = target.url or "", str(target)
    given = [value for name, value in target.headers if name.lower() == "host"]
    host = given[-1].rsplit(":", 1)[0] if given else _where(url)[0]
    if status == 401:
        challenge = _challenge(last.headers)
        if any(name.lower() == "authorization" for name, _ in target.headers):
            return CannotConnect(
                f"HTTP 401 from {shown}: the server does not accept the Authorization header given{challenge}. "
                "Get a new token, or leave the header out to sign in."
            )
        if observed.signing_in:
            return CannotConnect(
                f"HTTP 401 from {shown}: the server wants authorization{challenge}, but not an OAuth sign-in "
                f"(no Bearer or DPoP challenge). Pass a token with {_PASS_A_TOKEN}."
            )
        return CannotConnect(
            f"HTTP 401 from {shown}: the server wants authorization{challenge}. Sign in by leaving out "
            f"--no-login, or pass a token with {_PASS_A_TOKEN}."
        )
    if status == 403:
        hint = (
            " The token is valid but not allowed this, or lacks a scope."
            if "www-authenticate" in last.headers
            else " If this is an mcp-elicit server, it refuses browser origins it was not told about "
            "(mcp-elicit serve --allow-host)."
        )
        return CannotConnect(f"HTTP 403 from {shown}: forbidden{_challenge(last.headers)}.{hint}")
    if status == 421:
        return CannotConnect(
            f"HTTP 421 from {shown}: the server does not accept the host name {host!r} (DNS-rebinding "
            f"protection). Start it with --allow-host {host}, or use the address it expects."
        )
    return None


def _challenge(headers: dict[str, str]) -> str:
    challenge = headers.get("www-authenticate")
    if not challenge:
        return ""
    challenge = clean(redact_urls(challenge))  # redacted, then cut
    return f" (WWW-Authenticate: {challenge if len(challenge) <= 300 else challenge[:297] + '...'})"


def _path_hint(url: str) -> str:
    parts = urlsplit(url)
    if parts.path.rstrip("/") == "/mcp":
        return "Check the host and port."
    suggestion = urlunsplit((parts.scheme, parts.netloc, "/mcp", parts.query, ""))  # its key kept
    hidden = hidden_parts(suggestion)  # shown redacted: what to write out, if anything
    written = f", with {hidden} written out as you gave them" if hidden else ""
    return (
        f"MCP endpoints are usually at /mcp (mcp-elicit serve uses it): try {redact_uri(suggestion)}{written}"
    )
