"""The command line, in process: keygen, serve's errors, a configured store checked when
serving starts, a server file that cannot be imported, --json, usage and help."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest

from mcp_elicit.cli.loader import load_server
from mcp_elicit.cli.main import main
from mcp_elicit.cli.serve import _state_keys
from mcp_elicit.sealing import KeyRing

from support.procs import free_port


def test_keygen_prints_a_key_file_that_loads(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["keygen"]) == 0
    text = capsys.readouterr().out
    assert KeyRing.from_text(text).key_ids


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["serve", "does/not/exist.py"], "no such file"),
        (["serve", "examples/demo_server.py:nothing"], "no Server named 'nothing'"),
        (["serve", "examples/demo_server.py", "--http", "nonsense"], "HOST:PORT"),
        (
            ["serve", "examples/demo_server.py", "--http", "127.0.0.1:99999"],
            "--http: port 99999 is not in 1-65535",
        ),
        (["serve", "examples/demo_server.py", "--http", "127.0.0.1:0"], "--http: port 0 is not in 1-65535"),
        (["serve", "examples/demo_server.py", "--http", "127.0.0.1:"], "HOST:PORT"),
        (["serve", "examples/demo_server.py", "--http", "127.0.0.1:\u00b2"], "HOST:PORT"),  # isdigit, not int
        (["serve", "examples/demo_server.py", "--http", "127.0.0.1:" + "9" * 5000], "is not in 1-65535"),
    ],
)
def test_serve_errors_exit_2_with_a_message(
    argv: list[str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    assert fragment in capsys.readouterr().err


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("Booking", "Booking is a class (a dataclass), not an mcp_elicit.Server"),
        ("tool", "tool is a function, not an mcp_elicit.Server"),
    ],
)
def test_serve_names_what_a_name_is_when_it_is_not_a_server(
    name: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app = tmp_path / "app.py"
    app.write_text(
        "from dataclasses import dataclass\n"
        "from mcp_elicit import Server\n"
        "server = Server('bookings')\n"
        "@dataclass\nclass Booking:\n    name: str\n"
        "def tool() -> None: ...\n"
    )
    assert main(["serve", f"{app}:{name}"]) == 2
    err = capsys.readouterr().err
    assert said in err, err
    assert "no Server named" not in err
    assert "app.py:server" in err  # the Server it does define


@pytest.mark.parametrize("target", ["{app}:lazy", "{app}"], ids=["named", "looked-for"])
def test_a_name_whose_reading_raises_is_one_line_exit_2(
    target: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A module ``__getattr__`` (a lazy attribute) that fails: said as an import that
    fails is, not a traceback."""
    app = tmp_path / "lazy_app.py"
    app.write_text("def __getattr__(name):\n    raise RuntimeError('no config for ' + name)\n")
    assert main(["serve", target.format(app=app)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    assert "RuntimeError: no config for " in err, err
    assert "lazy_app.py line 2" in err, err


def test_several_servers_are_named_to_choose_from(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    app = tmp_path / "two.py"
    app.write_text("from mcp_elicit import Server\npublic = Server('a')\nadmin = Server('b')\n")
    assert main(["serve", str(app)]) == 2
    err = capsys.readouterr().err
    assert f"defines several Servers; pass {app}:NAME to choose one: {app}:public, {app}:admin" in err, err


def test_a_server_of_another_library_is_named_and_not_taken_for_a_typo(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A FastMCP or official SDK file under ``mcp`` (as their docs name it): what it holds
    is said, and how such a server is tested, not only to rename it."""
    app = tmp_path / "peer.py"
    app.write_text("class FastMCP:\n    pass\nmcp = FastMCP()\n")
    assert main(["serve", str(app)]) == 2
    err = capsys.readouterr().err
    assert (
        f"{app} defines no mcp_elicit.Server: its mcp is a FastMCP object. A server of another library" in err
    )
    assert "(mcp-elicit check -- COMMAND tests it)" in err, err


def test_one_server_under_two_names_is_served(tmp_path: Path) -> None:
    app = tmp_path / "alias.py"
    app.write_text("from mcp_elicit import Server\nbookings = Server('bookings')\nprimary = bookings\n")
    assert load_server(str(app)).name == "bookings"


def test_a_registration_mistake_is_placed_at_the_users_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """mcp_elicit refuses what the file's line gave it: the line named is that one, not
    the library's own that raised."""
    app = tmp_path / "reg.py"
    app.write_text("from mcp_elicit import Server\napp = Server('reg')\n\napp.tool()(lambda x: x)\n")
    assert main(["serve", str(app)]) == 2
    err = capsys.readouterr().err
    assert "ValueError: a lambda's name '<lambda>' is not a valid tool name" in err, err
    assert "(at reg.py line 4)" in err, err


def test_a_name_that_is_an_int_is_said_with_an(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    app = tmp_path / "app.py"
    app.write_text("PORT = 8000\n")
    assert main(["serve", f"{app}:PORT"]) == 2
    err = capsys.readouterr().err
    assert "PORT is an int object, not an mcp_elicit.Server; it defines no Server" in err, err


def test_bad_key_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    keys = tmp_path / "keys"
    keys.write_text("too-short\n")
    keys.chmod(0o600)
    assert main(["serve", "examples/demo_server.py", "--state-key-file", str(keys)]) == 2
    err = capsys.readouterr().err
    assert "invalid state keys" in err
    assert "(umask 077; mcp-elicit keygen > state.keys)" in err  # a command that leaves it private


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX file modes")
@pytest.mark.parametrize("mode", [0o664, 0o646], ids=oct)
def test_a_key_file_others_can_change_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: int
) -> None:
    keys = tmp_path / "state.keys"
    keys.write_text(KeyRing.generate().export_text())
    keys.chmod(mode)
    assert main(["serve", "examples/demo_server.py", "--state-key-file", str(keys)]) == 2
    err = capsys.readouterr().err
    assert f"can be changed by other users (mode {mode:04o})" in err, err
    assert f"chmod 600 {str(keys)!r}" in err, err


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX file modes")
@pytest.mark.parametrize("mode", [0o644, 0o444, 0o640], ids=oct)
def test_a_given_key_file_others_can_read_is_used_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, mode: int
) -> None:
    # as a deployment mounts one: a Kubernetes secret is 0644 by default, a Docker secret 0444
    ring = KeyRing.generate()
    keys = tmp_path / "state.keys"
    keys.write_text(ring.export_text())
    keys.chmod(mode)
    with caplog.at_level("WARNING", logger="mcp_elicit"):
        used = _state_keys(keys)
    assert used is not None and used.export_text() == ring.export_text()
    said = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(said) == 1, said
    assert f"can be read by other users (mode {mode:04o})" in said[0], said
    assert f"chmod 600 {str(keys)!r}" in said[0], said


def test_python_dash_m_runs_the_cli() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mcp_elicit", "--help"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0
    assert "serve" in done.stdout


def _refused_redis_url() -> str:
    """A Redis URL with a password, on a loopback port nothing listens on."""

    return f"redis://:hunter2@127.0.0.1:{free_port()}/0"


def test_serve_stdio_with_an_unreachable_store_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    url = _refused_redis_url()
    assert main(["serve", "examples/demo_server.py", "--store", url]) == 2
    err = capsys.readouterr().err
    assert "cannot serve: the URL-mode store redis://:***@127.0.0.1:" in err
    assert "hunter2" not in err
    assert "onnect" in err  # redis says why: "Error 111 connecting to ... Connection refused."


def test_serve_stdio_with_an_unwritable_sqlite_store_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    url = f"sqlite:///{blocker}/state.db"
    assert main(["serve", "examples/demo_server.py", "--store", url]) == 2
    err = capsys.readouterr().err
    assert f"cannot serve: the URL-mode store {url} cannot be used:" in err
    assert not any(t.name.startswith("mcp-elicit-sqlite") for t in threading.enumerate())  # closed


def test_serve_http_with_an_unreachable_store_exits_2_before_listening() -> None:

    port = free_port()
    done = subprocess.run(
        [
            *(sys.executable, "-m", "mcp_elicit", "serve", "examples/demo_server.py"),
            *("--http", f"127.0.0.1:{port}", "--store", _refused_redis_url()),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "mcp-elicit: cannot serve: the URL-mode store redis://:***@127.0.0.1:" in done.stderr
    assert "hunter2" not in done.stderr
    assert "Application startup failed" not in done.stderr  # said as serve says it, not as uvicorn
    assert "serving" not in done.stderr  # it never served: the line comes once it listens


def test_serve_http_on_a_port_in_use_says_which_and_what_to_do() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "mcp_elicit",
                "serve",
                "examples/demo_server.py",
                "--http",
                f"127.0.0.1:{port}",
            ],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
    assert done.returncode == 2, done.stderr
    assert f"127.0.0.1:{port} is in use" in done.stderr, done.stderr
    assert "give another port" in done.stderr, done.stderr
    assert "serving" not in done.stderr


@pytest.mark.parametrize(
    "public", [None, "https://mcp.example.com"], ids=["bound address", "public URL given"]
)
def test_serve_http_says_where_it_serves_once_it_listens(public: str | None) -> None:
    from support.deadline import within

    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mcp_elicit",
            "serve",
            "examples/demo_server.py",
            "--http",
            f"127.0.0.1:{port}",
            *(["--public-url", public] if public is not None else []),
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        lines = iter(proc.stderr.readline, "")  # the start-up's log lines come first
        with within(30, "reading the line saying where it serves"):
            line = next((line for line in lines if not line[:1].isdigit()), "(stderr ended)")
        said = f"mcp-elicit: serving 'bookings' at http://127.0.0.1:{port}/mcp"
        if public is not None:  # where people reach it, besides where it listens
            said += f" (public URL {public}/mcp)"
        assert line == said + "\n"
        reply = httpx.get(f"http://127.0.0.1:{port}/mcp", headers={"accept": "text/event-stream"})
        assert reply.status_code in (400, 405), reply.text  # an MCP endpoint answers there
    finally:
        proc.terminate()
        try:
            proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()  # never left running, whatever failed
            proc.communicate()
    assert proc.returncode == 0


def test_serve_with_a_working_store_starts(tmp_path: Path) -> None:
    """The check uses the store once and serving goes on: a discover over stdio answers."""
    url = f"sqlite:///{tmp_path}/state.db"
    meta = (
        b'{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
        b'"io.modelcontextprotocol/clientCapabilities":{}}'
    )
    request = b'{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":' + meta + b"}}\n"
    done = subprocess.run(
        [sys.executable, "-m", "mcp_elicit", "serve", "examples/demo_server.py", "--store", url],
        input=request,
        capture_output=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert b'"supportedVersions"' in done.stdout
    assert (tmp_path / "state.db").exists()


@pytest.mark.parametrize(
    ("source", "fragments"),
    [
        ("def broken(:\n", ["cannot load", "bad_app.py", "invalid syntax", "line 1"]),
        (
            "x = 1\nraise RuntimeError('no database')\n",
            ["cannot load", "RuntimeError: no database", "line 2"],
        ),
        (
            "import no_such_module_for_this_test\n",
            ["cannot load", "No module named 'no_such_module_for_this_test'"],
        ),
    ],
    ids=["syntax-error", "raises", "missing-import"],
)
def test_a_server_file_that_fails_to_import_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], source: str, fragments: list[str]
) -> None:
    app = tmp_path / "bad_app.py"
    app.write_text(source, encoding="utf-8")
    assert main(["serve", str(app)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    for fragment in fragments:
        assert fragment in err, err


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["check", "--json"], "give the server"),
        (["check", "--json", "http://[::1/mcp"], "is not a valid URL"),
        (["check", "--json", "--bogus", "http://127.0.0.1:1/mcp"], "unrecognized arguments: --bogus"),
        (["check", "--json", "--timeout", "soon", "http://127.0.0.1:1/mcp"], "invalid float value: 'soon'"),
        (["call", "--json", "http://127.0.0.1:1/mcp", "t", "oops"], "arguments are NAME=VALUE"),
        (["call", "--json", "t", "--args", "[1]", "--", "x"], "--args must be a JSON object"),
        (["call", "--json", "t", "n:=NaN", "--", "x"], "not a number JSON can carry"),
        (["call", "--json", "t", "--root", "/does/not/exist", "--", "x"], "not a directory"),
        (["call", "--json"], "give the server"),
        (["read", "--json", "a://b", "c=d", "--", "x"], "read takes one URI"),
    ],
)
def test_json_usage_errors_still_print_json(
    capsys: pytest.CaptureFixture[str], argv: list[str], fragment: str
) -> None:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own errors
        assert isinstance(exc.code, int)
        code = exc.code
    captured = capsys.readouterr()
    assert code == 2, captured.err
    report = json.loads(captured.out)
    assert report["ok"] is False and report["exit_code"] == 2
    assert fragment in report["error"]
    assert fragment in captured.err  # the person reading stderr is told too


@pytest.mark.parametrize(
    ("argv", "usage"),
    [
        (["check", "--bogus", "http://127.0.0.1:1/mcp"], "check"),
        (["check", "--json", "--bogus", "http://127.0.0.1:1/mcp"], "check"),
        (["check", "http://127.0.0.1:1/mcp", "extra"], "check"),
        (["call", "http://127.0.0.1:1/mcp", "--json", "t", "--bogus"], "call"),
        (["read", "--bogus", "a://b", "--", "x"], "read"),
        (["keygen", "extra"], "keygen"),
        (["serve", "app.py", "--bogus"], "serve"),
        (["--bogus", "check", "http://127.0.0.1:1/mcp"], None),  # not check's: before the command
    ],
)
def test_an_unknown_word_of_a_command_shows_that_commands_usage(
    capsys: pytest.CaptureFixture[str], argv: list[str], usage: str | None
) -> None:
    """Words left over after a command's options are refused under the usage of the
    command they were given to (and its ``-h``), not the top level's list of commands."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    prog = "mcp-elicit" if usage is None else f"mcp-elicit {usage}"
    assert err.startswith(f"usage: {prog} [-h]"), err
    assert f"\n{prog}: error: unrecognized arguments: " in err, err


@pytest.mark.parametrize("command", [[], ["serve"], ["check"], ["call"], ["prompt"], ["read"]])
def test_help_states_every_exit_code(capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main([*command, "--help"])
    assert exc.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "exit codes:" in text
    codes = (
        ["0", "2", "130"] if command == ["serve"] else ["0", "1", "2", "3", "4", "129", "130", "141", "143"]
    )
    for code in codes:
        assert f" {code} " in text.split("exit codes:", 1)[1], (code, text)


@pytest.mark.parametrize(
    ("command", "says", "refused"),
    [
        ("call", "NAME=VALUE is text unless the tool's input schema says otherwise", None),
        ("prompt", "NAME=VALUE gives an argument, always text", ["city:=3"]),
        ("read", "the URI of the resource to read", ["x=1"]),
    ],
)
def test_help_says_what_each_command_takes(
    capsys: pytest.CaptureFixture[str], command: str, says: str, refused: list[str] | None
) -> None:
    """Each command's help describes its own words: ``read`` takes a URI and no NAME=VALUE,
    a prompt's arguments are text (both refuse what the help of ``call`` offers)."""
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert says in text
    if refused is not None:
        assert "tool's" not in text and "NAME:=JSON" not in text
        example = {"prompt": "plan_evening", "read": "bookings://menu/noma"}[command]
        assert main([command, example, *refused, "--", "true"]) == 2


@pytest.mark.parametrize("command", [[], ["check"], ["call"], ["prompt"], ["read"]])
def test_help_says_exit_3_is_also_what_is_not_an_mcp_server(
    capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    """As the README's table says: 3 is also an answer from something that is not an MCP
    server (a web page, plain text, a legacy HTTP+SSE server), not only a failed connection."""
    with pytest.raises(SystemExit):
        main([*command, "--help"])
    codes = " ".join(capsys.readouterr().out.split()).split("exit codes:", 1)[1]
    three = codes.split(" 3 ", 1)[1].split(", 4 ", 1)[0]
    assert "cannot connect" in three and "sign in" in three and "start the server" in three, three
    assert "not an MCP server" in three, three


def test_a_mistake_raised_through_generated_code_is_placed_at_the_users_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A dataclass of mcp_elicit's refusing what the line gave it raises through the
    ``__init__`` the dataclass generated, whose file is "<string>": not the user's line."""
    app = tmp_path / "meta.py"
    app.write_text(
        "from mcp_elicit import Server\nfrom mcp_elicit.server.auth import ResourceMetadata\n\n"
        "meta = ResourceMetadata(authorization_servers='https://as.example.com')\napp = Server('m')\n"
    )
    assert main(["serve", str(app)]) == 2
    err = capsys.readouterr().err
    assert "ResourceMetadata.authorization_servers: a list of issuer URLs (at meta.py line 4)" in err, err


@pytest.mark.parametrize("name", ["app", "thing"])
def test_an_object_whose_class_cannot_be_read_is_no_server_and_no_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """A module-level proxy whose ``__class__`` raises (bound to nothing yet) made the
    search for a Server raise it, a traceback; it is no Server, and is said by its type."""
    app = tmp_path / "proxy.py"
    app.write_text(
        "class Proxy:\n    @property\n    def __class__(self):\n        raise RuntimeError('unbound')\n\n"
        f"{name} = Proxy()\n"
    )
    assert main(["serve", str(app)]) == 2
    err = capsys.readouterr().err
    said = (
        "its app is a Proxy object. A server of another library"
        if name == "app"
        else "defines no mcp_elicit.Server"
    )
    assert said in err, err
