"""Answerers: the Scripted answerer's script format and matching, NoAnswerer, ElicitAnswer."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from mcp_elicit import Choice, Context, Form, Server, String
from mcp_elicit.client import Client, ElicitAnswer, NoAnswerer, Scripted
from mcp_elicit.core.client_inputs import ElicitationRequest, Origin, ServerInfo, parse_elicitation
from mcp_elicit.errors import ConfigError, InvalidAnswer
from mcp_elicit.transports.memory import MemoryTransport, connect_memory

pytestmark = pytest.mark.anyio

SERVER = ServerInfo("bookings", "1.0", title="Table bookings", where="stdio: demo")


def request(
    key: str = "details",
    fields: tuple[str, ...] = ("party_size", "date"),
    *,
    message: str = "How many, and when?",
    tool: str = "book_table",
    server: ServerInfo = SERVER,
) -> ElicitationRequest:
    schema = {"type": "object", "properties": {f: {"type": "string"} for f in fields}}
    return parse_elicitation(
        {"message": message, "requestedSchema": schema},
        server=server,
        key=key,
        origin=Origin("tools/call", tool),
    )


def url_request(key: str = "signin") -> ElicitationRequest:
    return parse_elicitation(
        {"mode": "url", "message": "Sign in", "url": "https://example.com", "elicitationId": "e"},
        server=SERVER,
        key=key,
        origin=Origin("tools/call", "connect"),
    )


async def test_a_mapping_script_answers_by_request_key() -> None:
    script = Scripted.from_script(
        {"details": {"content": {"party_size": "2"}}, "confirm": {"action": "decline"}}
    )
    assert await script.elicit(request()) == ElicitAnswer("accept", {"party_size": "2"})
    assert await script.elicit(request("confirm", ("ok",))) == ElicitAnswer("decline")
    assert script.reports == []


async def test_answers_match_by_field_names_explicitly_or_by_their_content() -> None:
    script = Scripted.from_script(
        {
            "answers": [
                {"fields": ["ok"], "action": "cancel"},
                {"content": {"party_size": "4"}},
            ]
        }
    )
    assert await script.elicit(request("anything", ("ok", "note"))) == ElicitAnswer("cancel")
    assert await script.elicit(request("k2", ("party_size", "date"))) == ElicitAnswer(
        "accept", {"party_size": "4"}
    )
    unmatched = await script.elicit(request("k3", ("seating",)))
    assert unmatched == ElicitAnswer("cancel")


async def test_server_tool_mode_and_message_select_too() -> None:
    script = Scripted.from_script(
        [
            {"server": "other", "action": "decline"},
            {"tool": "cancel_booking", "action": "decline"},
            {"mode": "url", "action": "accept"},
            {"message": "^How many", "content": {"party_size": "3"}},
        ]
    )
    assert await script.elicit(request()) == ElicitAnswer("accept", {"party_size": "3"})
    assert await script.elicit(request(tool="cancel_booking")) == ElicitAnswer("decline")
    assert await script.elicit(url_request()) == ElicitAnswer("accept")
    assert await script.elicit(request(server=ServerInfo("x", title="other"))) == ElicitAnswer("decline")


async def test_once_entries_are_used_up() -> None:
    script = Scripted.from_script(
        [{"key": "k", "once": True, "action": "decline"}, {"key": "k", "action": "accept"}]
    )
    assert (await script.elicit(request("k"))).action == "decline"
    assert (await script.elicit(request("k"))).action == "accept"
    assert [key for key, _ in script.used] == ["k", "k"]


async def test_a_request_without_an_answer_is_cancelled_and_reported_clearly() -> None:
    script = Scripted.from_script({"other": {"action": "accept"}})
    answer = await script.elicit(request(message="How many people?"))
    assert answer == ElicitAnswer("cancel")
    (report,) = script.reports
    assert "no scripted answer" in report
    assert "Table bookings 1.0 (stdio: demo)" in report
    assert "question 'details' ('How many people?')" in report
    assert "fields: party_size, date" in report
    assert "tools/call book_table" in report


async def test_the_content_of_a_decline_is_dropped() -> None:
    script = Scripted.from_script([{"action": "decline", "content": {"x": 1}}])
    assert (await script.elicit(request())).to_json() == {"action": "decline"}


async def test_url_done_is_immediate_unless_the_script_waits_for_completion() -> None:
    script = Scripted.from_script(
        [{"key": "fast", "mode": "url"}, {"key": "slow", "mode": "url", "await_completion": True}]
    )
    fast, slow = url_request("fast"), url_request("slow")
    await script.elicit(fast)
    await script.elicit(slow)
    await asyncio.wait_for(script.url_done(fast), 1)
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(script.url_done(slow), 0.05)


def test_scripts_load_from_json_files(tmp_path: Path) -> None:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps({"answers": [{"key": "details", "content": {"party_size": 2}}]}))
    script = Scripted.from_file(path, modes=["form"])
    assert script.modes == frozenset({"form"})
    assert script.entries[0].key == "details"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        ('"a string"', "a script is a list"),
        ('[{"action": "maybe"}]', "action must be"),
        ('[{"content": [1]}]', "content must be an object"),
        ('[{"fields": "a"}]', "fields must be a list"),
        ('[{"tool": "a", "prompt": "b"}]', "at most one of"),
        ('[{"message": "("}]', "regular expression"),
        ('[{"colour": "red"}]', "unknown keys colour"),
        ('[{"key": 3}]', "key must be a string"),
        ('[{"message": ["late"]}]', "message must be a string"),
        ('[{"tool": 3}]', "tool must be a string"),
        ('[{"once": "false"}]', "once must be true or false"),
        ('[{"mode": "forms"}]', "mode must be form or url, not 'forms'"),
        ('[{"await_completion": 1}]', "await_completion must be true or false"),
        # A URL step is answered with no content, and only a URL step is completed later:
        # such an entry would never match, and the call would cancel "for no scripted answer".
        ('[{"mode": "url", "content": {"a": 1}}]', "a URL step is answered without content"),
        ('[{"mode": "form", "await_completion": true}]', "await_completion is for a URL step"),
        ("[3]", "must be an object"),
        ('{"k": 3}', "must be an object"),
    ],
)
def test_bad_scripts_say_what_is_wrong(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "answers.json"
    path.write_text(content)
    with pytest.raises(ConfigError, match=message):
        Scripted.from_file(path)


def test_a_missing_script_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        Scripted.from_file(tmp_path / "nope.json")


def test_unknown_modes_are_refused() -> None:
    with pytest.raises(ConfigError, match="modes"):
        Scripted.from_script([], modes=["form", "telepathy"])


async def test_no_answerer_supports_nothing() -> None:
    nobody = NoAnswerer()
    assert nobody.modes == frozenset()
    assert await nobody.elicit(request()) == ElicitAnswer.cancel()
    await nobody.url_done(request())


def test_elicit_answer_helpers() -> None:
    assert ElicitAnswer.accept({"a": 1}, b=2).to_json() == {"action": "accept", "content": {"a": 1, "b": 2}}
    assert ElicitAnswer.accept().to_json() == {"action": "accept", "content": {}}
    assert ElicitAnswer("accept").to_json() == {"action": "accept"}
    assert ElicitAnswer.decline().to_json() == {"action": "decline"}
    assert ElicitAnswer.cancel().to_json() == {"action": "cancel"}


async def test_an_answer_no_json_can_carry_is_given_back_not_a_crash() -> None:
    # A script (or any answerer) can hold a lone surrogate ("\udce9" in a JSON file); the
    # reply could not be encoded, and the call failed with "TypeError: str is not valid UTF-8".
    app = Server("names", "1.0")

    @app.tool()
    async def ask(ctx: Context) -> str:
        """Asks a name."""
        answer = await ctx.elicit("Your name?", Form(name=String()), key="name")
        return answer.action

    script = Scripted.from_script(json.loads('{"name": {"content": {"name": "Jos\\udce9"}}}'))
    async with connect_memory(app, answerer=script) as client:
        result = await client.call_tool("ask", {})
    assert result["content"] == [{"type": "text", "text": "cancel"}]
    assert len(script.reports) == 1
    assert script.reports[0].startswith(
        "the scripted answer does not fit: name: has a character that is not text (U+DCE9), "
        "which no JSON reply can carry."
    )


async def answer_with_a_function(request: ElicitationRequest) -> ElicitAnswer:
    return ElicitAnswer.accept(name="Ada")


class NotAnAnswerer:
    """Has ``elicit`` but says nothing of its modes."""

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        return ElicitAnswer.decline()


@pytest.mark.parametrize(
    ("answerer", "fragment"),
    [
        pytest.param(answer_with_a_function, "got the function answer_with_a_function", id="a function"),
        pytest.param(42, "got int", id="a number"),
        pytest.param(NotAnAnswerer(), "got NotAnAnswerer (it has no modes)", id="no modes"),
        pytest.param(Scripted, "is the class Scripted; pass an instance", id="the class"),
    ],
)
def test_something_that_is_not_an_answerer_is_refused_when_the_client_is_made(
    answerer: object, fragment: str
) -> None:
    # It was an AttributeError ("'function' object has no attribute 'modes'"), or, for
    # the class, a TypeError from deep inside the first question.
    with pytest.raises(TypeError, match=r"answerer must be an Answerer: an object with modes") as caught:
        Client(MemoryTransport(Server("s")), answerer=answerer)  # type: ignore[arg-type]
    assert fragment in str(caught.value)


def test_an_answerer_with_modes_that_do_not_exist_is_refused_when_the_client_is_made() -> None:
    # {"forms"} made a client that declared no elicitation: the server then refused every
    # question with "the client did not declare elicitation.form".
    class Misspelt(NoAnswerer):
        @property
        def modes(self) -> frozenset[str]:
            return frozenset({"forms"})

    with pytest.raises(
        ConfigError, match=r"unknown elicitation modes \['forms'\]; the modes are form and url"
    ):
        Client(MemoryTransport(Server("s")), answerer=Misspelt())


class ReturnsANumber(NoAnswerer):
    @property
    def modes(self) -> frozenset[str]:
        return frozenset({"form"})

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        return 42  # type: ignore[return-value]


class NotAsync(NoAnswerer):
    @property
    def modes(self) -> frozenset[str]:
        return frozenset({"form"})

    def elicit(self, request: ElicitationRequest) -> ElicitAnswer:  # type: ignore[override]
        return ElicitAnswer.accept(name="Ada")


@pytest.mark.parametrize(
    ("answerer", "message"),
    [
        pytest.param(
            ReturnsANumber(),
            "the answerer's elicit() returned int; return an ElicitAnswer or a mapping like "
            "{'action': 'accept', 'content': {...}}",
            id="a number",
        ),
        pytest.param(
            NotAsync(),
            "the answerer's elicit() returned ElicitAnswer, not an awaitable; declare it async def",
            id="not async",
        ),
    ],
)
async def test_an_answerer_giving_the_wrong_type_is_told_so(answerer: NoAnswerer, message: str) -> None:
    # It was "'int' object is not iterable" and "object ElicitAnswer can't be used in 'await'
    # expression", from inside the client.
    app = Server("typed")

    @app.tool()
    async def ask(ctx: Context) -> str:
        """Asks a name."""
        return (await ctx.elicit("Your name?", Form(name=String()))).action

    async with connect_memory(app, answerer=answerer) as client:
        with pytest.raises(TypeError) as caught:
            await client.call_tool("ask", {})
    assert str(caught.value) == message


class GivesAnAction(NoAnswerer):
    """An app's answerer that answers every question with ``answer``, counting the asks."""

    def __init__(self, answer: object) -> None:
        self.answer = answer
        self.asked = 0

    @property
    def modes(self) -> frozenset[str]:
        return frozenset({"form"})

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        self.asked += 1
        return self.answer  # type: ignore[return-value]


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
@pytest.mark.parametrize(
    ("answer", "shown"),
    [
        ({"action": "yes"}, "'yes'"),
        (ElicitAnswer("ok"), "'ok'"),  # type: ignore[arg-type]
        ({"action": True, "content": {"name": "Ada"}}, "True"),
        ({"content": {"name": "Ada"}}, "None"),
    ],
)
async def test_an_answerer_giving_an_action_that_does_not_exist_fails_at_once(
    revision: str, answer: object, shown: str
) -> None:
    # It was asked twice more, as if a person had typed something that did not fit, and the
    # call failed with FormValidationError: a program's mistake said as a form's.
    app = Server("typed")

    @app.tool()
    async def ask(ctx: Context) -> str:
        """Asks a name."""
        return (await ctx.elicit("Your name?", Form(name=String()))).action

    answerer = GivesAnAction(answer)
    async with connect_memory(app, answerer=answerer, versions=[revision]) as client:
        with pytest.raises(InvalidAnswer) as caught:
            await client.call_tool("ask", {})
    assert answerer.asked == 1
    said = str(caught.value)
    assert said.startswith("the answerer's elicit() gave an invalid answer to typed ")
    assert "('Your name?') during tools/call ask" in said  # which question
    assert said.endswith(f": an elicitation answer's action must be accept, decline or cancel, not {shown}")


