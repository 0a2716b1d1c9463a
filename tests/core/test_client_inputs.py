"""Reading what a server asks, and checking answers before they leave (core.client_inputs)."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from mcp_elicit.core.client_inputs import (
    ElicitationRequest,
    Origin,
    ServerInfo,
    check_elicit_answer,
    check_roots_answer,
    check_sampling_answer,
    parse_elicitation,
)
from mcp_elicit.errors import FormSchemaError, FormValidationError, ProtocolViolation
from mcp_elicit.forms import Choice, FormSchema, MultiChoice

from support.wire import WireChecker

SERVER = ServerInfo("bookings", "1.0", title="Table bookings", where="http://127.0.0.1:1/mcp")
ORIGIN = Origin("tools/call", "book_table")

DEFAULTS_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "score": {"type": "number", "default": 95.5},
        "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
        "verified": {"type": "boolean", "default": True},
    },
    "required": [],
}

BOOKING = {
    "type": "object",
    "properties": {
        "guests": {"type": "integer", "minimum": 1, "maximum": 20},
        "email": {"type": "string", "format": "email"},
        "note": {"type": "string", "maxLength": 5},
        "seating": {"type": "string", "enum": ["inside", "terrace"]},
        "extras": {"type": "array", "items": {"type": "string", "enum": ["cake", "wine"]}},
    },
    "required": ["guests", "email"],
}


def form(schema: Any, message: str = "How many?", key: str = "details") -> ElicitationRequest:
    return parse_elicitation(
        {"mode": "form", "message": message, "requestedSchema": schema}, server=SERVER, key=key, origin=ORIGIN
    )


def test_a_form_is_parsed_with_the_shared_form_schema() -> None:
    request = form(BOOKING)
    assert request.mode == "form"
    assert request.fields == ("guests", "email", "note", "seating", "extras")
    assert request.schema is not None
    assert request.schema.required == ("guests", "email")
    assert request.schema_problem is None
    assert request.method == "elicitation/create"


def test_mode_defaults_to_form() -> None:
    request = parse_elicitation(
        {"message": "m", "requestedSchema": BOOKING}, server=SERVER, key="k", origin=ORIGIN
    )
    assert request.mode == "form"


def test_defaults_are_applied_before_the_answer_leaves(wire_2025: WireChecker) -> None:
    answer = check_elicit_answer(form(DEFAULTS_SCHEMA), {"action": "accept"})
    assert answer == {
        "action": "accept",
        "content": {"name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": True},
    }
    given = check_elicit_answer(form(DEFAULTS_SCHEMA), {"action": "accept", "content": {"name": "Ann"}})
    assert given["content"]["name"] == "Ann"
    assert given["content"]["age"] == 30
    wire_2025.response(
        "elicitation/create",
        {"jsonrpc": "2.0", "id": 1, "result": {"action": "accept", "content": {"name": "Ann"}}},
    )


@pytest.mark.parametrize(
    ("content", "field"),
    [
        ({"email": "a@b.example"}, "guests"),
        ({"guests": 0, "email": "a@b.example"}, "guests"),
        ({"guests": "two", "email": "a@b.example"}, "guests"),
        ({"guests": 2, "email": "not an address"}, "email"),
        ({"guests": 2, "email": "a@b.example", "note": "too long"}, "note"),
        ({"guests": 2, "email": "a@b.example", "seating": "roof"}, "seating"),
        ({"guests": 2, "email": "a@b.example", "extras": ["cake", "pony"]}, "extras"),
    ],
)
def test_answers_that_do_not_fit_never_leave(content: dict[str, Any], field: str) -> None:
    with pytest.raises(FormValidationError) as caught:
        check_elicit_answer(form(BOOKING), {"action": "accept", "content": content})
    assert field in {p.field for p in caught.value.problems}


def test_unknown_fields_are_dropped_from_an_accepted_answer() -> None:
    answer = check_elicit_answer(
        form(BOOKING), {"action": "accept", "content": {"guests": 2, "email": "a@b.example", "x": 1}}
    )
    assert answer == {"action": "accept", "content": {"guests": 2, "email": "a@b.example"}}


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_decline_and_cancel_carry_no_content(action: str) -> None:
    assert check_elicit_answer(form(BOOKING), {"action": action, "content": {"guests": 1}}) == {
        "action": action
    }


def test_a_malformed_action_is_refused() -> None:
    with pytest.raises(ValueError, match="accept, decline or cancel"):
        check_elicit_answer(form(BOOKING), {"action": "maybe"})


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"address": {"type": "object", "properties": {}}}},
        {"type": "object", "properties": {"x": {"$ref": "http://localhost:1/x.json"}}},
        {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object", "properties": {}},
        {"type": "array"},
        None,
    ],
)
def test_a_schema_outside_the_subset_is_a_problem_to_report_not_a_form(schema: Any) -> None:
    request = form(schema)
    assert request.schema is None
    assert request.schema_problem
    assert request.fields == ()
    with pytest.raises(ValueError, match="could not be read"):
        check_elicit_answer(request, {"action": "accept", "content": {}})
    assert check_elicit_answer(request, {"action": "cancel"}) == {"action": "cancel"}


def test_fields_asking_for_secrets_are_flagged_not_refused() -> None:
    request = form({"type": "object", "properties": {"api_key": {"type": "string"}}})
    assert request.schema is not None
    assert request.warnings
    assert "URL" in request.warnings[0] or "url" in request.warnings[0]


def test_a_secret_warning_names_the_field_and_speaks_to_the_person() -> None:
    """The warning is shown to the person answering: it says which field, and what to do
    (nothing about how a server's author would fix the form)."""
    request = form(
        {
            "type": "object",
            "properties": {"pw": {"type": "string", "title": "Password"}, "api_key": {"type": "string"}},
        }
    )
    assert len(request.warnings) == 2
    first, second = request.warnings
    assert first.startswith("Field 'pw' seems to ask for a password (its title says 'password')")
    assert second.startswith("Field 'api_key' seems to ask for an API key (its name says 'api key')")
    for text in request.warnings:
        assert "do not enter" in text.lower()
        assert "ctx." not in text and "not_secret" not in text and "FormSchema" not in text


def test_url_mode() -> None:
    request = parse_elicitation(
        {"mode": "url", "message": "Sign in", "url": "https://example.com/x", "elicitationId": "e1"},
        server=SERVER,
        key="url e1",
        origin=ORIGIN,
    )
    assert (request.mode, request.url, request.elicitation_id) == ("url", "https://example.com/x", "e1")
    assert check_elicit_answer(request, {"action": "accept", "content": {"x": 1}}) == {"action": "accept"}
    assert "url: https://example.com/x" in request.describe()


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://login.example/cb?code=SECRET&state=SECRET", "url: https://login.example/cb?REDACTED]"),
        (
            "https://me:SECRET@pay.example/p#token=SECRET",
            "url: https://REDACTED:REDACTED@pay.example/p#REDACTED]",
        ),
        # redacted first, then cut: a long path does not push the query past the cut unredacted
        ("https://pay.example/" + "p" * 40 + "?otp=SECRET" + "x" * 200, "?REDACTED]"),
        ("https://pay.example/" + "p" * 300 + "?otp=SECRET", "p..."),
    ],
)
def test_a_url_mode_link_is_described_without_its_code_or_token(url: str, shown: str) -> None:
    """A URL-mode link often carries a one-time code or a token in its query (or a password,
    a fragment): the description, which reaches reports and the errors a server is sent,
    redacts it before it cuts it short."""
    request = parse_elicitation(
        {"mode": "url", "message": "Sign in", "url": url, "elicitationId": "e1"},
        server=SERVER,
        key="e1",
        origin=ORIGIN,
    )
    text = request.describe()
    assert "SECRET" not in text and shown in text, text
    assert request.url == url  # what is opened stays as sent


