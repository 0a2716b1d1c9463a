"""The secret guard: what it flags, what it must not flag, and the overrides."""

from __future__ import annotations

import unicodedata

import pytest

from mcp_elicit.errors import FormSchemaError, SensitiveFieldError
from mcp_elicit.forms import (
    Boolean,
    Choice,
    Form,
    FormSchema,
    Integer,
    MultiChoice,
    Number,
    SecretFinding,
    String,
    find_secret_fields,
)
from mcp_elicit.forms.secrets import secret_in_field, words
from tests.support.deadline import within


@pytest.mark.parametrize(
    ("text", "split"),
    [
        ("api_key", ("api", "key")),
        ("apiKey", ("api", "key")),
        ("APIKey", ("api", "key")),
        ("x-api-key", ("x", "api", "key")),
        ("cardNumber2", ("card", "number", "2")),
        ("cvv2", ("cvv", "2")),
        ("OAuthToken", ("o", "auth", "token")),
        ("IBAN", ("iban",)),
        ("Enter your PIN, please!", ("enter", "your", "pin", "please")),
        ("", ()),
        ("__", ()),
    ],
)
def test_words(text: str, split: tuple[str, ...]) -> None:
    assert words(text) == split


SECRET_NAMES = [
    "password",
    "Password",
    "PASSWORD",
    "user_password",
    "newPassword",
    "confirm_password",
    "password_confirmation",
    "password2",
    "passwords",
    "password_hint",
    "wifi-password",
    "db_passwd",
    "passphrase",
    "key_passphrase",
    "passcode",
    "pin",
    "PIN",
    "card_pin",
    "new_pin",
    "pin_confirm",
    "pin_number",
    "user_pwd",
    "api_key",
    "apiKey",
    "APIKEY",
    "x-api-key",
    "openai_api_key",
    "api_secret",
    "api_token",
    "access_token",
    "accessToken",
    "refresh_token",
    "bearer_token",
    "auth_token",
    "session_token",
    "id_token",
    "oauth_token",
    "OAuthToken",
    "jwt",
    "github_token",
    "token",
    "token_value",
    "csrf_token",
    "client_secret",
    "clientSecret",
    "webhook_secret",
    "secret",
    "secrets",
    "secret_key",
    "aws_secret_access_key",
    "private_key",
    "ssh_key",
    "signing_key",
    "encryption_key",
    "session_cookie",
    "credentials",
    "db_credential",
    "card_number",
    "cardNumber",
    "credit_card",
    "credit_card_number",
    "debit_card",
    "cc_number",
    "cvv",
    "CVV2",
    "cvc",
    "card_verification_value",
    "security_code",
    "iban",
    "IBAN",
    "bank_account",
    "bank_account_number",
    "routing_number",
    "sort_code",
    "ssn",
    "social_security_number",
    "social_insurance_number",
    "otp",
    "totp_code",
    "one_time_password",
    "one_time_code",
    "2fa_code",
    "mfa_code",
    "two_factor_code",
    "authenticator_code",
    "sms_code",
    "auth_code",
    "authorization_code",
    "backup_codes",
    "recovery_code",
    "recovery_key",
    "license_key",
    "productKey",
    "seed_phrase",
    "recovery_phrase",
    "mnemonic_phrase",
]


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_secret_names_are_found(name: str) -> None:
    finding = secret_in_field(String(name=name))
    assert finding is not None, name
    assert finding.where == "name"
    assert finding.field == name


