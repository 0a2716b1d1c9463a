"""Micro-benchmarks: the per-request pieces of mcp-elicit's work, timed alone.

* sealing plus opening a ``requestState`` of 200 bytes and of 4 KiB, next to a bare
  AES-256-GCM encrypt+decrypt of the same bytes (fresh 12-byte nonce, no associated data)
  with the same ``cryptography`` build: the difference is what the envelope costs
  (binding, expiry, hex, checks);
* computing a request's binding (the SHA-256 of its canonical arguments);
* decoding and checking a ``tools/call`` request (JSON-RPC decode plus the 2026-07-28
  ``_meta``/header checks) as the HTTP transport does;
* building the form ``Form(region=String())`` and validating an answer against it.

``--sdk`` times the official SDK's ``AESGCMRequestStateCodec`` seal+unseal of the same
payloads instead (run it with the SDK's interpreter), as a reference point.

Each figure is the median of ``--repeat`` timings of ``--number`` calls, in µs per call,
with the min and max. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

KEY = bytes(range(32))
SIZES = {"200 B": 200, "4 KiB": 4096}


def timed(fn: Callable[[], object], *, number: int, repeat: int) -> dict[str, float]:
    """µs per call of ``fn``: median, min and max over ``repeat`` loops of ``number`` calls."""
    fn()  # warm caches and lazy imports
    samples = []
    clock = time.perf_counter_ns
    for _ in range(repeat):
        start = clock()
        for _ in range(number):
            fn()
        samples.append((clock() - start) / number / 1e3)
    return {"median": statistics.median(samples), "min": min(samples), "max": max(samples)}


def bare_aesgcm(payload: bytes) -> Callable[[], object]:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    aead = AESGCM(KEY)

    def run() -> object:
        nonce = os.urandom(12)
        return aead.decrypt(nonce, aead.encrypt(nonce, payload, None), None)

    return run


def elicit_benchmarks(number: int, repeat: int) -> dict[str, Any]:
    from mcp_elicit.core.mrtr import binding_for
    from mcp_elicit.core.server import ServerCore, ServerIdentity
    from mcp_elicit.forms import Form, String
    from mcp_elicit.sealing import KeyRing, StateSealer
    from mcp_elicit.wire import jsonrpc

    sealer = StateSealer(KeyRing([KEY]), server_id="bench/")
    arguments = {"name": "web-1"}
    binding = binding_for("tools/call", {"name": "provision", "arguments": arguments}, None)
    now = time.time()
    out: dict[str, Any] = {}
    for label, size in SIZES.items():
        payload = os.urandom(size)

        def seal_open(payload: bytes = payload) -> object:
            return sealer.open(sealer.seal(payload, binding, now=now), binding, now=now)

        out[f"requestState seal+open, {label}"] = timed(seal_open, number=number, repeat=repeat)
        out[f"bare AES-GCM encrypt+decrypt, {label}"] = timed(
            bare_aesgcm(payload), number=number, repeat=repeat
        )

    params = {"name": "provision", "arguments": arguments}
    out["request binding (arguments digest)"] = timed(
        lambda: binding_for("tools/call", params, None), number=number, repeat=repeat
    )

    token = sealer.seal(b'{"v":1,"r":1,"a":{},"p":{"elicit-1":"x"}}', binding, now=now)
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {
                "name": "provision",
                "arguments": arguments,
                "inputResponses": {"elicit-1": {"action": "accept", "content": {"region": "eu-west-1"}}},
                "requestState": token,
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
                    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
                },
            },
        }
    ).encode()
    headers = {
        "host": "127.0.0.1:8000",
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "provision",
    }
    core = ServerCore(ServerIdentity(name="bench", version="0"))

    def parse_check() -> object:
        message = jsonrpc.decode(body)
        assert isinstance(message, jsonrpc.Request)
        return core.check_modern(message, headers)

    out["tools/call decode + check (the retry, 2026-07-28)"] = timed(
        parse_check, number=number, repeat=repeat
    )
    form = Form(region=String())
    answer = {"region": "eu-west-1"}
    out["form answer validation"] = timed(lambda: form.validate(answer), number=number, repeat=repeat)
    out["form build: Form(region=String())"] = timed(
        lambda: Form(region=String()), number=number, repeat=repeat
    )
    return out


def sdk_benchmarks(number: int, repeat: int) -> dict[str, Any]:
    from mcp.server.request_state import AESGCMRequestStateCodec

    codec = AESGCMRequestStateCodec([KEY])
    out: dict[str, Any] = {}
    for label, size in SIZES.items():
        payload = os.urandom(size)
        out[f"SDK codec seal+unseal, {label}"] = timed(
            lambda payload=payload: codec.unseal(codec.seal(payload)), number=number, repeat=repeat
        )
        out[f"bare AES-GCM encrypt+decrypt, {label}"] = timed(
            bare_aesgcm(payload), number=number, repeat=repeat
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--number", type=int, default=2000, help="calls per timing")
    parser.add_argument("--repeat", type=int, default=7, help="timings per figure")
    parser.add_argument("--sdk", action="store_true", help="time the official SDK's codec instead")
    parser.add_argument("--cpu", type=int, help="pin to this core")
    args = parser.parse_args(argv)
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})
    run = sdk_benchmarks if args.sdk else elicit_benchmarks
    json.dump(run(args.number, args.repeat), sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