@pytest.mark.parametrize(
    ("uri", "shown"),
    [
        (
            "https://me:SECRET@files.example/a?sig=SECRET",
            "https://REDACTED:REDACTED@files.example/a?REDACTED",
        ),
        ("urn:report?token=SECRET", "urn:report?REDACTED"),
        ("db://me x:SECRET@h/t", "db://REDACTED:REDACTED@h/t"),
    ],
)
def test_the_resource_a_question_comes_during_is_named_without_its_key(uri: str, shown: str) -> None:
    """The client's own ``resources/read`` URI, as its messages, log lines ("waits for the
    page of"), its terminal and its browser page name the request a question came during:
    redacted, a signed URL's key and a user's password left out."""
    origin = Origin.of("resources/read", {"uri": uri})
    assert str(origin) == f"resources/read {shown}"
    request = parse_elicitation(
        {"message": "Why?", "requestedSchema": {"type": "object", "properties": {}}},
        server=SERVER,
        key="k",
        origin=origin,
    )
    assert "SECRET" not in request.describe() and shown in request.describe()
    assert origin.target == uri  # what is compared (an answerer's target) stays as sent
    assert str(Origin.of("tools/call", {"name": "a?b"})) == "tools/call a?b"  # a name is no URI


@pytest.mark.parametrize(
    "params",
    [{"mode": "url", "message": "m"}, {"mode": "url", "url": ""}, {"mode": "telepathy", "message": "m"}],
)
def test_malformed_elicitations_are_violations(params: dict[str, Any]) -> None:
    with pytest.raises(ProtocolViolation):
        parse_elicitation(params, server=SERVER, key="k", origin=ORIGIN)


