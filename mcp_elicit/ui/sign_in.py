"""Consent to sign in, in the terminal: before the browser opens an authorization server's
page (MCP authorization, ``transports.oauth_loopback``), the person sees which MCP server
wants the sign-in, which authorization server (issuer) signs them in, and the full URL of
its page with the host and registrable domain highlighted and every warning from
``client.url_consent`` (the same presentation as a URL-mode question). ``o`` opens it;
``d``, Esc or Ctrl-C decline. A URL that ``url_consent`` refuses can only be declined.

Rules: everything shows on stderr (stdout stays for results). Whether there is a person
at a terminal to ask is the caller's decision, made before building this. rich and
prompt_toolkit come from the ``cli`` extra; without it, building a ``TerminalConsent``
raises a ``UsageError`` saying what to install.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from mcp_elicit.client.url_consent import judge_url
from mcp_elicit.ui.terminal import require_cli_extra

if TYPE_CHECKING:
    from prompt_toolkit.input import Input
    from prompt_toolkit.output import Output
    from rich.console import Console

__all__ = ["TerminalConsent"]

#: ``{cancel}`` is the prompter's key for it (Esc, or a word typed on a dumb terminal).
_CONSENT = ("o: open it in your browser to sign in", "d: decline", "{cancel}: cancel > ")
_REFUSED = ("Enter or d: decline", "{cancel}: cancel > ")
_OPEN = ("o", "open")
_DECLINE = ("d", "decline")


class TerminalConsent:
    """Asks the person at this terminal whether to sign in to ``server`` (the MCP server's
    URL); a ``transports.oauth_loopback.Consent``."""

    def __init__(
        self,
        server: str,
        *,
        console: Console | None = None,
        input: Input | None = None,
        output: Output | None = None,
    ) -> None:
        require_cli_extra()
        from mcp_elicit.ui.prompts import Prompter
        from mcp_elicit.ui.render import stderr_console

        self.server = server
        self.prompter = Prompter(input=input, output=output)
        self.console = console or stderr_console(plain=self.prompter.plain)

    async def __call__(self, url: str, issuer: str) -> bool:
        from mcp_elicit.ui.prompts import Cancelled
        from mcp_elicit.ui.render import sign_in_panel

        verdict = judge_url(url, longest=None)  # its own: the scopes asked may make it long
        issuer_site = judge_url(issuer).site or None
        self.console.print(sign_in_panel(self.server, issuer, verdict, issuer_site))
        cancel = self.prompter.cancel_key
        try:
            if verdict.refused:
                await self.prompter.ask(
                    [p.format(cancel=cancel) for p in _REFUSED], check=_check(("",), _DECLINE)
                )
                agreed = False
            else:
                answer = await self.prompter.ask(
                    [p.format(cancel=cancel) for p in _CONSENT], check=_check(_OPEN, _DECLINE)
                )
                agreed = answer.strip().lower() in _OPEN
        except Cancelled:
            agreed = False
        if agreed:
            self.console.print("Opening the sign-in page.", style="green")
        else:
            self.console.print("Sign-in declined.", style="yellow")
        return agreed


def _check(*choices: tuple[str, ...]) -> Callable[[str], str | None]:
    words = {word for choice in choices for word in choice}

    def check(text: str) -> str | None:
        if text.strip().lower() in words:
            return None
        return "type " + " or ".join(repr(choice[0]) if choice[0] else "Enter" for choice in choices)

    return check
