"""The public surface is small, curated and sorted."""

from __future__ import annotations

import importlib

import mcp_elicit

EXPECTED = {
    "Accepted",
    "Answer",
    "Audio",
    "Blob",
    "Boolean",
    "Cancelled",
    "Choice",
    "Context",
    "Declined",
    "Field",
    "Form",
    "FormAnswer",
    "FormSchema",
    "Image",
    "Integer",
    "KeyRing",
    "MultiChoice",
    "Number",
    "Principal",
    "RateLimited",
    "Server",
    "StaticTokens",
    "String",
    "TokenVerifier",
    "ToolError",
    "__version__",
}


def test_all_is_sorted_and_exactly_the_curated_names() -> None:
    assert mcp_elicit.__all__ == sorted(mcp_elicit.__all__)
    assert set(mcp_elicit.__all__) == EXPECTED


def test_every_name_resolves() -> None:
    for name in mcp_elicit.__all__:
        assert getattr(mcp_elicit, name) is not None


def test_subpackages_declare_sorted_all() -> None:
    for module in (
        "mcp_elicit.errors",
        "mcp_elicit.forms",
        "mcp_elicit.wire.jsonrpc",
        "mcp_elicit.wire.meta",
    ):
        names = importlib.import_module(module).__all__
        assert list(names) == sorted(names), module


def test_the_root_imports_its_names_on_first_use() -> None:
    import subprocess
    import sys

    code = "import mcp_elicit, sys; print('mcp_elicit.server.app' in sys.modules); mcp_elicit.Server; print('mcp_elicit.server.app' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True"]


def test_the_answer_classes_a_handler_matches_on_are_the_root_s() -> None:
    """``Answer`` was importable from ``mcp_elicit``, but not the classes a handler narrows
    it with (``isinstance``, ``match``): they came from ``mcp_elicit.server.questions``."""
    from mcp_elicit.server import questions

    for name in ("Accepted", "Cancelled", "Declined", "FormAnswer"):
        assert getattr(mcp_elicit, name) is getattr(questions, name), name
    answer = questions.answer_of("decline")
    assert isinstance(answer, mcp_elicit.Declined) and isinstance(answer, mcp_elicit.Answer)
    assert not isinstance(answer, mcp_elicit.Accepted | mcp_elicit.Cancelled)
