"""``open_store(url)`` picks the backend a configuration URL names, or says clearly why it
cannot; ``default_store_url()`` is a SQLite file in the user's data directory on Linux,
macOS and Windows. Nothing here touches a server or creates a file."""

from __future__ import annotations

import re
import sys
from pathlib import Path, PurePosixPath, PureWindowsPath

import pytest

from mcp_elicit.errors import ConfigError
from mcp_elicit.stores import (
    MemoryStore,
    RedisStore,
    SqliteStore,
    Store,
    default_data_dir,
    default_store_url,
    open_store,
)
from mcp_elicit.stores.redis import redact_url

pytestmark = pytest.mark.anyio


def entries(directory: Path) -> list[Path]:
    return list(directory.iterdir())


async def opened(url: str) -> Store:
    store = open_store(url)
    await store.close()
    return store


@pytest.mark.parametrize("url", ["memory://", "memory:", "MEMORY://", "  memory://\n"])
async def test_memory(url: str) -> None:
    assert isinstance(await opened(url), MemoryStore)


async def test_sqlite_absolute_relative_encoded_and_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    cases = {
        f"sqlite://{tmp_path}/a/state.db": tmp_path / "a" / "state.db",
        "sqlite://state.db": tmp_path / "state.db",
        "sqlite://sub/dir/state.db": tmp_path / "sub" / "dir" / "state.db",
        f"sqlite://{tmp_path}/with%20space/st%C3%A4te.db": tmp_path / "with space" / "st\u00e4te.db",
        "sqlite://~/x.db": tmp_path / "home" / "x.db",
        f"SQLite://{tmp_path}/upper.db": tmp_path / "upper.db",
    }
    for url, path in cases.items():
        store = await opened(url)
        assert isinstance(store, SqliteStore), url
        assert store.path == path, url
    assert entries(tmp_path) == [], "opening creates nothing"


@pytest.mark.parametrize(
    "url",
    [
        "sqlite:",
        "sqlite://",
        "sqlite:///",
        "sqlite:state.db",
        "sqlite:/state.db",
        "sqlite:///tmp/state.db?mode=ro",
        "sqlite:///tmp/state.db#x",
        "sqlite:///tmp/dir/",
        "sqlite:///tmp/nul%00.db",
    ],
)
def test_bad_sqlite_urls(url: str) -> None:
    with pytest.raises(ConfigError, match="store URL"):
        open_store(url)


