"""The README's fragments: every Python block compiles and is run here, each fragment (sign-in,
resource metadata, form, URL mode, tasks) does what the README says, and the defaults,
performance figures, files, make targets and layout it names are the real ones."""

from __future__ import annotations

import ast
import inspect
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_elicit import Boolean, Choice, Context, Form, Server, StaticTokens
from mcp_elicit.client import ElicitAnswer, ElicitationRequest
from mcp_elicit.transports.memory import connect_memory

from support.procs import ROOT
from support.readme import README, REVISIONS, Block, block_starting, blocks


def compiled(block: Block) -> Any:
    """The block compiled as it stands (top-level ``await`` and ``async with`` allowed)."""
    return compile(block.text, f"README.md:{block.line}", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


def run_fragment(block: Block, names: Mapping[str, Any], *, offline: bool = False) -> dict[str, Any]:
    """Execute the block with ``names`` supplied; ``offline`` leaves out its top-level
    ``async with`` statements (they connect to servers that are only examples)."""
    compiled(block)
    tree = ast.parse(block.text)
    if offline:
        tree.body = [s for s in tree.body if not isinstance(s, ast.AsyncWith)]
    namespace = dict(names)
    exec(compile(tree, f"README.md:{block.line}", "exec"), namespace)
    return namespace


FRAGMENTS = {
    "# app.py": "test_app_py_*",
    "# client.py": "test_client_py_books_through_app_py",
    "import os": "test_the_client_sign_in_fragment",
    "from mcp_elicit.server.auth import ResourceMetadata": "test_the_resource_metadata_fragment",
    "from mcp_elicit import Boolean, Choice, Form": "test_the_form_fragment",
    "app.oauth_provider(": "test_the_url_mode_fragment",
    "@app.tool(task=": "test_the_tasks_fragment",
    "# What narrows": "test_the_readme_servers_and_each_way_of_narrowing_type_check_strictly",
    "from mcp_elicit import RateLimited": "test_the_rate_limited_fragment",
    "# lifespan": "test_the_lifespan_fragment",
}


def test_every_python_block_compiles_and_is_run_here() -> None:
    python = blocks("python")
    for block in python:
        compiled(block)
    assert sorted(next(k for k in FRAGMENTS if b.first.startswith(k)) for b in python) == sorted(FRAGMENTS)


def test_the_client_sign_in_fragment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp_elicit.transports.http_auth import OAuth
    from mcp_elicit.transports.http_grants import EnterpriseIdp
    from mcp_elicit.transports.oauth_loopback import LoopbackAuthorizer

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI_BOT_SECRET", "s1")
    monkeypatch.setenv("SECRET", "s2")
    block = block_starting("python", "import os")
    assert "async with connect_http(" in block.text
    names = run_fragment(block, {"id_token": "an ID token"}, offline=True)
    assert isinstance(names["person"], LoopbackAuthorizer)
    assert isinstance(names["company"], EnterpriseIdp)
    assert isinstance(names["auth"], OAuth)
    assert not (tmp_path / "tokens.json").exists(), "nothing is stored before a sign-in"


@pytest.mark.anyio
async def test_the_resource_metadata_fragment() -> None:
    from mcp_elicit.transports.http_server import StreamableHTTP

    block = block_starting("python", "from mcp_elicit.server.auth import ResourceMetadata")
    names = run_fragment(block, {"Server": Server, "my_token_verifier": StaticTokens({"t": "alice"})})
    app = names["app"]
    assert isinstance(app, Server)
    transport = httpx.ASGITransport(app=StreamableHTTP(app))
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as http:
        metadata = await http.get("/.well-known/oauth-protected-resource/mcp")
        refused = await http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert metadata.status_code == 200, metadata.text
    assert metadata.json()["authorization_servers"] == ["https://auth.example.com"]
    assert refused.status_code == 401
    assert "/.well-known/oauth-protected-resource/mcp" in refused.headers["www-authenticate"]


def test_the_form_fragment() -> None:
    names = run_fragment(block_starting("python", "from mcp_elicit import Boolean, Choice, Form"), {})
    assert list(names["form"].to_json()["properties"]) == ["party_size", "date", "seating", "dietary", "ok"]


@pytest.mark.anyio
async def test_the_url_mode_fragment() -> None:
    pytest.importorskip("authlib")
    app = Server("bookings")
    run_fragment(block_starting("python", "app.oauth_provider("), {"app": app, "Context": Context})
    async with connect_memory(app) as client:
        assert [t["name"] for t in await client.list_tools()] == ["check_availability", "share_to_calendar"]


@pytest.mark.anyio
async def test_the_rate_limited_fragment() -> None:
    """The fragment catches the refusal of a call past the budget and waits what it says."""
    app = Server("search", max_calls_per_minute=1, call_burst=1)

    @app.tool()
    async def search(q: str) -> str:
        return f"found {q}"

    waits: list[float] = []

    class Clock:  # stands in for anyio in the fragment: records the wait instead of sleeping it
        @staticmethod
        async def sleep(seconds: float) -> None:
            waits.append(seconds)

    async with connect_memory(app) as client:
        first = await client.call_tool("search", {"q": "noma"})
        assert first["content"][0]["text"] == "found noma"
        block = block_starting("python", "from mcp_elicit import RateLimited")
        await eval(compiled(block), {"client": client, "anyio": Clock})
    assert len(waits) == 1 and 0 < waits[0] <= 60, waits


@pytest.mark.anyio
async def test_the_lifespan_fragment() -> None:
    """Its HTTP client is opened when the server starts serving, reached from the handler's
    module the way the handler reaches it, and closed once the server has stopped (the
    example's API is not called: the tests reach no host but 127.0.0.1)."""
    names = run_fragment(block_starting("python", "# lifespan"), {})
    app = names["app"]
    async with connect_memory(app) as client:
        assert [t["name"] for t in await client.list_tools()] == ["forecast"]
        http = app.lifespan_context
        assert isinstance(http, httpx.AsyncClient) and not http.is_closed
        assert str(http.base_url) == "https://api.example.com"
    assert http.is_closed
    with pytest.raises(RuntimeError, match="is not running"):
        app.lifespan_context  # noqa: B018


@dataclass
class Deployer:
    """Answers the tasks fragment's two questions: staging, then yes."""

    modes: frozenset[str] = frozenset({"form"})
    asked: list[str] = field(default_factory=list)

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        self.asked.append(request.message)
        return ElicitAnswer.accept(env="staging") if "env" in request.fields else ElicitAnswer.accept(go=True)

    async def url_done(self, request: ElicitationRequest) -> None:
        raise AssertionError("no URL-mode question here")


@pytest.mark.anyio
@pytest.mark.parametrize("revision", REVISIONS)
async def test_the_tasks_fragment(revision: str) -> None:
    """Without the extension the handler goes on in place, on either revision."""
    app = Server("deployments")
    names = {"app": app, "Context": Context, "Form": Form, "Choice": Choice, "Boolean": Boolean}
    run_fragment(block_starting("python", "@app.tool(task="), names)
    person = Deployer()
    async with connect_memory(app, answerer=person, versions=(revision,)) as client:
        result = await client.call_tool("deploy", {"service": "web"})
    assert result["content"][0]["text"] == "deployed", result
    assert person.asked == ["Which environment?", "Deploy web to staging now?"]


def test_the_defaults_the_readme_names() -> None:
    """``Server(x=N)`` in the README is x's default; the others are said in words."""
    from mcp_elicit.transports.http_server import StreamableHTTP

    text = README.read_text(encoding="utf-8")
    server = inspect.signature(Server.__init__).parameters
    named = re.findall(r"`Server\((\w+)=(\d[\d.]*)\)`", text)
    assert len(named) >= 3
    for name, value in named:
        assert server[name].default == float(value), name
    assert "expires after 10 minutes" in text and server["state_ttl"].default == 600
    streams = inspect.signature(StreamableHTTP.__init__).parameters
    assert "an SSE comment every 15 s" in text and streams["keepalive"].default == 15
    assert (
        "for 60 s (`StreamableHTTP(app, resume_within=...)`, `serve --resume-within`)" in text
        and streams["resume_within"].default == 60
    )
    app = Server("limits")
    assert "Past 10,000 tasks held" in text and app.tasks.max_tasks == 10_000
    assert "or 1,000 of one principal's" in text and app.tasks.max_tasks_per_owner == 1_000


def test_the_waits_and_workers_the_readme_names_in_words() -> None:
    """The waits said in words (a script's wait for a URL step's completion notice, the
    wait for ``notifications/initialized``) and the test workers are the real ones."""
    from mcp_elicit.client import Scripted
    from mcp_elicit.server import sessions

    text = " ".join(README.read_text(encoding="utf-8").split())
    completion = inspect.signature(Scripted).parameters["completion_timeout"].default
    assert '`"await_completion": true` waits instead (120 s at most)' in text and completion == 120
    assert "10 s at most, `sessions.INITIALIZED_WAIT`" in text and sessions.INITIALIZED_WAIT == 10
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    (workers,) = re.findall(r"^PYTEST_WORKERS \?= (\d+)$", makefile, re.M)
    assert f"runs the whole suite in {workers} pytest-xdist workers" in text


def test_the_performance_figures_are_those_of_the_run_named() -> None:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Performance") : text.index("## Layout")]
    (named,) = re.findall(r"`(bench/results/\d{4}-\d\d-\d\d\.md)`", section)
    results = (ROOT / named).read_text(encoding="utf-8")

    def summary(row: str) -> str:
        found = re.search(rf"^\| {re.escape(row)} \| ([\d.]+)×", results, re.M)
        assert found is not None, row
        return found.group(1)

    resolver = summary("rounds/s @16 vs the SDK's high-level server with its resolver")
    fastest = summary("rounds/s @16 vs the SDK's fastest variant")
    cpu = summary("server CPU per round vs the canned floor")
    assert f"**{resolver}× the complete rounds per second**" in section
    assert f"**{fastest}×** those of its fastest variant" in section
    assert f"CPU per round is still {cpu}×" in section
    flat = re.search(r"The flat reference .*? costs \d+ µs per round, ([\d.]+)× the floor", results)
    assert flat is not None
    assert f"meets that target ({flat.group(1)}×" in section

    others = ["sdk-resolver", "sdk-lowlevel", "sdk-lowlevel-unsealed", "fastmcp"]
    medians: dict[str, list[str]] = {}
    ratios: dict[str, list[str]] = {}
    for name, cells in re.findall(r"^\| ([a-z-]+) \| (.*) \|$", results, re.M):
        if name in [*others, "mcp-elicit"] and name not in ratios:  # the medians, then the ratios
            table = ratios if name in medians else medians
            table[name] = [cell.split()[0] for cell in cells.split(" | ")]
    # "its latency is lower too": p50 and p99 at 1 and 16 clients, against each of them
    for name in others:
        assert all(float(ratios[name][i].rstrip("×")) > 1 for i in (1, 2, 4, 5)), name
    sdk = sorted(medians[name][-1] for name in others[:3])
    memory = f"{medians['mcp-elicit'][-1]} MiB against the SDK's {sdk[0]}–{sdk[-1]} (FastMCP {medians['fastmcp'][-1]})"
    assert memory in " ".join(section.split()), memory


def test_the_files_and_make_targets_it_names_exist() -> None:
    text = README.read_text(encoding="utf-8")
    named = set(re.findall(r"[`(]((?:tests|examples|docs|bench|mcp_elicit)/[\w./*-]*)[`)]", text))
    assert len(named) > 10
    missing = [path for path in sorted(named) if not list(ROOT.glob(path.rstrip("/")))]
    assert missing == []
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for target in sorted(set(re.findall(r"`make (\w+)`", text))):
        assert re.search(rf"^{target}:", makefile, re.M), target


def test_the_layout_names_every_part_of_the_package() -> None:
    """The README's Layout lists each top-level module and package of ``mcp_elicit``."""
    text = README.read_text(encoding="utf-8")
    layout = text[text.index("## Layout") :]
    (tree,) = re.findall(r"^```\nmcp_elicit/\n(.*?)^```$", layout, re.S | re.M)
    named = set(re.findall(r"^  (\w+(?:\.py|/))", tree, re.M))
    package = ROOT / "mcp_elicit"
    parts = {p.name + "/" for p in package.iterdir() if (p / "__init__.py").exists()}
    parts |= {p.name for p in package.glob("*.py") if p.name not in {"__init__.py", "__main__.py"}}
    assert named == parts


def test_the_exceptions_it_names_are_where_it_says() -> None:
    """Each of mcp-elicit's exceptions the README names is in ``mcp_elicit.errors``, as its
    Errors paragraph says (the builtins', pydantic's and the official SDK's are not ours)."""
    import mcp_elicit
    from mcp_elicit import errors

    text = " ".join(README.read_text(encoding="utf-8").split())
    assert "(`ToolError` comes from `mcp_elicit`; the rest of the exception tree," in text
    assert "from `mcp_elicit.errors`)" in text
    others = {
        "AssertionError",
        "ValueError",
        "TypeError",
        "RuntimeError",
        "PydanticCustomError",
        "UrlElicitationRequiredError",
    }
    named = set(re.findall(r"`([A-Z]\w+(?:Error|NotFound|Required|Reached))\b", text)) - others
    assert len(named) >= 8
    assert [name for name in sorted(named) if not isinstance(getattr(errors, name, None), type)] == []
    assert mcp_elicit.ToolError is errors.ToolError


def test_the_limits_and_waits_it_states_are_the_code_s() -> None:
    """Each bound or wait the README states as a number, beside the code's own value: a
    change to one of them must change the sentence too."""
    from mcp_elicit.cli import call, output, serve_http
    from mcp_elicit.core import client_inputs, subscriptions
    from mcp_elicit.core.dpop import check_proof
    from mcp_elicit.server import sessions
    from mcp_elicit.transports.http_server import StreamableHTTP
    from mcp_elicit.transports.oauth_loopback import LoopbackAuthorizer
    from mcp_elicit.transports.stdio_server import StdioServer
    from mcp_elicit.ui import server_text

    text = " ".join(README.read_text(encoding="utf-8").split())
    http = inspect.signature(StreamableHTTP.__init__).parameters
    stated = {
        "a session runs at most 1024 requests at once": (http["max_in_flight"].default, 1024),
        "has not answered within 10 seconds (`StreamableHTTP(app, verify_timeout=...)`": (
            http["verify_timeout"].default,
            10,
        ),
        "gets 408 once 30 s have passed since the body's first bytes": (http["body_timeout"].default, 30),
        "A session holds at most 256 resource subscriptions, each URI at most 8,192 characters": (
            (sessions.MAX_SUBSCRIPTIONS, subscriptions.MAX_URI),
            (256, 8192),
        ),
        "A template serves URIs of up to 8,192 characters": (subscriptions.MAX_URI, 8192),
        "a message at most 1000 characters and 40 lines, a title 200": (
            (server_text.SAID_MAX, server_text.SAID_LINES, server_text.TITLE_MAX),
            (1000, 40, 200),
        ),
        "so is a URL over 2048 characters": ((client_inputs.MAX_URL, server_text.URL_MAX), (2048, 2048)),
        "the first 20 of them, then one line saying how many more came": (call.LOG_LINES, 20),
        "the first 1,000 notifications or 8 million characters of their JSON": (
            (output.HEARD_COUNT, output.HEARD_CHARS),
            (1000, 8_000_000),
        ),
        "Other requests get 10 s to finish": (serve_http.SHUTDOWN_GRACE, 10),
        "requests still running get 2 s, then are cancelled": (
            inspect.signature(StdioServer.__init__).parameters["grace"].default,
            2,
        ),
        "during the sign-in only (up to 5 minutes)": (
            inspect.signature(LoopbackAuthorizer.__init__).parameters["timeout"].default,
            300,
        ),
        "or EdDSA, within 5 minutes)": (inspect.signature(check_proof).parameters["max_age"].default, 300),
    }
    assert [phrase for phrase in stated if phrase not in text] == []
    assert {phrase: code for phrase, (code, said) in stated.items() if code != said} == {}
