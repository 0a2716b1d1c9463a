"""An app's answerer gives Python values (core.client_inputs.check_elicit_answer): a
``date`` or ``datetime`` for a date field, a set for a multi-select, written as the JSON
the form takes before the answer is checked and sent."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from mcp_elicit.core.client_inputs import (
    ElicitationRequest,
    Origin,
    ServerInfo,
    check_elicit_answer,
    parse_elicitation,
)
from mcp_elicit.errors import FormValidationError

FORM = {
    "type": "object",
    "properties": {
        "born": {"type": "string", "format": "date"},
        "meeting": {"type": "string", "format": "date-time"},
        "note": {"type": "string"},
        "diet": {"type": "array", "items": {"type": "string", "enum": ["veg", "gf", "halal"]}},
    },
    "required": [],
}


def form() -> ElicitationRequest:
    params = {"mode": "form", "message": "Your profile", "requestedSchema": FORM}
    return parse_elicitation(
        params, server=ServerInfo("p"), key="profile", origin=Origin("tools/call", "profile")
    )


def sent(**content: Any) -> dict[str, Any]:
    answer = check_elicit_answer(form(), {"action": "accept", "content": content})
    return dict(answer["content"])


def test_a_date_and_an_aware_datetime_are_sent_as_their_iso_text() -> None:
    meeting = dt.datetime(2026, 12, 24, 18, 30, tzinfo=dt.timezone(dt.timedelta(hours=1)))
    out = sent(born=dt.date(1990, 2, 28), meeting=meeting)
    assert out == {"born": "1990-02-28", "meeting": "2026-12-24T18:30:00+01:00"}


def test_an_offset_in_seconds_is_sent_as_the_same_instant_in_utc() -> None:
    # a zone's local mean time (Europe/Paris before 1911: +00:09:21), which RFC 3339 cannot
    # write: it was refused as if the datetime had no time zone at all
    paris_lmt = dt.timezone(dt.timedelta(minutes=9, seconds=21))
    meeting = dt.datetime(1900, 4, 14, 12, 9, 21, tzinfo=paris_lmt)
    assert sent(meeting=meeting) == {"meeting": "1900-04-14T12:00:00+00:00"}


def test_a_set_for_a_multi_select_is_sent_in_the_options_order() -> None:
    assert sent(diet={"halal", "veg"}) == {"diet": ["veg", "halal"]}
    assert sent(diet=frozenset()) == {"diet": []}


@pytest.mark.parametrize(
    ("content", "field", "words"),
    [
        # a datetime without its offset names no instant: said, as for text without one
        ({"meeting": dt.datetime(2026, 12, 24, 18, 30)}, "meeting", "with a time zone"),
        ({"born": dt.datetime(1990, 2, 28, 12, 0, tzinfo=dt.UTC)}, "born", "must be a date like"),
        ({"meeting": dt.date(2026, 12, 24)}, "meeting", "a date and time"),
        ({"note": dt.date(1990, 2, 28)}, "note", "must be text"),  # no format: which text is meant?
        ({"diet": {"veg", "vegan"}}, "diet", "not one of"),
    ],
)
def test_values_that_still_do_not_fit_are_refused_naming_the_field(
    content: dict[str, Any], field: str, words: str
) -> None:
    with pytest.raises(FormValidationError) as raised:
        check_elicit_answer(form(), {"action": "accept", "content": content})
    [problem] = raised.value.problems
    assert problem.field == field and words in problem.message