def test_a_request_describes_server_question_and_fields() -> None:
    text = form(BOOKING, message="How many people?").describe()
    assert "Table bookings 1.0 (http://127.0.0.1:1/mcp)" in text
    assert "question 'details' ('How many people?')" in text
    assert "tools/call book_table" in text
    assert "fields: guests, email, note, seating, extras" in text


def test_asking_again_keeps_the_request_and_adds_the_problems() -> None:
    request = form(BOOKING)
    with pytest.raises(FormValidationError) as caught:
        check_elicit_answer(request, {"action": "accept", "content": {}})
    again = request.again(caught.value.problems)
    assert again.problems == caught.value.problems
    assert again.key == request.key
    assert again.schema == request.schema


def test_server_info_and_origin() -> None:
    info = ServerInfo.from_json({"name": "n", "version": "2", "title": 3}, "stdio")
    assert (info.name, info.version, info.title, info.where) == ("n", "2", None, "stdio")
    assert str(ServerInfo.from_json(None, "")) == "unknown server"
    # reached but not yet told who it is: where it is, not "unknown server (URL)"
    assert str(ServerInfo.from_json(None, "http://127.0.0.1:8000/mcp")) == "http://127.0.0.1:8000/mcp"
    assert str(Origin.of("resources/read", {"uri": "x://1"})) == "resources/read x://1"
    assert str(Origin.of("prompts/get", {"name": 3})) == "prompts/get"
    assert str(Origin.of("tools/list", None)) == "tools/list"


def test_sampling_answers_are_checked() -> None:
    good = {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}
    assert check_sampling_answer(good) == good
    with pytest.raises(ValueError, match="CreateMessageResult"):
        check_sampling_answer({"role": "assistant"})


def test_roots_answers_are_checked_and_lists_wrapped() -> None:
    assert check_roots_answer([{"uri": "file:///tmp"}]) == {"roots": [{"uri": "file:///tmp"}]}
    assert check_roots_answer({"roots": []}) == {"roots": []}
    with pytest.raises(ValueError, match="ListRootsResult"):
        check_roots_answer([{"name": "no uri"}])


def test_server_info_that_is_not_text_is_not_shown_as_text() -> None:
    # a name nested 1000 deep (orjson reads 1024 levels): str() of it raised RecursionError
    # while connecting; a list or an object was shown as Python's repr of it
    deep: object = "x"
    for _ in range(1000):
        deep = [deep]
    info = ServerInfo.from_json({"name": deep, "version": {"v": 1}}, "stdio")
    assert (info.name, info.version) == ("unknown server", "")
    assert ServerInfo.from_json({"name": "n", "version": 2}, "").version == "2"  # a number reads
    assert ServerInfo.from_json({"name": True, "version": False}, "").name == "unknown server"


def test_an_unknown_mode_nested_too_deeply_to_quote_is_still_a_protocol_violation() -> None:
    deep: object = "form"
    for _ in range(1000):
        deep = [deep]
    with pytest.raises(ProtocolViolation, match=r"unknown mode \[\[\[\[\.\.\.\]\]\]\]"):
        parse_elicitation({"mode": deep, "message": "?"}, server=SERVER, key="k", origin=Origin("tools/call"))