NOT_SECRET_NAMES = [
    "token_count",
    "max_tokens",
    "maxTokens",
    "tokens",
    "tokenizer",
    "token_budget",
    "token_limit",
    "token_id",
    "next_page_token",
    "page_token",
    "continuation_token",
    "design_token",
    "keyboard_layout",
    "primary_key_column",
    "key",
    "sort_key",
    "keynote",
    "passport_country",
    "passport_number",
    "pass_rate",
    "bypass",
    "compass_heading",
    "password_length",
    "password_policy",
    "password_reset_email",
    "password_expiry",
    "api_key_name",
    "api_key_id",
    "aws_access_key_id",
    "ssh_key_path",
    "ssh_key_fingerprint",
    "private_key_file",
    "card_number_last4",
    "card_number_last_4",
    "credit_card_type",
    "bank_account_holder",
    "bank_account_name",
    "credentials_profile",
    "secret_santa_name",
    "secretary",
    "secret_santa_wishlist",
    "pincode",
    "pin_code",
    "map_pin",
    "pinned",
    "spinner",
    "opinion",
    "author",
    "auth_method",
    "oauth_provider",
    "session_name",
    "username",
    "email",
    "name",
    "address",
    "phone",
    "date_of_birth",
    "verification_code",
    "postcode",
    "zip_code",
    "coupon_code",
    "country_code",
    "otpauth_enabled_label",
    "secret_name",
    "secret_id",
    "token_name",
    "session_id",
    "otp_length",
    "pin_length",
    "card_holder_name",
    "api_version",
    "api_base_url",
    "license_key_id",
]


@pytest.mark.parametrize("name", NOT_SECRET_NAMES)
def test_ordinary_names_are_not_flagged(name: str) -> None:
    assert secret_in_field(String(name=name)) is None, secret_in_field(String(name=name))


SECRET_PROSE = [
    "Password",
    "Your password",
    "Enter your password (we never store it)",
    "Your GitHub personal access token",
    "API key",
    "Paste your OpenAI API keys here",
    "Card number",
    "The 3-digit CVV on the back of your card",
    "Security code",
    "Your IBAN",
    "Enter your PIN",
    "Bank account number",
    "Your social security number",
    "The one-time password from your authenticator app",
    "2FA code",
    "Your wallet seed phrase",
    "Client secret from the developer console",
    "Private key (PEM)",
    "Login credentials",
    "Credit card",
]


@pytest.mark.parametrize("text", SECRET_PROSE)
def test_secret_titles_and_descriptions_are_found(text: str) -> None:
    by_title = secret_in_field(String(name="value", title=text))
    by_description = secret_in_field(String(name="value", description=text))
    assert by_title is not None, text
    assert by_description is not None, text
    assert (by_title.where, by_description.where) == ("title", "description")


NOT_SECRET_PROSE = [
    "Token count",
    "How many tokens may the model use?",
    "Maximum password length",
    "Password policy name",
    "Which keyboard layout do you use?",
    "Primary key column",
    "Passport country",
    "A secret Santa name",
    "Pin this note?",
    "PIN code of your town",
    "Postal PIN-code",
    "Your opinion",
    "API key name (a label, not the key)",
    "Last four digits: card number last 4",
    "The design token to change",
    "Your email address",
    "Access key ID",
]


@pytest.mark.parametrize("text", NOT_SECRET_PROSE)
def test_ordinary_prose_is_not_flagged(text: str) -> None:
    assert secret_in_field(String(name="value", title=text, description=text)) is None, text


@pytest.mark.parametrize("between", [" ", " - ", "-"])
def test_a_pin_followed_by_a_long_run_of_spaces_is_read_in_linear_time(between: str) -> None:
    # A server's description with "PIN" and then 100,000 spaces: looking for "code" after
    # them tried every way of splitting the spaces in two (quadratic, over a minute; with
    # the 200,000 here some minutes, far past the hang guard).
    spaces = " " * 100_000
    gap = spaces + between + spaces
    with within(60, "reading a description with a long run of spaces"):
        found = secret_in_field(String(name="value", description=f"Your PIN{gap}here"))
        not_found = secret_in_field(String(name="value", description=f"Your PIN{gap}code"))
    assert found is not None and found.phrase == "PIN"
    assert not_found is None


