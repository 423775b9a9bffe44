"""Java truststores for Spark's connector's options (``ssl.truststore.location``/``.password``/
``.type``): the trusted certificates of a JKS, PKCS#12 or PEM store, as DER for an SSLContext.

JKS is read by hand (its format is small and fixed: magic FEEDFEED, version 2, entries, then a
SHA-1 over the password and the store that proves the store was not altered); PKCS#12 through the
optional ``cryptography`` package. Errors name the option, never the password.
"""

from __future__ import annotations

import hashlib
import hmac
import struct

_JKS_MAGIC = 0xFEEDFEED
_PRIVATE_KEY, _TRUSTED_CERT = 1, 2


def trusted_certificates(path: str, password: str | None, store_type: str) -> list[bytes]:
    """DER certificates the store trusts (JKS: trusted-certificate entries and key entries' chains)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        raise ValueError("ssl.truststore.location: cannot read the file") from None
    kind = store_type.upper()
    if kind == "JKS":
        return _jks(data, password)
    if kind == "PKCS12":
        return _pkcs12(data, password)
    if kind == "PEM":
        import ssl

        blocks = data.decode("ascii", "replace").split("-----END CERTIFICATE-----")
        return [ssl.PEM_cert_to_DER_cert(b + "-----END CERTIFICATE-----") for b in blocks if "BEGIN CERTIFICATE" in b]
    raise ValueError("ssl.truststore.type: expected JKS, PKCS12 or PEM")


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise ValueError("ssl.truststore.location: the JKS store is truncated")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def int(self) -> int:
        value: int = struct.unpack(">i", self.take(4))[0]
        return value

    def utf(self) -> str:
        (n,) = struct.unpack(">H", self.take(2))
        return self.take(n).decode("utf-8", "replace")


def _jks(data: bytes, password: str | None) -> list[bytes]:
    r = _Reader(data)
    if r.int() & 0xFFFFFFFF != _JKS_MAGIC or r.int() != 2:
        raise ValueError("ssl.truststore.location: not a JKS store (try ssl.truststore.type=PKCS12)")
    certs: list[bytes] = []
    for _ in range(r.int()):
        tag = r.int()
        r.utf()  # alias
        r.take(8)  # creation date
        if tag == _PRIVATE_KEY:
            r.take(r.int())  # the encrypted key: a truststore needs only the chain
            chain = [_jks_cert(r) for _ in range(r.int())]
            certs.extend(chain[-1:])
        elif tag == _TRUSTED_CERT:
            certs.append(_jks_cert(r))
        else:
            raise ValueError("ssl.truststore.location: unknown JKS entry type")
    if password is not None:
        digest = hashlib.sha1(password.encode("utf-16-be") + b"Mighty Aphrodite" + data[: r.pos]).digest()
        if not hmac.compare_digest(digest, r.take(20)):
            raise ValueError("ssl.truststore.location: integrity check failed (wrong ssl.truststore.password?)")
    return certs


def _jks_cert(r: _Reader) -> bytes:
    if r.utf() != "X.509":
        raise ValueError("ssl.truststore.location: only X.509 certificates are supported")
    return r.take(r.int())


def _pkcs12(data: bytes, password: str | None) -> list[bytes]:
    try:
        from cryptography.hazmat.primitives.serialization import Encoding, pkcs12
    except ImportError:
        raise ValueError("ssl.truststore.location: reading PKCS#12 needs the 'cryptography' package") from None
    try:
        store = pkcs12.load_pkcs12(data, password.encode() if password else None)
    except ValueError:
        raise ValueError("ssl.truststore.location: cannot open the store (wrong ssl.truststore.password?)") from None
    certs = [c.certificate for c in store.additional_certs]
    if store.cert is not None:
        certs.append(store.cert.certificate)
    return [c.public_bytes(Encoding.DER) for c in certs]
