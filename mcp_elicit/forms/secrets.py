"""The secret guard: find form fields that ask for a password, key, token or card.

The MCP spec says servers MUST NOT use form mode to ask for sensitive information
(passwords, API keys, access tokens, payment credentials): those go through URL
mode, so they never pass through the client or the model. This module finds fields
that look like they ask for one, so a form refuses them when it is defined.

Rules (reasons in ``docs/design/secret-guard.md``):

- Only fields that can carry a typed secret are checked: :class:`String` (except
  ``date``, ``date-time`` and ``email`` formats), :class:`Integer` and :class:`Number`.
  Booleans and choices hold values the server itself offered.
- Texts are split into lowercase words (snake, kebab, camel case, letters/digits, and
  where a script written without spaces meets another), after Unicode NFC (an "ñ" typed
  as "n" and a combining tilde is one letter).
- A *clear* phrase ("password", "api key", "card number", "cvv", "mot de passe",
  "Passwort", "пароль", ...) counts anywhere in the name, title or description, unless
  the words beside it say the field is about the secret rather than the secret itself:
  the next word ("password length", "token count", "api key name", "card number last
  4"), or an "about" word then "of"/"for" before it ("a label for the API key",
  "length of your password"). "hint" is deliberately not such a word.
- An *ambiguous* word ("token", "secret", "pin", "pwd", "bearer") counts only at the end
  of a field name, after dropping echo words ("new_pin", "github_token", "client_secret",
  "token_confirm"), and not after a word that makes it harmless ("next_page_token").
  In prose, "PIN" counts in upper case (not "PIN code", India's postal code), and
  "token" after "your" with at most two words between ("your GitHub token"), unless an
  "about" word follows it ("your token budget") or a harmless one precedes it.
- In scripts written without spaces (Chinese, Japanese, Thai; Korean attaches particles)
  the secret words (密码, パスワード, 비밀번호, รหัสผ่าน, API キー, ...) are found inside
  running text, with the same "about" rule and a list of ordinary words that hold the
  same characters (密码学, 암호화): :mod:`mcp_elicit.forms.secrets_spaceless`.
- A field marked ``not_secret`` is never reported.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from mcp_elicit.forms.fields import FieldSpec, Integer, Number, String
from mcp_elicit.forms.secrets_spaceless import SPACELESS_LETTERS, spaceless_secret

__all__ = ["SecretFinding", "find_secret_fields", "secret_in_field", "words"]

# A run of letters of a script written without spaces, or a run of other letters and digits.
_CHUNK = re.compile(rf"[{SPACELESS_LETTERS}]+|[^\W_{SPACELESS_LETTERS}]+")


def words(text: str) -> tuple[str, ...]:
    """Lowercase words of an identifier or a sentence: ``APIKey2`` -> ``("api", "key", "2")``.

    A run of a script written without spaces is one word: ``请输入CVV`` -> ``("请输入", "cvv")``.
    """
    out: list[str] = []
    for chunk in _CHUNK.findall(unicodedata.normalize("NFC", text)):
        start = 0
        for i in range(1, len(chunk)):
            before, here = chunk[i - 1], chunk[i]
            after = chunk[i + 1] if i + 1 < len(chunk) else ""
            if (
                before.isdigit() != here.isdigit()
                or (before.islower() and here.isupper())
                or (before.isupper() and here.isupper() and after.islower())
            ):
                out.append(chunk[start:i].lower())
                start = i
        if chunk:
            out.append(chunk[start:].lower())
    return tuple(out)


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Clear phrases: (phrase, what it asks for). Plural of the last word also counts.
_CLEAR: tuple[tuple[str, str], ...] = (
    ("password", "a password"),
    ("passwd", "a password"),
    ("passphrase", "a passphrase"),
    ("pass phrase", "a passphrase"),
    ("passcode", "a passcode"),
    ("pin number", "a PIN"),
    ("api key", "an API key"),
    ("apikey", "an API key"),
    ("api secret", "an API secret"),
    ("api token", "an API token"),
    ("access key", "an access key"),
    ("secret key", "a secret key"),
    ("private key", "a private key"),
    ("ssh key", "an SSH key"),
    ("signing key", "a signing key"),
    ("encryption key", "an encryption key"),
    ("master key", "a master key"),
    ("recovery key", "a recovery key"),
    ("license key", "a license key"),
    ("licence key", "a license key"),
    ("product key", "a license key"),
    ("access token", "an access token"),
    ("refresh token", "a refresh token"),
    ("bearer token", "a bearer token"),
    ("auth token", "an auth token"),
    ("authentication token", "an auth token"),
    ("authorization token", "an auth token"),
    ("oauth token", "an OAuth token"),
    ("session token", "a session token"),
    ("id token", "an ID token"),
    ("jwt", "a JSON Web Token"),
    ("session cookie", "a session cookie"),
    ("auth cookie", "a session cookie"),
    ("client secret", "a client secret"),
    ("app secret", "an app secret"),
    ("shared secret", "a shared secret"),
    ("webhook secret", "a webhook secret"),
    ("signing secret", "a signing secret"),
    ("credential", "credentials"),
    ("credit card", "a payment card number"),
    ("debit card", "a payment card number"),
    ("card number", "a payment card number"),
    ("cardnumber", "a payment card number"),
    ("cc number", "a payment card number"),
    ("cvv", "a card security code (CVV)"),
    ("cvc", "a card security code (CVC)"),
    ("card verification", "a card security code"),
    ("security code", "a security code"),
    ("iban", "a bank account number (IBAN)"),
    ("bank account", "bank account details"),
    ("routing number", "a bank routing number"),
    ("sort code", "a bank sort code"),
    ("ssn", "a social security number"),
    ("social security", "a social security number"),
    ("social insurance number", "a social insurance number"),
    ("otp", "a one-time code"),
    ("totp", "a one-time code"),
    ("hotp", "a one-time code"),
    ("one time password", "a one-time code"),
    ("one time passcode", "a one-time code"),
    ("one time code", "a one-time code"),
    ("2fa code", "a one-time code"),
    ("mfa code", "a one-time code"),
    ("two factor code", "a one-time code"),
    ("authenticator code", "a one-time code"),
    ("sms code", "a one-time code"),
    ("auth code", "an authorization code"),
    ("authorization code", "an authorization code"),
    ("backup code", "a recovery code"),
    ("recovery code", "a recovery code"),
    ("seed phrase", "a wallet recovery phrase"),
    ("recovery phrase", "a wallet recovery phrase"),
    ("mnemonic phrase", "a wallet recovery phrase"),
    ("wallet seed", "a wallet recovery phrase"),
    # "Password" in languages written with spaces between words.
    ("mot de passe", "a password"),
    ("contraseña", "a password"),
    ("contrasena", "a password"),
    ("passwort", "a password"),
    ("kennwort", "a password"),
    ("пароль", "a password"),
    ("senha", "a password"),
    ("wachtwoord", "a password"),
    ("lösenord", "a password"),
    ("passord", "a password"),
    ("salasana", "a password"),
    ("hasło", "a password"),
)

# A clear phrase followed by one of these is about the secret, not the secret itself.
_ABOUT = _wordset(
    "count counts length len limit limits budget usage size max min maximum minimum type types kind "
    "name names label id ids fingerprint path file filename location url uri endpoint header env "
    "variable var policy policies strength rule rules requirement requirements reset manager vault "
    "expiry expiration expires expired expire age changed updated created rotated rotation format "
    "generator prefix suffix last last4 scope scopes permission permissions holder owner provider "
    "profile store helper issuer enabled required protected protection"
)

# "length of the password", "a label for your API key": about the secret too.
_ABOUT_LINKS = _wordset("of for")
_ARTICLES = _wordset("the a an your this its their my")

# Ambiguous words: only at the end of a field name. (word, what, plural counts, harmless before)
_HEADS: tuple[tuple[str, str, bool, frozenset[str]], ...] = (
    (
        "token",
        "a token",
        False,
        _wordset(
            "page pagination continuation sync cursor next previous prev idempotency design "
            "base quote nft crypto"
        ),
    ),
    ("secret", "a secret", True, frozenset({"santa"})),
    ("pin", "a PIN", False, frozenset({"map", "drop", "location", "board", "push", "hair"})),
    ("pwd", "a password", False, frozenset()),
    ("bearer", "a bearer token", False, frozenset({"card", "flag", "standard"})),
)

# Words dropped from the end of a name before looking at its last word.
_ECHO = _wordset(
    "confirm confirmation confirmed again repeat repeated retype verify verification value input text "
    "str string field raw plain plaintext hash hint new old current"
)

#: "PIN", not followed by "code" (spaces and one hyphen may come between). Written so
#: that a run of spaces is split one way only: ``\s*-?\s*`` tries every split of it.
#: Letters of a script without spaces may touch it ("请输入PIN码"), Latin ones may not.
_PROSE_PIN = re.compile(r"(?<![A-Za-z0-9_])PINs?(?![A-Za-z0-9_])(?!\s*(?:-\s*)?[Cc]ode)")


def _index_clear() -> dict[str, list[tuple[tuple[str, ...], str]]]:
    by_first: dict[str, list[tuple[tuple[str, ...], str]]] = {}
    for phrase, what in _CLEAR:
        split = words(phrase)
        by_first.setdefault(split[0], []).append((split, what))
    return by_first


_CLEAR_BY_FIRST = _index_clear()


@dataclass(frozen=True, slots=True)
class SecretFinding:
    """A field that seems to ask for a secret: where we saw it and what it asks for."""

    field: str
    where: Literal["name", "title", "description"]
    phrase: str
    asks_for: str

    @property
    def message(self) -> str:
        """Why the field was refused and what to do instead (without the field prefix)."""
        seen = "its name" if self.where == "name" else f"its {self.where}"
        return (
            f"{seen} asks for {self.asks_for} (matched {self.phrase!r}). The MCP spec forbids "
            "collecting passwords, API keys, access tokens and payment credentials through form-mode "
            "elicitation; collect it through a URL-mode elicitation instead: "
            f"await ctx.secret({self.field!r}) has the user type it into the server's own page, "
            "ctx.elicit_url(...) sends them to a page of yours. "
            "If this is a false positive, mark the field not_secret=True "
            f"(or FormSchema.parse(..., not_secret={{{self.field!r}}}))."
        )


def _about_before(ws: tuple[str, ...], start: int) -> bool:
    """Whether the words before ``start`` read "<about word> of|for [the]": "length of"."""
    if start > 0 and ws[start - 1] in _ARTICLES:
        start -= 1
    return start >= 2 and ws[start - 1] in _ABOUT_LINKS and ws[start - 2] in _ABOUT


def _clear_phrase(ws: tuple[str, ...]) -> tuple[str, str] | None:
    for start, first in enumerate(ws):
        candidates = _CLEAR_BY_FIRST.get(first, [])
        if first.endswith("s"):
            candidates = candidates + _CLEAR_BY_FIRST.get(first[:-1], [])
        for phrase, what in candidates:
            end = start + len(phrase)
            window = ws[start:end]
            if window[:-1] != phrase[:-1] or window[-1:] not in ((phrase[-1],), (phrase[-1] + "s",)):
                continue
            if (end == len(ws) or ws[end] not in _ABOUT) and not _about_before(ws, start):
                return " ".join(window), what
    return None


def _head_word(ws: tuple[str, ...]) -> tuple[str, str] | None:
    end = len(ws)
    while end > 1 and (ws[end - 1] in _ECHO or ws[end - 1].isdigit()):
        end -= 1
    if end == 0:
        return None
    last, before = ws[end - 1], ws[end - 2] if end > 1 else ""
    for word, what, plural, harmless in _HEADS:
        if (last == word or (plural and last == word + "s")) and before not in harmless:
            return last, what
    return None


def _prose_token(ws: tuple[str, ...]) -> tuple[str, str] | None:
    """ "your token", "your GitHub token" (at most two words between), not "your token count"."""
    harmless = _HEADS[0][3]
    for i, word in enumerate(ws):
        if word != "token" or (i + 1 < len(ws) and ws[i + 1] in _ABOUT):
            continue
        if i > 0 and ws[i - 1] in harmless:
            continue
        for start in range(max(0, i - 3), i):
            if ws[start] == "your":
                return " ".join(ws[start : i + 1]), "a token"
    return None


def _can_hold_secret(spec: FieldSpec) -> bool:
    if isinstance(spec, String):
        return spec.format in (None, "uri")
    return isinstance(spec, Integer | Number)


def secret_in_field(spec: FieldSpec) -> SecretFinding | None:
    """What ``spec`` seems to ask for, judged by name, title and description, or None.

    Ignores ``not_secret``; :func:`find_secret_fields` honours it.
    """
    if not _can_hold_secret(spec):
        return None
    name_words = words(spec.name)
    hit = _clear_phrase(name_words) or _head_word(name_words) or spaceless_secret(spec.name)
    if hit is not None:
        return SecretFinding(spec.name, "name", *hit)
    prose: tuple[tuple[Literal["title", "description"], str | None], ...] = (
        ("title", spec.title),
        ("description", spec.description),
    )
    for where, text in prose:
        if not text:
            continue
        text_words = words(text)
        hit = _clear_phrase(text_words) or _prose_token(text_words)
        if hit is None and (pin := _PROSE_PIN.search(text)) is not None:
            hit = pin[0], "a PIN"
        hit = hit or spaceless_secret(text)
        if hit is not None:
            return SecretFinding(spec.name, where, *hit)
    return None


def find_secret_fields(fields: Iterable[FieldSpec]) -> tuple[SecretFinding, ...]:
    """Every field (not marked ``not_secret``) that seems to ask for a secret, in order."""
    found = []
    for spec in fields:
        if not spec.not_secret and (finding := secret_in_field(spec)) is not None:
            found.append(finding)
    return tuple(found)
