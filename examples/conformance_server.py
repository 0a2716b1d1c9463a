"""Every fixture the official MCP conformance suite calls, written with mcp-elicit.

Run it, and the harness pinned in tools/conformance against it, from the repository root
(``make install`` installs the harness and the Node 22 it needs)::

    mcp-elicit serve examples/conformance_server.py --http 127.0.0.1:8000
    PATH=$PWD/tools/node22/node_modules/node/bin:$PATH tools/conformance/node_modules/.bin/conformance server --url http://127.0.0.1:8000/mcp
"""

from __future__ import annotations

import asyncio
import base64
import struct
from dataclasses import dataclass
from typing import Annotated

from mcp_types import EmbeddedResource, TextResourceContents
from pydantic import Field as PydanticField

from mcp_elicit import Answer, Audio, Blob, Context, Field, Form, Image, Server, ToolError
from mcp_elicit.errors import InternalError
from mcp_elicit.forms import Boolean, Choice, Integer, MultiChoice, Number, String

app = Server("mcp-elicit-conformance", "0.1.0", instructions="Fixtures for the MCP conformance suite.")

PNG_1X1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def _wav(samples: int = 8) -> bytes:
    data = b"\x00\x00" * samples
    header = b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVEfmt "
    header += struct.pack("<IHHIIHH", 16, 1, 1, 8000, 16000, 2, 16) + b"data" + struct.pack("<I", len(data))
    return header + data


# ---- plain tools -------------------------------------------------------------------


@app.tool(description="Returns a simple text response")
def test_simple_text() -> str:
    return "This is a simple text response for testing."


@app.tool(description="Returns an image")
def test_image_content() -> Image:
    return Image(PNG_1X1, "image/png")


@app.tool(description="Returns audio")
def test_audio_content() -> Audio:
    return Audio(_wav(), "audio/wav")


@app.tool(description="Returns an embedded resource")
def test_embedded_resource() -> EmbeddedResource:
    return EmbeddedResource(
        type="resource",
        resource=TextResourceContents(
            uri="test://embedded-resource",
            mime_type="text/plain",
            text="This is an embedded resource content.",
        ),
    )


@app.tool(description="Returns text, an image and a resource")
def test_multiple_content_types() -> list[object]:
    return [
        "Multiple content types test:",
        Image(PNG_1X1, "image/png"),
        EmbeddedResource(
            type="resource",
            resource=TextResourceContents(
                uri="test://mixed-content-resource",
                mime_type="application/json",
                text='{"test": "data", "value": 123}',
            ),
        ),
    ]


@app.tool(description="Always fails, as a tool error")
def test_error_handling() -> str:
    raise ToolError("This tool intentionally returns an error for testing")


@app.tool(description="Reports progress three times")
async def test_tool_with_progress(ctx: Context) -> str:
    for step in (0, 50, 100):
        await ctx.report_progress(step, 100, f"step {step}")
        if step != 100:
            await asyncio.sleep(0.05)
    return "Progress complete"


@app.tool(description="Sends log messages while it runs")
async def test_tool_with_logging(ctx: Context) -> str:
    await ctx.info("Tool execution started")
    await asyncio.sleep(0.05)
    await ctx.info("Tool processing data")
    await asyncio.sleep(0.05)
    await ctx.info("Tool execution completed")
    return "Logging complete"


@app.tool(description="Logs only when the request asks for a log level")
async def test_logging_tool(ctx: Context) -> str:
    await ctx.info("test_logging_tool ran")
    return "done"


@app.tool(description="Ends its response stream before it answers; the client resumes it (2025-11-25)")
async def test_reconnection(ctx: Context) -> str:
    closed = await ctx.close_stream()
    await asyncio.sleep(0.1)  # the answer comes once the stream is closed
    return "answered on the resumed stream" if closed else "answered"


@app.tool(description="Needs the client's sampling capability")
async def test_missing_capability(ctx: Context) -> str:
    reply = await ctx.sample("Say hello", max_tokens=10)
    return f"sampled: {reply.content}"


