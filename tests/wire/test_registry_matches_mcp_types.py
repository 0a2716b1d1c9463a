"""The revision registry and the reserved _meta keys are spelled out in mcp_elicit.wire
(importing mcp_types costs every wire model); they must agree with the official package."""

from __future__ import annotations

import mcp_types
import pytest
from mcp_types import version

from mcp_elicit.wire import meta, versions


def test_meta_keys_match() -> None:
    for name in (
        "PROTOCOL_VERSION_META_KEY",
        "CLIENT_INFO_META_KEY",
        "CLIENT_CAPABILITIES_META_KEY",
        "LOG_LEVEL_META_KEY",
        "SERVER_INFO_META_KEY",
    ):
        assert getattr(meta, name) == getattr(mcp_types, name), name


def test_revisions_match() -> None:
    assert versions.HANDSHAKE_PROTOCOL_VERSIONS == version.HANDSHAKE_PROTOCOL_VERSIONS
    assert versions.MODERN_PROTOCOL_VERSIONS == version.MODERN_PROTOCOL_VERSIONS
    assert set(versions.SUPPORTED) <= set(version.KNOWN_PROTOCOL_VERSIONS)


def test_methods_match() -> None:
    """Every ``method`` literal of the official models, and nothing else but the tasks
    extension's own."""
    from typing import Literal, get_args, get_origin

    from pydantic import BaseModel

    from mcp_elicit.wire.methods import EXTENSION_METHODS, METHODS

    official: set[str] = set()
    for name in dir(mcp_types):
        model = getattr(mcp_types, name)
        if isinstance(model, type) and issubclass(model, BaseModel) and "method" in model.model_fields:
            annotation = model.model_fields["method"].annotation
            if get_origin(annotation) is Literal:
                official.update(get_args(annotation))
    assert "tools/call" in official and "notifications/progress" in official  # the scan found them
    assert official | EXTENSION_METHODS == METHODS
    assert not EXTENSION_METHODS & official


def test_the_latest_of_several_revisions_is_read_from_the_registry() -> None:
    assert versions.latest(["2025-11-25", "2025-06-18"]) == "2025-11-25"
    assert versions.latest(["2024-11-05", "2026-07-28", "2025-03-26"]) == "2026-07-28"
    assert versions.latest(["2025-06-18"]) == "2025-06-18"
    with pytest.raises(ValueError, match="'DRAFT-2026-v1' is not a revision"):
        versions.latest(["2025-11-25", "DRAFT-2026-v1"])  # no date order to guess
