"""``mcp-elicit``: serve a server (``cli.serve``), generate a state key; test one
(``check``) and talk to one (``call``, ``prompt``, ``read``), each registered from its own
module; here, parsing the command line and how every command ends.

Rules: every error ends with a message on stderr and the exit code its ``CliError``
carries (2 for usage and configuration problems), and with ``--json`` also a JSON object
on stdout saying so (``ok``, ``exit_code``, ``error``), argparse's own errors included; that message and the client's warnings
may quote a server, so what could act on a terminal is shown instead. Nothing but JSON-RPC
ever goes to stdout when serving over stdio. SIGTERM stops a client command as Ctrl-C
does (the request cancelled, a stdio server stopped), with exit 143 instead of 130, and so
does SIGHUP, with 129 (``cli.stop_signals``); with
``--json`` either says so in the same JSON object, a Ctrl-C while the command line is still
read too (when ``--json`` is among the words before ``--``, as for argparse's errors), or
while this module is imported (``cli.entry``, where the console script starts). Once stdout's reader has gone away
(``| head -1``), a command stops quietly with 141, the 128 + SIGPIPE a shell shows for a
process SIGPIPE ended, as 130 and 143 are for SIGINT and SIGTERM. Everything after the first ``--`` is a server
command (the stdio TARGET of the client commands), never an option of ours. Positional words that argparse
leaves over after options (``call URL --json TOOL x=1``) are given back to the command.
What only one command needs is imported by that command (the key ring, the loader, the
HTTP stack), so that ``check`` over stdio starts without them.
"""

from __future__ import annotations

import argparse
import itertools
import logging
import os
import signal
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn

from mcp_elicit.cli import stop_signals
from mcp_elicit.errors import CliError, UsageError

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

    from mcp_elicit.cli.targets import Target

__all__ = ["EXIT_BROKEN_PIPE", "main", "reader_gone", "stopped_at_start"]


class _ParseError(Exception):
    """argparse's own error, held until ``_parse`` has given it as JSON when asked."""

    def __init__(self, parser: argparse.ArgumentParser, message: str) -> None:
        super().__init__(message)
        self.parser = parser
        self.message = message


class _Parser(argparse.ArgumentParser):
    """argparse's parser, with two changes: its errors are held (``_ParseError``), and a
    help that meets stdout's closed pipe (``--help | head -1``) fails as every command's
    output does (``main``: 141), where argparse would forget the failure and exit 0."""

    def error(self, message: str) -> NoReturn:
        raise _ParseError(self, message)

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        if not message:
            return
        try:
            (file or sys.stderr).write(message)
        except BrokenPipeError:
            if file is sys.stdout:  # --help's reader gone away: main ends with 141
                raise
        except (AttributeError, OSError):  # what argparse's own tolerates (no stderr at all)
            pass

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        """Also says in the namespace which parser left words over: a command's, whose
        usage ``_parse`` then shows, else (words before the command) the top level's."""
        parsed, extra = super().parse_known_args(args, namespace)
        if extra:
            vars(parsed).setdefault(_LEFT_OVER_BY, self)
        return parsed, extra


class _Version(argparse.Action):
    """``--version``: the release of the installed distribution (what pip shows, and what
    the client's ``clientInfo`` says), looked up only when asked."""

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        from mcp_elicit.client.options import package_version

        parser._print_message(f"{parser.prog} {package_version()}\n", sys.stdout)
        parser.exit()


#: The attribute naming the parser that left words over (``_Parser.parse_known_args``).
_LEFT_OVER_BY = "_mcp_elicit_left_over_by"


