"""``call``, ``prompt`` and ``read`` on a terminal that can only show ASCII (the C locale,
without Python's UTF-8 mode), against a real stdio server whose every answer is beyond ASCII
(wide_server.py): what they write is written as such a terminal can show it, never a
``UnicodeEncodeError`` traceback. Human output has the client's own marks in ASCII and every
other character by its code; ``--json`` is still JSON of the same data, with ``\\uXXXX``
escapes. On a UTF-8 terminal the text is written as it is."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cli.helpers import ASCII_ONLY, HERE, answers_file

from support.procs import cli

SERVER = HERE / "wide_server.py"
GREETING = "Grüße — 天気 ✓"
#: ``GREETING`` as an ASCII-only terminal gets it: the dash and the check mark as the
#: client's marks are, the other letters by their codes.
ASCII_GREETING = "Gr\\xfc\\xdfe - \\u5929\\u6c17 v"
UTF8 = {"LC_ALL": "C.UTF-8", "PYTHONUTF8": "1"}


def _run(env: dict[str, str], *argv: str) -> tuple[int, str, str]:
    """``mcp-elicit ARGV -- mcp-elicit serve wide_server.py`` in ``env``: its exit code, and
    its stdout and stderr, each read as ASCII under ``ASCII_ONLY`` (anything else fails)."""
    done = subprocess.run(
        [*cli(), *argv, "--", *cli(), "serve", str(SERVER)],
        capture_output=True,
        env={**os.environ, **env},
        timeout=60,
        check=False,
    )
    encoding = "ascii" if env is ASCII_ONLY else "utf-8"
    out, err = done.stdout.decode(encoding), done.stderr.decode(encoding)
    assert "Traceback" not in err and "Error" not in err.replace("error -", ""), err
    return done.returncode, out, err


def _json(out: str) -> dict[str, Any]:
    value = json.loads(out)
    assert isinstance(value, dict)
    return value


@pytest.mark.parametrize("env", [ASCII_ONLY, UTF8], ids=["ascii", "utf8"])
@pytest.mark.parametrize(
    ("argv", "shown"),
    [
        (["call", "hello", "name=Zoe"], "{}, Zoe"),
        (["prompt", "greet", "name=Zoe"], "{} prompt\n[user] {}, Zoe"),
        (["read", "wetter://heute"], "wetter://heute (text/plain)\n{}: heute"),
        (["call", "fails"], "{}: kaputt"),
    ],
    ids=["call", "prompt", "read", "tool-error"],
)
def test_results_as_the_terminal_can_show_them(env: dict[str, str], argv: list[str], shown: str) -> None:
    code, out, err = _run(env, *argv)
    assert code == (1 if argv[1] == "fails" else 0), err
    greeting = ASCII_GREETING if env is ASCII_ONLY else GREETING
    assert out == shown.replace("{}", greeting) + "\n", out


@pytest.mark.parametrize("env", [ASCII_ONLY, UTF8], ids=["ascii", "utf8"])
def test_structured_content_as_the_terminal_can_show_it(env: dict[str, str]) -> None:
    code, out, err = _run(env, "call", "forecast", "city=Koeln")
    assert code == 0, err
    if env is ASCII_ONLY:
        assert out == '{"city":"Koeln","\\u5929\\u6c17":"\\u2600 sonnig"}\n', out
    else:
        assert out == '{"city":"Koeln","天気":"☀ sonnig"}\n', out


@pytest.mark.parametrize("env", [ASCII_ONLY, UTF8], ids=["ascii", "utf8"])
@pytest.mark.parametrize(
    ("argv", "text"),
    [
        (["call", "hello", "name=Zoe"], lambda v: v["result"]["content"][0]["text"]),
        (["prompt", "greet", "name=Zoe"], lambda v: v["result"]["messages"][0]["content"]["text"]),
        (["read", "wetter://heute"], lambda v: v["result"]["contents"][0]["text"]),
        (["call", "refuse"], lambda v: v["error"]),
    ],
    ids=["call", "prompt", "read", "refused"],
)
def test_json_is_the_same_data_escaped_where_the_terminal_needs(
    env: dict[str, str], argv: list[str], text: Any
) -> None:
    code, out, err = _run(env, *argv, "--json")
    assert code == (1 if argv[1] == "refuse" else 0), err
    value = _json(out)
    assert GREETING in text(value), out
    if argv[1] != "refuse":
        assert value["server"]["title"] == "Wetter — 天気", out
    assert ("\\u5929\\u6c17" in out) is (env is ASCII_ONLY), out  # by its code only where it must be


@pytest.mark.parametrize("env", [ASCII_ONLY, UTF8], ids=["ascii", "utf8"])
def test_a_refusal_quoting_the_server_on_stderr(env: dict[str, str]) -> None:
    code, out, err = _run(env, "call", "refuse")
    assert code == 1 and out == "", out
    greeting = ASCII_GREETING if env is ASCII_ONLY else GREETING
    assert err == f"mcp-elicit: tools/call: the server answered with error -32602: {greeting}: nein\n", err


@pytest.mark.parametrize("env", [ASCII_ONLY, UTF8], ids=["ascii", "utf8"])
def test_the_rounds_warnings_and_trace_on_stderr(env: dict[str, str], tmp_path: Path) -> None:
    # no answer for the question: a warning (logged) names it, the round is shown, cancelled;
    # and every message traced
    script = answers_file(tmp_path, {"answers": [{"fields": ["other"], "content": {"other": "x"}}]})
    code, out, err = _run(env, "call", "ask", "--answers", script, "--trace")
    assert code == 0, err
    greeting = ASCII_GREETING if env is ASCII_ONLY else GREETING
    title, key = (
        ("Wetter - \\u5929\\u6c17", "\\u540d\\u524d") if env is ASCII_ONLY else ("Wetter — 天気", "名前")
    )
    assert out == f"{greeting}, ?\n", out
    assert f"WARNING: no scripted answer for {title} 1.0.0" in err, err
    assert f"? {title} asks ({key}, during tools/call ask):\n  {greeting}: wie hei" in err, err
    assert "  -> cancel" in err if env is ASCII_ONLY else "  → cancel" in err, err
    arrows = ("-> {", "<- {") if env is ASCII_ONLY else ("→ {", "← {")
    assert all(f"\n{arrow}" in err for arrow in arrows), err
    assert f'"message":"{greeting}: wie hei' in err, err