@app.tool(description="Asks the model through sampling")
async def test_sampling(ctx: Context, prompt: str) -> str:
    reply = await ctx.sample(prompt, max_tokens=100)
    text = getattr(reply.content, "text", None)
    return f"LLM response: {text if text is not None else reply.content}"


@dataclass
class UserInfo:
    username: str
    email: Annotated[str, Field(format="email")]


@app.tool(description="Asks the user for their details")
async def test_elicitation(ctx: Context, message: str) -> str:
    answer = await ctx.elicit(message, UserInfo)
    if answer.action == "accept" and answer.data is not None:
        return f"User provided: {answer.data.username} <{answer.data.email}>"
    return f"User {answer.action}d the request"


DEFAULTS_FORM = Form(
    name=String(default="John Doe", required=False),
    age=Integer(default=30, required=False),
    score=Number(default=95.5, required=False),
    status=Choice(["active", "inactive", "pending"], default="active", required=False),
    verified=Boolean(default=True, required=False),
)


@app.tool(description="Elicits a form where every field has a default")
async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    answer = await ctx.elicit("Please review your profile", DEFAULTS_FORM)
    return f"Elicitation result: {answer.action} {dict(answer.content or {})}"


ENUMS_FORM = Form(
    untitledSingle=Choice(["option1", "option2", "option3"], required=False),
    titledSingle=Choice(
        {"value1": "First Option", "value2": "Second Option", "value3": "Third Option"}, required=False
    ),
    legacyEnum=Choice(
        {"opt1": "Option One", "opt2": "Option Two", "opt3": "Option Three"},
        legacy_enum_names=True,
        required=False,
    ),
    untitledMulti=MultiChoice(["option1", "option2", "option3"], required=False),
    titledMulti=MultiChoice(
        {"value1": "First Choice", "value2": "Second Choice", "value3": "Third Choice"}, required=False
    ),
)


@app.tool(description="Elicits every kind of enum")
async def test_elicitation_sep1330_enums(ctx: Context) -> str:
    answer = await ctx.elicit("Pick some options", ENUMS_FORM)
    return f"Elicitation result: {answer.action} {dict(answer.content or {})}"


@app.tool(description="Asks a question; never sends a server-to-client request on the stream")
async def test_streaming_elicitation(ctx: Context) -> str:
    if not ctx.can_elicit():
        return "no elicitation capability declared"
    answer = await ctx.elicit("Continue?", Form(ok=Boolean()))
    return f"answer: {answer.action}"


@app.tool(description="Has a header-mirrored argument")
def test_x_mcp_header(
    region: Annotated[str, PydanticField(description="Region", json_schema_extra={"x-mcp-header": "Region"})],
) -> str:
    return f"region={region}"


# ---- multi round-trip fixtures (2026-07-28) -------------------------------------------

NAME_FORM = Form(name=String())


@app.tool(description="MRTR: asks for the user's name")
async def test_input_required_result_elicitation(ctx: Context) -> str:
    answer = await ctx.elicit("What is your name?", NAME_FORM, key="user_name")
    if answer.action != "accept":
        return f"No name given ({answer.action})"
    return f"Hello, {answer.content['name'] if answer.content else ''}!"


# ---- list changes (subscriptions/listen) --------------------------------------------------


@app.tool(description="Adds or removes a tool, so that listeners hear the tool list changed")
def test_trigger_tool_change() -> str:
    if "test_dynamic_tool" in app.names("tools"):
        app.remove_tool("test_dynamic_tool")
        return "removed test_dynamic_tool"
    app.tool(name="test_dynamic_tool", description="Comes and goes")(lambda: "dynamic")
    return "added test_dynamic_tool"


@app.tool(description="Adds or removes a prompt, so that listeners hear the prompt list changed")
def test_trigger_prompt_change() -> str:
    if "test_dynamic_prompt" in app.names("prompts"):
        app.remove_prompt("test_dynamic_prompt")
        return "removed test_dynamic_prompt"
    app.prompt(name="test_dynamic_prompt", description="Comes and goes")(lambda: "A dynamic prompt")
    return "added test_dynamic_prompt"


