"""pydantic's text types in a form: URLs and EmailStr as formatted text, given back as declared.

A server author writes ``site: HttpUrl`` or ``email: EmailStr`` in a model, dataclass or
TypedDict; the form asks for text of format ``uri``/``email`` (with the type's own
length limit), every schema it sends is valid under both revisions, and the handler
gets the value pydantic makes of the answer (an ``AnyUrl``, a normalised ``str``), or
the person hears why the answer was refused.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import sys
import uuid
from decimal import Decimal
from typing import Annotated, Any, Literal, TypedDict

import pydantic
import pytest
from pydantic import AnyHttpUrl, AnyUrl, EmailStr, HttpUrl, UrlConstraints

from mcp_elicit.errors import FormSchemaError, FormValidationError
from mcp_elicit.forms import FormSchema, Number, String
from mcp_elicit.forms.annotations import spec_for

from support.wire import WireChecker


def _valid_everywhere(form: FormSchema, wire: WireChecker, wire_2025: WireChecker) -> None:
    """The form's ``requestedSchema``, asked as each revision asks (an input request inside a
    result at 2026-07-28, a JSON-RPC request at 2025-11-25), valid under its schema."""
    ask = {
        "method": "elicitation/create",
        "params": {"mode": "form", "message": "Tell us", "requestedSchema": form.to_json()},
    }
    wire._validate(ask, "ElicitRequest")
    wire_2025.request({"jsonrpc": "2.0", "id": 1, **ask})


class Site(pydantic.BaseModel):
    home: AnyUrl
    api: AnyHttpUrl
    docs: HttpUrl
    mirror: HttpUrl | None = None


@pytest.mark.parametrize(
    ("annotation", "field"),
    [
        (AnyUrl, {"type": "string", "format": "uri"}),
        (AnyHttpUrl, {"type": "string", "format": "uri"}),
        (HttpUrl, {"type": "string", "format": "uri", "maxLength": 2083}),
        (pydantic.WebsocketUrl, {"type": "string", "format": "uri", "maxLength": 2083}),
        (pydantic.FileUrl, {"type": "string", "format": "uri"}),
        (
            Annotated[HttpUrl, pydantic.Field(max_length=200)],
            {"type": "string", "format": "uri", "maxLength": 200},
        ),
        (
            Annotated[AnyUrl, UrlConstraints(max_length=300)],
            {"type": "string", "format": "uri", "maxLength": 300},
        ),
        (EmailStr, {"type": "string", "format": "email"}),
        (
            Annotated[EmailStr, pydantic.Field(max_length=80)],
            {"type": "string", "format": "email", "maxLength": 80},
        ),
    ],
)
def test_pydantic_text_types_are_formatted_text(annotation: Any, field: dict[str, Any]) -> None:
    spec, _, optional = spec_for("f", annotation)
    assert spec.to_json() == field
    assert not optional


def test_a_model_of_urls_is_asked_as_uri_text_and_built_with_url_objects(
    wire: WireChecker, wire_2025: WireChecker
) -> None:
    form = FormSchema.from_type(Site)
    _valid_everywhere(form, wire, wire_2025)
    assert form.required == ("home", "api", "docs")
    assert form.field("docs") == String(name="docs", format="uri", max_length=2083)
    site = form.build(
        {"home": "mailto:ada@example.com", "api": "http://localhost:8080", "docs": "https://example.com"}
    )
    assert isinstance(site, Site)
    assert site.home == AnyUrl("mailto:ada@example.com")
    assert isinstance(site.docs, HttpUrl)
    assert str(site.docs) == "https://example.com/"
    assert site.mirror is None


def test_a_url_the_type_refuses_is_refused_for_the_person_naming_the_field() -> None:
    form = FormSchema.from_type(Site)
    answer = {"home": "x:", "api": "ftp://example.com", "docs": "https://example.com"}
    with pytest.raises(FormValidationError) as caught:
        form.admit(answer)
    [problem] = caught.value.problems
    assert problem.field == "api"
    assert problem.message == "must use the scheme 'http' or 'https'"


@dataclasses.dataclass
class Links:
    docs: HttpUrl
    home: AnyUrl | None = None


class LinksDict(TypedDict):
    docs: HttpUrl


def test_a_dataclass_or_typeddict_gets_the_declared_url_type(
    wire: WireChecker, wire_2025: WireChecker
) -> None:
    form = FormSchema.from_type(Links)
    _valid_everywhere(form, wire, wire_2025)
    links = form.build({"docs": "https://example.com/a"})
    assert isinstance(links.docs, HttpUrl)
    assert links.docs.path == "/a"
    assert links.home is None
    as_dict = FormSchema.from_type(LinksDict).build({"docs": "https://example.com"})
    assert isinstance(as_dict["docs"], HttpUrl)
    with pytest.raises(FormValidationError) as caught:
        form.admit({"docs": "mailto:ada@example.com"})
    assert [(p.field, p.message) for p in caught.value.problems] == [
        ("docs", "must use the scheme 'http' or 'https'")
    ]


def test_a_url_that_pydantic_cannot_read_is_refused_with_pydantic_s_reason() -> None:
    form = FormSchema.from_type(Links)
    with pytest.raises(FormValidationError) as caught:
        form.admit({"docs": "http://example.com:99999"})  # a URI, but no port is that large
    [problem] = caught.value.problems
    assert problem.field == "docs"
    assert (
        problem.message
        == "must be an address this server takes (input should be a valid URL, invalid port number)"
    )


def test_url_constraints_schemes_are_checked_when_the_answer_is_built() -> None:
    @dataclasses.dataclass
    class Secure:
        site: Annotated[AnyUrl, UrlConstraints(allowed_schemes=["https"])]

    form = FormSchema.from_type(Secure)
    assert form.build({"site": "https://example.com"}).site == AnyUrl("https://example.com")
    with pytest.raises(FormValidationError, match="must use the scheme 'https'"):
        form.admit({"site": "http://example.com"})


def test_url_defaults_go_out_as_their_text(wire: WireChecker, wire_2025: WireChecker) -> None:
    class Defaults(pydantic.BaseModel):
        docs: HttpUrl = HttpUrl("https://example.com/docs")
        home: AnyUrl = "https://example.com"  # type: ignore[assignment]  # pydantic leaves defaults unchecked

    form = FormSchema.from_type(Defaults)
    _valid_everywhere(form, wire, wire_2025)
    assert form.field("docs").default == "https://example.com/docs"
    assert form.field("home").default == "https://example.com/"
    built = form.build({})
    assert built.docs == HttpUrl("https://example.com/docs")


def test_a_url_default_the_type_refuses_is_refused_when_the_form_is_defined() -> None:
    @dataclasses.dataclass
    class Wrong:
        docs: HttpUrl = "ftp://example.com"  # type: ignore[assignment]

    with pytest.raises(FormSchemaError) as caught:
        FormSchema.from_type(Wrong)
    assert caught.value.field == "docs"
    assert (
        "the default 'ftp://example.com' does not fit the field: must use the scheme 'http' or 'https'"
        in str(caught.value)
    )


def test_url_constraints_on_a_type_that_is_not_a_url_are_refused() -> None:
    with pytest.raises(FormSchemaError, match="UrlConstraints apply only to a URL type"):
        spec_for("f", Annotated[str, UrlConstraints(max_length=10)])


def test_email_str_gives_back_the_address_as_pydantic_normalises_it(
    wire: WireChecker, wire_2025: WireChecker
) -> None:
    class Contact(pydantic.BaseModel):
        email: EmailStr

    @dataclasses.dataclass
    class ContactData:
        email: EmailStr

    for cls in (Contact, ContactData):
        form = FormSchema.from_type(cls)
        _valid_everywhere(form, wire, wire_2025)
        built = form.build({"email": "Ada@Example.COM"})
        assert type(built.email) is str
        assert built.email == "Ada@example.com"
        with pytest.raises(FormValidationError) as caught:
            form.admit({"email": "ada@mail.invalid"})
        [problem] = caught.value.problems
        assert problem.field == "email"
        assert problem.message.startswith("must be an email address this server takes: ")
        assert "special-use or reserved name" in problem.message


def test_email_str_without_email_validator_names_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "email_validator", None)  # as if it were not installed

    @dataclasses.dataclass
    class Contact:
        email: EmailStr

    with pytest.raises(FormSchemaError) as caught:
        FormSchema.from_type(Contact)
    message = str(caught.value)
    assert caught.value.field == "email"
    assert "EmailStr needs the package email-validator" in message
    assert "pip install 'pydantic[email]'" in message
    assert "Annotated[str, Field(format='email')]" in message


def test_decimal_is_a_number_given_back_as_written(wire: WireChecker, wire_2025: WireChecker) -> None:
    class Price(pydantic.BaseModel):
        amount: Annotated[Decimal, pydantic.Field(ge=Decimal("0.01"), le=Decimal("1000"))]
        tip: Decimal = Decimal("1.50")

    @dataclasses.dataclass
    class PriceData:
        amount: Decimal

    form = FormSchema.from_type(Price)
    _valid_everywhere(form, wire, wire_2025)
    assert form.field("amount") == Number(name="amount", minimum=0.01, maximum=1000)
    assert form.to_json()["properties"]["tip"] == {"type": "number", "default": 1.5}
    built = form.build({"amount": 19.99})
    assert built.amount == Decimal("19.99")
    assert built.tip == Decimal("1.50")
    data = FormSchema.from_type(PriceData).build({"amount": 0.1})
    assert data.amount == Decimal("0.1")
    assert FormSchema.from_type(PriceData).build({"amount": 7}).amount == Decimal(7)


def test_a_large_whole_decimal_bound_or_default_goes_out_as_a_float(
    wire: WireChecker, wire_2025: WireChecker
) -> None:
    # past a double's exact integers an int is refused on the wire; 1e20 is a double exactly
    @dataclasses.dataclass
    class Budget:
        total: Annotated[Decimal, pydantic.Field(le=Decimal("1e20"))] = Decimal("100000000000000000000")

    form = FormSchema.from_type(Budget)
    _valid_everywhere(form, wire, wire_2025)
    assert form.to_json()["properties"]["total"] == {"type": "number", "maximum": 1e20, "default": 1e20}
    assert form.build({"total": 1e20}).total == Decimal("1e20")


@pytest.mark.parametrize(
    ("written", "says"),
    [
        ("0.1000000000000000000001", "0.1000000000000000000001 has more digits than a JSON number carries"),
        ("9007199254740993", "9007199254740993 has more digits than a JSON number carries"),
        ("1e400", "1E+400 is beyond what a JSON number carries"),
    ],
)
def test_a_decimal_no_json_number_carries_as_written_is_refused(written: str, says: str) -> None:
    # sent as the nearest double, the bound would take answers the author's does not, and a
    # default the person kept would build a Decimal the class never declared
    bounded = Annotated[Decimal, pydantic.Field(ge=Decimal(written))]
    defaulted = dataclasses.make_dataclass(
        "Defaulted", [("amount", Decimal, dataclasses.field(default=Decimal(written)))]
    )
    for refused in (lambda: spec_for("amount", bounded), lambda: FormSchema.from_type(defaulted)):
        with pytest.raises(FormSchemaError) as caught:
            refused()
        assert caught.value.field == "amount"
        assert says in str(caught.value), str(caught.value)
        assert "write a larger one as a float" not in str(caught.value)


def test_pydantic_string_constraints_give_lengths() -> None:
    spec, _, _ = spec_for("code", Annotated[str, pydantic.StringConstraints(min_length=2, max_length=4)])
    assert spec == String(name="code", min_length=2, max_length=4)
    spec, _, _ = spec_for("price", pydantic.condecimal(ge=0))
    assert spec == Number(name="price", minimum=0)


class Level(enum.IntEnum):
    LOW = 1


@pytest.mark.parametrize(
    ("annotation", "says"),
    [
        (uuid.UUID, "a UUID has no format in a form; ask for str and read it with uuid.UUID in the tool"),
        (dt.time, "a time of day has no format in a form; ask for a datetime (format 'date-time')"),
        (dt.timedelta, "a timedelta has no format in a form; ask for an int or float"),
        (pydantic.SecretStr, "secrets do not belong in a form"),
        (pydantic.SecretStr, "ctx.elicit_url"),
        (pydantic.NameEmail, "use EmailStr (or Annotated[str, Field(format='email')])"),
        (pydantic.PostgresDsn, "use AnyUrl"),
        (pydantic.IPvAnyAddress, "ask for str and read it with ipaddress in the tool"),
        (Literal[1, 2], "Literal options must be strings, not 1; use Literal['1', ...]"),
        (Level, "Enum Level has the non-string value 1; form choices are strings (use a StrEnum"),
        (Annotated[int, pydantic.Field(multiple_of=5)], "multipleOf is not part of the form subset"),
        (
            Annotated[Decimal, pydantic.Field(max_digits=5, decimal_places=2)],
            "max_digits=5, decimal_places=2 cannot be expressed in a form: the form subset cannot limit "
            "digits; check them in the tool",
        ),
        (
            Annotated[str, pydantic.StringConstraints(strip_whitespace=True)],
            "strip_whitespace=True cannot be expressed in a form: a form gives the text as typed; "
            "strip or change it in the tool",
        ),
        (
            Annotated[float, pydantic.Field(gt=0)],
            "exclusive bounds (gt/lt) cannot be expressed in a form; use ge/le",
        ),
        (
            Annotated[str, pydantic.StringConstraints(min_length=1, pattern="^a")],
            "pattern='^a' cannot be expressed in a form: pattern is not part of the form subset",
        ),
    ],
)
def test_types_a_form_cannot_ask_say_what_to_use_instead(annotation: Any, says: str) -> None:
    with pytest.raises(FormSchemaError) as caught:
        spec_for("f", annotation)
    assert caught.value.field == "f"
    assert says in str(caught.value)
    assert "_Pydantic" not in str(caught.value)
