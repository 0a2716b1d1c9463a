"""The edges of a command's secrets: a value that starts with "-", a header given to an
option whose name says so, and a message that repeats a value: a long one hidden
wherever it occurs, a short one where it stands as a word."""

from __future__ import annotations

import pytest

from mcp_elicit.command_redaction import (
    SEARCHED_FEWEST,
    SEARCHED_LEAST,
    redact_command,
    redact_secrets,
    secret_values,
)


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
        # glued to other text, a long secret is still the secret
        (f"x{LONG}", "xREDACTED"),
        (f"{LONG}9", "REDACTED9"),
        (f"Bearer{LONG}", "BearerREDACTED"),
    ],
)
def test_a_repeated_long_secret_is_hidden_wherever_it_occurs(text: str, shown: str) -> None:
    assert redact_secrets(text, [LONG]) == shown


def test_a_short_secret_is_hidden_where_it_stands_whole_not_inside_other_words() -> None:
    words = ["server", "--key", "name"]
    assert redact_command(words) == ["server", "--key", "REDACTED"]
    said = "unknown name 'nam'; the names are renamed; name_x, 'name'"
    shown = "unknown REDACTED 'nam'; the names are renamed; name_x, 'REDACTED'"
    assert redact_secrets(said, secret_values(words)) == shown


def test_a_short_password_the_server_repeats_is_hidden() -> None:
    words = ["server", "--password", "hunter2"]
    said = "login failed for password hunter2; try hunter22"
    shown = "login failed for password REDACTED; try hunter22"
    assert redact_secrets(said, secret_values(words)) == shown


@pytest.mark.parametrize("value", ["a", "ab", "abc"])
def test_a_value_too_short_to_protect_anything_is_not_searched(value: str) -> None:
    assert len(value) < SEARCHED_FEWEST
    said = f"a {value} b"
    assert redact_secrets(said, [value]) == said


def test_a_secret_ending_in_a_mark_is_found_before_a_letter() -> None:
    secret = "c2VjcmV0LXZhbHVl=="
    assert redact_secrets(f"bad key {secret}x", [secret]) == "bad key REDACTEDx"


def test_the_longer_of_two_overlapping_secrets_is_hidden_whole() -> None:
    short, longer = "abcdefgh", "abcdefgh-ijklmnop"
    assert redact_secrets(f"{longer} and {short}", [short, longer]) == "REDACTED and REDACTED"