def _parser() -> argparse.ArgumentParser:
    from mcp_elicit.cli import call, check, serve

    parser: argparse.ArgumentParser = _Parser(
        prog="mcp-elicit",
        description="MCP elicitation toolkit",
        epilog="exit codes: 0 success, 1 the server answered but something is wrong (an error result), "
        "2 usage or configuration (a server file that cannot be loaded), 3 cannot connect, sign in or "
        "start the server, or not an MCP server, 4 the server broke the protocol, 130 interrupted (Ctrl-C), 143 terminated "
        "(SIGTERM, client commands), 129 hung up (SIGHUP, client commands), 141 stdout's reader went away (| head), nothing said; "
        "'mcp-elicit COMMAND --help' says what each means for that command",
    )
    parser.add_argument("--version", action=_Version, nargs=0, help="show the installed release and exit")
    sub = parser.add_subparsers(dest="command", required=True)

    serve.register(sub)

    keygen = sub.add_parser("keygen", help="print a new requestState key file")
    keygen.set_defaults(command="keygen")

    check.register(sub)
    call.register(sub)
    return parser


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    from mcp_elicit.cli.targets import split_command

    parser = _parser()
    words, command = split_command(sys.argv[1:] if argv is None else argv)
    try:
        args, extra = parser.parse_known_args(words)
        left_over_by = vars(args).pop(_LEFT_OVER_BY, parser)
        if extra and (not hasattr(args, "words") or any(word.startswith("-") for word in extra)):
            from mcp_elicit.command_redaction import redact_command  # an --api-key=... misplaced

            left_over_by.error(f"unrecognized arguments: {' '.join(redact_command(extra))}")
    except _ParseError as exc:
        exc.message = _unechoed(exc.message, words)
        if "--json" in words:
            from mcp_elicit.cli import output

            output.print_failure(UsageError(exc.message), None)
        argparse.ArgumentParser.error(exc.parser, exc.message)  # usage on stderr, exit 2
    args.server_command = command
    if extra:
        args.words = [*args.words, *extra]
    return args


def _unechoed(message: str, words: Sequence[str]) -> str:
    """argparse's ``message`` about ``words`` without the secrets they give: a value
    argparse quotes (``invalid choice: 'sk-...'``, the word after an ``--api-key`` it did
    not know, taken for the command) is the word given, quoted, whatever its length; a
    ``--header`` value too. A secret option's value starting with "-" (argparse takes it
    for an option) gets the way to give it."""
    from mcp_elicit.command_redaction import redact_command, redact_secrets, secret_values

    for word, shown in zip(words, redact_command(words), strict=True):  # 'Bearer K' as 'Bearer REDACTED'
        if shown != word:
            message = message.replace(repr(word), repr(shown))
    words = _spelled_out(words)  # --client-sec S, --head 'X-Key: K', -H'X-Key: K' as argparse reads them
    secrets = secret_values(words)
    pairs = list(itertools.pairwise(words))
    secrets += [after for word, after in pairs if word in ("-H", "--header")]
    secrets += [word.partition("=")[2] for word in words if word.startswith("--header=")]
    for secret in filter(None, secrets):
        message = message.replace(repr(secret), "'REDACTED'")
    message = redact_secrets(message, secrets)
    given = [after for word, after in pairs if word == "--client-secret"]
    dashed = bool(given) and given[-1].startswith("-")  # taken for an option: not shown, but said how
    if dashed and message.startswith("argument --client-secret: expected one argument"):
        message += " (a secret starting with '-' is given as --client-secret=SECRET)"
    return message


#: Our own options whose value is a secret (``_unechoed``), as argparse also takes them
#: abbreviated (``--client-sec S``, ``--head V``).
_SECRET_OPTIONS = ("--client-secret", "--header")


def _spelled_out(words: Sequence[str]) -> list[str]:
    """``words`` with each abbreviation of one of ``_SECRET_OPTIONS`` written out, and a
    ``-H`` glued to its value (``-HX-Key: K``, ``-H=X-Key: K``) given as two words: how
    argparse reads them. An abbreviation that fits another option too (``--h``) is taken
    for the secret's, which at worst hides a word of the error."""
    out: list[str] = []
    for word in words:
        name, equals, value = word.partition("=")
        full = [option for option in _SECRET_OPTIONS if len(name) > 2 and option.startswith(name)]
        if name.startswith("--") and full:
            out.append(full[0] + equals + value)
        elif word.startswith("-H") and len(word) > 2:
            out += ["-H", word[3:] if word[2] == "=" else word[2:]]
        else:
            out.append(word)
    return out


