"""The replay engine on its own: no server, no I/O."""

from __future__ import annotations

import orjson
import pytest

from mcp_elicit.core.input_responses import check_input_responses
from mcp_elicit.core.mrtr import ELICIT, LIST_ROOTS, SAMPLE, Ask, Replay, binding_for
from mcp_elicit.errors import InternalError, InvalidParams, InvalidRequestState, ReplayMismatchError
from mcp_elicit.forms import Form, Integer
from mcp_elicit.sealing import KeyRing, StateSealer

SEALER = StateSealer(KeyRing([bytes(range(32))]), server_id="t")
PARAMS = {"name": "tool", "arguments": {"a": 1}}
BINDING = binding_for("tools/call", PARAMS, "alice")
FORM = Form(n=Integer(minimum=1, maximum=3))


def ask(key: str = "k", message: str = "How many?") -> Ask:
    return Ask(key, ELICIT, {"mode": "form", "message": message, "requestedSchema": FORM.to_json()}, FORM)


def begin(**params: object) -> Replay:
    return Replay.begin({**PARAMS, **params}, sealer=SEALER, binding=BINDING, now=100.0)


def test_first_round_asks_and_seals() -> None:
    replay = begin()
    assert replay.resolve(ask()) == (False, None)
    replay.want(ask())
    result = replay.input_required(sealer=SEALER, binding=BINDING, now=100.0)
    assert result["resultType"] == "input_required"
    assert result["inputRequests"]["k"]["method"] == ELICIT
    state = orjson.loads(SEALER.open(result["requestState"], BINDING, now=100.0))
    assert state["p"] == {"k": ask().fingerprint}
    assert state["a"] == {}
    assert state["r"] == 1


def _round_two(answer: object) -> Replay:
    first = begin()
    first.want(ask())
    token = first.input_required(sealer=SEALER, binding=BINDING, now=100.0)["requestState"]
    return begin(requestState=token, inputResponses={"k": answer, "stray": {"x": 1}})


def test_a_valid_answer_is_recorded_and_carried_on() -> None:
    replay = _round_two({"action": "accept", "content": {"n": 2, "extra": True}})
    assert replay.resolve(ask()) == (True, {"action": "accept", "content": {"n": 2}})
    other = ask("k2", "And then?")
    replay.want(other)
    token = replay.input_required(sealer=SEALER, binding=BINDING, now=100.0)["requestState"]
    state = orjson.loads(SEALER.open(token, BINDING, now=100.0))
    assert state["a"]["k"] == [ask().fingerprint, {"action": "accept", "content": {"n": 2}}]
    assert state["r"] == 2
    assert list(state["p"]) == ["k2"]


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_decline_and_cancel_are_answers(action: str) -> None:
    assert _round_two({"action": action, "content": {"ignored": 1}}).resolve(ask()) == (
        True,
        {"action": action},
    )


@pytest.mark.parametrize(
    ("answer", "fragment"),
    [
        ({"action": "accept", "content": {"n": 9}}, "n: must be at most 3"),
        ({"action": "accept"}, "n"),
        ({"action": "maybe"}, '"action" must be'),
    ],
)
def test_a_bad_answer_is_noted_and_asked_again(answer: object, fragment: str) -> None:
    replay = _round_two(answer)
    assert replay.resolve(ask()) == (False, None)
    replay.want(ask())
    result = replay.input_required(sealer=SEALER, binding=BINDING, now=100.0)
    message = result["inputRequests"]["k"]["params"]["message"]
    assert fragment in message
    assert message.endswith("How many?")


@pytest.mark.parametrize(("answer", "kind"), [(7, "a number"), ("yes", "a string"), ([], "an array")])
def test_an_answer_that_is_not_an_object_is_invalid_params_not_a_bad_answer(
    answer: object, kind: str
) -> None:
    """Each value of inputResponses is a result: any other is -32602 before any answer is
    read, as tasks/update says it, not a form asked again."""
    with pytest.raises(InvalidParams, match=rf'inputResponses\["k"\] must be an object .* not {kind}$'):
        _round_two(answer)


def test_a_different_question_under_a_recorded_key_is_refused() -> None:
    replay = _round_two({"action": "accept", "content": {"n": 1}})
    with pytest.raises(ReplayMismatchError, match="changed between rounds"):
        replay.resolve(ask(message="Something else?"))


def test_two_questions_one_key_in_one_round_is_refused() -> None:
    replay = begin()
    replay.want(ask())
    with pytest.raises(ReplayMismatchError, match="share the key"):
        replay.want(ask(message="Other?"))


