"""The CA certificates the environment names for HTTPS, checked before an HTTP TARGET is
connected to.

Rules: httpx reads ``SSL_CERT_FILE`` (a PEM file of CA certificates), else ``SSL_CERT_DIR``
(a directory of them), for every client it makes, HTTP or HTTPS. One that names a file or
directory that is not there, or a file holding no certificate, is a configuration error
(exit 2, as the command line's other configuration errors) that names the variable, the
path and what to do; not a bare "FileNotFoundError" when the client is made, nor, for a
directory (which OpenSSL reads only when it verifies), a failed verification that reads
like the server's fault.
"""

from __future__ import annotations

import os
import ssl

from mcp_elicit.errors import CliError

__all__ = ["check_tls_environment"]


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
        if os.path.isdir(path):
            return None
        return "which is not a directory" if os.path.exists(path) else "which does not exist"
    try:
        ssl.create_default_context(cafile=path)  # as httpx will
    except FileNotFoundError:
        return "which does not exist"
    except ssl.SSLError as exc:
        return f"which holds no CA certificate in PEM form ({exc.reason or exc})"
    except OSError as exc:
        return f"which cannot be read ({exc.strerror or exc})"
    return None
