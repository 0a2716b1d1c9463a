"""An answer script entry with a key it does not know (a typo: ``feilds``) is refused, and
the error lists the keys an entry takes, so the typo can be fixed without the docs."""

from __future__ import annotations

import pytest

from mcp_elicit.client import Scripted
from mcp_elicit.errors import ConfigError


def test_an_unknown_key_is_refused_listing_the_keys_an_entry_takes() -> None:
    with pytest.raises(ConfigError) as caught:
        Scripted.from_script([{"feilds": ["party_size"], "content": {"party_size": 2}}])
    said = str(caught.value)
    assert "unknown keys feilds" in said, said
    for known in ("action", "content", "fields", "mode", "await_completion", "once"):
        assert known in said.partition("unknown keys feilds")[2], said
