"""A command line is shown with the value of every option, environment assignment and
header that names a secret as REDACTED, and nothing else hidden: a path to a key file, a
switch, a count of tokens, a short option stay as given."""

from __future__ import annotations

import pytest

from mcp_elicit.command_redaction import redact_command, secret_name, secret_values


@pytest.mark.parametrize(
    ("words", "shown"),
    [
        (["--api-key=XYZ"], ["--api-key=REDACTED"]),
        (["--token", "XYZ"], ["--token", "REDACTED"]),
        (["--password=hunter2"], ["--password=REDACTED"]),
        (["--passwd", "hunter2"], ["--passwd", "REDACTED"]),
        (["-client-secret", "abc"], ["-client-secret", "REDACTED"]),  # Go's one dash
        (["--clientSecret=abc"], ["--clientSecret=REDACTED"]),
        (["--authtoken", "abc"], ["--authtoken", "REDACTED"]),
        (["--credentials=abc"], ["--credentials=REDACTED"]),
        (["API_KEY=xyz", "python", "s.py"], ["API_KEY=REDACTED", "python", "s.py"]),
        (["env", "GITHUB_TOKEN=ghp_x", "node"], ["env", "GITHUB_TOKEN=REDACTED", "node"]),
        (["-H", "Authorization: Bearer T0K"], ["-H", "Authorization: Bearer REDACTED"]),
        (["--header", "X-Api-Key: K"], ["--header", "X-Api-Key: REDACTED"]),
        (["--header=Cookie: sid=abc"], ["--header=Cookie: REDACTED"]),
        (["--header", "Authorization: T0K"], ["--header", "Authorization: REDACTED"]),
        # an assignment as an option's value, docker's way: the variable's name says secret
        (["docker", "run", "--env=API_KEY=xyz", "img"], ["docker", "run", "--env=API_KEY=REDACTED", "img"]),
        (["--set-env=GITHUB_TOKEN=ghp_x"], ["--set-env=GITHUB_TOKEN=REDACTED"]),
        # a numbered secret is still one
        (["--token2", "XYZ"], ["--token2", "REDACTED"]),
        (["PASSWORD1=hunter2"], ["PASSWORD1=REDACTED"]),
        # a URL in a word is redacted as before, in a secret's value or not
        (["--db=postgres://me:pw@db/x"], ["--db=postgres://REDACTED:REDACTED@db/x"]),
        (["https://h/mcp?token=abc"], ["https://h/mcp?REDACTED"]),
    ],
)
def test_a_secrets_value_is_redacted(words: list[str], shown: list[str]) -> None:
    assert redact_command(words) == shown


@pytest.mark.parametrize(
    "words",
    [
        ["--key-file", "/etc/keys/server.pem"],  # where the key is, not the key
        ["--key-file=/etc/keys/server.pem"],
        ["KEY_FILE=/etc/keys/server.pem", "python", "s.py"],
        ["--token-url", "https://auth.example.com/token"],
        ["--auth-type", "basic"],
        ["--secret-name", "prod-db"],
        ["API_KEY_ID=AKIA1"],
        ["--no-auth", "server.py"],  # a switch: what follows is the next word
        ["--max-tokens", "1000"],
        ["--max-token-count", "9"],
        ["--token", "--verbose"],  # no value given: the next option stays
        ["--token="],  # nothing to hide
        ["-p", "8080"],  # short options: a port as often as a password
        ["--monkey", "george"],
        ["--author", "Ada"],
        ["--port", "8000", "--host", "127.0.0.1"],
        ["-H", "Accept: text/event-stream"],
        ["python", "server.py", "mode=fast"],  # NAME=VALUE whose name says nothing secret
        ["docker", "run", "--env=PATH=/usr/bin", "img"],
        ["--v2", "on"],
    ],
)
def test_what_is_not_a_secret_is_shown_as_given(words: list[str]) -> None:
    assert redact_command(words) == words
    assert secret_values(words) == []


def test_the_values_hidden_are_given_for_messages_that_repeat_them() -> None:
    words = [
        "s",
        "--api-key=K1",
        "--token",
        "K2",
        "API_KEY=K3",
        "-H",
        "Authorization: Bearer K4",
        "--key-file",
        "f",
    ]
    assert secret_values(words) == ["K1", "K2", "K3", "K4"]


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("api-key", True),
        ("OPENAI_API_KEY", True),
        ("apiKey", True),
        ("APIKey", True),
        ("x-api-key", True),
        ("bearer", True),
        ("key-file", False),
        ("KEY_PATH", False),
        ("no-auth", False),
        ("tokens", False),
        ("keyboard", False),
    ],
)
def test_a_name_says_secret(name: str, secret: bool) -> None:
    assert secret_name(name) is secret
