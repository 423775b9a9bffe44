"""The SSLContext of a TLS connection, built from librdkafka's ``ssl.*`` options: trust (CA file,
directory, PEM, the system's and Windows-style stores), identity (certificate and key files, PEM
strings, PKCS#12 keystores), cipher suites and CRLs. A wrong option is a ValueError naming it, never
showing a key or a password. io/tls.py runs the session over TCP with this context."""

from __future__ import annotations

import contextlib
import os
import ssl
import tempfile
from collections.abc import Iterator, Mapping
from typing import Any

from ..base.config import TLS_VERSIONS
from .truststore import trusted_certificates


def tls_context(conf: Mapping[str, Any]) -> ssl.SSLContext:
    """An SSLContext from the parsed ``ssl.*`` options; ValueError names the option that is wrong."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    _versions(ctx, conf)
    verify = conf.get("enable.ssl.certificate.verification", True)
    ctx.check_hostname = verify and conf.get("ssl.endpoint.identification.algorithm", "https") == "https"
    ctx.verify_mode = ssl.CERT_REQUIRED if verify else ssl.CERT_NONE
    _trust(ctx, conf)
    _identity(ctx, conf)
    if conf.get("ssl.cipher.suites"):
        try:
            ctx.set_ciphers(conf["ssl.cipher.suites"])
        except ssl.SSLError:
            raise ValueError("ssl.cipher.suites: no cipher matches the list") from None
    if conf.get("ssl.crl.location"):
        _load(ctx.load_verify_locations, "ssl.crl.location", cafile=conf["ssl.crl.location"])
        ctx.verify_flags |= ssl.VERIFY_CRL_CHECK_LEAF
    return ctx


def _versions(ctx: ssl.SSLContext, conf: Mapping[str, Any]) -> None:
    """TLS 1.2 and up, or the Java client's ``ssl.enabled.protocols`` (the oldest to the newest
    listed) capped by its ``ssl.protocol`` (no version newer than it; "TLS": no cap)."""
    enabled, cap = conf.get("ssl.enabled.protocols") or [], conf.get("ssl.protocol")
    if not enabled and cap in (None, "TLS"):
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        return
    rank = {name: i for i, name in enumerate(TLS_VERSIONS)}
    allowed = sorted({rank[v] for v in enabled or ("TLSv1.2", "TLSv1.3")})
    if cap not in (None, "TLS"):
        allowed = [i for i in allowed if i <= rank[cap]] or ([rank[cap]] if not enabled else [])
    if not allowed:
        raise ValueError(f"ssl.enabled.protocols: none of {', '.join(enabled)} is allowed by ssl.protocol {cap}")
    ctx.minimum_version = _PYTHON_TLS[allowed[0]]
    ctx.maximum_version = _PYTHON_TLS[allowed[-1]]


_PYTHON_TLS = (ssl.TLSVersion.TLSv1, ssl.TLSVersion.TLSv1_1, ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3)


def _trust(ctx: ssl.SSLContext, conf: Mapping[str, Any]) -> None:
    location, pem = conf.get("ssl.ca.location"), conf.get("ssl.ca.pem")
    if location:
        if os.path.isdir(location):
            _load(ctx.load_verify_locations, "ssl.ca.location", capath=location)
        else:
            _load(ctx.load_verify_locations, "ssl.ca.location", cafile=location)
    if pem:
        _load(ctx.load_verify_locations, "ssl.ca.pem", cadata=pem)
    store = conf.get("ssl.truststore.location")
    if store:  # Java's options, as Spark's connector users write them
        certs = trusted_certificates(
            store, conf.get("ssl.truststore.password"), conf.get("ssl.truststore.type") or "JKS"
        )
        if not certs:
            raise ValueError("ssl.truststore.location: the store trusts no certificate")
        for der in certs:
            _load(ctx.load_verify_locations, "ssl.truststore.location", cadata=der)
    if not location and not pem and not store:
        ctx.load_default_certs()


def _identity(ctx: ssl.SSLContext, conf: Mapping[str, Any]) -> None:
    """The client certificate for mutual TLS: PEM files or strings, or a PKCS#12 keystore."""
    password = conf.get("ssl.key.password")
    if conf.get("ssl.keystore.location"):
        chain, private_key = _read_keystore(conf["ssl.keystore.location"], conf.get("ssl.keystore.password"))
        with _pem_file(chain) as cert_file, _pem_file(private_key) as key_file:
            _load(ctx.load_cert_chain, "ssl.keystore.location", cert_file, key_file, _key_password(None))
        return
    cert = conf.get("ssl.certificate.location")
    key = conf.get("ssl.key.location")
    cert_pem, key_pem = conf.get("ssl.certificate.pem"), conf.get("ssl.key.pem")
    if not (cert or cert_pem) and not (key or key_pem):
        return
    if not (cert or cert_pem) or not (key or key_pem):
        raise ValueError("ssl.certificate.location/.pem and ssl.key.location/.pem must be set together")
    with contextlib.ExitStack() as stack:
        cert_file = cert or stack.enter_context(_pem_file((cert_pem or "").encode()))
        key_file = key or stack.enter_context(_pem_file((key_pem or "").encode()))
        option = "ssl.key.location" if key else "ssl.key.pem"
        _load(ctx.load_cert_chain, option, cert_file, key_file, _key_password(password))


