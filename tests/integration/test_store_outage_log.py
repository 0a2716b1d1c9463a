"""Redis going away and coming back, as the operator reads it in the log: one
``mcp-elicit serve`` process with a Redis store, the Redis stopped, then started again on
the same port.

While Redis is down the instance warns that messages from other instances stopped and
that it retries; once Redis is back, the log must say so too, else the last word the
operator reads is that the instances are cut off from each other.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from integration.instances import APP, Instance, keygen

from support.procs import free_port
from support.redis import SKIP_REASON, RedisServer, redis_available, redis_server
from support.waiting import eventually

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
STOPPED = "messages from other instances stopped"


def start_redis_on(port: int, log_dir: Path) -> RedisServer:
    """A redis-server on ``port`` again (nothing persisted), once it answers PING."""
    binary = shutil.which("redis-server")
    assert binary is not None
    log_path = log_dir / "redis-again.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            cwd=log_dir,
        )
    return RedisServer(proc, port, log_path)


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[tuple[Instance, RedisServer, Path]]:
    if not redis_available():
        pytest.skip(SKIP_REASON)
    keys = keygen(tmp_path / "state.keys")
    with redis_server(tmp_path) as redis:
        server = Instance(
            APP,
            free_port(),
            tmp_path / "server.stderr",
            ("--state-key-file", str(keys), "--store", redis.url),
        )
        try:
            server.restart()
            yield server, redis, tmp_path
        finally:
            server.stop()


async def test_the_log_says_when_redis_is_back(stack: tuple[Instance, RedisServer, Path]) -> None:
    server, redis, tmp_path = stack
    port = redis.port
    redis.proc.terminate()
    redis.proc.wait(5)
    await eventually(lambda: STOPPED in server.stderr(), "the warning that Redis is gone")

    again = start_redis_on(port, tmp_path)
    try:
        await eventually(lambda: answers(again), "Redis answering again")
        mark = len(server.stderr())
        back = "messages from other instances heard again"
        # the relay retries after 1, 2, 4... s: well within 30 s of a short outage
        await eventually(lambda: back in server.stderr()[mark:], "a log line saying Redis is back")
        (line,) = [x for x in server.stderr()[mark:].splitlines() if back in x]
        assert f"redis://127.0.0.1:{port}/0" in line, line  # which store
    finally:
        again.proc.terminate()
        again.proc.wait(5)


def answers(redis: RedisServer) -> bool:
    try:
        return redis.command("PING").startswith(b"+PONG")
    except OSError:
        return False
