"""The JWT assertion of the OAuth 2.0 JWT-bearer grant (RFC 7523, KIP-1139), as librdkafka builds it
for ``sasl.oauthbearer.grant.type=urn:ietf:params:oauth:grant-type:jwt-bearer``.

Either a ready assertion read from ``sasl.oauthbearer.assertion.file`` at each fetch (another
process keeps it fresh), or one signed here for each fetch: RS256 or ES256
(``sasl.oauthbearer.assertion.algorithm``) with the private key of
``sasl.oauthbearer.assertion.private.key.file`` or ``.pem`` (optionally encrypted: ``.passphrase``).
Its header is ``{"alg", "typ": "JWT"}`` and its claims ``iat`` (now), ``nbf`` (now minus
``claim.nbf.seconds``), ``exp`` (now plus ``claim.exp.seconds``), ``iss``/``sub``/``aud`` when set,
``jti`` (a random UUID) when ``claim.jti.include``; ``jwt.template.file`` (JSON with ``header`` and
``payload`` objects) adds its own header fields and claims under those. The key is read once, at
construction, where every mistake fails naming the option (never quoting the key or passphrase).
Signing needs the ``cryptography`` package (the ``tls`` extra).
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Mapping
from typing import Any

MAX_FILE_BYTES = 1 << 20  # an assertion or template file larger than this is refused


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _read(path: str, option: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read(MAX_FILE_BYTES + 1)
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f'"{option}": cannot read {path!r}: {exc}') from None
    if len(text) > MAX_FILE_BYTES or not text.strip():
        raise ValueError(f'"{option}": {path!r} is empty or larger than {MAX_FILE_BYTES} bytes')
    return text


class JwtAssertion:
    """Makes the assertion for each token request: `make(now)` (now: wall-clock seconds)."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        """ValueError names the option that is missing or wrong."""
        self._file: str | None = config["sasl.oauthbearer.assertion.file"] or None
        self._claims = {
            name: config[f"sasl.oauthbearer.assertion.claim.{name}"]
            for name in ("iss", "sub", "aud")
            if config[f"sasl.oauthbearer.assertion.claim.{name}"]
        }
        self._exp = int(config["sasl.oauthbearer.assertion.claim.exp.seconds"])
        self._nbf = int(config["sasl.oauthbearer.assertion.claim.nbf.seconds"])
        self._jti = bool(config["sasl.oauthbearer.assertion.claim.jti.include"])
        self._algorithm: str = config["sasl.oauthbearer.assertion.algorithm"].upper()
        self._header: dict[str, Any] = {}
        self._payload: dict[str, Any] = {}
        self._key: Any = None
        if self._file is not None:
            return
        template = config["sasl.oauthbearer.assertion.jwt.template.file"]
        if template:
            self._header, self._payload = _template(template)
        self._key = _private_key(config, self._algorithm)

    def make(self, now: float) -> str:
        if self._file is not None:
            return _read(self._file, "sasl.oauthbearer.assertion.file").strip()
        issued = int(now)
        header = {**self._header, "alg": self._algorithm, "typ": "JWT"}
        claims = {**self._payload, "iat": issued, "exp": issued + self._exp, "nbf": issued - self._nbf, **self._claims}
        if self._jti:
            claims["jti"] = str(uuid.uuid4())
        signing_input = f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(claims).encode())}"
        return f"{signing_input}.{_b64(self._sign(signing_input.encode()))}"

    def _sign(self, data: bytes) -> bytes:
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec, padding
        from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

        if self._algorithm == "RS256":
            return bytes(self._key.sign(data, padding.PKCS1v15(), hashes.SHA256()))
        # JWS ES256 (RFC 7518 3.4): r and s as two 32-byte big-endian numbers, not DER.
        r, s = decode_dss_signature(self._key.sign(data, ec.ECDSA(hashes.SHA256())))
        return r.to_bytes(32, "big") + s.to_bytes(32, "big")

    def __repr__(self) -> str:
        return f"JwtAssertion(algorithm={self._algorithm!r}, file={self._file!r})"


def _template(path: str) -> tuple[dict[str, Any], dict[str, Any]]:
    option = "sasl.oauthbearer.assertion.jwt.template.file"
    try:
        parsed = json.loads(_read(path, option))
    except ValueError as exc:
        raise ValueError(f'"{option}": {path!r} is not JSON: {exc}') from None
    header = parsed.get("header") if isinstance(parsed, dict) else None
    payload = parsed.get("payload") if isinstance(parsed, dict) else None
    if not isinstance(header, dict) or not isinstance(payload, dict):
        raise ValueError(f'"{option}": {path!r} must hold a JSON object with "header" and "payload" objects')
    return header, payload


def _private_key(config: Mapping[str, Any], algorithm: str) -> Any:
    try:
        from cryptography.hazmat.primitives.asymmetric import ec, rsa
        from cryptography.hazmat.primitives.serialization import load_pem_private_key
    except ImportError:
        raise ValueError(
            "the jwt-bearer grant signs its assertion with the cryptography package: pip install kafkawire[tls]"
        ) from None
    pem: str | None = config["sasl.oauthbearer.assertion.private.key.pem"]
    location: str | None = config["sasl.oauthbearer.assertion.private.key.file"]
    option = "sasl.oauthbearer.assertion.private.key." + ("pem" if pem else "file")
    if pem and location:
        raise ValueError('set one of "sasl.oauthbearer.assertion.private.key.file" and ".pem", not both')
    if not pem and not location:
        raise ValueError(
            'the jwt-bearer grant needs "sasl.oauthbearer.assertion.file" or a private key '
            '("sasl.oauthbearer.assertion.private.key.file" or ".pem")'
        )
    data = pem.encode() if pem else _read(str(location), option).encode()
    passphrase: str | None = config["sasl.oauthbearer.assertion.private.key.passphrase"]
    try:
        key: Any = load_pem_private_key(data, passphrase.encode() if passphrase else None)
    except (ValueError, TypeError):
        raise ValueError(f'"{option}": no private key could be read (wrong passphrase, or not PEM)') from None
    wanted = rsa.RSAPrivateKey if algorithm == "RS256" else ec.EllipticCurvePrivateKey
    if not isinstance(key, wanted) or (
        algorithm == "ES256" and not isinstance(getattr(key, "curve", None), ec.SECP256R1)
    ):
        need = "an RSA key" if algorithm == "RS256" else "an EC key on P-256"
        raise ValueError(f'"sasl.oauthbearer.assertion.algorithm" {algorithm} needs {need}')
    return key
