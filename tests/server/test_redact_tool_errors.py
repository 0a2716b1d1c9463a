"""``Server(redact_tool_errors=True)``: a tool's unexpected exception is sent as "Error
executing tool NAME" and a reference, never its message (paths, hosts, SQL); the
server's log line holds the reference, the message and the traceback. A ``ToolError`` is
said on purpose, so it is still sent as it is. The default (False) sends the message
(``test_app``). Real servers: ``mcp-elicit serve`` over stdio (2026-07-28 and a 2025-11-25
session) and over HTTP on 127.0.0.1, every message checked against the schema; and
``mcp-elicit serve --redact-tool-errors``, which turns it on for a server that does not.
A bad argument's fault a validator of the tool's own wrote is withheld too."""

from __future__ import annotations

import logging
import os
import re
import subprocess
from collections.abc import Sequence
from ipaddress import AddressValueError, IPv4Address, IPv4Network, IPv6Address
from pathlib import Path
from typing import Annotated, Any
from zoneinfo import ZoneInfo

import httpx
import pytest
from annotated_types import Not, Predicate
from pydantic import (
    AfterValidator,
    Base64Bytes,
    BaseModel,
    ByteSize,
    DirectoryPath,
    FilePath,
    IPvAnyAddress,
    NewPath,
    field_validator,
)
from pydantic_core import PydanticCustomError
from typing_extensions import TypedDict

from mcp_elicit import Field, Server
from mcp_elicit.errors import ConfigError

from support.http import McpHttp, meta
from support.memory import MemoryClient
from support.procs import cli, http_process, stdio_process
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
SERVER = Path(__file__).with_name("redacted_server.py")
LEAKY = Path(__file__).with_name("leaky_server.py")
SECRET = "db.internal:5432"
SENT = re.compile(r"Error executing tool lookup \(reference ([0-9a-f]{8}) in the server's log\)")


def call(rid: int, name: str, arguments: dict[str, Any], *, modern: bool) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if modern:
        params["_meta"] = meta()
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def reference(result: dict[str, Any], log: str) -> str:
    """The reference the result gives, checked: no trace of the message in the result, the
    log line holding the reference and the message, then the traceback."""
    assert result["isError"] is True
    (block,) = result["content"]
    found = SENT.fullmatch(block["text"])
    assert found is not None, block["text"]
    assert SECRET not in str(result)
    ref = found.group(1)
    line = next(line for line in log.splitlines() if ref in line)
    assert "tool lookup failed" in line
    assert SECRET in log[log.index(line) :] and "Traceback" in log[log.index(line) :]
    return ref


