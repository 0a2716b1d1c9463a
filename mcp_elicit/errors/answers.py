"""Errors of forms and answers: a form schema outside the flat subset elicitation allows
(caught when a tool or form is defined), and an answer that does not fit what was asked.
Importable from ``mcp_elicit.errors``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mcp_elicit.errors.base import MCPElicitError

__all__ = [
    "FormSchemaError",
    "FormValidationError",
    "InvalidAnswer",
    "SensitiveFieldError",
    "ValidationProblem",
    "shown_repr",
]


class FormSchemaError(MCPElicitError):
    """A form schema outside the flat subset elicitation allows.

    Raised when a tool is defined (or a form is built), naming the field and the rule.
    """

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(f"field {shown_repr(field)}: {message}" if field else message)
        self.field = field


def shown_repr(value: object) -> str:  # for a message: repr, cut to 60 characters and its length
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:60]}… ({len(text)} characters)"


class SensitiveFieldError(FormSchemaError):
    """A form field asks for something secret; secrets must go through URL mode."""


@dataclass(frozen=True, slots=True)
class ValidationProblem:
    """One thing wrong with an answer: the field (None for the whole form) and what."""

    field: str | None
    message: str

    def __str__(self) -> str:
        return f"{self.field}: {self.message}" if self.field else self.message


class FormValidationError(MCPElicitError):
    """Content that does not fit the requested schema; ``problems`` lists each fault."""

    def __init__(self, problems: Sequence[ValidationProblem]) -> None:
        self.problems = tuple(problems)
        super().__init__("; ".join(str(p) for p in self.problems) or "invalid answer")


class InvalidAnswer(MCPElicitError, ValueError):
    """A client's answer (elicitation, sampling or roots result) that does not fit the
    request it answers; the message says what is wrong, for the user (and, on the client,
    for the server: it quotes no value). A ``ValueError`` too. ``fields``: the form's
    fields at fault (None for the form as a whole), which a log may name where the
    message, quoting what was typed, is personal data."""

    def __init__(self, message: str, *, fields: Sequence[str | None] = ()) -> None:
        super().__init__(message)
        self.fields = tuple(fields)
