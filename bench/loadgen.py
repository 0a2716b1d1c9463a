"""The load generator every server in the benchmark is measured with.

Lean on purpose, so that it is never what limits a number: one ``asyncio.Protocol`` per
client over one HTTP/1.1 keep-alive connection, requests built from byte templates,
responses framed by ``Content-Length`` or chunked encoding and nothing else. JSON is
parsed only where the check needs it (orjson when importable, uvloop likewise).

Two workloads:

* ``rounds``: a complete multi round-trip round of the ``provision`` tool, as a client
  of revision 2026-07-28 (stateless) sends it: ``tools/call`` answered with
  ``input_required``, then the retry with a new id, ``inputResponses`` under the key the
  server chose and ``requestState`` echoed. The final text is checked on every round.
* ``list``: ``tools/list``, one request at a time per client.

Every response is checked (status, id, result shape); a failed check counts as an error
and a run with errors is invalid. The run warms up first, then measures for a fixed
time: a round counts when it completes inside the window; its latency is from the first
request's send to the final response. Around the window the generator reads the server
process's own CPU accounting (``/proc/<pid>/stat`` utime+stime) and its resident memory,
and its own CPU time, to show how busy it was itself.

``--keep-awake`` is a diagnostic that ``make bench`` does not use: the generator's loop
never sleeps (a callback that schedules itself again), so its core never goes idle and an
answer never has to wake it. On a machine whose idle cores halt at once (a VM without
halt polling) that wake-up is paid inside the server's ``write``; the option measures how
much of a server's CPU per round that is (see "Where the excess goes" in
``docs/benchmarks.md``).

Run ``python bench/loadgen.py --help``; it prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

try:
    import orjson

    _loads: Callable[[bytes], Any] = orjson.loads
    _dumps: Callable[[Any], bytes] = orjson.dumps
except ImportError:  # pragma: no cover - the project venv has orjson
    _loads = json.loads

    def _dumps(value: Any) -> bytes:
        return json.dumps(value, separators=(",", ":")).encode()


EXPECTED_TEXT = "Provisioned web-1 in eu-west-1"
_META = (
    b'"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    b'"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},'
    b'"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}}'
)
_CALL_PARAMS = b'{"name":"provision","arguments":{"name":"web-1"},'
_ANSWER = b'{"action":"accept","content":{"region":"eu-west-1"}}'
_CLK_TCK = os.sysconf("SC_CLK_TCK")


class CheckFailed(Exception):
    """A response that is not what a correct server sends for this workload."""


# ---- HTTP/1.1 client ---------------------------------------------------------------


class _Conn(asyncio.Protocol):
    """One keep-alive connection: send a request, await its framed response."""

    def __init__(self) -> None:
        self.buf = bytearray()
        self.transport: Any = None  # uvloop's transports are not asyncio.Transport subclasses
        self.waiter: asyncio.Future[tuple[int, bool, bytes]] | None = None
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buf += data
        waiter = self.waiter
        if waiter is None or waiter.done():
            return
        try:
            response = self._parse()
        except Exception as exc:
            self.waiter = None
            waiter.set_exception(CheckFailed(f"unreadable HTTP response: {exc!r}"))
            return
        if response is not None:
            self.waiter = None
            waiter.set_result(response)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(ConnectionError("the server closed the connection"))

    def request(self, data: bytes) -> asyncio.Future[tuple[int, bool, bytes]]:
        assert self.transport is not None
        self.waiter = asyncio.get_running_loop().create_future()
        self.transport.write(data)
        return self.waiter

    def _parse(self) -> tuple[int, bool, bytes] | None:
        """``(status, is_sse, body)`` once a whole response is buffered, else None."""
        buf = self.buf
        end = buf.find(b"\r\n\r\n")
        if end < 0:
            return None
        head = bytes(buf[:end]).lower()
        status = int(head[9:12])
        start = end + 4
        at = head.find(b"\r\ncontent-length:")
        if at >= 0:
            eol = head.find(b"\r\n", at + 17)
            total = start + int(head[at + 17 : eol if eol >= 0 else len(head)])
            if len(buf) < total:
                return None
            body = bytes(buf[start:total])
        elif b"\r\ntransfer-encoding: chunked" in head:
            chunks: list[bytes] = []
            pos = start
            while True:
                eol = buf.find(b"\r\n", pos)
                if eol < 0:
                    return None
                size = int(bytes(buf[pos:eol]).split(b";", 1)[0], 16)
                if len(buf) < eol + 2 + size + 2:
                    return None
                if size == 0:
                    total = eol + 4  # no trailers
                    break
                chunks.append(bytes(buf[eol + 2 : eol + 2 + size]))
                pos = eol + 2 + size + 2
            body = b"".join(chunks)
        else:
            raise CheckFailed("a response with neither Content-Length nor chunked encoding")
        del buf[:total]
        return status, b"content-type: text/event-stream" in head, body


def _head(host: bytes, method: bytes, name: bytes | None) -> bytes:
    head = (
        b"POST /mcp HTTP/1.1\r\nHost: " + host + b"\r\nContent-Type: application/json\r\n"
        b"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
        b"Mcp-Method: " + method + b"\r\n"
    )
    if name is not None:
        head += b"Mcp-Name: " + name + b"\r\n"
    return head + b"Content-Length: "


def _message(status: int, sse: bool, body: bytes, rid: int) -> dict[str, Any]:
    """The ``result`` of the JSON-RPC response to request ``rid``; CheckFailed otherwise."""
    if status != 200:
        raise CheckFailed(f"HTTP {status}: {body[:200]!r}")
    if sse:
        for line in body.split(b"\n"):
            if line.startswith(b"data:"):
                message = _loads(line[5:])
                if isinstance(message, dict) and message.get("id") == rid:
                    break
        else:
            raise CheckFailed(f"no SSE event answers id {rid}")
    else:
        message = _loads(body)
    if not isinstance(message, dict) or message.get("id") != rid:
        raise CheckFailed(f"response id is not {rid}: {body[:200]!r}")
    result = message.get("result")
    if not isinstance(result, dict):
        raise CheckFailed(f"no result: {body[:300]!r}")
    return result


class Client:
    """One simulated client with its own connection and request ids."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        authority = f"{host}:{port}".encode()
        self.call_head = _head(authority, b"tools/call", b"provision")
        self.list_head = _head(authority, b"tools/list", None)
        self.next_id = 0
        self.conn: _Conn | None = None

    async def connect(self) -> _Conn:
        loop = asyncio.get_running_loop()
        _, conn = await loop.create_connection(_Conn, self.host, self.port)
        self.conn = conn
        return conn

    async def _post(self, head: bytes, body: bytes) -> tuple[int, bool, bytes]:
        conn = self.conn
        if conn is None or conn.closed:
            conn = await self.connect()
        return await conn.request(head + str(len(body)).encode() + b"\r\n\r\n" + body)

    async def round(self) -> None:
        """One complete round; raises CheckFailed (or a connection error) when it fails."""
        self.next_id += 2
        rid = self.next_id - 1
        body = b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s%s}}' % (rid, _CALL_PARAMS, _META)
        result = _message(*await self._post(self.call_head, body), rid)
        if result.get("resultType") != "input_required":
            raise CheckFailed(f"first call: resultType {result.get('resultType')!r}, not input_required")
        requests = result.get("inputRequests")
        state = result.get("requestState")
        if not isinstance(requests, dict) or len(requests) != 1 or not isinstance(state, str):
            raise CheckFailed("first call: want exactly one input request and a requestState")
        ((key, ask),) = requests.items()
        if not isinstance(ask, dict) or ask.get("method") != "elicitation/create":
            raise CheckFailed(f"first call: the input request is not elicitation/create: {ask!r}")
        schema = ask.get("params", {}).get("requestedSchema", {})
        if "region" not in schema.get("properties", {}):
            raise CheckFailed("first call: the form does not ask for region")
        rid += 1
        body = (
            b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s"inputResponses":{%s:%s},'
            b'"requestState":%s,%s}}' % (rid, _CALL_PARAMS, _dumps(key), _ANSWER, _dumps(state), _META)
        )
        result = _message(*await self._post(self.call_head, body), rid)
        content = result.get("content")
        if (
            result.get("isError")
            or result.get("resultType", "complete") != "complete"
            or not isinstance(content, list)
            or not content
            or content[0].get("text") != EXPECTED_TEXT
        ):
            raise CheckFailed(f"retry: not the expected text: {json.dumps(result)[:300]}")

    async def list_tools(self) -> None:
        self.next_id += 1
        rid = self.next_id
        body = b'{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{%s}}' % (rid, _META)
        result = _message(*await self._post(self.list_head, body), rid)
        tools = result.get("tools")
        if not isinstance(tools, list) or not tools or tools[0].get("name") != "provision":
            raise CheckFailed(f"tools/list: provision is not listed: {json.dumps(result)[:300]}")