@pytest.mark.parametrize(
    "spec",
    [
        Integer(name="pin"),
        Number(name="card_number"),
        Integer(name="cvv"),
        String(name="password", format="uri"),
        String(name="webhook_url", description="URL with the access token in it", format="uri"),
    ],
)
def test_numbers_and_uris_can_hold_secrets(spec: String | Integer | Number) -> None:
    assert secret_in_field(spec) is not None


@pytest.mark.parametrize(
    "spec",
    [
        Boolean(name="reset_password", title="Send me a password reset link"),
        Choice(["visa", "amex"], name="credit_card"),
        MultiChoice(["read", "write"], name="api_key_scopes_token"),
        String(name="password_changed_on", format="date"),
        String(name="token_expiry", format="date-time"),
        String(name="password_recovery_email", format="email", title="Email for password recovery"),
    ],
)
def test_fields_that_cannot_hold_a_typed_secret_are_skipped(spec: object) -> None:
    assert secret_in_field(spec) is None  # type: ignore[arg-type]


def test_form_refuses_a_secret_field_with_a_helpful_message() -> None:
    with pytest.raises(SensitiveFieldError) as caught:
        Form(username=String(), api_key=String(title="API key"))
    error = caught.value
    assert isinstance(error, FormSchemaError)
    assert error.field == "api_key"
    text = str(error)
    assert text.startswith("field 'api_key': its name asks for an API key (matched 'api key')")
    assert "URL-mode elicitation" in text
    assert "await ctx.secret('api_key')" in text  # the server's own page, first
    assert "ctx.elicit_url(...)" in text
    assert "not_secret=True" in text


def test_title_finding_message() -> None:
    with pytest.raises(SensitiveFieldError, match="its title asks for a password"):
        Form(value=String(title="Your password"))


def test_parse_refuses_and_from_type_refuses() -> None:
    with pytest.raises(SensitiveFieldError) as caught:
        FormSchema.parse({"type": "object", "properties": {"cvv": {"type": "string"}}})
    assert caught.value.field == "cvv"


def test_not_secret_on_the_spec() -> None:
    schema = Form(password_hint=String(not_secret=True))
    assert schema.secret_findings == ()
    assert find_secret_fields(schema.fields) == ()
    assert secret_in_field(schema.fields[0]) is not None


def test_not_secret_for_parse() -> None:
    wire = {"type": "object", "properties": {"session_token": {"type": "string"}, "n": {"type": "integer"}}}
    schema = FormSchema.parse(wire, not_secret={"session_token"})
    assert schema.field("session_token").not_secret is True
    assert schema.field("n").not_secret is False
    assert schema.to_json() == wire
    assert schema == FormSchema.parse(wire, check_secrets=False)


def test_not_secret_for_parse_must_name_fields() -> None:
    with pytest.raises(FormSchemaError, match="not_secret names 'sesion_token', which are not fields"):
        FormSchema.parse(
            {"type": "object", "properties": {"session_token": {"type": "string"}}},
            not_secret=["sesion_token"],
        )


def test_lenient_parse_keeps_findings_for_a_client_to_warn() -> None:
    wire = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "password": {"type": "string"},
            "pin": {"type": "integer"},
        },
    }
    schema = FormSchema.parse(wire, check_secrets=False)
    assert [f.field for f in schema.secret_findings] == ["password", "pin"]
    assert schema.secret_findings[0] == SecretFinding("password", "name", "password", "a password")
    assert schema.validate({"name": "a", "password": "b", "pin": 1}) == {
        "name": "a",
        "password": "b",
        "pin": 1,
    }
    assert (
        FormSchema.parse(wire, check_secrets=False, not_secret={"pin"}).secret_findings
        == schema.secret_findings[:1]
    )


def test_unnamed_field_is_judged_by_its_texts() -> None:
    assert secret_in_field(String(title="Colour")) is None
    assert secret_in_field(String(title="Password")) is not None


def test_checked_schema_has_no_findings() -> None:
    assert Form(name=String()).secret_findings == ()


