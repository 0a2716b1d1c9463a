"""pydantic's date and datetime types in a form: asked as ``date``/``date-time`` text, with
pydantic's own check of the answer (in the past, in the future) run when it is built.

``AwareDatetime`` is what a form's ``date-time`` always is (RFC 3339 carries an offset), so
it is a plain datetime field; ``PastDate``, ``FutureDate``, ``PastDatetime`` and
``FutureDatetime`` are too, and an answer on the wrong side of now is that field's problem,
asked again with the reason. ``NaiveDatetime`` is refused, saying what to use instead. The
dates answered are far from today (2000, 2999), so no test depends on when it runs.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

import pydantic
import pytest
from pydantic import AwareDatetime, FutureDate, FutureDatetime, PastDate, PastDatetime

from mcp_elicit.errors import FormSchemaError, FormValidationError
from mcp_elicit.forms import FormSchema, String
from mcp_elicit.forms.annotations import spec_for

from support.wire import WireChecker

LONG_AGO = "2000-01-01"
FAR_AHEAD = "2999-01-01"
UTC = dt.UTC


@pytest.mark.parametrize(
    ("annotation", "fmt"),
    [
        (AwareDatetime, "date-time"),
        (PastDatetime, "date-time"),
        (FutureDatetime, "date-time"),
        (PastDate, "date"),
        (FutureDate, "date"),
        (AwareDatetime | None, "date-time"),
    ],
)
def test_pydantic_dates_are_date_or_date_time_text(annotation: Any, fmt: str) -> None:
    spec, _, _ = spec_for("when", annotation)
    assert spec == String(name="when", format=fmt)


class Trip(pydantic.BaseModel):
    born: PastDate
    leaves: FutureDatetime
    booked: AwareDatetime
    returns: FutureDate | None = None


@dataclasses.dataclass
class TripData:
    born: PastDate
    leaves: FutureDatetime
    booked: AwareDatetime


def test_a_model_or_dataclass_gets_the_dates_answered(wire: WireChecker, wire_2025: WireChecker) -> None:
    answer = {"born": LONG_AGO, "leaves": f"{FAR_AHEAD}T09:30:00+02:00", "booked": f"{LONG_AGO}T12:00:00Z"}
    for cls in (Trip, TripData):
        form = FormSchema.from_type(cls)
        ask = {
            "method": "elicitation/create",
            "params": {"mode": "form", "message": "Your trip", "requestedSchema": form.to_json()},
        }
        wire._validate(ask, "ElicitRequest")  # an input request, as 2026-07-28 asks it
        wire_2025.request({"jsonrpc": "2.0", "id": 1, **ask})
        trip = form.build(answer)
        assert trip.born == dt.date(2000, 1, 1)
        assert trip.leaves == dt.datetime(2999, 1, 1, 9, 30, tzinfo=dt.timezone(dt.timedelta(hours=2)))
        assert trip.booked == dt.datetime(2000, 1, 1, 12, tzinfo=UTC)
        assert trip.booked.tzinfo is not None


def test_an_answer_on_the_wrong_side_of_now_is_refused_naming_each_field() -> None:
    form = FormSchema.from_type(TripData)
    with pytest.raises(FormValidationError) as caught:
        form.admit({"born": FAR_AHEAD, "leaves": f"{LONG_AGO}T09:30:00Z", "booked": f"{LONG_AGO}T12:00:00Z"})
    assert [(p.field, p.message) for p in caught.value.problems] == [
        ("born", "must be a date in the past"),
        ("leaves", "must be in the future"),
    ]
    with pytest.raises(FormValidationError) as caught:
        FormSchema.from_type(Trip).admit(
            {
                "born": LONG_AGO,
                "leaves": f"{FAR_AHEAD}T09:30:00Z",
                "booked": f"{LONG_AGO}T12:00:00Z",
                "returns": LONG_AGO,
            }
        )
    assert [(p.field, p.message) for p in caught.value.problems] == [
        ("returns", "must be a date in the future")
    ]


def test_defaults_go_out_as_iso_text_and_one_the_type_refuses_is_refused() -> None:
    @dataclasses.dataclass
    class Kept:
        since: PastDate = dt.date(2000, 1, 1)
        at: AwareDatetime = dt.datetime(2000, 1, 1, 12, tzinfo=UTC)

    form = FormSchema.from_type(Kept)
    assert form.field("since").default == "2000-01-01"
    assert form.field("at").default == "2000-01-01T12:00:00+00:00"

    wrong_side = dataclasses.make_dataclass(
        "WrongSide", [("since", PastDate, dataclasses.field(default=dt.date(2999, 1, 1)))]
    )
    with pytest.raises(FormSchemaError) as caught:
        FormSchema.from_type(wrong_side)
    assert caught.value.field == "since"
    assert "does not fit the field: must be a date in the past" in str(caught.value)

    naive = dataclasses.make_dataclass(
        "Naive", [("at", AwareDatetime, dataclasses.field(default=dt.datetime(2000, 1, 1)))]
    )
    with pytest.raises(FormSchemaError, match="a datetime default needs a time zone"):
        FormSchema.from_type(naive)


def test_naive_datetime_is_refused_saying_what_to_use_instead() -> None:
    with pytest.raises(FormSchemaError) as caught:
        spec_for("at", pydantic.NaiveDatetime)
    assert caught.value.field == "at"
    assert "a form's date-time always carries a UTC offset" in str(caught.value)
    assert "AwareDatetime" in str(caught.value)
