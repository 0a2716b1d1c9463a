"""What a type checker makes of an ``Answer``: once the handler has ruled out decline and
cancel (in each way the README shows: ``action`` compared with ``==`` or ``!=``, ``match``,
``accepted``), ``data`` is the type asked for, not ``T | None``;
and the runtime ``Answer`` of each action is still an ``Answer`` equal to one made by hand."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from mypy import api as mypy_api

from mcp_elicit import Answer

from support.procs import ROOT
from support.readme import block_starting

NARROWING = textwrap.dedent(
    """
    from mcp_elicit import Form, Integer


    async def by_inequality_on_a_form(ctx: Context) -> int:
        answer = await ctx.elicit("How many?", Form(n=Integer()))
        if answer.action != "accept":
            return 0
        n: int = answer.data["n"]
        return n


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
    server, narrowing = (block_starting("python", start).text for start in ("# app.py", "# What narrows"))
    app.write_text(server + narrowing + NARROWING + imports + tasks, encoding="utf-8")
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


GATHERED = textwrap.dedent(
    """
    from __future__ import annotations

    from dataclasses import dataclass
    from typing import Any, assert_type

    from mcp_types import CreateMessageResult, Root

    from mcp_elicit import Answer, Context, Form, Integer
    from mcp_elicit.server.questions import FormAnswer


    @dataclass
    class Booking:
        guests: int


    async def handler(ctx: Context) -> None:
        one = await ctx.gather(ctx.elicit("A", Booking))
        assert_type(one, tuple[FormAnswer[Booking]])
        booking, n = await ctx.gather(ctx.elicit("A", Booking), ctx.elicit("B", Form(n=Integer())))
        assert_type(booking, FormAnswer[Booking])
        assert_type(n, FormAnswer[dict[str, Any]])
        reply, roots, page = await ctx.gather(
            ctx.sample("Say hi"), ctx.list_roots(), ctx.elicit_url("Pay", "https://pay.example.com/1")
        )
        assert_type(reply, CreateMessageResult)
        assert_type(roots, list[Root])
        assert_type(page, Answer[None])
        many = await ctx.gather(*[ctx.elicit(f"Q{i}", Booking) for i in range(9)])
        assert_type(many, tuple[FormAnswer[Booking], ...])
        seven = await ctx.gather(
            ctx.list_roots(), ctx.list_roots(), ctx.list_roots(), ctx.list_roots(),
            ctx.list_roots(), ctx.list_roots(), ctx.elicit("G", Booking),
        )
        assert_type(seven, tuple[list[Root] | FormAnswer[Booking], ...])
        assert_type(await ctx.gather(), tuple[()])
    """
)


def test_gather_gives_each_answer_its_own_type(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``ctx.gather`` was typed ``list[Any]``: a handler lost under mypy the answer types
    ``ctx.elicit`` gives. Each question's answer now keeps its type, by position."""
    monkeypatch.setenv("MYPYPATH", str(ROOT))  # this checkout's package, not an installed one
    program = tmp_path / "gathered.py"
    program.write_text(GATHERED, encoding="utf-8")
    out, err, status = mypy_api.run(["--strict", "--no-incremental", "--follow-imports=silent", str(program)])
    assert status == 0, out + err
