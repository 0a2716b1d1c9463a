"""A stored secret or a requestState that an instance's keys cannot open is said in its log, not silently
forgotten: two ``mcp-elicit serve`` processes share a real Redis, one with a rotated key
file (the new key first, the old one kept) and one not yet rotated.

A value the rotated instance reads is sealed again under the new key, which the other
instance does not hold: that one then treats the secret as absent and asks the person
again. That is what a rotation rolled out in one step does (README, "Several
instances", rotate in two steps); the operator must be able to see it in the log, with
the key id and what to do, since the person only sees the page come back.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from integration.instances import APP, Instance, Modern, claim, keygen, submit_secret
from mcp_elicit.sealing import KeyRing

from support.procs import free_port
from support.redis import SKIP_REASON, redis_available, redis_server

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture
def instances(tmp_path: Path) -> Iterator[tuple[Instance, Instance, str]]:
    """(rotated, not rotated, the new key's id), sharing one Redis."""
    if not redis_available():
        pytest.skip(SKIP_REASON)
    old = keygen(tmp_path / "old.keys")
    new = keygen(tmp_path / "new.keys")
    rotated = tmp_path / "rotated.keys"
    rotated.write_text(new.read_text() + old.read_text())
    (new_kid,) = KeyRing.from_text(new.read_text()).key_ids
    with redis_server(tmp_path) as redis:
        store = f"{redis.url}?prefix=rotation"
        a = Instance(
            APP, free_port(), tmp_path / "a.stderr", ("--state-key-file", str(rotated), "--store", store)
        )
        b = Instance(
            APP, free_port(), tmp_path / "b.stderr", ("--state-key-file", str(old), "--store", store)
        )
        try:
            a.restart()
            b.restart()
            yield a, b, new_kid
        finally:
            a.stop()
            b.stop()


async def test_a_secret_the_instance_cannot_open_is_asked_again_and_logged(
    instances: tuple[Instance, Instance, str],
) -> None:
    rotated, behind, new_kid = instances
    async with httpx.AsyncClient(timeout=20) as http, httpx.AsyncClient(timeout=20) as browser:
        first = (await Modern(http, behind.url).call("use_key", {"flow": "k1"}))["result"]
        ((_, request),) = first["inputRequests"].items()
        page_url, csrf = await claim(browser, request["params"]["url"])
        await submit_secret(browser, page_url, csrf, "sk-sealed-under-the-old-key")

        # the rotated instance opens it (the old key is in its ring) and seals it again
        read = (await Modern(http, rotated.url).call("use_key", {"flow": "k2"}))["result"]
        assert read["content"][0]["text"].startswith("k2: key sha256 "), read

        # the instance not rotated yet cannot open it any more: the person is asked again
        again = (await Modern(http, behind.url).call("use_key", {"flow": "k3"}))["result"]
        assert again["resultType"] == "input_required", again

    log = behind.stderr()
    warning = [line for line in log.splitlines() if "WARNING" in line and new_kid in line]
    assert warning, log
    assert "example_api_key" in warning[0], warning  # which secret
    assert "--state-key-file" in warning[0], warning  # what to do


async def test_a_state_sealed_under_a_key_the_instance_lacks_is_logged_with_the_key_id(
    instances: tuple[Instance, Instance, str],
) -> None:
    rotated, behind, new_kid = instances
    async with httpx.AsyncClient(timeout=20) as http:
        first = (await Modern(http, rotated.url).call("survey", {"flow": "s1"}))["result"]
        assert first["resultType"] == "input_required", first
        refused = await Modern(http, behind.url).call(
            "survey",
            {"flow": "s1"},
            requestState=first["requestState"],
            inputResponses={"name": {"action": "accept", "content": {"name": "Ada"}}},
        )
    assert refused["error"] == {"code": -32602, "message": "Invalid or expired requestState"}, refused
    log = behind.stderr()
    warning = [line for line in log.splitlines() if "requestState refused" in line]
    assert warning, log
    assert new_kid in warning[0], warning  # which key it needs
    assert "--state-key-file" in warning[0], warning  # what to do