@pytest.mark.parametrize("url", ["sqlite://:memory:", "sqlite://%3Amemory%3A", " SQLITE://:memory: "])
def test_sqlite_memory_is_refused_naming_what_to_use(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite's ``:memory:`` name would become a file called ``:memory:`` here."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=r":memory:.*memory://.*sqlite:///path/to/state\.db") as caught:
        open_store(url)
    assert "store URL" in str(caught.value)
    with pytest.raises(ConfigError, match=r":memory:.*memory://"):
        SqliteStore(":memory:")
    assert entries(tmp_path) == []


async def test_redis_urls() -> None:
    store = await opened("redis://127.0.0.1:6379/2")
    assert isinstance(store, RedisStore) and store.prefix == "mcp-elicit"
    store = await opened("REDIS://cache.internal?prefix=app.one")
    assert isinstance(store, RedisStore) and store.prefix == "app.one"
    store = await opened("rediss://user:pw@cache.example:6380/0?socket_timeout=2&prefix=x")
    assert isinstance(store, RedisStore) and store.prefix == "x"
    assert "pw" not in store.url


@pytest.mark.parametrize(
    ("url", "match"),
    [
        ("redis://", "no host"),
        ("redis:///0", "no host"),
        ("redis://h:notaport/0", "the port is not a number"),
        ("redis://h:99999/0", "out of range"),
        ("redis://h:65536/0", "out of range"),
        ("redis://h:0/0", r"port 0: no server listens there \(leave the port out for 6379\)"),
        ("rediss://u:pw@[::1]:00/0", "port 0"),
        ("redis://h:6379/zero", "database number"),
        ("redis://h:6379/0/1", "database number"),
        ("redis://h:6379/0#frag", "fragment"),
        ("redis://h:6379/0?colour=blue", "unknown option 'colour'"),
        ("redis://h:6379/0?prefix=a:b", "prefix"),
        ("redis://h:6379/0?prefix=", "prefix"),
        ("redis://h:6379/0?socket_timeout=soon", "socket_timeout"),
    ],
)
def test_bad_redis_urls(url: str, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        open_store(url)


@pytest.mark.parametrize(
    "url",
    [
        "redis://admin:s3cret@h:notaport/0",
        "redis://:s3cret@h/0?colour=blue",
        "redis://u:s3cret@h/x",
        "redis://s3cret@h/x",
        "redis://u:s3cret@[::1/0",
        "redis://u:s3c@ret@h/x",
        "rediz://u:s3cret@h/0",
    ],
)
def test_errors_never_show_the_password(url: str) -> None:
    with pytest.raises(ConfigError) as caught:
        open_store(url)
    assert "s3cret" not in str(caught.value)
    assert "***" in str(caught.value)


@pytest.mark.parametrize("url", ["", "   ", "state.db", "/var/lib/state.db", "postgres://db/x", "file:///x"])
def test_unknown_schemes(url: str) -> None:
    with pytest.raises(ConfigError, match=r"expected memory://, sqlite:///path"):
        open_store(url)


def test_not_a_string() -> None:
    with pytest.raises(ConfigError, match="string"):
        open_store(None)  # type: ignore[arg-type]


def test_without_the_redis_package_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "redis", None)
    monkeypatch.setitem(sys.modules, "redis.asyncio", None)
    with pytest.raises(ConfigError, match=r"mcp-elicit\[redis\]"):
        open_store("redis://127.0.0.1:6379/0")
    assert isinstance(open_store("memory://"), MemoryStore), "the other stores need no redis"


# ---- the default location -------------------------------------------------------------------


def test_linux_uses_xdg_data_home_when_absolute() -> None:
    env = {"HOME": "/home/ann", "XDG_DATA_HOME": "/data/ann"}
    assert default_store_url(platform="linux", environ=env) == "sqlite:///data/ann/mcp-elicit/state.db"
    env["XDG_DATA_HOME"] = "relative/ignored"
    assert (
        default_store_url(platform="linux", environ=env)
        == "sqlite:///home/ann/.local/share/mcp-elicit/state.db"
    )
    del env["XDG_DATA_HOME"]
    assert (
        default_store_url(platform="linux", environ=env)
        == "sqlite:///home/ann/.local/share/mcp-elicit/state.db"
    )
    assert default_data_dir(platform="freebsd14", environ=env) == PurePosixPath(
        "/home/ann/.local/share/mcp-elicit"
    )


def test_macos_uses_application_support() -> None:
    url = default_store_url(platform="darwin", environ={"HOME": "/Users/ann"})
    assert url == "sqlite:///Users/ann/Library/Application%20Support/mcp-elicit/state.db"


def test_windows_uses_localappdata() -> None:
    env = {"LOCALAPPDATA": r"C:\Users\ann\AppData\Local", "USERPROFILE": r"C:\Users\ann"}
    assert (
        default_store_url(platform="win32", environ=env)
        == "sqlite:///C:/Users/ann/AppData/Local/mcp-elicit/state.db"
    )
    del env["LOCALAPPDATA"]
    assert default_data_dir(platform="win32", environ=env) == PureWindowsPath(
        r"C:\Users\ann\AppData\Local\mcp-elicit"
    )


async def test_the_default_url_opens_the_sqlite_file_it_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "my data"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    url = default_store_url()
    store = await opened(url)
    assert isinstance(store, SqliteStore)
    if sys.platform.startswith("linux"):
        assert store.path == tmp_path / "my data" / "mcp-elicit" / "state.db"
    assert not (tmp_path / "my data").exists(), "nothing is created before the first call"


@pytest.mark.parametrize(
    "url",
    [
        "redis://admin:Xq#s3cret@h:6379/0",
        "redis://admin:Xq/s3cret@h:6379/0",
        "redis://admin:Xq?s3cret@h:6379/0",
        "redis://:Xq/s3cret@h/0",
        "redis://admin:12/s3cret@h/0",
        "redis://admin:12#s3cret@h/0",
        "redis://h:6379/0?password=s3cret",
        "redis://h:6379/0?username=admin&password=s3cret&prefix=a:b",
    ],
)
def test_a_password_that_was_not_percent_encoded_never_shows(url: str) -> None:
    """A password holding '/', '?' or '#' cuts the URL's host part short; one in the query
    is an option the store refuses. Either way the error names the URL, password hidden,
    and says what to do."""
    with pytest.raises(ConfigError) as caught:
        open_store(url)
    message = str(caught.value)
    assert "s3cret" not in message and "Xq" not in message
    assert "***" in message
    if "password=" not in url:
        assert "percent-encode" in message


def test_shown_urls_hide_every_password() -> None:
    assert redact_url("redis://admin:Xq#s3cret@h:6379/0") == "redis://admin:***@h:6379/0"
    assert redact_url("redis://:p/s3cret@h/0") == "redis://:***@h/0"
    assert redact_url("redis://h/0?password=s3cret&prefix=x") == "redis://h/0?password=***&prefix=x"
    assert redact_url("redis://u:s3cret@h/0?prefix=x") == "redis://u:***@h/0?prefix=x"
    assert redact_url("redis://h:6379/0?prefix=x") == "redis://h:6379/0?prefix=x"
    valid = RedisStore("rediss://u:p@s3cret@h:6379/0?ssl_ca_certs=/etc/ca@2/ca.pem")
    assert valid.url == "rediss://u:***@h:6379/0?ssl_ca_certs=/etc/ca@2/ca.pem"


@pytest.mark.parametrize(
    "url",
    [
        "re\tdis://me:s3cret@h/0",  # a tab in the scheme
        "REDIS ://me:s3cret@h/0",
        "redis\u00a0://me:s3cret@h/0",  # a no-break space
        "redis//me:s3cret@h/0",  # the colon left out
        "redis:me s3cret@h/0",
        "redis://me:s3 cret@h:99999/0",  # a space in the password, refused for its port
        'redis://me:s3"cret@h:99999/0',
    ],
)
def test_a_mistyped_store_url_is_refused_without_its_password(url: str) -> None:
    """A store URL the program cannot read (its scheme mistyped, its colon left out) is
    quoted in the refusal with its password hidden all the same: up to the last '@'."""
    with pytest.raises(ConfigError) as caught:
        open_store(url)
    assert "s3" not in str(caught.value) and "cret" not in str(caught.value), str(caught.value)
    assert "***@h" in str(caught.value)


def test_a_sqlite_path_with_an_at_sign_is_shown_whole() -> None:
    """A SQLite URL has no user or password: an '@' in its path (a home directory named
    after an e-mail address) is part of the file name, never hidden."""
    for url, path in [
        ("sqlite:///home/ann@example.org/dir/", "/home/ann@example.org/dir/"),
        ("sqlite://ann@example.org/dir/", "ann@example.org/dir/"),
    ]:
        assert redact_url(url) == url
        with pytest.raises(ConfigError, match="no database file") as caught:
            open_store(url)
        assert path in str(caught.value)


@pytest.mark.parametrize(
    ("url", "shown", "opens"),
    [
        ("sqlite://user:s3cret@host/state.db", "sqlite://user:***@host/state.db", None),
        ("sqlite://:s3cret@host/state.db", "sqlite://:***@host/state.db", None),
        ("sqlite://host/state.db?password=s3cret", "sqlite://host/state.db?password=***", None),
        ("memory://user:s3cret@host", "memory://user:***@host", None),
        ("memory://s3cret@host", "memory://***@host", None),
        ("MEMORY://user:Xq#s3cret@host", "MEMORY://user:***@host", None),
        ("postgres://user:s3cret@host/db", "postgres://user:***@host/db", None),
        ("redis://user:p@s3cret@h:6379/0", "redis://user:***@h:6379/0", RedisStore),
    ],
)
async def test_credentials_are_hidden_whatever_the_scheme(
    url: str, shown: str, opens: type[Store] | None
) -> None:
    """A user name and password (or a password option) mean a secret in any URL: a
    SQLite or memory URL given one (copied from another database's) is refused, and shown,
    in the error and in the 'keeps its state in' log line, with the password hidden."""
    assert redact_url(url) == shown
    if opens is None:
        with pytest.raises(ConfigError) as caught:
            open_store(url)
        assert shown in str(caught.value) and "s3cret" not in str(caught.value)
    else:  # taken: opened lazily, so nothing is created
        assert isinstance(await opened(url), opens)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("sqlite://user:s3cret@host/state.db", "sqlite://user:***@host/state.db"),
        ("sqlite://:s3cret@host/state.db", "sqlite://:***@host/state.db"),
        ("sqlite://user:s3cret@host", "sqlite://user:***@host"),
        ("SQLITE://user:s3cret@host:5432/state.db", "SQLITE://user:***@host:5432/state.db"),
        ("sqlite://user:Xq/s3cret@host/state.db", "sqlite://user:***@host/state.db"),
    ],
)
def test_a_sqlite_url_with_a_password_is_refused_naming_the_accepted_forms(
    url: str, shown: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A SQLite URL names a file: it has no user, password or host. One given them (copied
    from a server database's URL) was a relative file name holding the password, which the
    store's repr, its errors and the file system then showed. It is refused, the password
    hidden, saying which forms are taken and how to name a file that holds ':' and '@'."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as caught:
        open_store(url)
    message = str(caught.value)
    assert shown in message and "s3cret" not in message and "Xq" not in message
    assert "no user name, password or host" in message
    assert "sqlite:///absolute/path/state.db" in message and "sqlite://relative/path/state.db" in message
    assert "%3A" in message and "%40" in message
    assert entries(tmp_path) == []


async def test_a_sqlite_file_name_with_colon_and_at_is_reached_percent_encoded(tmp_path: Path) -> None:
    store = await opened(f"sqlite://{tmp_path}/a%3Ab%40c/state.db")
    assert isinstance(store, SqliteStore) and store.path == tmp_path / "a:b@c" / "state.db"
    store = await opened("sqlite://C:/Users/ann@example.org/state.db")
    assert isinstance(store, SqliteStore), "a Windows drive is no password"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("memory:u:s3cret@h", "memory:u:***@h"),
        ("memory:s3cret@h", "memory:***@h"),
        ("memory:/u:s3cret@h", "memory:/u:***@h"),
        ("sqlite:user:s3cret@host/state.db", "sqlite:user:***@host/state.db"),
        ("sqlite:/user:s3cret@host/state.db", "sqlite:/user:***@host/state.db"),
        ("redis:u:s3cret@h", "redis:u:***@h"),
        ("redis:/u:s3cret@h/0", "redis:/u:***@h/0"),
        ("rediss:s3cret@h:6380", "rediss:***@h:6380"),
    ],
)
def test_a_url_without_its_slashes_never_shows_the_password(url: str, shown: str) -> None:
    """``scheme:user:password@host``, the ``//`` forgotten, is no URL a store takes; the
    refusal quotes it, the password hidden as in ``scheme://user:password@host``."""
    assert redact_url(url) == shown
    with pytest.raises(ConfigError) as caught:
        open_store(url)
    assert shown in str(caught.value) and "s3cret" not in str(caught.value)


