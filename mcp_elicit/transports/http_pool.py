"""An httpx transport over an httpcore connection pool of the authorization flow's own
making: the pinned one (``transports.http_pinned``, its own network backend) and the ones
through a proxy (``transports.http_proxy``). httpx's own transport builds its pool itself
and takes no network backend, hence this one.

Rules: a request is handed to the pool as httpx's transport hands it (method, URL,
headers, streamed body, extensions: the timeouts among them), the answer's body streams
back, and httpcore's errors become httpx's, the more specific first, as httpx's own
transport maps them: callers catch ``httpx.HTTPError`` whichever transport sent the request.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterable, AsyncIterator, Iterator
from typing import Final

import httpcore
import httpx

__all__ = ["PoolTransport"]


class PoolTransport(httpx.AsyncBaseTransport):
    """Requests sent through ``pool`` (a connection pool, or a proxy's), closed with it."""

    def __init__(self, pool: httpcore.AsyncConnectionPool) -> None:
        self._pool = pool

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.AsyncByteStream)
        url = request.url
        sent = httpcore.Request(
            method=request.method,
            url=httpcore.URL(scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        with _as_httpx_errors():
            answer = await self._pool.handle_async_request(sent)
        assert isinstance(answer.stream, AsyncIterable)
        return httpx.Response(
            answer.status, headers=answer.headers, stream=_Body(answer.stream), extensions=answer.extensions
        )

    async def aclose(self) -> None:
        await self._pool.aclose()


class _Body(httpx.AsyncByteStream):
    def __init__(self, chunks: AsyncIterable[bytes]) -> None:
        self._chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _as_httpx_errors():
            async for chunk in self._chunks:
                yield chunk

    async def aclose(self) -> None:
        close = getattr(self._chunks, "aclose", None)
        if close is not None:
            await close()


#: httpcore's errors as httpx's, the more specific first (what httpx's own transport does).
_ERRORS: Final[tuple[tuple[type[Exception], type[httpx.HTTPError]], ...]] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.ProxyError, httpx.ProxyError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
)


@contextlib.contextmanager
def _as_httpx_errors() -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        for theirs, ours in _ERRORS:
            if isinstance(exc, theirs):
                raise ours(str(exc)) from exc
        raise
