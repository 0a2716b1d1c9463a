"""``mcp-elicit serve --store`` on a Redis that refuses it (a password missing or wrong, a
``rediss://`` where no TLS listens): serve stops before answering anything, exit 2, with one
line naming the store and what to fix; the password never shows, and no traceback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cli.helpers import DEMO
from mcp_elicit.cli.main import main

from support.redis import SKIP_REASON, RedisServer, redis_available, redis_server

PASSWORD = "s3cret-Pw"


@pytest.fixture(scope="module")
def guarded_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    if not redis_available():
        pytest.skip(SKIP_REASON)
    with redis_server(tmp_path_factory.mktemp("redis-pw")) as redis:
        redis.command("CONFIG", "SET", "requirepass", PASSWORD)
        yield redis


@pytest.mark.parametrize(
    ("userinfo", "scheme", "says"),
    [
        ("", "redis", "the server wants a password: give it in the URL"),
        (":wrong-one@", "redis", "refused the user name or password given in the URL"),
        (f":{PASSWORD}@", "rediss", "is TLS on at that port?"),
    ],
)
def test_serve_on_a_redis_that_refuses_it_exits_2_naming_the_store_never_the_password(
    guarded_redis: RedisServer,
    userinfo: str,
    scheme: str,
    says: str,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    url = f"{scheme}://{userinfo}127.0.0.1:{guarded_redis.port}/0?socket_connect_timeout=2"
    assert main(["serve", str(DEMO), "--store", url]) == 2
    err = capsys.readouterr().err
    shown = f"{scheme}://{':***@' if userinfo else ''}127.0.0.1:{guarded_redis.port}/0"
    assert f"cannot serve: the URL-mode store {shown}" in err, err
    assert says in err, err
    assert PASSWORD not in err and "wrong-one" not in err and "Traceback" not in err, err


def test_serve_with_too_few_max_connections_for_its_subscriptions_says_to_raise_it(
    guarded_redis: RedisServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """A subscription holds a connection while it lasts, and serving needs one beside it:
    ``?max_connections=1`` is too few, and the message says so rather than redis-py's bare
    "No connection available."."""
    url = f"redis://:{PASSWORD}@127.0.0.1:{guarded_redis.port}/0?max_connections=1&socket_timeout=1"
    assert main(["serve", str(DEMO), "--store", url]) == 2
    err = capsys.readouterr().err
    assert "all max_connections=1 connections are in use" in err, err
    assert "each subscription holds one while it lasts" in err and "raise max_connections" in err, err
    assert PASSWORD not in err and "Traceback" not in err, err