@pytest.mark.parametrize("url", ["memory:", "memory://", "memory:///", "Memory://"])
async def test_memory_urls_taken(url: str) -> None:
    assert isinstance(await opened(url), MemoryStore)


@pytest.mark.parametrize(
    "url", ["memory:/", "memory:x", "memory://host", "memory://?size=1", "memory:////", "memory://#x"]
)
def test_memory_urls_refused_naming_the_forms_taken(url: str) -> None:
    with pytest.raises(ConfigError, match=r"takes no host, path or options \(memory:// or memory:\)"):
        open_store(url)


def test_a_windows_path_is_no_url_with_a_password() -> None:
    """A drive letter is not a scheme: a path given where a URL goes is refused whole."""
    assert redact_url("C:/Users/ann@example.org/state.db") == "C:/Users/ann@example.org/state.db"
    with pytest.raises(ConfigError, match=r"'C:/Users/ann@example.org/state.db': expected memory://"):
        open_store("C:/Users/ann@example.org/state.db")


@pytest.mark.parametrize(
    ("option", "says"),
    [
        ("socket_timeout=0", "socket_timeout is seconds, a number above 0 (as in socket_timeout=10)"),
        ("socket_timeout=-1", "socket_timeout is seconds, a number above 0"),
        ("socket_timeout=nan", "socket_timeout is seconds, a number above 0"),
        ("socket_timeout=inf", "socket_timeout is seconds, a number above 0"),
        ("socket_timeout=soon", "socket_timeout is seconds, a number above 0"),
        ("socket_timeout=", "socket_timeout is seconds, a number above 0"),
        ("socket_connect_timeout=inf", "socket_connect_timeout is seconds, a number above 0"),
        ("socket_connect_timeout=1e999", "socket_connect_timeout is seconds, a number above 0"),
        ("health_check_interval=-5", "health_check_interval is whole seconds above 0 (as in"),
        ("health_check_interval=0", "health_check_interval is whole seconds above 0"),
        ("health_check_interval=1.5", "health_check_interval is whole seconds above 0"),
        ("max_connections=0", "max_connections is a whole number above 0 (as in max_connections=20)"),
        ("max_connections=", "max_connections is a whole number above 0"),
    ],
)
def test_an_option_redis_py_would_misread_is_refused_when_configured(option: str, says: str) -> None:
    """0, a negative number, nan or inf was taken: every call then timed out at once ('Timeout
    reading from ...'), waited for ever, or failed with a reply no one could act on; a
    ``max_connections`` of 0 or nothing was a cap of 100, or none at all."""
    with pytest.raises(ConfigError, match=re.escape(f"Redis URL 'redis://u:***@h:6379/0?{option}': {says}")):
        open_store(f"redis://u:s3cret@h:6379/0?{option}")


