"""Certificates made at test time (the `cryptography` package): a CA, and leaf certificates for the
cases TLS tests need (valid for 127.0.0.1/localhost, expired, for another host, self-signed,
a client certificate, an encrypted key), written as PEM and PKCS#12 files into a directory.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

KEY_PASSWORD = "key-pass"
STORE_PASSWORD = "store-pass"


@dataclass(frozen=True)
class Leaf:
    cert: Path  # PEM
    key: Path  # PEM, unencrypted
    encrypted_key: Path  # PEM, encrypted with KEY_PASSWORD
    pkcs12: Path  # key + cert (+ CA), encrypted with STORE_PASSWORD


@dataclass(frozen=True)
class Authority:
    cert: Path
    key: ec.EllipticCurvePrivateKey
    certificate: x509.Certificate


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def make_ca(directory: Path, name: str = "kafkawire-test-ca") -> Authority:
    key = _key()
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(name))
        .issuer_name(_name(name))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
        .sign(key, hashes.SHA256())
    )
    path = directory / f"{name}.pem"
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return Authority(path, key, cert)


def make_leaf(
    directory: Path,
    name: str,
    ca: Authority | None,
    *,
    hosts: tuple[str, ...] = ("localhost", "127.0.0.1"),
    expired: bool = False,
    client: bool = False,
) -> Leaf:
    """A leaf certificate signed by ``ca`` (self-signed when None) for ``hosts``."""
    key = _key()
    now = datetime.datetime.now(datetime.timezone.utc)
    start, end = (
        (now - datetime.timedelta(days=10), now - datetime.timedelta(days=1))
        if expired
        else (
            now - datetime.timedelta(days=1),
            now + datetime.timedelta(days=30),
        )
    )
    sans: list[x509.GeneralName] = []
    for host in hosts:
        try:
            sans.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            sans.append(x509.DNSName(host))
    usage = ExtendedKeyUsageOID.CLIENT_AUTH if client else ExtendedKeyUsageOID.SERVER_AUTH
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(name))
        .issuer_name(ca.certificate.subject if ca else _name(name))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    )
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    cert = builder.sign(ca.key if ca else key, hashes.SHA256())
    paths = Leaf(
        directory / f"{name}.pem",
        directory / f"{name}.key",
        directory / f"{name}.enc.key",
        directory / f"{name}.p12",
    )
    paths.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    plain = serialization.NoEncryption()
    encrypted = serialization.BestAvailableEncryption(KEY_PASSWORD.encode())
    fmt = serialization.PrivateFormat.PKCS8
    paths.key.write_bytes(key.private_bytes(serialization.Encoding.PEM, fmt, plain))
    paths.encrypted_key.write_bytes(key.private_bytes(serialization.Encoding.PEM, fmt, encrypted))
    paths.pkcs12.write_bytes(
        pkcs12.serialize_key_and_certificates(
            name.encode(),
            key,
            cert,
            [ca.certificate] if ca else None,
            serialization.BestAvailableEncryption(STORE_PASSWORD.encode()),
        )
    )
    return paths