def test_a_form_nested_too_deeply_to_read_is_a_schema_problem() -> None:
    # a default nested 1000 deep (a JSON reader takes 1024): reading the form raised
    # RecursionError where a broken form is kept as a problem, answered cancel
    deep: object = []
    for _ in range(1000):
        deep = [deep]
    schema = {"type": "object", "properties": {"x": {"type": "string", "default": deep}}}
    params = {"mode": "form", "message": "?", "requestedSchema": schema}
    request = parse_elicitation(params, server=SERVER, key="k", origin=Origin("tools/call"))
    assert request.schema is None
    assert request.schema_problem == "the form is nested too deeply to read"


def test_a_default_its_own_field_refuses_is_not_pre_filled_and_the_person_is_told() -> None:
    # What the official Python SDK sends for pydantic's name: str = Field("", min_length=1).
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Name", "minLength": 1, "default": ""},
            "age": {"type": "integer", "default": 30},
        },
    }
    request = form(schema)
    assert request.schema_problem is None
    assert request.schema is not None
    assert request.schema.field("name").default is None
    assert request.schema.field("age").default == 30
    (warning,) = request.warnings
    assert warning.startswith("Field 'name': the default '' is not a valid answer: it must not be empty")
    assert "not pre-filled" in warning
    with pytest.raises(FormValidationError, match="name"):
        check_elicit_answer(request, {"action": "accept", "content": {"name": ""}})
    left_out = check_elicit_answer(request, {"action": "accept", "content": {}})
    assert left_out == {"action": "accept", "content": {"age": 30}}
    sent = check_elicit_answer(request, {"action": "accept", "content": {"name": "Ann"}})
    assert sent == {"action": "accept", "content": {"name": "Ann", "age": 30}}


def sdk_form(**properties: Any) -> ElicitationRequest:
    """A form as the official Python SDK renders a pydantic model's fields."""
    return form({"type": "object", "title": "M", "properties": properties, "required": list(properties)})


def test_a_pattern_is_read_not_run_and_shown_to_the_person() -> None:
    request = sdk_form(code={"type": "string", "title": "Code", "pattern": "^(a+)+$"})
    assert request.schema_problem is None
    assert request.fields == ("code",)
    (warning,) = request.warnings
    assert warning == (
        "Field 'code' should match the pattern '^(a+)+$', which this client does not check: "
        "the server may refuse an answer that does not."
    )
    # The pattern is never run: a catastrophic one costs nothing, and the server decides.
    sent = check_elicit_answer(request, {"action": "accept", "content": {"code": "a" * 40 + "!"}})
    assert sent == {"action": "accept", "content": {"code": "a" * 40 + "!"}}


def test_the_servers_own_forms_keep_refusing_keywords_beyond_the_subset() -> None:
    with pytest.raises(FormSchemaError, match="pattern"):
        FormSchema.parse({"type": "object", "properties": {"code": {"type": "string", "pattern": "^a$"}}})


def test_exclusive_bounds_of_an_integer_are_its_whole_bounds() -> None:
    # pydantic's Field(gt=0, lt=10) on an int.
    request = sdk_form(
        seats={"type": "integer", "title": "Seats", "exclusiveMinimum": 0, "exclusiveMaximum": 10}
    )
    assert request.schema_problem is None
    assert request.schema is not None
    seats = request.schema.field("seats")
    assert (seats.minimum, seats.maximum) == (1, 9)  # type: ignore[union-attr]
    assert request.warnings == ()  # the field shows them as they are
    with pytest.raises(FormValidationError, match="seats: must be at least 1"):
        check_elicit_answer(request, {"action": "accept", "content": {"seats": 0}})
    sent = check_elicit_answer(request, {"action": "accept", "content": {"seats": 9}})
    assert sent["content"] == {"seats": 9}