async def test_timeouts_in_seconds_are_taken() -> None:
    url = "redis://h/0?socket_timeout=0.5&socket_connect_timeout=2&health_check_interval=30"
    assert isinstance(await opened(url), RedisStore)


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("redis://h/0?ssl_cert_reqs=required", "ssl_cert_reqs is for TLS: use rediss://"),
        ("redis://h/0?ssl_ca_certs=/etc/ca.pem", "ssl_ca_certs is for TLS: use rediss://"),
        ("redis://h/0?ssl_check_hostname=true", "ssl_check_hostname is for TLS: use rediss://"),
        ("rediss://h/0?ssl_cert_reqs=bogus", "ssl_cert_reqs is none, optional or required"),
        ("rediss://h/0?ssl_cert_reqs=REQUIRED", "ssl_cert_reqs is none, optional or required"),
        ("rediss://h/0?ssl_check_hostname=maybe", "ssl_check_hostname is true or false"),
        ("rediss://h/0?ssl_ca_certs=", "ssl_ca_certs is the path of a file of CA certificates"),
    ],
)
def test_tls_options_are_refused_without_tls_or_with_a_value_tls_has_no_use_for(url: str, says: str) -> None:
    """They were taken: on redis:// every call then failed as if the server were not Redis
    (redis-py's plain connection has no such argument); a bad ssl_cert_reqs failed every
    call asking whether TLS was on; ssl_check_hostname=maybe meant true."""
    with pytest.raises(ConfigError, match=re.escape(f"Redis URL {url!r}: {says}")):
        open_store(url)


