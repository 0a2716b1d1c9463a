"""A pipeline's error (``RedisStore.write_many``) is Redis's own, with the store's advice,
whatever the values sent hold: redis-py's note in front of it quotes the command, values
included, and a value holding the note's own words left the rest of the value in the
message when that note was cut off the text (now it is never made)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from mcp_elicit.stores import RedisStore
from mcp_elicit.stores.base import misconfigured
from mcp_elicit.stores.writes import Publish, Put, write_all

pytestmark = pytest.mark.anyio


async def test_a_refused_pipeline_says_no_value_sent_whatever_it_holds(redis_url: str, raw: Any) -> None:
    refusals = pytest.importorskip("redis.exceptions")
    user, password = f"writer-{uuid.uuid4().hex[:8]}", "writer-Pw-2"
    await raw.execute_command("ACL", "SETUSER", user, "on", f">{password}", "~*", "resetchannels", "+@all")
    prefix = f"test-{uuid.uuid4().hex[:12]}"
    store = RedisStore(redis_url.replace("redis://", f"redis://{user}:{password}@"), prefix=prefix)
    message = b") of pipeline caused error: alice@example.com"
    try:
        with pytest.raises(refusals.NoPermissionError) as caught:
            await write_all(store, [Put("step", "k", b"1"), Publish("step:k", message)])
        text = str(caught.value)
        assert "alice@example.com" not in text and "pipeline" not in text, text
        assert misconfigured(caught.value), text
        assert f"give the user ~{prefix}:* &{prefix}:*" in text, text
    finally:
        await store.close()
        await raw.execute_command("ACL", "DELUSER", user)
