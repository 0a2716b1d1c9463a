"""Throwaway self-signed certificates for test servers speaking https: for 127.0.0.1
(``self_signed_127``) or for any names and addresses (``self_signed``)."""

from __future__ import annotations

import datetime as dt
import ipaddress


def self_signed_127() -> tuple[bytes, bytes]:
    """PEM certificate and PKCS#8 key, valid for an hour, naming 127.0.0.1 (common name and
    subject alternative name), its own CA: a client trusts it by loading the certificate."""
    return self_signed("127.0.0.1")


def self_signed(*hosts: str) -> tuple[bytes, bytes]:
    """PEM certificate and PKCS#8 key, valid for an hour, for ``hosts`` (the first its
    common name; each an address or a DNS name in its subject alternative names), its own
    CA: a client trusts it by loading the certificate."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    def alternative(host: str) -> x509.GeneralName:
        try:
            return x509.IPAddress(ipaddress.ip_address(host))
        except ValueError:
            return x509.DNSName(host)

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hosts[0])])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([alternative(h) for h in hosts]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    secret = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return cert.public_bytes(serialization.Encoding.PEM), secret