async def test_tls_options_taken() -> None:
    for value in ("none", "optional", "required"):
        assert isinstance(await opened(f"rediss://h/0?ssl_cert_reqs={value}"), RedisStore)
    for value in ("true", "False", "yes", "no", "1", "0"):
        assert isinstance(await opened(f"rediss://h/0?ssl_check_hostname={value}"), RedisStore)
    assert isinstance(await opened("rediss://h/0?ssl_ca_certs=/etc/ca%40x/ca.pem"), RedisStore)


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("redis://h/0?prefix=a&prefix=b", "prefix is given twice"),
        ("redis://h/0?socket_timeout=1&socket_timeout=5", "socket_timeout is given twice"),
        ("redis://h/0?db=3", "the database is given twice, as the path /0 and as db=: give one"),
        ("redis://h/1?db=1", "the database is given twice"),
    ],
)
def test_an_option_given_twice_is_refused(url: str, says: str) -> None:
    """Two values for one setting were taken, silently: the last prefix but the first
    socket_timeout, and db= over the path's database, which the store's URL still showed."""
    with pytest.raises(ConfigError, match=re.escape(f"Redis URL {url!r}: {says}")):
        open_store(url)


async def test_the_database_may_be_given_as_an_option(redis_url: str) -> None:
    base = redis_url.rsplit("/", 1)[0]
    writer, reader = open_store(f"{base}?db=3&prefix=dbopt"), open_store(f"{base}/3?prefix=dbopt")
    try:
        await writer.put("ns", "k", b"v")
        assert await reader.get("ns", "k") == b"v"
        await reader.delete("ns", "k")
    finally:
        await writer.close()
        await reader.close()


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://[::1/0", "redis://[::1/0"),
        ("redis://::1]:6379/0", "redis://::1]:6379/0"),
        ("redis://u:Xq[s3cret@h/0", "redis://u:***@h/0"),
        ("rediss://u:Xq]s3cret@h:6380/0", "rediss://u:***@h:6380/0"),
    ],
)
def test_a_stray_bracket_says_how_ipv6_hosts_and_passwords_are_written(url: str, shown: str) -> None:
    """Python's 'Invalid IPv6 URL' was all the error said, also for a '[' in a password."""
    with pytest.raises(ConfigError) as caught:
        open_store(url)
    assert str(caught.value) == (
        f"Redis URL {shown!r}: a '[' or ']' out of place: an IPv6 host is written in brackets, "
        "as in redis://[::1]:6379/0, and a '[' or ']' in a user name or password percent-encoded "
        "(%5B, %5D)"
    )


async def test_ipv6_hosts_are_taken(redis_url: str) -> None:
    """A bracketed IPv6 host reaches the real server (IPv4-mapped: it listens on 127.0.0.1)."""
    port = redis_url.rsplit(":", 1)[1].split("/")[0]
    store = open_store(f"redis://[::ffff:127.0.0.1]:{port}/0?prefix=v6")
    try:
        await store.put("ns", "k", b"v")
        assert await store.take("ns", "k") == b"v"
    finally:
        await store.close()