def _key_password(password: str | None) -> Any:
    """Always a callable: without one, OpenSSL would prompt on the terminal for an encrypted key."""

    def give() -> str:
        if password is None:
            raise _NeedsPassword
        return password

    return give


class _NeedsPassword(Exception):
    pass


def _load(fn: Any, option: str, *args: Any, **kwargs: Any) -> None:
    try:
        fn(*args, **kwargs)
    except _NeedsPassword:
        raise ValueError(f"{option}: the key is encrypted and ssl.key.password is not set") from None
    except FileNotFoundError:
        raise ValueError(f"{option}: no such file") from None
    except PermissionError:
        raise ValueError(f"{option}: cannot read the file (permission denied)") from None
    except ssl.SSLError as exc:
        if option in ("ssl.key.location", "ssl.key.pem") and _encrypted(args[1]):
            raise ValueError(f"{option}: cannot decrypt the key (wrong ssl.key.password?)") from None
        raise ValueError(f"{option}: not a usable certificate or key ({exc.reason or 'invalid PEM'})") from None
    except (OSError, ValueError):
        raise ValueError(f"{option}: not a usable certificate or key") from None


def _encrypted(key_file: str) -> bool:
    try:
        with open(key_file, "rb") as f:
            return b"ENCRYPTED" in f.read(4096)
    except OSError:
        return False


def _read_keystore(path: str, password: str | None) -> tuple[bytes, bytes]:
    try:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.serialization import pkcs12
    except ImportError:
        raise ValueError("ssl.keystore.location: reading PKCS#12 needs the 'cryptography' package") from None
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        raise ValueError("ssl.keystore.location: cannot read the file") from None
    try:
        key, cert, extra = pkcs12.load_key_and_certificates(data, password.encode() if password else None)
    except ValueError:
        raise ValueError("ssl.keystore.location: cannot open the keystore (wrong ssl.keystore.password?)") from None
    if key is None or cert is None:
        raise ValueError("ssl.keystore.location: the keystore holds no private key with its certificate")
    chain = b"".join(c.public_bytes(serialization.Encoding.PEM) for c in [cert, *extra])
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return chain, key_pem


@contextlib.contextmanager
def _pem_file(data: bytes) -> Iterator[str]:
    """``ssl`` loads certificates and keys only from files: a private one, removed at once."""
    fd, path = tempfile.mkstemp(prefix="kafkawire-", suffix=".pem")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        yield path
    finally:
        os.unlink(path)