def test_finding_message_mentions_parse_override() -> None:
    finding = SecretFinding("pin", "name", "pin", "a PIN")
    assert "FormSchema.parse(..., not_secret={'pin'})" in finding.message


# What a server author writes, and what the guard says of it: the phrase it matched, or
# None. Each row is one rule of the module docstring seen from outside.
AUTHOR_FIELDS: list[tuple[object, str | None]] = [
    # A boolean, a choice or a date cannot carry a typed secret: never read.
    (Boolean(name="has_password", title="Do you have a password?"), None),
    (Boolean(name="remember_password"), None),
    (Choice(["yes", "no"], name="has_api_key"), None),
    # About the secret, not the secret: the next word says so.
    (String(name="password_length_min"), None),
    (Integer(name="password_length_min"), None),
    (Integer(name="pin_code_length"), None),
    (String(name="api_key_name"), None),
    (String(name="api_key_label", title="A label for the API key"), None),
    (String(name="note", title="Do you have a password manager?"), None),
    # Words that contain a secret word are other words.
    (Integer(name="token_count"), None),
    (Integer(name="max_tokens"), None),
    (String(name="keyboard"), None),
    (String(name="monkey"), None),
    (String(name="passport_country"), None),
    (String(name="secretary"), None),
    (String(name="note", title="How many tokens may the summary use?"), None),
    (String(name="note", description="Your token budget for this run"), None),
    (String(name="cursor", description="Your next page token"), None),
    # A hint is part of setting a password (docs/design/secret-guard.md): flagged.
    (String(name="password_hint"), "password"),
    # Secrets by name, however they are spelled.
    (String(name="pwd"), "pwd"),
    (String(name="passwd"), "passwd"),
    (String(name="passphrase"), "passphrase"),
    (String(name="api_key"), "api key"),
    (String(name="apiKey"), "api key"),
    (String(name="API-Key"), "api key"),
    (String(name="access_token"), "access token"),
    (String(name="bearer"), "bearer"),
    (String(name="auth_bearer"), "bearer"),
    (String(name="client_secret"), "client secret"),
    (String(name="private_key"), "private key"),
    (String(name="ssh key"), "ssh key"),
    (String(name="otp"), "otp"),
    (String(name="2fa code"), "2 fa code"),
    (String(name="totp"), "totp"),
    (Integer(name="cvv"), "cvv"),
    (String(name="cvc"), "cvc"),
    (String(name="card number"), "card number"),
    (String(name="iban"), "iban"),
    (String(name="ssn"), "ssn"),
    (String(name="social security"), "social security"),
    # In prose, "token" after "your" (two words may come between).
    (String(name="value", title="Enter your GitHub token"), "your git hub token"),
    (String(name="value", description="Paste your token here"), "your token"),
    (String(name="value", title="Your personal access token"), "access token"),
    # A password in another language.
    (String(name="mot_de_passe"), "mot de passe"),
    (String(name="value", title="Mot de passe"), "mot de passe"),
    (String(name="contraseña"), "contraseña"),
    # As a macOS keyboard may send it: n and a combining tilde.
    (String(name="value", title=unicodedata.normalize("NFD", "Contraseña")), "contraseña"),
    (String(name="Passwort"), "passwort"),
    (String(name="value", title="Ihr Kennwort"), "kennwort"),
    (String(name="пароль"), "пароль"),
    (String(name="value", title="Введите пароль"), "пароль"),
    (String(name="senha"), "senha"),
    (String(name="wachtwoord"), "wachtwoord"),
]


@pytest.mark.parametrize(("spec", "phrase"), AUTHOR_FIELDS)
def test_what_an_author_writes_is_judged_by_the_documented_rule(spec: object, phrase: str | None) -> None:
    finding = secret_in_field(spec)  # type: ignore[arg-type]
    assert (finding.phrase if finding else None) == phrase, finding