# ---- the tasks extension (io.modelcontextprotocol/tasks) ---------------------------------


@app.tool(description="Says hello; never a task")
def greet(name: str) -> str:
    return f"Hello, {name}!"


@app.tool(description="Works for `seconds`, as a task when the client takes tasks", task="optional")
async def slow_compute(ctx: Context, seconds: float, label: str = "") -> str:
    await ctx.start_task(f"computing {label or 'something'}")
    await asyncio.sleep(seconds)
    return f"computed {label or 'something'} in {seconds:g} s"


@app.tool(description="A task whose tool reports an error after a second", task="required")
async def failing_job(ctx: Context) -> str:
    await ctx.start_task()
    await asyncio.sleep(1)
    raise ToolError("the job failed, as it always does")


@app.tool(description="A task that fails with a protocol error", task="optional")
async def protocol_error_job(ctx: Context) -> str:
    await ctx.start_task()
    raise InternalError("Internal error: the job's worker went away")


@app.tool(description="A task that asks the user to confirm, then deletes", task="optional")
async def confirm_delete(ctx: Context, filename: str) -> str:
    await ctx.start_task(f"deleting {filename}")
    answer = await ctx.elicit(f"Delete {filename}?", Form(confirm=Boolean(title="Delete it")), key="confirm")
    if answer.accepted and answer.content and answer.content.get("confirm"):
        return f"Deleted {filename}"
    return f"Kept {filename} ({answer.action})"


PARTIAL_FORM = Form(name=String(required=False), confirm=Boolean(required=False))


@app.tool(description="A task that asks two questions at once", task="optional")
async def multi_input(ctx: Context) -> str:
    await ctx.start_task()
    first, second = await ctx.gather(
        ctx.elicit("First question", PARTIAL_FORM, key="first"),
        ctx.elicit("Second question", PARTIAL_FORM, key="second"),
    )
    return f"first={first.action} second={second.action}"


@app.tool(description="Asks for a name (multi round-trip), then goes on as a task", task="required")
async def test_tool_with_task(ctx: Context) -> str:
    answer = await ctx.elicit("What is your name?", NAME_FORM, key="user_name")
    name = answer.content.get("name") if answer.accepted and answer.content else None
    await ctx.start_task()
    return f"Hello, {name or 'stranger'}!"


@app.tool(description="MRTR: asks the model a question")
async def test_input_required_result_sampling(ctx: Context) -> str:
    reply = await ctx.sample("What is the capital of France?", max_tokens=100, key="capital_question")
    return f"Model said: {getattr(reply.content, 'text', reply.content)}"


@app.tool(description="MRTR: asks for the client's roots")
async def test_input_required_result_list_roots(ctx: Context) -> str:
    roots = await ctx.list_roots(key="client_roots")
    return "Roots: " + ", ".join(str(r.uri) for r in roots)


@app.tool(description="MRTR: confirms with requestState carrying the round")
async def test_input_required_result_request_state(ctx: Context) -> str:
    answer = await ctx.elicit("Please confirm", Form(ok=Boolean()), key="confirm")
    return f"state-ok: {answer.action}"


@app.tool(description="MRTR: asks an elicitation, a sampling and the roots in one round")
async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
    name, reply, roots = await ctx.gather(
        ctx.elicit("What is your name?", NAME_FORM, key="user_name"),
        ctx.sample("Say hello", max_tokens=50, key="greeting"),
        ctx.list_roots(key="client_roots"),
    )
    return f"name={name.action} model={reply.model} roots={len(roots)}"


@app.tool(description="MRTR: two rounds of questions")
async def test_input_required_result_multi_round(ctx: Context) -> str:
    first = await ctx.elicit("Step 1: What is your name?", NAME_FORM, key="step1")
    second = await ctx.elicit("Step 2: What is your favorite color?", Form(color=String()), key="step2")
    return f"name={first.content} color={second.content}"


