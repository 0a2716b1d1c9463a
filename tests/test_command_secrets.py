"""The edges of a command's secrets: a value that starts with "-", a header given to an
option whose name says so, and a message that repeats a value, searched for it only
where the value stands whole and is long enough to be no ordinary word."""

from __future__ import annotations

import pytest

from mcp_elicit.command_redaction import SEARCHED_LEAST, redact_command, redact_secrets, secret_values


@pytest.mark.parametrize(
    ("words", "shown", "hidden"),
    [
        (["s", "--client-secret", "-abc123"], ["s", "--client-secret", "REDACTED"], ["-abc123"]),
        (["s", "--client-secret=-abc123"], ["s", "--client-secret=REDACTED"], ["-abc123"]),
        (["s", "--token", "-x", "--v"], ["s", "--token", "REDACTED", "--v"], ["-x"]),
        (["s", "--token", "--Xy9_aB"], ["s", "--token", "REDACTED"], ["--Xy9_aB"]),  # no option's name
        (["s", "-client-secret", "-q"], ["s", "-client-secret", "REDACTED"], ["-q"]),  # Go's one dash
    ],
)
def test_a_secret_starting_with_a_dash_is_hidden(
    words: list[str], shown: list[str], hidden: list[str]
) -> None:
    assert redact_command(words) == shown
    assert secret_values(words) == hidden


def test_a_long_option_after_a_secret_option_is_the_next_option() -> None:
    words = ["s", "--token", "--verbose", "--log-level=debug"]
    assert redact_command(words) == words
    assert secret_values(words) == []


@pytest.mark.parametrize(
    ("words", "shown", "hidden"),
    [
        (["--auth-header", "Bearer x"], ["--auth-header", "Bearer REDACTED"], ["x"]),
        (["--auth-header=Bearer x"], ["--auth-header=Bearer REDACTED"], ["x"]),
        (
            ["--auth-header", "Authorization: Bearer x"],
            ["--auth-header", "Authorization: Bearer REDACTED"],
            ["x"],
        ),
        (["--api-key-header", "sk-1"], ["--api-key-header", "REDACTED"], ["sk-1"]),
        # a first word that is no scheme is the secret's: a passphrase keeps none of it
        (["--auth-header", "open sesame"], ["--auth-header", "REDACTED"], ["open sesame"]),
        (["-H", "Authorization: open sesame"], ["-H", "Authorization: REDACTED"], ["open sesame"]),
        (["-H", "Authorization: dpop T"], ["-H", "Authorization: dpop REDACTED"], ["T"]),
    ],
)
def test_a_header_given_to_a_secret_option_keeps_only_its_name_and_scheme(
    words: list[str], shown: list[str], hidden: list[str]
) -> None:
    assert redact_command(words) == shown
    assert secret_values(words) == hidden
    assert "x" not in " ".join(shown).replace("REDACTED", "").split()


def test_a_header_naming_option_that_is_no_secret_keeps_its_value() -> None:
    words = ["--header-name", "X-Api-Key", "--header", "Accept: text/plain"]
    assert redact_command(words) == words


LONG = "sk-" + "Q7" * SEARCHED_LEAST


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (f"refused token {LONG}", "refused token REDACTED"),
        (f"token={LONG};", "token=REDACTED;"),
        (f"'{LONG}' expired", "'REDACTED' expired"),
        (f"{LONG}\n{LONG}", "REDACTED\nREDACTED"),
        # not where it is part of a longer word: that is another word, not the secret
        (f"x{LONG}", f"x{LONG}"),
        (f"{LONG}9", f"{LONG}9"),
    ],
)
def test_a_repeated_secret_is_hidden_where_it_stands_whole(text: str, shown: str) -> None:
    assert redact_secrets(text, [LONG]) == shown


def test_a_short_secret_is_hidden_where_the_command_gives_it_not_in_every_word() -> None:
    words = ["server", "--key", "name"]
    assert redact_command(words) == ["server", "--key", "REDACTED"]
    said = "unknown name 'nam'; the name must be set"
    assert redact_secrets(said, secret_values(words)) == said


def test_a_secret_ending_in_a_mark_is_found_before_a_letter() -> None:
    secret = "c2VjcmV0LXZhbHVl=="
    assert redact_secrets(f"bad key {secret}x", [secret]) == "bad key REDACTEDx"


def test_the_longer_of_two_overlapping_secrets_is_hidden_whole() -> None:
    short, longer = "abcdefgh", "abcdefgh-ijklmnop"
    assert redact_secrets(f"{longer} and {short}", [short, longer]) == "REDACTED and REDACTED"