def _client_logging(args: argparse.Namespace) -> None:
    """Warnings from the client on stderr, briefly."""
    from mcp_elicit.cli.log_lines import InertFormatter, ShownHandler

    handler = ShownHandler(sys.stderr)
    handler.setFormatter(InertFormatter("mcp-elicit: %(levelname)s: %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])


#: The exit code once stdout's reader has gone away (``| head -1``): 128 + SIGPIPE, what a
#: shell shows for a process that SIGPIPE ended, as 130 and 143 are for SIGINT and SIGTERM.
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; its exit code. Once stdout's reader has gone away, the
    command stops there, says nothing (where would it, and about what) and exits 141, as
    Python's documentation of SIGPIPE advises: stdout is pointed at /dev/null, so that
    what is still buffered cannot fail again at exit ("Exception ignored")."""
    try:
        try:
            return _main(argv)
        finally:  # argparse's exits too: what is buffered meets the closed pipe here
            if sys.stdout is not None:
                sys.stdout.flush()
    except BrokenPipeError:
        return reader_gone()


def reader_gone() -> int:
    """``EXIT_BROKEN_PIPE``, once stdout's reader has gone away, with stdout pointed at
    /dev/null first (``main``; a script running commands stops so too)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return EXIT_BROKEN_PIPE


def _main(argv: Sequence[str] | None) -> int:
    stop_signals.terminated.clear()
    try:
        args = _parse(argv)  # imports the commands' modules: a Ctrl-C may come meanwhile
    except KeyboardInterrupt:
        return stopped_at_start(sys.argv[1:] if argv is None else argv)
    try:
        if args.command == "serve":
            from mcp_elicit.cli import serve

            return serve.run(args)
        if args.command == "keygen":
            from mcp_elicit.sealing import KeyRing

            print(KeyRing.generate().export_text(), end="")
            return 0
        if hasattr(args, "handler"):
            _client_logging(args)
            with stop_signals.stopping():
                code: int = args.handler(args)
            return code
    except CliError as exc:
        from mcp_elicit.cli.targets import Target
        from mcp_elicit.ui.form_text import clean

        if isinstance(target := getattr(args, "target", None), Target):  # no --header value it repeats
            exc.args = (target.unechoed(str(exc)),)

        if getattr(args, "json", False):  # a machine reading stdout gets JSON, whatever failed
            from mcp_elicit.cli import output

            output.print_failure(exc, getattr(args, "target", None))

        # the message may quote a server (its name, a URL, an error text): made inert, and
        # written as stderr's encoding can show it
        from mcp_elicit.cli.output import write

        write(f"mcp-elicit: {clean(str(exc), multiline=True)}", sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        if getattr(args, "json", False):  # JSON on every outcome, this one too
            _print_stopped(getattr(args, "target", None))
        return stop_signals.exit_code()
    return 2


def stopped_at_start(argv: Sequence[str]) -> int:
    """The end of a command a Ctrl-C stopped before it ran (while the command line was read,
    or this module imported: ``cli.entry``): 130, and with ``--json`` among the words before
    ``--`` (as ``_parse`` reads them) the JSON object saying so."""
    from mcp_elicit.cli.targets import split_command

    if "--json" in split_command(argv)[0]:
        _print_stopped(None)
    return 130


def _print_stopped(target: Target | None) -> None:
    """``--json``'s object for a command stopped by Ctrl-C, SIGTERM or SIGHUP (``target``
    None when it came before the TARGET was read)."""
    from mcp_elicit.cli import output

    output.print_failure(CliError(stop_signals.said(), exit_code=stop_signals.exit_code()), target)
