"""What a ``subscriptions/listen`` asks for, what the server agrees to, and which
notifications reach it. No I/O."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_elicit.core.subscriptions import MAX_ITEMS, MAX_TASK_ID, MAX_URI, SUBSCRIPTION_ID, Filter, stamped
from mcp_elicit.errors import InvalidParams

EVERYTHING = {
    "toolsListChanged": True,
    "promptsListChanged": True,
    "resourcesListChanged": False,
    "resourceSubscriptions": ["file:///a", "file:///b"],
    "taskIds": ["t-1", "t-2"],
}


def test_a_filter_is_parsed_and_only_what_the_server_offers_is_agreed() -> None:
    asked = Filter.parse({"notifications": EVERYTHING})
    assert asked.flags == {"toolsListChanged", "promptsListChanged"}
    agreed = asked.agreed(
        offered=frozenset({"toolsListChanged"}),
        served_uris=frozenset({"file:///a", "file:///elsewhere"}),
        visible_tasks=frozenset({"t-2"}),
    )
    assert agreed.wire() == {
        "toolsListChanged": True,
        "resourceSubscriptions": ["file:///a"],
        "taskIds": ["t-2"],
    }
    bare = asked.agreed(offered=frozenset(), served_uris=frozenset(), visible_tasks=frozenset())
    assert bare.wire() == {}


def test_a_listener_gets_only_what_it_agreed_to() -> None:
    f = Filter.parse({"notifications": EVERYTHING})
    assert f.wants("notifications/tools/list_changed", {})
    assert f.wants("notifications/prompts/list_changed", {})
    assert not f.wants("notifications/resources/list_changed", {})
    assert f.wants("notifications/resources/updated", {"uri": "file:///a"})
    assert not f.wants("notifications/resources/updated", {"uri": "file:///c"})
    assert f.wants("notifications/tasks", {"taskId": "t-1"})
    assert not f.wants("notifications/tasks", {"taskId": "t-3"})
    assert not f.wants("notifications/message", {})
    assert not Filter.parse({"notifications": {}}).wants("notifications/tools/list_changed", {})


@pytest.mark.parametrize(
    ("params", "problem"),
    [
        ({}, '"notifications" \\(an object\\)'),
        ({"notifications": []}, '"notifications" \\(an object\\)'),
        ({"notifications": {"toolsListChanged": "yes"}}, "toolsListChanged must be true or false"),
        ({"notifications": {"resourceSubscriptions": "file:///a"}}, "resourceSubscriptions must be an array"),
        ({"notifications": {"taskIds": [1]}}, "taskIds must be an array of strings"),
        ({"notifications": {"taskIds": ["t"] * (MAX_ITEMS + 1)}}, f"more than {MAX_ITEMS}"),
        (
            {"notifications": {"taskIds": ["t" * (MAX_TASK_ID + 1)]}},
            f"taskIds holds an item longer than {MAX_TASK_ID}",
        ),
        (
            {"notifications": {"resourceSubscriptions": ["file:///" + "a" * MAX_URI]}},
            f"resourceSubscriptions holds an item longer than {MAX_URI}",
        ),
    ],
)
def test_a_bad_filter_is_invalid_params(params: dict[str, Any], problem: str) -> None:
    with pytest.raises(InvalidParams, match=problem):
        Filter.parse(params)


def test_items_as_long_as_allowed_are_kept() -> None:
    longest = Filter.parse(
        {"notifications": {"taskIds": ["t" * MAX_TASK_ID], "resourceSubscriptions": ["u" * MAX_URI]}}
    )
    assert longest.task_ids == {"t" * MAX_TASK_ID} and longest.uris == {"u" * MAX_URI}


def test_every_message_is_stamped_with_the_subscription_id() -> None:
    assert stamped({"uri": "x"}, 7) == {"uri": "x", "_meta": {SUBSCRIPTION_ID: 7}}
    assert stamped({"_meta": {"other": 1}}, "s") == {"_meta": {"other": 1, SUBSCRIPTION_ID: "s"}}
