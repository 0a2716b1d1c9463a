"""The CA certificates the environment names for HTTPS, checked before an HTTP TARGET is
connected to.

Rules: httpx reads ``SSL_CERT_FILE`` (a PEM file of CA certificates), else ``SSL_CERT_DIR``
(a directory of them), for every client it makes, HTTP or HTTPS. One that names a file or
directory that is not there, a file holding no certificate, or a directory holding none
OpenSSL can find (empty, no file named by a subject's hash, ``1a2b3c4d.0``, as OpenSSL
looks them up, or only links by such names to files that are not there: it trusts nothing
else, so every server would fail verification) is a configuration error;
``SSL_CERT_DIR`` may list several directories (``os.pathsep`` between them, as OpenSSL
reads it), and is one when none of them will do
(exit 2, as the command line's other configuration errors) that names the variable, the
path and what to do; not a bare "FileNotFoundError" when the client is made, nor, for a
directory (which OpenSSL reads only when it verifies), a failed verification that reads
like the server's fault.
"""

from __future__ import annotations

import os
import re
import ssl

from mcp_elicit.errors import CliError

__all__ = ["check_tls_environment"]

#: A certificate's name in a directory as OpenSSL reads one: its subject's hash, a dot, a number.
_HASHED = re.compile(r"[0-9a-f]{8}\.[0-9]+\Z")


def check_tls_environment() -> None:
    """A ``CliError`` (exit 2) for ``SSL_CERT_FILE`` or ``SSL_CERT_DIR``, as httpx reads
    them, naming what cannot be read; nothing when they are unset or fine."""
    name = "SSL_CERT_FILE" if os.environ.get("SSL_CERT_FILE") else "SSL_CERT_DIR"
    path = os.environ.get(name)
    if not path:
        return
    problem = _problem(name, path)
    if problem is None:
        return
    kind = "a PEM file" if name == "SSL_CERT_FILE" else "a directory"
    raise CliError(
        f"{name} names {path!r}, {problem}. It says which CA certificates HTTPS connections "
        f"trust ({kind} of them): point it at {kind} that holds them, or unset {name} to trust "
        "the default ones (certifi's)",
        exit_code=2,
    )


def _problem(name: str, path: str) -> str | None:
    """What is wrong with the file or directory, or None."""
    if name == "SSL_CERT_DIR":
        return _dirs_problem(path)
    try:
        ssl.create_default_context(cafile=path)  # as httpx will
    except FileNotFoundError:
        return "which does not exist"
    except ssl.SSLError as exc:
        return f"which holds no CA certificate in PEM form ({exc.reason or exc})"
    except OSError as exc:
        return f"which cannot be read ({exc.strerror or exc})"
    return None


def _dirs_problem(path: str) -> str | None:
    """What is wrong with ``SSL_CERT_DIR``, or None. OpenSSL reads it as a list of
    directories (``os.pathsep`` between them) and skips one it finds nothing in, so the
    list is wrong only when every one of them is."""
    dirs = [part for part in path.split(os.pathsep) if part]
    problems = [_dir_problem(part) for part in dirs]
    if not dirs or None in problems:
        return None if dirs else "which names no directory"
    if len(dirs) == 1:
        return problems[0]
    each = "; ".join(f"{part!r}: {problem}" for part, problem in zip(dirs, problems, strict=True))
    return f"a list of directories ('{os.pathsep}' between them) of which none will do ({each})"


def _dir_problem(path: str) -> str | None:
    """What is wrong with one directory of ``SSL_CERT_DIR``, or None."""
    if not os.path.isdir(path):
        return "which is not a directory" if os.path.exists(path) else "which does not exist"
    try:
        names = os.listdir(path)
    except OSError as exc:
        return f"which cannot be read ({exc.strerror or exc})"
    if not names:
        return "which is empty, so no server's certificate would be trusted"
    hashed = sorted(entry for entry in names if _HASHED.match(entry))
    if not hashed:
        return (
            "which holds no certificate OpenSSL can find: it looks each up by its subject's "
            "hash, in a file named like 1a2b3c4d.0, and none is named so ('openssl rehash "
            "DIR' names them)"
        )
    if not any(os.path.isfile(os.path.join(path, entry)) for entry in hashed):
        return (
            f"whose certificates named by their hash ({hashed[0]}"
            f"{f' and {len(hashed) - 1} more' if len(hashed) > 1 else ''}) lead to no file "
            "(links to files that are not there, or directories), so OpenSSL reads none (copy "
            "in the files the links point to, or 'openssl rehash DIR' once the certificates are in it)"
        )
    return None