@app.tool(description="MRTR: state integrity is checked")
async def test_input_required_result_tampered_state(ctx: Context) -> str:
    answer = await ctx.elicit("Please confirm", Form(ok=Boolean()), key="confirm")
    return f"confirmed: {answer.action}"


@app.tool(description="MRTR: asks only what the client declared")
async def test_input_required_result_capabilities(ctx: Context) -> str:
    if ctx.can_elicit():
        answer: Answer[object] = await ctx.elicit("Your name?", NAME_FORM, key="user_name")
        return f"elicited: {answer.action}"
    if ctx.can_sample():
        reply = await ctx.sample("Say hello", max_tokens=20, key="greeting")
        return f"sampled: {reply.model}"
    if ctx.can_list_roots():
        roots = await ctx.list_roots(key="client_roots")
        return f"roots: {len(roots)}"
    return "The client declared nothing to ask with"


# ---- prompts -------------------------------------------------------------------------


@app.prompt(description="A simple prompt without arguments")
def test_simple_prompt() -> str:
    return "This is a simple prompt for testing."


@app.prompt(description="A prompt with two arguments")
def test_prompt_with_arguments(
    arg1: Annotated[str, PydanticField(description="First test argument")],
    arg2: Annotated[str, PydanticField(description="Second test argument")],
) -> str:
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@app.prompt(description="A prompt embedding a resource")
def test_prompt_with_embedded_resource(
    resourceUri: Annotated[str, PydanticField(description="URI of the resource to embed")],
) -> list[object]:
    return [
        (
            "user",
            EmbeddedResource(
                type="resource",
                resource=TextResourceContents(
                    uri=resourceUri, mime_type="text/plain", text="Embedded resource content for testing."
                ),
            ),
        ),
        ("user", "Please process the embedded resource above."),
    ]


@app.prompt(description="A prompt with an image")
def test_prompt_with_image() -> list[object]:
    return [("user", Image(PNG_1X1, "image/png")), ("user", "Please analyze the image above.")]


@app.prompt(description="MRTR: a prompt that asks for context first")
async def test_input_required_result_prompt(ctx: Context) -> str:
    answer = await ctx.elicit(
        "What context should the prompt use?", Form(context=String()), key="user_context"
    )
    context = answer.content["context"] if answer.content else "(none)"
    return f"Use this context: {context}"


# ---- resources ------------------------------------------------------------------------


@app.resource(
    "test://static-text", name="static-text", description="A static text resource", mime_type="text/plain"
)
def static_text() -> str:
    return "This is the content of the static text resource."


@app.resource(
    "test://static-binary",
    name="static-binary",
    description="A static binary resource",
    mime_type="image/png",
)
def static_binary() -> Blob:
    return Blob(PNG_1X1, "image/png")


@app.resource(
    "test://template/{id}/data",
    name="template",
    description="A resource template",
    mime_type="application/json",
)
def template_data(id: str) -> dict[str, object]:
    return {"id": id, "templateTest": True, "data": f"Data for ID: {id}"}


@app.resource("test://watched-resource", name="watched-resource", description="A resource to subscribe to")
def watched() -> str:
    return "Watched resource content"


@app.completion()
def complete(ref: object, argument: dict[str, str], context: object) -> list[str]:
    prefix = argument.get("value", "")
    return [v for v in ("test1", "test2", "testValue") if v.startswith(prefix)]


# ---- JSON Schema 2020-12 (not scored) --------------------------------------------------

RICH_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"line1": {"type": "string"}, "town": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


@app.tool(description="Has a rich JSON Schema 2020-12 input schema", input_schema=RICH_SCHEMA)
def json_schema_2020_12_tool(
    name: str | None = None,
    address: dict[str, str] | None = None,
    contactMethod: str | None = None,
    phone: str | None = None,
    email: str | None = None,
) -> str:
    return f"contact {name or 'someone'} by {contactMethod or 'any means'}"
