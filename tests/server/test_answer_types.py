"""What a type checker makes of an ``Answer``: once the handler has ruled out decline and
cancel (by ``action`` or ``accepted``), ``data`` is the type asked for, not ``T | None``;
and the runtime ``Answer`` of each action is still an ``Answer`` equal to one made by hand."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from mypy import api as mypy_api

from mcp_elicit import Answer

from support.readme import block_starting

NARROWING = textwrap.dedent(
    """
    from mcp_elicit import Context, Form, Integer


    async def by_inequality(ctx: Context) -> int:
        answer = await ctx.elicit("How many?", Form(n=Integer()))
        if answer.action != "accept":
            return 0
        n: int = answer.data["n"]
        return n


    async def by_accepted(ctx: Context) -> str:
        answer = await ctx.elicit("When?", Booking)
        if not answer.accepted:
            return answer.action
        return f"{answer.data.guests} on {answer.data.date}"


    async def by_gather(ctx: Context) -> int:
        first, second = await ctx.gather(ctx.elicit("A", Booking), ctx.elicit("B", Form(n=Integer())))
        return 0 if first.data is None else first.data.guests
    """
)


@pytest.mark.slow
def test_the_readme_servers_and_each_way_of_narrowing_type_check_strictly(tmp_path: Path) -> None:
    app = tmp_path / "app.py"
    tasks = block_starting("python", "@app.tool(task=").text
    imports = "from mcp_elicit import Boolean, Choice\n"
    app.write_text(block_starting("python", "# app.py").text + NARROWING + imports + tasks, encoding="utf-8")
    out, err, status = mypy_api.run(
        ["--strict", "--no-error-summary", "--cache-dir", str(tmp_path / "cache"), str(app)]
    )
    assert status == 0, out + err


def test_each_action_gives_an_answer_equal_to_one_made_by_hand() -> None:
    from mcp_elicit.server.questions import answer_of

    for action in ("decline", "cancel"):
        answer = answer_of(action)
        assert isinstance(answer, Answer)
        assert answer == Answer(action)
        assert hash(answer) == hash(Answer(action))
        assert (answer.action, answer.data, answer.content, answer.accepted) == (action, None, None, False)
    accepted = answer_of("accept", {"n": 1}, {"n": 1})
    assert accepted == Answer("accept", {"n": 1}, {"n": 1})
    assert accepted != Answer("decline")
    assert accepted.accepted is True
