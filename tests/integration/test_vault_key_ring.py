"""Rotating the state keys of several instances, as the README says and as it goes wrong:
two ``mcp-elicit serve`` processes share a real Redis, one given a new key, one not yet.

* Rolled out in one step (the new key first on one instance only): a value that instance
  reads is sealed again under the new key, which the other does not hold; that one then
  takes the secret as absent and asks the person again, and refuses the states the first
  seals. Its log must say so, with the key id and what to do, since the person sees only
  the page come back.
* The README's first step (the new key added after the old one): both instances open
  everything, nobody is asked again, nothing is refused.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from integration.instances import APP, Instance, Modern, claim, keygen, submit_secret
from mcp_elicit.sealing import KeyRing

from support.procs import free_port
from support.redis import SKIP_REASON, redis_available, redis_server

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@contextlib.contextmanager
def pair(tmp_path: Path, *, new_first: bool) -> Iterator[tuple[Instance, Instance, str]]:
    """(given both keys, given the old one only, the new key's id), sharing one Redis; the
    first has the new key first (it seals) or after the old one (it only opens)."""
    if not redis_available():
        pytest.skip(SKIP_REASON)
    old = keygen(tmp_path / "old.keys")
    new = keygen(tmp_path / "new.keys")
    both = tmp_path / "both.keys"
    both.write_text(new.read_text() + old.read_text() if new_first else old.read_text() + new.read_text())
    both.chmod(0o600)  # serve refuses a key file others may read
    (new_kid,) = KeyRing.from_text(new.read_text()).key_ids
    with redis_server(tmp_path) as redis:
        store = f"{redis.url}?prefix=rotation"
        a = Instance(
            APP, free_port(), tmp_path / "a.stderr", ("--state-key-file", str(both), "--store", store)
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


@pytest.fixture
def instances(tmp_path: Path) -> Iterator[tuple[Instance, Instance, str]]:
    """A rotation rolled out in one step: the new key first on one instance only."""
    with pair(tmp_path, new_first=True) as running:
        yield running


@pytest.fixture
def first_step(tmp_path: Path) -> Iterator[tuple[Instance, Instance, str]]:
    """The README's first step: the new key added after the old one, on one instance so far."""
    with pair(tmp_path, new_first=False) as running:
        yield running


async def save_secret(
    http: httpx.AsyncClient, browser: httpx.AsyncClient, instance: Instance, value: str
) -> None:
    first = (await Modern(http, instance.url).call("use_key", {"flow": "save"}))["result"]
    ((_, request),) = first["inputRequests"].items()
    page_url, csrf = await claim(browser, request["params"]["url"])
    await submit_secret(browser, page_url, csrf, value)


async def test_a_secret_the_instance_cannot_open_is_asked_again_and_logged(
    instances: tuple[Instance, Instance, str],
) -> None:
    rotated, behind, new_kid = instances
    async with httpx.AsyncClient(timeout=20) as http, httpx.AsyncClient(timeout=20) as browser:
        await save_secret(http, browser, behind, "sk-sealed-under-the-old-key")

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


async def test_the_first_step_of_a_rotation_keeps_both_instances_working(
    first_step: tuple[Instance, Instance, str],
) -> None:
    rolled, behind, new_kid = first_step
    async with httpx.AsyncClient(timeout=20) as http, httpx.AsyncClient(timeout=20) as browser:
        await save_secret(http, browser, behind, "sk-through-the-first-step")
        for instance in (rolled, behind, rolled, behind):  # read on both: nobody is asked again
            read = (await Modern(http, instance.url).call("use_key", {"flow": "r"}))["result"]
            assert read["content"][0]["text"].startswith("r: key sha256 "), read
        # a state the instance with both keys seals opens on the other one
        first = (await Modern(http, rolled.url).call("survey", {"flow": "s2"}))["result"]
        second = (
            await Modern(http, behind.url).call(
                "survey",
                {"flow": "s2"},
                requestState=first["requestState"],
                inputResponses={"name": {"action": "accept", "content": {"name": "Ada"}}},
            )
        )["result"]
    assert second["resultType"] == "input_required" and "guests" in second["inputRequests"], second
    assert new_kid not in behind.stderr(), behind.stderr()


async def test_a_rotation_done_as_the_readme_says_keeps_rounds_in_flight_going(tmp_path: Path) -> None:
    """The README's whole rotation on two instances, each restarted in turn at every step
    (new key added after the old, then moved first, then the old dropped) while a form's
    rounds and a secret page are in flight: every round goes on, nobody is asked again; only
    a state sealed before the rotation and presented after the old key went is refused."""
    if not redis_available():
        pytest.skip(SKIP_REASON)
    old, new = keygen(tmp_path / "old.keys").read_text(), keygen(tmp_path / "new.keys").read_text()
    files = [tmp_path / "a.keys", tmp_path / "b.keys"]

    def roll_out(keys: str, instances: list[Instance]) -> None:
        for file, instance in zip(files, instances, strict=True):  # one at a time, as a rollout does
            file.write_text(keys)
            instance.stop()
            instance.restart()

    for file in files:
        file.write_text(old)
        file.chmod(0o600)
    with redis_server(tmp_path) as redis:
        store = f"{redis.url}?prefix=rolling"
        instances = [
            Instance(
                APP, free_port(), tmp_path / f"{n}.stderr", ("--state-key-file", str(f), "--store", store)
            )
            for n, f in zip("ab", files, strict=True)
        ]
        try:
            for instance in instances:
                instance.restart()
            a, b = instances
            async with httpx.AsyncClient(timeout=20) as http, httpx.AsyncClient(timeout=20) as browser:
                page = (await Modern(http, a.url).call("use_key", {"flow": "p"}))["result"]
                ((key, request),) = page["inputRequests"].items()
                form = (await Modern(http, a.url).call("survey", {"flow": "f"}))["result"]
                sealed_before = form["requestState"]

                async def answer(instance: Instance, field: str, value: Any) -> dict[str, Any]:
                    nonlocal form
                    reply = await Modern(http, instance.url).call(
                        "survey",
                        {"flow": "f"},
                        requestState=form["requestState"],
                        inputResponses={field: {"action": "accept", "content": {field: value}}},
                    )
                    assert "result" in reply, (reply, a.stderr(), b.stderr())
                    form = reply["result"]
                    return form

                roll_out(old + new, instances)  # step 1: the new key opens only
                await answer(b, "name", "Ada")
                roll_out(new + old, instances)  # step 2: the new key seals
                await answer(a, "guests", 2)
                page_url, csrf = await claim(browser, request["params"]["url"])
                await submit_secret(browser, page_url, csrf, "sk-across-the-rotation")
                done = await Modern(http, b.url).call(
                    "use_key",
                    {"flow": "p"},
                    requestState=page["requestState"],
                    inputResponses={key: {"action": "accept"}},
                )
                assert done["result"]["content"][0]["text"].startswith("p: key sha256 "), done
                for instance in (a, b):  # read once after step 2: sealed again under the new key
                    read = (await Modern(http, instance.url).call("use_key", {"flow": "r"}))["result"]
                    assert read["content"][0]["text"].startswith("r: key sha256 "), read
                roll_out(new, instances)  # step 3: the old key dropped
                assert (await answer(b, "seat", "terrace"))["content"][0]["text"] == "f: Ada, 2, terrace"
                for instance in (a, b):
                    read = (await Modern(http, instance.url).call("use_key", {"flow": "r"}))["result"]
                    assert read["content"][0]["text"].startswith("r: key sha256 "), read
                    stale = await Modern(http, instance.url).call(
                        "survey",
                        {"flow": "f"},
                        requestState=sealed_before,
                        inputResponses={"name": {"action": "accept", "content": {"name": "Ada"}}},
                    )
                    assert stale["error"] == {"code": -32602, "message": "Invalid or expired requestState"}
        finally:
            for instance in instances:
                instance.stop()
