"""Asking a 2025-06-18 session: a form in that revision's words.

Rules:

* ``elicitation/create`` carries no ``mode`` (2025-06-18 has forms only) and the form as
  that revision says it (``forms.rev_2025_06_18``: titled single-selects as ``enum`` +
  ``enumNames``, a default on a boolean only). Its answer is read by the same form, as
  that revision defines it (an action; values that are strings, numbers or booleans).
* A form that revision cannot say (a multi-select) is not sent: the handler is refused
  with -32021 when it asks, as for a client without the capability (``except
  MissingClientCapability`` falls back for both), naming the field and the revision: the
  client declared ``elicitation``, so the data names, beside it, the revision that has
  multi-selects (``requiredProtocolVersion``: 2025-11-25).
* URL mode is not offered (the session's capabilities say forms only:
  ``core.rev_2025_11_25``).
"""

from __future__ import annotations

from typing import Any

from mcp_elicit.core.rev_2025_11_25 import revision_lacks
from mcp_elicit.forms import FormSchema
from mcp_elicit.forms.rev_2025_06_18 import requested_schema, unsayable
from mcp_elicit.wire.versions import REV_2025_06_18, REV_2025_11_25

__all__ = ["form_params"]


def form_params(message: str, form: FormSchema) -> dict[str, Any]:
    """The params of ``elicitation/create`` asking ``form`` at 2025-06-18."""
    field = unsayable(form)
    if field is not None:
        raise revision_lacks(
            f"This request needs a multi-select (field {field.name!r}), which MCP {REV_2025_06_18} "
            "elicitation does not have: multi-selects came with 2025-11-25, before it a form field "
            "holds one string, number or boolean. What is missing is that revision, not a "
            "capability the client could declare",
            {"elicitation": {"form": {}}},
            REV_2025_11_25,
            revision=REV_2025_06_18,
            lacks=f"a multi-select (field {field.name!r})",
        )
    return {"message": message, "requestedSchema": requested_schema(form)}