class OpensPages:
    """A URL-mode answerer without ``url_done``: the person is taken as done once they agree."""

    modes = frozenset({"url"})

    def __init__(self) -> None:
        self.opened: list[str] = []

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        assert request.url is not None
        self.opened.append(request.url)
        return ElicitAnswer.accept()


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
async def test_a_url_answerer_without_url_done_is_taken_as_done_at_once(revision: str) -> None:
    app = Server("pages")
    person = OpensPages()

    @app.tool()
    async def sign_in(ctx: Context) -> str:
        """Needs a sign-in on a page first (at 2025-11-25: -32042, then the call again)."""
        if person.opened:  # the step is done (here: the page was opened)
            return "signed in"
        return (await ctx.require_url("Sign in first", "https://example.com/sign-in")).action

    async with connect_memory(app, answerer=person, versions=[revision]) as client:
        result = await asyncio.wait_for(client.call_tool("sign_in", {}), 10)
    # the handler runs again once the step is done (2026-07-28: the next round; 2025-11-25:
    # the call again after -32042), and finds it done
    assert result["content"] == [{"type": "text", "text": "signed in"}]
    assert person.opened == ["https://example.com/sign-in"]


async def test_a_script_alone_warns_of_an_answer_that_does_not_fit(caplog: pytest.LogCaptureFixture) -> None:
    # No wrapper shows the answer that was not sent (as the CLI's rounds do): the warning says it.
    app = Server("regions", "1.0")

    @app.tool()
    async def ask(ctx: Context) -> str:
        """Asks a region."""
        answer = await ctx.elicit("Where?", Form(region=Choice(["eu-west-1"])), key="where")
        return answer.action

    script = Scripted.from_script({"where": {"content": {"region": "eu-west"}}})
    async with connect_memory(app, answerer=script) as client:
        await client.call_tool("ask", {})
    assert "the scripted answer does not fit: region: must be one of: eu-west-1" in caplog.text


class Misspelling:
    """An answerer that names a field the form does not have (a typo of ``nickname``)."""

    modes = frozenset({"form"})

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        return ElicitAnswer.accept(name="Ada", nickame="Countess")


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
async def test_an_answer_naming_fields_the_form_lacks_is_reported(revision: str) -> None:
    """Such a field cannot be sent (the form has no place for it), and was dropped without
    a word: the answer the person meant never arrived, and nothing said why."""
    app = Server("profile")

    @app.tool()
    async def ask(ctx: Context) -> str:
        """Asks a name and a nickname."""
        answer = await ctx.elicit("Who?", Form(name=String(), nickname=String(default="")))
        return json.dumps(answer.content)

    reports: list[str] = []
    async with connect_memory(
        app, answerer=Misspelling(), versions=[revision], report=reports.append
    ) as client:
        result = await client.call_tool("ask", {})
    assert json.loads(result["content"][0]["text"]) == {"name": "Ada", "nickname": ""}
    assert len(reports) == 1
    assert "'nickame'" in reports[0]
    assert "the form has no such field (its fields: name, nickname)" in reports[0]
    assert "not sent" in reports[0]