async def test_over_stdio(tmp_path: Path, wire: WireChecker, wire_2025: WireChecker) -> None:
    async with stdio_process(SERVER, log_dir=tmp_path) as stdio:
        await stdio.send(call(1, "lookup", {"order": 7}, modern=True))
        first, _ = await stdio.until(1)
        wire.response("tools/call", first)
        await stdio.send(call(2, "lookup", {"order": 8}, modern=True))
        second, _ = await stdio.until(2)
        await stdio.send(call(3, "refuse", {}, modern=True))
        refused, _ = await stdio.until(3)
        assert refused["result"]["content"][0]["text"] == "No orders today"
        # a 2025-11-25 session's call, on the same server
        init = {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
        await stdio.send(init)
        await stdio.until(4)
        await stdio.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await stdio.send(call(5, "lookup", {"order": 9}, modern=False))
        old, _ = await stdio.until(5)
        wire_2025.response("tools/call", old)
        await stdio.close_stdin()
        await stdio.rest()
        log = stdio.stderr()
    refs = {reference(r["result"], log) for r in (first, second, old)}
    assert len(refs) == 3, "each failure has its own reference"


async def test_over_http(tmp_path: Path, wire: WireChecker) -> None:
    with http_process(SERVER, log_dir=tmp_path) as running:
        async with httpx.AsyncClient(timeout=10) as http:
            reply = await McpHttp(http, running.url, wire).call("lookup", {"order": 7})
        assert reply.status == 200
        result = reply.result
        log = running.stderr()
    reference(result, log)


async def test_turned_on_after_the_tools_are_registered(
    wire: WireChecker, caplog: pytest.LogCaptureFixture
) -> None:
    """As a deployment's own start-up code (or a launcher) would: the attribute set once the
    module registered its tools still holds for every one of them, and a bad value is refused."""
    app = Server("late")

    @app.tool()
    def lookup(order: int) -> str:
        raise RuntimeError(f"order {order} on {SECRET} failed")

    app.redact_tool_errors = True
    client = MemoryClient(app, checker=wire)
    with caplog.at_level(logging.ERROR, logger="mcp_elicit.server"):
        result = await client.result("tools/call", {"name": "lookup", "arguments": {"order": 7}})
    reference(result, caplog.text)
    with pytest.raises(ConfigError, match=r"redact_tool_errors 'yes': expected True or False"):
        app.redact_tool_errors = "yes"  # type: ignore[assignment]
    app.redact_tool_errors = False
    again = await client.result("tools/call", {"name": "lookup", "arguments": {"order": 8}})
    assert again["content"][0]["text"] == f"Error executing tool lookup: order 8 on {SECRET} failed"


async def test_serve_switch_over_stdio(tmp_path: Path, wire: WireChecker) -> None:
    """``mcp-elicit serve --redact-tool-errors`` turns it on for a server that does not:
    without the switch the same server sends the message."""
    async with stdio_process(LEAKY, log_dir=tmp_path) as stdio:
        await stdio.send(call(1, "lookup", {"order": 7}, modern=True))
        plain, _ = await stdio.until(1)
    assert SECRET in plain["result"]["content"][0]["text"]
    async with stdio_process(LEAKY, log_dir=tmp_path, args=("--redact-tool-errors",)) as stdio:
        await stdio.send(call(1, "lookup", {"order": 7}, modern=True))
        redacted, _ = await stdio.until(1)
        wire.response("tools/call", redacted)
        await stdio.close_stdin()
        await stdio.rest()
        log = stdio.stderr()
    reference(redacted["result"], log)


async def test_serve_switch_over_http(tmp_path: Path, wire: WireChecker) -> None:
    with http_process(LEAKY, log_dir=tmp_path, args=("--redact-tool-errors",)) as running:
        async with httpx.AsyncClient(timeout=10) as http:
            reply = await McpHttp(http, running.url, wire).call("lookup", {"order": 7})
        assert reply.status == 200
        log = running.stderr()
    reference(reply.result, log)


def test_serve_help_names_the_switch() -> None:
    done = subprocess.run(
        [*cli(), "serve", "--help"], capture_output=True, text=True, check=True, timeout=60, env=os.environ
    )
    said = " ".join(done.stdout.split())
    assert "--redact-tool-errors" in said
    assert "reference" in said[said.index("--redact-tool-errors") :]
    assert "validator" in said[said.index("--redact-tool-errors") :]  # its message withheld too
    assert "prompt" in said[said.index("--redact-tool-errors") :]  # a prompt's and a template's too


def _order_code(code: str) -> str:
    if not code.startswith("A"):
        raise ValueError(f"{code!r} is not in orders on {SECRET}")
    return code


class Order(BaseModel):
    code: str

    @field_validator("code")
    @classmethod
    def known(cls, code: str) -> str:
        assert code.isupper(), f"lower case codes live on {SECRET}"
        return code


async def test_a_validators_message_is_withheld(wire: WireChecker, caplog: pytest.LogCaptureFixture) -> None:
    """A validator's own ValueError or AssertionError text is the tool's code's, as an
    exception's is: redacted, the fault keeps its place and gets a reference, the log holds
    the text. pydantic's own words about the value (a type, a bound) are still sent, so the
    model can correct the call; without redaction the validator's text is sent too."""
    app = Server("validated", redact_tool_errors=True)

    @app.tool()
    def lookup(code: Annotated[str, AfterValidator(_order_code)], order: Order, count: int) -> str:
        return code

    client = MemoryClient(app, checker=wire)
    arguments = {"code": "B7", "order": {"code": "a1"}, "count": "two"}
    with caplog.at_level(logging.WARNING, logger="mcp_elicit.server"):
        result = await client.result("tools/call", {"name": "lookup", "arguments": arguments})
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert SECRET not in text
    found = re.fullmatch(
        r"lookup: Invalid arguments: code: the validator's message withheld \(reference ([0-9a-f]{8}) "
        r"in the server's log\); order\.code: the validator's message withheld \(reference \1 in the "
        r"server's log\); count: Input should be a valid integer",
        text,
    )
    assert found is not None, text
    (line,) = [r.getMessage() for r in caplog.records if found.group(1) in r.getMessage()]
    assert f"'B7' is not in orders on {SECRET}" in line and f"lower case codes live on {SECRET}" in line
    app.redact_tool_errors = False
    plain = await client.result("tools/call", {"name": "lookup", "arguments": arguments})
    assert f"code: Value error, 'B7' is not in orders on {SECRET}" in plain["content"][0]["text"]


def _custom(code: str) -> str:
    raise PydanticCustomError("order_unknown", "order {code} is not on " + SECRET, {"code": code})


def _posing(code: str) -> str:
    raise PydanticCustomError("string_type", f"a string, as {SECRET} keeps them")


async def test_a_validators_own_error_type_is_withheld_and_the_formats_words_are_sent(
    wire: WireChecker, caplog: pytest.LogCaptureFixture
) -> None:
    """A validator may raise pydantic's ``PydanticCustomError`` with a type of its own, or
    with one of pydantic's types and words of its own: either is the tool's code's text,
    withheld. A ``Field(format=...)`` check is mcp-elicit's, about the value: sent, so the
    model can write the date right."""
    app = Server("custom", redact_tool_errors=True)

    @app.tool()
    def lookup(
        code: Annotated[str, AfterValidator(_custom)],
        alias: Annotated[str, AfterValidator(_posing)],
        day: Annotated[str, Field(format="date")],
    ) -> str:
        return code

    client = MemoryClient(app, checker=wire)
    arguments = {"code": "B7", "alias": "b", "day": "tomorrow"}
    with caplog.at_level(logging.WARNING, logger="mcp_elicit.server"):
        result = await client.result("tools/call", {"name": "lookup", "arguments": arguments})
    text = result["content"][0]["text"]
    assert SECRET not in text, text
    found = re.fullmatch(
        r"lookup: Invalid arguments: code: the validator's message withheld \(reference ([0-9a-f]{8}) "
        r"in the server's log\); alias: the validator's message withheld \(reference \1 in the "
        r"server's log\); day: Value error, .*date.*",
        text,
    )
    assert found is not None, text
    (line,) = [r.getMessage() for r in caplog.records if found.group(1) in r.getMessage()]
    assert f"order B7 is not on {SECRET}" in line and f"a string, as {SECRET} keeps them" in line


async def test_a_prompts_validator_is_withheld_too(
    wire: WireChecker, caplog: pytest.LogCaptureFixture
) -> None:
    """A prompt's argument validator is the server's code as a tool's is: redacted, its
    -32602 says the fault's place and a reference, the log holds the text; a prompt's
    unexpected exception was never sent. Set later, the switch holds for prompts too."""
    app = Server("prompted")

    @app.prompt()
    def plan(code: Annotated[str, AfterValidator(_order_code)]) -> str:
        return code

    app.redact_tool_errors = True
    client = MemoryClient(app, checker=wire)
    with caplog.at_level(logging.WARNING, logger="mcp_elicit.server"):
        error = (await client.request("prompts/get", {"name": "plan", "arguments": {"code": "B7"}}))["error"]
    assert error["code"] == -32602 and SECRET not in error["message"], error
    found = re.fullmatch(
        r"Invalid params for prompt 'plan': Invalid arguments: code: the validator's message withheld "
        r"\(reference ([0-9a-f]{8}) in the server's log\)",
        error["message"],
    )
    assert found is not None, error
    (line,) = [r.getMessage() for r in caplog.records if found.group(1) in r.getMessage()]
    assert f"'B7' is not in orders on {SECRET}" in line
    app.redact_tool_errors = False
    plain = (await client.request("prompts/get", {"name": "plan", "arguments": {"code": "B7"}}))["error"]
    assert f"'B7' is not in orders on {SECRET}" in plain["message"]


async def test_a_resource_templates_validator_is_withheld_too(
    wire: WireChecker, caplog: pytest.LogCaptureFixture
) -> None:
    """A URI a template's validator refuses is "not found", the reason naming the fault:
    redacted, the validator's own words are withheld there too, the log holding them."""
    app = Server("templated", redact_tool_errors=True)

    @app.resource("test://orders/{code}")
    def order(code: Annotated[str, AfterValidator(_order_code)]) -> str:
        return code

    client = MemoryClient(app, checker=wire)
    with caplog.at_level(logging.WARNING, logger="mcp_elicit.server"):
        error = (await client.request("resources/read", {"uri": "test://orders/B7"}))["error"]
    assert error["code"] == -32602 and SECRET not in error["message"], error
    found = re.search(
        r"code: the validator's message withheld \(reference ([0-9a-f]{8}) in the server's log\)",
        error["message"],
    )
    assert found is not None, error
    (line,) = [r.getMessage() for r in caplog.records if found.group(1) in r.getMessage()]
    assert f"'B7' is not in orders on {SECRET}" in line


class Point(BaseModel):
    x: int


class Pair(TypedDict):
    a: int


def _even(number: int) -> bool:
    return number % 2 == 0


async def test_pydantics_own_words_are_sent_as_they_are(
    tmp_path: Path, wire: WireChecker, caplog: pytest.LogCaptureFixture
) -> None:
    """What pydantic writes of a bad value is the model's to read, to correct its call:
    with redaction, sent as without it, and nothing logged. That holds for the words it
    writes of a value decoded from JSON (a string for an object: 'Input should be an
    object'), and for those of the checks it writes in Python (an IP address, a time zone,
    a byte size, a path, base64, a predicate), whose error types pydantic-core does not know."""
    app = Server("typed", redact_tool_errors=True)

    @app.tool()
    def lookup(
        point: Point,
        points: list[Point],
        tags: dict[str, int],
        pair: Pair,
        either: int | Point,
        span: tuple[int, int],
        ip: IPv4Address,
        ip6: IPv6Address,
        anywhere: IPvAnyAddress,
        network: IPv4Network,
        zone: ZoneInfo,
        size: ByteSize,
        names: Sequence[str],
        even: Annotated[int, Predicate(_even)],
        odd: Annotated[int, Not(_even)],
        file: FilePath,
        folder: DirectoryPath,
        new: NewPath,
        blob: Base64Bytes,
    ) -> str:
        return "found"

    arguments = {
        "point": "p",
        "points": "p",
        "tags": "t",
        "pair": "p",
        "either": "e",
        "span": "s",
        "ip": "1.2.3",
        "ip6": "x",
        "anywhere": "x",
        "network": "x",
        "zone": "Mars/Base",
        "size": "12 XB",
        "names": "abc",
        "even": 3,
        "odd": 4,
        "file": str(tmp_path / "absent"),
        "folder": str(tmp_path / "absent"),
        "new": str(tmp_path),
        "blob": "a",
    }
    client = MemoryClient(app, checker=wire)
    with caplog.at_level(logging.WARNING, logger="mcp_elicit.server"):
        redacted = await client.result("tools/call", {"name": "lookup", "arguments": arguments})
    app.redact_tool_errors = False
    plain = await client.result("tools/call", {"name": "lookup", "arguments": arguments})
    text = redacted["content"][0]["text"]
    assert "withheld" not in text, text
    assert text == plain["content"][0]["text"]
    assert "point: Input should be an object" in text and "zone: invalid timezone: Mars/Base" in text
    assert not [r for r in caplog.records if "reference" in r.getMessage()]


async def test_pydantics_own_words_about_a_prompts_and_a_templates_arguments_are_sent(
    wire: WireChecker, caplog: pytest.LogCaptureFixture
) -> None:
    """A prompt's and a template's arguments are read from text (pydantic's lax check),
    where its own checks have their own words: sent, as a tool's are."""
    app = Server("lax", redact_tool_errors=True)

    @app.prompt()
    def plan(host: IPv4Address, size: ByteSize) -> str:
        return str(host)

    @app.resource("test://hosts/{host}")
    def host(host: IPv4Address) -> str:
        return str(host)

    client = MemoryClient(app, checker=wire)
    with caplog.at_level(logging.WARNING, logger="mcp_elicit.server"):
        arguments = {"host": "1.2.3", "size": "12 XB"}
        prompt = (await client.request("prompts/get", {"name": "plan", "arguments": arguments}))["error"]
        template = (await client.request("resources/read", {"uri": "test://hosts/1.2.3"}))["error"]
    assert prompt["message"] == (
        "Invalid params for prompt 'plan': Invalid arguments: host: Input is not a valid IPv4 address; "
        "size: could not interpret byte unit: XB"
    )
    assert "host: Input is not a valid IPv4 address" in template["message"], template
    assert not [r for r in caplog.records if "reference" in r.getMessage()]


def _pydantic_like(value: str) -> str:
    raise ValueError("Input should be a valid integer")


def _in_our_range(value: str) -> str:
    raise AddressValueError(f"{value!r} is not on {SECRET}")


PydanticLike = Annotated[str, AfterValidator(_pydantic_like)]
InOurRange = Annotated[str, AfterValidator(_in_our_range)]


async def test_a_validators_words_that_read_as_pydantics_or_ipaddress_are_withheld(wire: WireChecker) -> None:
    """A validator's ValueError is its own even when its words are pydantic's, and an
    ``AddressValueError`` a validator raises itself (naming the value sent, and more) is
    not the ``ipaddress`` module's: both withheld."""
    app = Server("checked", redact_tool_errors=True)

    @app.tool()
    def alike(host: PydanticLike) -> str:
        return host

    @app.tool()
    def ranged(host: InOurRange) -> str:
        return host

    client = MemoryClient(app, checker=wire)
    for name in ("alike", "ranged"):
        result = await client.result("tools/call", {"name": name, "arguments": {"host": "1.2.3"}})
        text = result["content"][0]["text"]
        assert "withheld" in text and SECRET not in text and "valid integer" not in text, (name, text)
