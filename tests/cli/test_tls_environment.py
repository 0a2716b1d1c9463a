"""The CA certificates named in the environment (``SSL_CERT_FILE``, else ``SSL_CERT_DIR``,
which httpx reads for every HTTP connection): a missing file or directory, or a file of no
certificates, or a directory of none OpenSSL can find (empty, or none named by its subject's
hash), is a configuration error (exit 2) naming the variable and the path, with what to do;
not a bare "FileNotFoundError" (exit 1) nor, for a directory, "nothing is listening"."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from cli.fake_http import fake_http
from cli.helpers import fake, run

TARGET = "https://127.0.0.1:9/mcp"  # never reached: the error comes first


def test_a_missing_ssl_cert_file_is_named(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    missing = tmp_path / "ca.pem"
    monkeypatch.setenv("SSL_CERT_FILE", str(missing))
    result = run(capsys, "check", TARGET)
    assert result.code == 2, result.err
    assert f"SSL_CERT_FILE names {str(missing)!r}" in result.err, result.err
    assert "does not exist" in result.err and "unset SSL_CERT_FILE" in result.err, result.err
    assert "FileNotFoundError" not in result.err


def test_a_file_of_no_certificates_is_named(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    garbage = tmp_path / "ca.pem"
    garbage.write_text("not a certificate\n")
    monkeypatch.setenv("SSL_CERT_FILE", str(garbage))
    result = run(capsys, "call", TARGET, "echo", "--ui", "none")
    assert result.code == 2, result.err
    assert f"SSL_CERT_FILE names {str(garbage)!r}" in result.err, result.err
    assert "PEM" in result.err, result.err


def test_a_missing_ssl_cert_dir_is_named(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    missing = tmp_path / "certs"
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.setenv("SSL_CERT_DIR", str(missing))
    result = run(capsys, "check", TARGET)
    assert result.code == 2, result.err
    assert f"SSL_CERT_DIR names {str(missing)!r}" in result.err, result.err
    assert "unset SSL_CERT_DIR" in result.err, result.err


def test_an_empty_ssl_cert_file_gives_way_to_ssl_cert_dir_as_in_httpx(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    missing = tmp_path / "certs"
    monkeypatch.setenv("SSL_CERT_FILE", "")
    monkeypatch.setenv("SSL_CERT_DIR", str(missing))
    result = run(capsys, "check", TARGET)
    assert result.code == 2, result.err
    assert f"SSL_CERT_DIR names {str(missing)!r}" in result.err, result.err


def test_a_stdio_target_is_not_held_to_them(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """No HTTP is spoken to a stdio server: what the variables name does not matter."""
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "ca.pem"))
    monkeypatch.setenv("SSL_CERT_DIR", str(tmp_path / "certs"))
    result = run(capsys, "check", "--", *fake("good", "modern"))
    assert result.code == 0, result.err
    assert "SSL_CERT" not in result.err, result.err


def test_an_ssl_cert_dir_of_no_certificates_is_named(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """An empty directory trusts nothing (httpx trusts it instead of certifi's): every
    HTTPS server would fail verification, which reads like the server's fault."""
    empty = tmp_path / "certs"
    empty.mkdir()
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.setenv("SSL_CERT_DIR", str(empty))
    result = run(capsys, "check", TARGET)
    assert result.code == 2, result.err
    assert f"SSL_CERT_DIR names {str(empty)!r}, which is empty" in result.err, result.err
    assert "unset SSL_CERT_DIR" in result.err, result.err


def test_an_ssl_cert_dir_of_files_openssl_cannot_find_is_named(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """OpenSSL looks a directory's certificates up by their subject's hash (``1a2b3c4d.0``):
    one of PEM files under other names holds none it can find, and the message says how to
    name them."""
    certs = tmp_path / "certs"
    certs.mkdir()
    (certs / "ca.pem").write_text("-----BEGIN CERTIFICATE-----\n")
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.setenv("SSL_CERT_DIR", str(certs))
    result = run(capsys, "call", TARGET, "echo", "--ui", "none")
    assert result.code == 2, result.err
    assert f"SSL_CERT_DIR names {str(certs)!r}, which holds no certificate" in result.err, result.err
    assert "openssl rehash" in result.err, result.err


def test_an_ssl_cert_dir_of_hashed_names_passes(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A directory laid out as OpenSSL reads it is not refused: the connection is tried
    (nothing listens on port 9: exit 3, not a word about SSL_CERT_DIR)."""
    certs = tmp_path / "certs"
    certs.mkdir()
    (certs / "1a2b3c4d.0").write_text("-----BEGIN CERTIFICATE-----\n")
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.setenv("SSL_CERT_DIR", str(certs))
    result = run(capsys, "check", TARGET)
    assert result.code == 3, result.err
    assert "SSL_CERT_DIR" not in result.err, result.err


def _hashed_dir(directory: Path, cert: Path) -> Path:
    """``directory`` laid out as ``openssl rehash`` lays it out: ``cert`` under its
    subject's hash."""
    done = subprocess.run(
        ["openssl", "x509", "-hash", "-noout", "-in", str(cert)], capture_output=True, text=True, check=True
    )
    directory.mkdir()
    (directory / f"{done.stdout.strip()}.0").symlink_to(cert)
    return directory


def test_an_ssl_cert_dir_listing_several_directories_is_read_as_openssl_reads_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """OpenSSL reads SSL_CERT_DIR as a list of directories (``os.pathsep`` between them),
    skipping one that is missing or holds none it can find: a real server over TLS whose
    CA is in the last of them is trusted, so the check lets the list pass."""
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    empty = tmp_path / "empty"
    empty.mkdir()
    with fake_http(tmp_path, tls=True) as base:
        hashed = _hashed_dir(tmp_path / "hashed", tmp_path / "cert.pem")
        for listed in (f"{empty}{os.pathsep}{hashed}", f"{tmp_path / 'missing'}{os.pathsep}{hashed}"):
            monkeypatch.setenv("SSL_CERT_DIR", listed)
            result = run(capsys, "check", f"{base}/bogus")
            assert result.code == 0, result.err
            assert "SSL_CERT_DIR" not in result.err, result.err
    monkeypatch.setenv("SSL_CERT_DIR", f"{empty}{os.pathsep}{tmp_path / 'missing'}")
    result = run(capsys, "check", TARGET)
    assert result.code == 2, result.err
    assert "SSL_CERT_DIR names" in result.err and "unset SSL_CERT_DIR" in result.err, result.err


def test_an_ssl_cert_dir_of_broken_links_is_named(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A directory whose hashed names are links to files that are not there (one copied
    without what its links point to, as /etc/ssl/certs into a container) holds no
    certificate OpenSSL can read: named, with the broken link."""
    certs = tmp_path / "certs"
    certs.mkdir()
    (certs / "1a2b3c4d.0").symlink_to(tmp_path / "gone" / "ca.pem")
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.setenv("SSL_CERT_DIR", str(certs))
    result = run(capsys, "check", TARGET)
    assert result.code == 2, result.err
    assert f"SSL_CERT_DIR names {str(certs)!r}" in result.err, result.err
    assert "1a2b3c4d.0" in result.err and "unset SSL_CERT_DIR" in result.err, result.err