def test_exclusive_bounds_of_a_number_are_checked_before_the_answer_leaves() -> None:
    request = sdk_form(
        share={"type": "number", "exclusiveMinimum": 0.5, "maximum": 2, "exclusiveMaximum": 1.5},
        other={"type": "string"},
    )
    assert request.schema_problem is None
    assert request.schema is not None
    assert request.warnings == ()  # the field says them (schema.extras), as its own bounds
    extras = request.schema.extras("share")
    assert (extras.more_than, extras.less_than, extras.multiple_of) == (0.5, 1.5, None)
    for value, problem in ((0.5, "must be more than 0.5"), (1.5, "must be less than 1.5")):
        with pytest.raises(FormValidationError, match=f"share: {problem}"):
            check_elicit_answer(request, {"action": "accept", "content": {"share": value, "other": ""}})
        assert request.schema.check_field("share", value) == problem
    assert request.schema.check_field("share", 0.75) is None
    sent = check_elicit_answer(request, {"action": "accept", "content": {"share": 0.75, "other": ""}})
    assert sent["content"] == {"share": 0.75, "other": ""}


@pytest.mark.parametrize("bound", ["1", True, None, float("inf")])
def test_a_malformed_exclusive_bound_is_still_a_form_not_shown(bound: object) -> None:
    request = sdk_form(n={"type": "number", "exclusiveMinimum": bound})
    assert request.schema is None
    assert request.schema_problem


def test_multiple_of_is_checked_in_decimal_before_the_answer_leaves() -> None:
    # pydantic's Field(multiple_of=...): 0.3 is a multiple of 0.1 as the person reads it.
    request = sdk_form(step={"type": "number", "multipleOf": 0.1}, pair={"type": "integer", "multipleOf": 2})
    assert request.schema_problem is None
    assert request.schema is not None
    assert request.warnings == ()  # the fields say them (schema.extras)
    assert [request.schema.extras(name).multiple_of for name in ("step", "pair")] == [0.1, 2]
    sent = check_elicit_answer(request, {"action": "accept", "content": {"step": 0.3, "pair": 4}})
    assert sent["content"] == {"step": 0.3, "pair": 4}
    with pytest.raises(FormValidationError) as caught:
        check_elicit_answer(request, {"action": "accept", "content": {"step": 0.35, "pair": 3}})
    assert [str(p) for p in caught.value.problems] == [
        "step: must be a multiple of 0.1",
        "pair: must be a multiple of 2",
    ]
    assert request.schema.check_field("pair", 5) == "must be a multiple of 2"
    # Beyond what a decimal quotient can be worked out in, the server decides.
    assert request.schema.check_field("step", 1e300) is None


@pytest.mark.parametrize("step", [0, -1, "1", True, float("nan")])
def test_a_malformed_multiple_of_is_still_a_form_not_shown(step: object) -> None:
    request = sdk_form(n={"type": "number", "multipleOf": step})
    assert request.schema is None
    assert request.schema_problem


def test_a_const_text_field_is_a_choice_of_one() -> None:
    # pydantic's kind: Literal["a"] = "a", and a required Literal["b"].
    request = sdk_form(
        kind={"type": "string", "title": "Kind", "const": "a", "default": "a"},
        sure={"type": "string", "const": "yes"},
    )
    assert request.schema_problem is None
    assert request.schema is not None
    kind, sure = request.schema.fields
    assert isinstance(kind, Choice) and isinstance(sure, Choice)
    assert ([o.value for o in kind.options], kind.default) == (["a"], "a")
    assert [o.value for o in sure.options] == ["yes"]
    assert request.warnings == ()
    sent = check_elicit_answer(request, {"action": "accept", "content": {"sure": "yes"}})
    assert sent["content"] == {"kind": "a", "sure": "yes"}
    with pytest.raises(FormValidationError, match="sure: must be one of: yes"):
        check_elicit_answer(request, {"action": "accept", "content": {"sure": "no"}})


@pytest.mark.parametrize(
    "prop",
    [
        {"type": "string", "const": 1},
        {"type": "string", "const": "a", "enum": ["a", "b"]},
        {"type": "integer", "const": 1},
    ],
)
def test_a_const_that_is_no_choice_of_text_is_still_a_form_not_shown(prop: dict[str, Any]) -> None:
    request = sdk_form(n=prop)
    assert request.schema is None
    assert request.schema_problem


