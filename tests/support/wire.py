"""Validate every message the project puts on the wire against the official JSON schema
of its revision, read from ``../shared/spec/<revision>/schema.json``.

Where the schema files are absent (a user's clone), ``WireChecker.load`` skips the test
that asked for it, saying why. Results are checked against the result type of the method
that was called (``CallToolResult`` for ``tools/call``...), notifications against the type
of their method, errors against the JSON-RPC error response. Before 2025-11-25 a
request's or notification's type is its ``method`` and ``params`` alone: there the message
is checked against ``JSONRPCRequest`` (``JSONRPCNotification``) and those two against the
type, so 2025-06-18's and 2025-03-26's schemas are read where they are present.

One departure from ``schema.json``, where it says less than the specification's
``schema.ts``: a form answer's values may be fractional numbers (``_as_specified``).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema
import pytest

SPEC_DIR = Path(__file__).resolve().parents[3] / "shared" / "spec"

RESULTS = {
    "server/discover": "DiscoverResult",
    "initialize": "InitializeResult",
    "ping": "EmptyResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "prompts/list": "ListPromptsResult",
    "prompts/get": "GetPromptResult",
    "resources/list": "ListResourcesResult",
    "resources/templates/list": "ListResourceTemplatesResult",
    "resources/read": "ReadResourceResult",
    "completion/complete": "CompleteResult",
    "subscriptions/listen": "SubscriptionsListenResult",
    "logging/setLevel": "EmptyResult",
    "resources/subscribe": "EmptyResult",
    "resources/unsubscribe": "EmptyResult",
    # client results to server requests
    "elicitation/create": "ElicitResult",
    "sampling/createMessage": "CreateMessageResult",
    "roots/list": "ListRootsResult",
}
REQUESTS = {
    "server/discover": "DiscoverRequest",
    "initialize": "InitializeRequest",
    "ping": "PingRequest",
    "tools/list": "ListToolsRequest",
    "tools/call": "CallToolRequest",
    "prompts/list": "ListPromptsRequest",
    "prompts/get": "GetPromptRequest",
    "resources/list": "ListResourcesRequest",
    "resources/templates/list": "ListResourceTemplatesRequest",
    "resources/read": "ReadResourceRequest",
    "completion/complete": "CompleteRequest",
    "subscriptions/listen": "SubscriptionsListenRequest",
    "logging/setLevel": "SetLevelRequest",
    "resources/subscribe": "SubscribeRequest",
    "resources/unsubscribe": "UnsubscribeRequest",
    "elicitation/create": "ElicitRequest",
    "sampling/createMessage": "CreateMessageRequest",
    "roots/list": "ListRootsRequest",
}
NOTIFICATIONS = {
    "notifications/progress": "ProgressNotification",
    "notifications/message": "LoggingMessageNotification",
    "notifications/cancelled": "CancelledNotification",
    "notifications/initialized": "InitializedNotification",
    "notifications/elicitation/complete": "ElicitationCompleteNotification",
    "notifications/resources/updated": "ResourceUpdatedNotification",
    "notifications/tools/list_changed": "ToolListChangedNotification",
    "notifications/prompts/list_changed": "PromptListChangedNotification",
    "notifications/resources/list_changed": "ResourceListChangedNotification",
    "notifications/subscriptions/acknowledged": "SubscriptionsAcknowledgedNotification",
}


#: The tasks extension (``io.modelcontextprotocol/tasks``) defines its shapes in its own
#: specification, not in the core schema: written here from its text, they refer to the
#: core schema for ``InputRequests``, ``InputResponses``, ``Error`` and ``_meta``.
_INSTANT = {"type": "string", "pattern": r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$"}
_TASK_FIELDS: dict[str, Any] = {
    "taskId": {"type": "string", "minLength": 1},
    "status": {"enum": ["working", "input_required", "completed", "failed", "cancelled"]},
    "statusMessage": {"type": "string"},
    "createdAt": _INSTANT,
    "lastUpdatedAt": _INSTANT,
    "ttlMs": {"type": ["integer", "null"], "minimum": 0},
    "pollIntervalMs": {"type": "integer", "minimum": 0},
    "_meta": {"$ref": "#/$defs/ResultMetaObject"},
}
_TASK_REQUIRED = ["taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs"]
TASK_SHAPES: dict[str, dict[str, Any]] = {
    # the answer that creates a task: Result & Task, nothing of a detailed task
    "CreateTaskResult": {
        "type": "object",
        "required": [*_TASK_REQUIRED, "resultType"],
        "properties": {**_TASK_FIELDS, "resultType": {"const": "task"}},
        "additionalProperties": False,
    },
    # tasks/get: Result & DetailedTask, the fields of its status and no others
    "GetTaskResult": {
        "type": "object",
        "required": [*_TASK_REQUIRED, "resultType"],
        "properties": {
            **_TASK_FIELDS,
            "resultType": {"const": "complete"},
            "inputRequests": {"$ref": "#/$defs/InputRequests", "minProperties": 1},
            "result": {"type": "object"},
            "error": {"$ref": "#/$defs/Error"},
        },
        "additionalProperties": False,
        "allOf": [
            {
                "if": {"properties": {"status": {"const": status}}},
                "then": {
                    "required": [field] if field else [],
                    "not": {
                        "anyOf": [
                            {"required": [f]} for f in ("inputRequests", "result", "error") if f != field
                        ]
                    },
                },
            }
            for status, field in (
                ("working", None),
                ("input_required", "inputRequests"),
                ("completed", "result"),
                ("failed", "error"),
                ("cancelled", None),
            )
        ],
    },
    # tasks/update and tasks/cancel: an empty acknowledgement
    "TaskAck": {
        "type": "object",
        "required": ["resultType"],
        "properties": {"resultType": {"const": "complete"}, "_meta": {"$ref": "#/$defs/ResultMetaObject"}},
        "additionalProperties": False,
    },
    "TaskRequestParams": {
        "type": "object",
        "required": ["taskId"],
        "properties": {
            "taskId": {"type": "string", "minLength": 1},
            "inputResponses": {"$ref": "#/$defs/InputResponses"},
            "_meta": {"$ref": "#/$defs/RequestMetaObject"},
        },
        "additionalProperties": False,
    },
}
TASK_RESULTS = {"tasks/get": "GetTaskResult", "tasks/update": "TaskAck", "tasks/cancel": "TaskAck"}


@functools.cache
def _schema(revision: str) -> dict[str, Any] | None:
    path = SPEC_DIR / revision / "schema.json"
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def _closed(defs: dict[str, Any]) -> dict[str, Any]:
    """A copy of a schema's definitions where every object that lists its properties (and
    says nothing of others) admits no others: the official schemas leave them open, so a
    field a revision removed (``elicitationId`` at 2026-07-28, say) would otherwise pass.
    Left open: the ``_meta`` objects (open maps by design), the parts of an ``allOf``
    (each sees only its own properties) and ``SubscriptionFilter`` (extensions add to it:
    the tasks extension's ``taskIds``)."""

    def close(node: Any, *, part: bool = False) -> Any:
        if isinstance(node, list):
            return [close(item) for item in node]
        if not isinstance(node, dict):
            return node
        out = {
            key: [close(n, part=True) for n in value] if key == "allOf" else close(value)
            for key, value in node.items()
        }
        if "properties" in out and not ({"additionalProperties", "allOf"} & out.keys()) and not part:
            out["additionalProperties"] = False
        return out

    open_by_design = {"SubscriptionFilter"}
    return {
        name: body if name.endswith("MetaObject") or name in open_by_design else close(body)
        for name, body in defs.items()
    }


def _as_specified(defs: dict[str, Any]) -> dict[str, Any]:
    """The definitions with the one place where ``schema.json`` says less than the
    specification put right: a form answer's values (``ElicitResult.content``).

    The specification is based on ``schema.ts``, where those values are
    ``string | number | boolean | string[]``; ``schema.json`` is generated from it with
    ``integer`` as the default number type, so it admits no fraction there, though a form
    may ask for ``"type": "number"`` and a person may answer 72.5. Everywhere else the two
    agree (``NumberSchema``'s bounds and default, ``temperature``, ``progress`` and the
    model priorities are ``number`` in both), and nothing else is changed.
    ``tests/test_wire_checker.py`` fails once ``schema.json`` itself admits fractions."""
    result = defs.get("ElicitResult")
    if result is None:
        return defs
    values = result["properties"]["content"]["additionalProperties"]
    if "anyOf" in values:  # 2025-11-25 on: a string list is a choice of its own
        widened = {**values, "anyOf": [_widened(choice) for choice in values["anyOf"]]}
    else:  # 2025-06-18: the one type list
        widened = _widened(values)
    content = {**result["properties"]["content"], "additionalProperties": widened}
    return {**defs, "ElicitResult": {**result, "properties": {**result["properties"], "content": content}}}


def _widened(choice: dict[str, Any]) -> dict[str, Any]:
    if choice.get("type") == ["string", "integer", "boolean"]:
        return {**choice, "type": ["string", "number", "boolean"]}
    return choice


class WireChecker:
    """Checks messages of one revision; ``seen`` counts what it checked."""

    def __init__(self, revision: str, schema: dict[str, Any]) -> None:
        self.revision = revision
        self.schema = schema
        self.defs = _as_specified(schema.get("$defs") or schema.get("definitions") or {})
        self.closed = _closed(self.defs)
        self.seen = 0

    @classmethod
    def if_present(cls, revision: str) -> WireChecker | None:
        """A checker when the official schema is on this machine, else None."""
        schema = _schema(revision)
        return None if schema is None else cls(revision, schema)

    @classmethod
    def load(cls, revision: str) -> WireChecker:
        schema = _schema(revision)
        if schema is None:
            pytest.skip(
                f"the official schema {SPEC_DIR / revision / 'schema.json'} is not present on this machine"
            )
        return cls(revision, schema)

    def _validate(self, instance: Any, definition: str) -> None:
        if definition not in self.defs:
            raise AssertionError(f"{definition} is not defined in the {self.revision} schema")
        root = {"$schema": self.schema.get("$schema"), "$defs": self.defs, "$ref": f"#/$defs/{definition}"}
        if "definitions" in self.schema:
            root = {
                "$schema": self.schema.get("$schema"),
                "definitions": self.defs,
                "$ref": f"#/definitions/{definition}",
            }
        cls = jsonschema.validators.validator_for(root)
        errors = sorted(cls(root).iter_errors(instance), key=lambda e: e.path)
        if not errors:  # valid; now with no field the revision does not define
            strict = {**root, ("definitions" if "definitions" in root else "$defs"): self.closed}
            errors = sorted(cls(strict).iter_errors(instance), key=lambda e: e.path)
        if errors:
            detail = "; ".join(f"{list(e.absolute_path)}: {e.message[:300]}" for e in errors[:5])
            raise AssertionError(
                f"{self.revision} {definition} invalid: {detail}\n{json.dumps(instance)[:2000]}"
            )
        self.seen += 1

    def response(self, method: str, message: Mapping[str, Any]) -> None:
        """A response (result or error) to a request of ``method``."""
        if "error" in message:
            name = "JSONRPCErrorResponse" if "JSONRPCErrorResponse" in self.defs else "JSONRPCError"
            self._validate(message, name)
            return
        result = message["result"]
        if result.get("resultType") == "input_required":
            self._validate(result, "InputRequiredResult")
        elif result.get("resultType") == "task" and method == "tools/call":
            self._validate_shape(result, "CreateTaskResult")
        elif method in TASK_RESULTS:
            self._validate_shape(result, TASK_RESULTS[method])
        else:
            self._validate(result, RESULTS[method])
        self._validate(
            message, "JSONRPCResultResponse" if "JSONRPCResultResponse" in self.defs else "JSONRPCResponse"
        )

    def request(self, message: Mapping[str, Any]) -> None:
        if message["method"] in TASK_RESULTS:
            self._validate(message, "JSONRPCRequest")
            self._validate_shape(message["params"], "TaskRequestParams")
            return
        self._validate_message(message, REQUESTS[message["method"]], "JSONRPCRequest")

    def _validate_message(self, message: Mapping[str, Any], definition: str, envelope: str) -> None:
        """A request or notification: from 2025-11-25 on, its type is the whole message;
        before, the type is its ``method`` and ``params`` alone, and the message is the
        ``envelope`` (``JSONRPCRequest``, ``JSONRPCNotification``) holding them."""
        if "jsonrpc" in self.defs.get(definition, {}).get("properties", {"jsonrpc": None}):
            self._validate(message, definition)
            return
        self._validate(message, envelope)
        self._validate({key: message[key] for key in ("method", "params") if key in message}, definition)

    def _validate_shape(self, instance: Any, shape: str) -> None:
        """Validate against one of the tasks extension's shapes (``TASK_SHAPES``)."""
        if "$defs" not in self.schema:
            raise AssertionError(f"the tasks extension needs a 2026-07-28 schema, not {self.revision}")
        root = {"$schema": self.schema.get("$schema"), "$defs": self.defs, **TASK_SHAPES[shape]}
        cls = jsonschema.validators.validator_for(root)
        errors = sorted(cls(root).iter_errors(instance), key=lambda e: e.path)
        if errors:
            detail = "; ".join(f"{list(e.absolute_path)}: {e.message[:300]}" for e in errors[:5])
            raise AssertionError(f"tasks extension {shape} invalid: {detail}\n{json.dumps(instance)[:2000]}")
        self.seen += 1

    def notification(self, message: Mapping[str, Any]) -> None:
        if message["method"] == "notifications/tasks":  # the tasks extension: a DetailedTask
            self._validate(message, "JSONRPCNotification")
            params = {k: v for k, v in message["params"].items() if k != "_meta"}
            self._validate_shape({**params, "resultType": "complete"}, "GetTaskResult")
            return
        name = NOTIFICATIONS.get(message["method"])
        if name is None or name not in self.defs:
            name = "JSONRPCNotification"
        self._validate_message(message, name, "JSONRPCNotification")

    def outgoing(self, message: Mapping[str, Any], method: str | None = None) -> None:
        """Any message a side sent; ``method`` names the request a response answers."""
        if "method" in message:
            if "id" in message:
                self.request(message)
            else:
                self.notification(message)
        else:
            assert method is not None, "a response needs the method of its request to be checked"
            self.response(method, message)