def test_sampling_and_roots_answers_are_shape_checked() -> None:
    sample = Ask("s", SAMPLE, {"messages": [], "maxTokens": 5})
    roots = Ask("r", LIST_ROOTS, {})
    good = begin(
        inputResponses={
            "s": {"role": "assistant", "content": {"type": "text", "text": "x"}, "model": "m"},
            "r": {"roots": [{"uri": "file:///x"}]},
        }
    )
    assert good.resolve(sample)[0]
    assert good.resolve(roots)[0]
    bad = begin(inputResponses={"s": {"role": "robot"}, "r": {"roots": "nope"}})
    with pytest.raises(InvalidParams, match=r"inputResponses\['s'\] .*is not a sampling result"):
        bad.resolve(sample)
    with pytest.raises(InvalidParams, match=r"inputResponses\['r'\] .*is not a roots list"):
        bad.resolve(roots)


def test_oversized_input_responses_are_refused_before_the_state_is_opened() -> None:
    huge = {f"k{i}": {"action": "decline"} for i in range(65)}
    with pytest.raises(InvalidParams, match="too large"):
        begin(inputResponses=huge, requestState="not even a token")


def test_state_for_other_arguments_does_not_open() -> None:
    first = begin()
    first.want(ask())
    token = first.input_required(sealer=SEALER, binding=BINDING, now=100.0)["requestState"]
    other = binding_for("tools/call", {"name": "tool", "arguments": {"a": 2}}, "alice")
    with pytest.raises(InvalidRequestState):
        Replay.begin({"requestState": token}, sealer=SEALER, binding=other, now=100.0)


def test_a_url_questions_elicitation_id_stays_off_the_2026_wire() -> None:
    """2026-07-28 removed ``elicitationId`` (and the completion notice); a handler that gives
    one for 2025-11-25 clients must not leak it into ``inputRequests``."""
    params = {"mode": "url", "message": "Sign in", "url": "https://example.com/x", "elicitationId": "e-1"}
    url = Ask("link", ELICIT, params)
    assert url.wire() == {
        "method": ELICIT,
        "params": {"mode": "url", "message": "Sign in", "url": "https://example.com/x"},
    }
    assert url.params["elicitationId"] == "e-1"  # still there for the handshake era


@pytest.mark.parametrize(
    "state",
    [
        {"v": 1, "r": 1, "a": {}, "p": [["k", "x"]]},
        {"v": 1, "r": 1, "a": {}, "p": {}, "m": None},
        {"v": 1, "r": 1, "a": {}, "p": {}, "m": [["a", 1]]},
        {"v": 1, "r": "one", "a": {}, "p": {}},
        {"v": 1, "a": {}, "p": {}},
        {"v": 1, "r": 1, "a": {"k": ["fp"]}, "p": {}},
    ],
)
def test_a_state_sealed_with_another_layout_is_an_internal_error(state: dict[str, object]) -> None:
    token = SEALER.seal(orjson.dumps(state), BINDING, now=100.0)
    with pytest.raises(InternalError, match="unexpected layout"):
        begin(requestState=token)


def test_a_state_with_a_memo_carries_it() -> None:
    token = SEALER.seal(
        orjson.dumps({"v": 1, "r": 3, "a": {}, "p": {}, "m": {"id": "x"}}), BINDING, now=100.0
    )
    replay = begin(requestState=token)
    assert (replay.memo, replay.round, replay.pending, replay.answers) == ({"id": "x"}, 3, {}, {})


@pytest.mark.parametrize(
    ("key", "shown"),
    [
        ('a"]', r'inputResponses["a\"]"]'),
        ("back\\slash", r'inputResponses["back\\slash"]'),
        ("\x1b[31mred\nline\t", r'inputResponses["\u001b[31mred\nline\t"]'),
        ("\u202eevil\u2028\x7f", r'inputResponses["\u202eevil\u2028\u007f"]'),
        ("\U000e0001tag", r'inputResponses["\udb40\udc01tag"]'),
        ("日本 語", 'inputResponses["日本 語"]'),
        ("k" * 300, 'inputResponses["' + "k" * 200 + '…"] (a key of 300 characters)'),
    ],
)
def test_a_key_an_answer_is_refused_under_is_quoted_as_json_writes_it(key: str, shown: str) -> None:
    """A key was put between quotes as it was: 'a"]' read inputResponses["a"]"]. It is
    now a JSON string (a quote or backslash escaped, as is each character a terminal could
    act on), cut short when long."""
    with pytest.raises(InvalidParams) as caught:
        check_input_responses({key: 5})
    assert str(caught.value).startswith(f"Invalid params: {shown} must be an object"), str(caught.value)
