"""Why a stdio server failed, in words a person can act on (``cli.diagnose`` decides
which failure it is; these are its stdio words).

* ``noise_note``: a sentence about the lines a stdio server wrote on stdout that are not
  JSON-RPC (cleaned, cut short), said in every stdio failure, because they are the usual
  cause;
* ``stdio_failure``: a server that does not start (a ``.py`` file that is not a program, a
  directory, no execute permission, no ``#!`` line, not on PATH), never answers (with
  ``--timeout``), writes something other than JSON-RPC and then gives no answer, or is a
  ``python FILE.py`` that ends at once, saying nothing (a file that only defines a
  ``Server``: ``mcp-elicit serve`` serves it);
* ``not_json_rpc``: that last one, the same exit and words whether the server then waited
  or exited; ``log_tail`` and ``says_nothing``: the end of its stderr, and whether an
  error's message leaves the reason to it.
"""

from __future__ import annotations

import errno
import os
import re
import shlex
from typing import Final

from mcp_elicit.cli.targets import Observed, Target
from mcp_elicit.command_redaction import redact_command
from mcp_elicit.errors import CannotConnect, CliError, RequestTimeout, ServerBrokeProtocol, TransportError
from mcp_elicit.transports.stdio_noise import QUOTED, wrote_lines
from mcp_elicit.ui.form_text import clean
from mcp_elicit.url_redaction import redact_urls

__all__ = ["SLOW", "log_tail", "noise_note", "not_json_rpc", "says_nothing", "stdio_failure"]

SLOW: Final = "If the server is only slow, give it longer: --timeout SECONDS."  # after a timeout


def noise_note(observed: Observed) -> str:
    """A sentence about non-JSON-RPC lines on a stdio server's stdout, or ""."""
    if not observed.stdout_noise:
        return ""
    # as the transport logged it: its URLs redacted, then cut to QUOTED (a line that long was longer)
    first = clean(observed.stdout_noise[0])  # quoted, not repr'd again
    first = first if len(first) < QUOTED else first[: QUOTED - 3] + "..."
    count = max(observed.stdout_noise_count, len(observed.stdout_noise))
    return (
        f"\nThe server {wrote_lines(count)} (first: '{first}'). On stdio, stdout carries MCP "
        "messages only: print logs to stderr."
    )


def log_tail(observed: Observed) -> str:
    """The end of a stdio server's stderr (its log), as a paragraph; "" when it wrote none."""
    tail = redact_urls(observed.stderr_tail.strip())[-1500:]  # redacted, then cut
    return f"\nThe end of its stderr:\n{tail}" if tail else ""


def says_nothing(message: str) -> bool:
    """Whether an error's message is only its name: the reason is in the server's log."""
    return message.strip().rstrip(".").lower() in ("", "internal error")


def not_json_rpc(target: Target, observed: Observed, what: str) -> ServerBrokeProtocol:
    """A stdio server that wrote lines that are not JSON-RPC, then no answer: the same exit
    and words whether it then waited (the request timed out) or exited (its requests
    ended), with what it wrote on stderr, which is all the timing could change."""
    return ServerBrokeProtocol(f"{target} {what}.{noise_note(observed)}{log_tail(observed)}")


def stdio_failure(exc: TransportError, target: Target, observed: Observed) -> CliError:
    note = noise_note(observed)
    text = str(exc)
    if observed.stdout_noise:
        return not_json_rpc(target, observed, "never answered in JSON-RPC")
    if isinstance(exc, RequestTimeout):
        return CannotConnect(
            f"{target} started but did not answer: {text}. Is it an MCP server speaking stdio? {SLOW}"
        )
    if "cannot start the server command" in text:
        shown = redact_command(target.command)  # no URL's password, no --token's value
        program = target.command[0] if target.command else "?"
        if program.endswith(".py"):  # a Python file is not a command unless it is executable
            rest = shlex.join(shown[1:])
            program = shown[0]
            return CannotConnect(
                f"{text}. A .py file runs through Python: -- mcp-elicit serve {program} {rest}".rstrip()
                + f" (an mcp_elicit Server), or -- python {program} {rest}".rstrip()
                + " (a script that runs its own server)"
            )
        named = shown[0] if shown else program
        why = _cannot_run(program, exc.__context__, named)  # the OSError the transport raised from None
        return CannotConnect(
            f"{text}. {why or f'Is {named!r} installed and on PATH (or give its full path)?'}"
        )
    return CannotConnect(f"{text}{note}{_ran_to_its_end(target, text, observed)}")


#: A Python interpreter's name, as a command starts it (python, python3, python3.13).
_PYTHON = re.compile(r"python[0-9.]*")


def _ran_to_its_end(target: Target, text: str, observed: Observed) -> str:
    """For ``python FILE.py`` that exited 0 without a word: a file that only defines a
    ``Server`` (as a README's ``app.py`` does) and is run instead of served. "" otherwise."""
    command = target.command or ()
    if (
        len(command) < 2
        or not _PYTHON.fullmatch(os.path.basename(command[0]))
        or not command[1].endswith(".py")
        or "exited with code 0" not in text
        or observed.stderr_tail.strip()
    ):
        return ""
    shown = redact_command(command)[:2]  # a URL's password in a path is still not printed
    script = shlex.quote(shown[1])  # words to paste back: "my app.py" quoted, as the shell needs
    return (
        f"\n{script} ran to its end without serving anything. If it defines an mcp_elicit Server, "
        f"mcp-elicit serves it: give -- mcp-elicit serve {script} in place of -- {shlex.join(shown)}"
    )


def _cannot_run(program: str, error: BaseException | None, shown: str) -> str | None:
    """Why a program that is there does not run, naming it as ``shown`` (redacted); None
    when it may not be there at all."""
    if isinstance(error, IsADirectoryError) or (
        isinstance(error, PermissionError) and os.path.isdir(program)
    ):
        return f"{shown!r} is a directory, not a program."
    if isinstance(error, PermissionError):
        return f"{shown!r} has no execute permission (chmod +x it), or run it through its interpreter."
    if isinstance(error, OSError) and error.errno == errno.ENOEXEC:
        return (
            f"{shown!r} is not a program this system can run (a script needs a #! line); "
            "run it through its interpreter."
        )
    return None