# ---- measurement -------------------------------------------------------------------


def proc_cpu_seconds(pid: int) -> float:
    """utime+stime of process ``pid`` (all its threads), from the kernel's accounting."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        stat = f.read()
    fields = stat[stat.rindex(b")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / _CLK_TCK  # fields 14 and 15 of stat(5)


def machine_busy_seconds() -> float:
    """CPU time all cores spent busy (not idle or iowait) since boot, from /proc/stat."""
    with open("/proc/stat", "rb") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) / _CLK_TCK


def proc_rss_kib(pid: int) -> int:
    """Resident memory (VmRSS) of process ``pid`` in KiB."""
    with open(f"/proc/{pid}/status", "rb") as f:
        for line in f:
            if line.startswith(b"VmRSS:"):
                return int(line.split()[1])
    return 0


@dataclass
class Tally:
    """What the clients observed inside the window."""

    t0: float = 0.0
    t1: float = float("inf")
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    error_samples: list[str] = field(default_factory=list)
    stop: bool = False
    #: Turns of the loop made awake by ``--keep-awake`` (0 without it).
    spins: int = 0


async def _client_loop(client: Client, op: Callable[[], Any], tally: Tally) -> None:
    clock = time.perf_counter
    while not tally.stop:
        start = clock()
        try:
            await op()
        except (CheckFailed, ConnectionError, OSError, ValueError, KeyError, TypeError) as exc:
            tally.errors += 1
            if len(tally.error_samples) < 5:
                tally.error_samples.append(f"{type(exc).__name__}: {exc}")
            if client.conn is not None and client.conn.transport is not None:
                client.conn.transport.close()
            client.conn = None
            await asyncio.sleep(0.01)
            continue
        end = clock()
        if tally.t0 <= end <= tally.t1:
            tally.latencies.append(end - start)


def _percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return float("nan")
    index = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[index]


async def measure(
    host: str,
    port: int,
    *,
    mode: str,
    clients: int,
    warmup: float,
    duration: float,
    server_pid: int | None,
    keep_awake: bool = False,
) -> dict[str, Any]:
    """Drive the server with ``clients`` concurrent clients; the figures of one window."""
    pool = [Client(host, port) for _ in range(clients)]
    await asyncio.gather(*(c.connect() for c in pool))
    tally = Tally()
    if keep_awake:
        loop = asyncio.get_running_loop()

        def spin() -> None:
            tally.spins += 1
            if not tally.stop:
                loop.call_soon(spin)

        loop.call_soon(spin)
    tally.t0 = float("inf")  # nothing counts during the warm-up
    tasks = [
        asyncio.ensure_future(_client_loop(c, c.round if mode == "rounds" else c.list_tools, tally))
        for c in pool
    ]
    await asyncio.sleep(warmup)
    errors_in_warmup = tally.errors
    cpu0 = proc_cpu_seconds(server_pid) if server_pid else None
    own0 = os.times()
    busy0 = machine_busy_seconds()
    tally.t1 = float("inf")
    tally.t0 = time.perf_counter()
    await asyncio.sleep(duration)
    tally.t1 = time.perf_counter()
    cpu1 = proc_cpu_seconds(server_pid) if server_pid else None
    own1 = os.times()
    busy1 = machine_busy_seconds()
    rss = proc_rss_kib(server_pid) if server_pid else None
    tally.stop = True
    await asyncio.wait_for(asyncio.gather(*tasks), timeout=30)
    for c in pool:
        if c.conn is not None and c.conn.transport is not None:
            c.conn.transport.close()
    window = tally.t1 - tally.t0
    lat = sorted(tally.latencies)
    done = len(lat)
    server_cpu = None if cpu0 is None or cpu1 is None else cpu1 - cpu0
    own_cpu = (own1.user - own0.user) + (own1.system - own0.system)
    return {
        "mode": mode,
        "clients": clients,
        "window_s": window,
        "completed": done,
        "errors": tally.errors,
        "errors_in_warmup": errors_in_warmup,
        "error_samples": tally.error_samples,
        "per_s": done / window if window > 0 else 0.0,
        "p50_ms": _percentile(lat, 0.50) * 1e3,
        "p99_ms": _percentile(lat, 0.99) * 1e3,
        "server_cpu_s": server_cpu,
        "server_cpu_us_per_op": None if server_cpu is None or not done else server_cpu / done * 1e6,
        "server_rss_kib": rss,
        "loadgen_cpu_s": own_cpu,
        "loadgen_busy": own_cpu / window if window > 0 else 0.0,
        "loadgen_spins": tally.spins,
        # Cores' worth of CPU used by everything else on the machine during the window.
        "other_busy": max(0.0, busy1 - busy0 - own_cpu - (server_cpu or 0.0)) / max(window, 1e-9),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--mode", choices=("rounds", "list"), default="rounds")
    parser.add_argument("--clients", type=int, default=1)
    parser.add_argument("--warmup", type=float, default=0.5, help="seconds before measuring")
    parser.add_argument("--duration", type=float, default=3.0, help="seconds measured")
    parser.add_argument("--server-pid", type=int, help="read this process's CPU time and memory")
    parser.add_argument("--cpu", type=int, help="pin the generator to this core")
    parser.add_argument(
        "--keep-awake",
        action="store_true",
        help="never let the generator's loop sleep (a diagnostic; make bench does not use it)",
    )
    args = parser.parse_args(argv)
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})
    try:
        import uvloop

        runner: Callable[..., Any] = uvloop.run
    except ImportError:  # pragma: no cover
        runner = asyncio.run
    figures = runner(
        measure(
            args.host,
            args.port,
            mode=args.mode,
            clients=args.clients,
            warmup=args.warmup,
            duration=args.duration,
            server_pid=args.server_pid,
            keep_awake=args.keep_awake,
        )
    )
    json.dump(figures, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
