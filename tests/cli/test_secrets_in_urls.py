"""What an HTTP TARGET's URL carries (its query's keys, a user name and password, and the
``Basic`` credential sent for them) is hidden where a server's JSON-RPC error repeats it,
as a ``--header`` value is: a real server on 127.0.0.1 echoing what it was asked."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from cli.fake_http import JsonAnswering, serving
from cli.helpers import run

KEY = "qk-Url7hidden9kept"
PASSWORD = "pw-Url7hidden9kept"
SHORT = "ab12c"  # a query value of 4 to 7 characters: hidden where it stands as a word


class _Echoing(JsonAnswering):
    """Refuses the opening request, quoting the path and query it was asked at and the
    Authorization it got, as a debugging server does."""

    def do_POST(self) -> None:
        body: Any = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
        said = f"refused {self.path} (Authorization: {self.headers.get('Authorization')})"
        self._answer(
            200, {"jsonrpc": "2.0", "id": body.get("id"), "error": {"code": -32600, "message": said}}
        )


@pytest.mark.parametrize("json_out", [True, False], ids=["json", "text"])
def test_a_servers_error_repeating_the_urls_query_and_password_shows_them_redacted(
    capsys: pytest.CaptureFixture[str], json_out: bool
) -> None:
    with serving(_Echoing) as base:
        url = base.replace("://", f"://me:{PASSWORD}@") + f"/mcp?key={KEY}&v={SHORT}&plain=1"
        done = run(capsys, "check", *(["--json"] if json_out else []), "--no-login", url)
    said = done.json()["error"] if json_out else done.err
    assert "refused /mcp?REDACTED (Authorization: Basic REDACTED)" in said, said
    basic = base64.b64encode(f"me:{PASSWORD}".encode()).decode()
    for secret in (KEY, PASSWORD, basic, f"v={SHORT}"):
        assert secret not in done.out + done.err


def test_a_short_query_value_is_hidden_as_a_word_not_inside_other_words(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``?mode=text``: the server's "textual" and "context" keep their words, as a
    ``--key name`` keeps "names"; the value standing alone is hidden."""

    class Saying(JsonAnswering):
        def do_POST(self) -> None:
            body: Any = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
            said = "wants textual input in context, not 'text'"
            error = {"code": -32600, "message": said}
            self._answer(200, {"jsonrpc": "2.0", "id": body.get("id"), "error": error})

    with serving(Saying) as base:
        done = run(capsys, "check", "--no-login", f"{base}/mcp?mode=text")
    assert "wants textual input in context, not 'REDACTED'" in done.err, done.err
