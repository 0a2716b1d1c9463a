"""``mcp-elicit serve`` refusing bad state keys, as an operator reads it: the message
names where the keys came from (the file, or ``$MCP_ELICIT_STATE_KEYS``) and how to make
good ones, since several instances are started from several places and "line 1" alone
does not say which file is wrong.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from support.procs import ROOT, cli, free_port

pytestmark = pytest.mark.slow


def serve(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {
        k: v for k, v in os.environ.items() if k not in ("MCP_ELICIT_STATE_KEYS", "MCP_ELICIT_STORE")
    }
    environment.update(env or {})
    command = [*cli(), "serve", "examples/demo_server.py", "--http", f"127.0.0.1:{free_port()}", *args]
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env=environment,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize("content", ["garbage\n", "# only a comment\n"])
def test_a_bad_key_file_is_named_with_what_to_do(tmp_path: Path, content: str) -> None:
    keys = tmp_path / "state.keys"
    keys.write_text(content)
    keys.chmod(0o600)  # private: what is refused is its content
    done = serve(["--state-key-file", str(keys)])
    assert done.returncode == 2, done.stderr
    assert str(keys) in done.stderr, done.stderr
    assert "mcp-elicit keygen" in done.stderr, done.stderr


@pytest.mark.parametrize(
    ("keys", "said"),
    [
        ("garbage", "key is 5 bytes; need at least 32 random bytes"),
        # a password, which base64 can read: it served, its states opened by a guess
        ("correcthorsebatterystaplecorrecthorsebatterystaple", "reads as a password or words"),
    ],
)
def test_bad_keys_in_the_environment_are_named_with_what_to_do(keys: str, said: str) -> None:
    done = serve([], {"MCP_ELICIT_STATE_KEYS": keys})
    assert done.returncode == 2, done.stderr
    assert "$MCP_ELICIT_STATE_KEYS" in done.stderr, done.stderr
    assert said in done.stderr, done.stderr
    assert "mcp-elicit keygen" in done.stderr, done.stderr
    assert keys not in done.stderr, done.stderr