def test_options_with_keys_beside_const_and_title_are_read() -> None:
    with_notes = [
        {"const": "s", "title": "Small", "description": "For one"},
        {"const": "l", "title": "Large", "description": "For a family", "$comment": "x"},
    ]
    request = sdk_form(
        size={"type": "string", "oneOf": with_notes},
        extras={"type": "array", "items": {"anyOf": with_notes}},
    )
    assert request.schema_problem is None
    assert request.schema is not None
    size, extras = request.schema.fields
    assert isinstance(size, Choice) and isinstance(extras, MultiChoice)
    assert [tuple(o) for o in size.options] == [("s", "Small"), ("l", "Large")]
    assert [tuple(o) for o in extras.options] == [("s", "Small"), ("l", "Large")]
    sent = check_elicit_answer(request, {"action": "accept", "content": {"size": "l", "extras": ["s"]}})
    assert sent["content"] == {"size": "l", "extras": ["s"]}


@pytest.mark.parametrize(
    "options",
    [[{"const": "s", "description": "no title"}], [{"const": 1, "title": "One"}], ["s"]],
)
def test_options_without_a_text_const_and_title_are_still_a_form_not_shown(options: list[Any]) -> None:
    request = sdk_form(size={"type": "string", "oneOf": options})
    assert request.schema is None
    assert request.schema_problem


def test_a_default_the_taken_in_keywords_refuse_is_not_pre_filled() -> None:
    # pydantic's share: float = Field(0, gt=0), and steps: float = Field(0.25, multiple_of=0.5).
    request = sdk_form(
        share={"type": "number", "exclusiveMinimum": 0, "default": 0},
        steps={"type": "number", "multipleOf": 0.5, "default": 0.25},
    )
    assert request.schema is not None
    assert [spec.default for spec in request.schema.fields] == [None, None]
    assert request.warnings[:2] == (
        "Field 'share': the default 0 is not a valid answer: it must be more than 0; it is not pre-filled.",
        "Field 'steps': the default 0.25 is not a valid answer: it must be a multiple of 0.5; "
        "it is not pre-filled.",
    )


@pytest.mark.parametrize("message", [None, 7, ["Your", "details?"]], ids=["missing", "number", "list"])
@pytest.mark.parametrize("mode", ["form", "url"])
def test_an_elicitation_without_its_text_message_is_a_protocol_violation(message: object, mode: str) -> None:
    # both revisions require it: a question without it says nothing of what it is for
    # (2025-11-25 answers the server -32602 with this; a 2026-07-28 round fails the call)
    params: dict[str, Any] = {"mode": mode, "url": "https://example.com/", "elicitationId": "e1"}
    if mode == "form":
        params = {"mode": "form", "requestedSchema": {"type": "object", "properties": {}}}
    if message is not None:
        params["message"] = message
    with pytest.raises(
        ProtocolViolation,
        match=r"elicitation 'k' from Table bookings .* (has no message|message must be text)",
    ):
        parse_elicitation(params, server=SERVER, key="k", origin=Origin("tools/call"))


def test_a_huge_server_name_is_shown_cut_short() -> None:
    # serverInfo's name and title appear in every message about the server: a megabyte of
    # them was repeated whole in each
    info = ServerInfo.from_json(
        {"name": "n" * 1_000_000, "version": "v" * 1_000_000, "title": "t" * 10**6}, "stdio"
    )
    assert len(str(info)) < 500
    assert str(info).startswith("ttt") and "stdio" in str(info)
    assert info.name.startswith("nnn") and len(info.name) < 200


def test_the_server_and_the_client_bound_a_url_with_the_one_definition() -> None:
    """The server refused longer URLs (``server.outgoing.MAX_URL``) and the client refused
    to open them (``client.url_consent.URL_LONGEST``) by two constants that had to agree;
    both read ``core.client_inputs.MAX_URL`` now, so changing it changes both."""
    from mcp_elicit.client import url_consent
    from mcp_elicit.core.client_inputs import MAX_URL
    from mcp_elicit.server import outgoing

    for module in (url_consent, outgoing):
        assert f"= {MAX_URL}" not in inspect.getsource(module), module.__name__  # none of its own
    longest = "https://example.com/?next=" + "a" * (MAX_URL - 26)
    assert outgoing.check_url(longest) == longest
    assert not url_consent.judge_url(longest).refused
    with pytest.raises(ValueError, match=f"at most {MAX_URL}"):
        outgoing.check_url(longest + "a")
    assert [w.code for w in url_consent.judge_url(longest + "a").warnings] == ["too-long"]
