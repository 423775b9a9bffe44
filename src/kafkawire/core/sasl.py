"""SASL mechanisms as sans-IO conversations: bytes in, bytes out, no sockets.

The connection handshake sends `SaslClient.start()` as the first SaslAuthenticate token, then
feeds every server token to `receive()` until `done`. A mechanism that cannot trust the server
(a SCRAM server that does not prove it knows the password, a nonce it did not extend) raises
`SaslError`: the caller fails that connection with an authentication error.

Secrets (passwords, tokens) live only in these objects' private fields; nothing here puts them in
an exception message or a repr.
"""

from __future__ import annotations

import abc
import base64
import re
from collections.abc import Mapping
from typing import Protocol

# hashlib, hmac, secrets and json are imported by the conversations that use them: most clients
# speak no SASL, and OpenSSL's hashes are a measurable share of a producer's start-up.
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER", "GSSAPI")

# Kafka creates SCRAM credentials with 4096..16384 iterations (ScramMechanism); a server asking for
# fewer weakens the proof, one asking for vastly more would make us burn CPU on its behalf.
SCRAM_MIN_ITERATIONS = 4096
SCRAM_MAX_ITERATIONS = 100_000

_HASHES = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}


class SaslError(Exception):
    """The SASL conversation failed; the message says why and never carries a secret."""


class SaslClient(abc.ABC):
    """One authentication attempt with one mechanism."""

    mechanism: str
    done: bool = False

    @abc.abstractmethod
    def start(self) -> bytes:
        """The client's first token."""

    @abc.abstractmethod
    def receive(self, token: bytes) -> bytes | None:
        """Take the server's token; return the next client token, or None when finished."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.mechanism}>"


class PlainClient(SaslClient):
    """RFC 4616: one message, authorization id empty."""

    mechanism = "PLAIN"

    def __init__(self, username: str, password: str) -> None:
        self._username = username
        self._password = password

    def start(self) -> bytes:
        return b"\x00" + self._username.encode() + b"\x00" + self._password.encode()

    def receive(self, token: bytes) -> bytes | None:
        self.done = True  # the server's answer carries no data; success is its error code
        return None


class ScramClient(SaslClient):
    """RFC 5802 with SHA-256/512 (RFC 7677), as Kafka speaks it: no channel binding, the password
    used as UTF-8 without SASLprep (Kafka's ScramFormatter), and the server's final signature checked."""

    def __init__(self, mechanism: str, username: str, password: str, nonce: str | None = None) -> None:
        if mechanism not in _HASHES:
            raise ValueError(f"not a SCRAM mechanism: {mechanism}")
        self.mechanism = mechanism
        self._hash = _HASHES[mechanism]
        self._username = username
        self._password = password
        import secrets

        self._nonce = nonce or secrets.token_urlsafe(24)
        self._client_first_bare = f"n={_saslname(username)},r={self._nonce}"
        self._server_signature: bytes | None = None

    def start(self) -> bytes:
        return ("n,," + self._client_first_bare).encode()

    def receive(self, token: bytes) -> bytes | None:
        if self._server_signature is None:
            return self._client_final(token)
        self._verify_server_final(token)
        self.done = True
        return None

    def _client_final(self, token: bytes) -> bytes:
        server_first = _text(token)
        attrs = _attributes(server_first)
        if "e" in attrs:
            raise SaslError(f"{self.mechanism}: the server refused: {attrs['e']}")
        nonce, salt_b64, iterations_text = attrs.get("r"), attrs.get("s"), attrs.get("i")
        if nonce is None or salt_b64 is None or iterations_text is None:
            raise SaslError(f"{self.mechanism}: the server's first message lacks a nonce, salt or iteration count")
        if not nonce.startswith(self._nonce) or len(nonce) == len(self._nonce):
            raise SaslError(f"{self.mechanism}: the server's nonce does not extend ours")
        if not iterations_text.isdigit():
            raise SaslError(f"{self.mechanism}: invalid iteration count")
        iterations = int(iterations_text)
        if not SCRAM_MIN_ITERATIONS <= iterations <= SCRAM_MAX_ITERATIONS:
            raise SaslError(
                f"{self.mechanism}: iteration count {iterations} outside {SCRAM_MIN_ITERATIONS}..{SCRAM_MAX_ITERATIONS}"
            )
        try:
            salt = base64.b64decode(salt_b64, validate=True)
        except ValueError:
            raise SaslError(f"{self.mechanism}: the salt is not base64") from None
        import hashlib

        salted = salted_password(self.mechanism, self._password.encode(), salt, iterations)
        client_key = self._hmac(salted, b"Client Key")
        stored_key = hashlib.new(self._hash, client_key).digest()
        without_proof = f"c=biws,r={nonce}"
        auth_message = f"{self._client_first_bare},{server_first},{without_proof}".encode()
        signature = self._hmac(stored_key, auth_message)
        proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
        self._server_signature = self._hmac(self._hmac(salted, b"Server Key"), auth_message)
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()

    def _verify_server_final(self, token: bytes) -> None:
        attrs = _attributes(_text(token))
        if "e" in attrs:
            raise SaslError(f"{self.mechanism}: the server refused: {attrs['e']}")
        try:
            theirs = base64.b64decode(attrs.get("v", ""), validate=True)
        except ValueError:
            theirs = b""
        assert self._server_signature is not None
        import hmac

        if not theirs or not hmac.compare_digest(theirs, self._server_signature):
            raise SaslError(f"{self.mechanism}: the server could not prove it knows the password")

    def _hmac(self, key: bytes, msg: bytes) -> bytes:
        import hmac

        return hmac.new(key, msg, self._hash).digest()


class OAuthBearerClient(SaslClient):
    """RFC 7628's client response with a bearer token and SASL extensions (KIP-342)."""

    mechanism = "OAUTHBEARER"

    def __init__(self, token: str, extensions: Mapping[str, str] | None = None) -> None:
        self._token = token
        self._extensions = dict(extensions or {})

    def start(self) -> bytes:
        ext = "".join(f"{k}={v}\x01" for k, v in sorted(self._extensions.items()))
        return f"n,,\x01auth=Bearer {self._token}\x01{ext}\x01".encode()

    def receive(self, token: bytes) -> bytes | None:
        if token and not self.done and token != b"\x01":
            # An error answer is a JSON status; the client acknowledges it with 0x01 (RFC 7628 3.2.3).
            self.done = True
            raise SaslError(f"OAUTHBEARER: the server refused the token: {_text(token)}")
        self.done = True
        return None


class GssContext(Protocol):
    """The GSS-API calls a GSSAPI conversation needs (kafkawire/security/kerberos.py makes them with the
    ``gssapi`` package); a failure raises `SaslError` naming its cause, never key material."""

    @property
    def complete(self) -> bool:
        """The security context is established (mutual authentication done)."""

    def step(self, token: bytes | None) -> bytes | None:
        """GSS_Init_sec_context: the server's token (None at first) -> the next client token."""

    def unwrap(self, message: bytes) -> bytes:
        """GSS_Unwrap: the server's integrity-protected message -> its payload."""

    def wrap(self, payload: bytes) -> bytes:
        """GSS_Wrap without confidentiality: what the client sends after the context is made."""


# RFC 4752 3.1: the security layers, as a bit mask in the first octet of the layer messages.
NO_SECURITY_LAYER = 0x01
_LAYER_OFFER = 4  # one octet of offered layers, three of the server's maximum message size

# The steps of a GSSAPI conversation: the context's tokens, the security-layer answer, the end.
GSS_CONTEXT, GSS_LAYER, GSS_FINAL = "context", "layer", "final"


class GssapiClient(SaslClient):
    """RFC 4752 (Kerberos V5 through GSS-API) as Kafka's GSSAPI mechanism speaks it.

    The context's tokens go back and forth until it is complete (a last empty token if the final
    step leaves none to send); then the server's wrapped offer of security layers is answered with
    "no security layer", a zero maximum size (RFC 4752: 0 when the client takes no layer) and the
    authorization id. The framing and the layer step are pure; the GSS calls live behind ``context``."""

    mechanism = "GSSAPI"

    def __init__(self, context: GssContext, first: bytes | None = None, authzid: str = "") -> None:
        self._context = context
        self._first = first  # the first token, already made (away from the IO thread) by the caller
        self._authzid = authzid
        self._step = GSS_CONTEXT

    def start(self) -> bytes:
        first = self._first if self._first is not None else self._context.step(None)
        self._first = None
        return first or b""

    def receive(self, token: bytes) -> bytes | None:
        if self._step == GSS_CONTEXT:
            if not self._context.complete:
                reply = self._context.step(token)
                if self._context.complete:
                    self._step = GSS_LAYER  # the server's offer of security layers comes next
                return reply or b""  # (an empty token when the last step left none to send)
            self._step = GSS_LAYER  # complete in one token (no mutual authentication)
            if not token:
                return b""
        if self._step == GSS_LAYER:
            self._step = GSS_FINAL
            return self._answer_offer(self._context.unwrap(token))
        self.done = True  # the server's last answer carries no data; success is its error code
        return None

    def _answer_offer(self, offer: bytes) -> bytes:
        if len(offer) != _LAYER_OFFER:
            raise SaslError(f"GSSAPI: the server's security-layer offer is {len(offer)} bytes, not {_LAYER_OFFER}")
        if not offer[0] & NO_SECURITY_LAYER:
            raise SaslError(
                "GSSAPI: the server requires a security layer (integrity or privacy), which Kafka never does"
            )
        return self._context.wrap(bytes([NO_SECURITY_LAYER, 0, 0, 0]) + self._authzid.encode())


def salted_password(mechanism: str, password: bytes, salt: bytes, iterations: int) -> bytes:
    """SCRAM's SaltedPassword, Hi() of RFC 5802 (PBKDF2-HMAC): what a client proves at login and
    what the admin call that sets a credential sends instead of the password."""
    import hashlib

    return hashlib.pbkdf2_hmac(_HASHES[mechanism], password, salt, iterations)


def unsecured_jwt(config: str, now: float) -> tuple[str, float, str, dict[str, str]]:
    """librdkafka's ``sasl.oauthbearer.config`` for test clusters -> (token, expiry, principal, extensions).

    The form is space-separated ``key=value``: ``principal`` (required), ``principalClaimName``
    (default sub), ``scope`` (comma-separated), ``scopeClaimName`` (default scope), ``lifeSeconds``
    (default 3600) and ``extension_<name>``. The token is an unsigned JWT (alg none), what Kafka's
    unsecured validator accepts; ``now`` is the caller's wall clock in seconds."""
    settings: dict[str, str] = {}
    extensions: dict[str, str] = {}
    for item in config.split():
        key, sep, value = item.partition("=")
        if not sep or not value:
            raise ValueError("sasl.oauthbearer.config: expected space-separated key=value pairs")
        if key.startswith("extension_"):
            extensions[key[len("extension_") :]] = value
        elif key in ("principal", "principalClaimName", "scope", "scopeClaimName", "lifeSeconds"):
            settings[key] = value
        else:
            raise ValueError(f"sasl.oauthbearer.config: unknown key {key!r}")
    principal = settings.get("principal")
    if not principal:
        raise ValueError("sasl.oauthbearer.config: principal=<name> is required")
    life = settings.get("lifeSeconds", "3600")
    if not life.isdigit() or int(life) == 0:
        raise ValueError("sasl.oauthbearer.config: lifeSeconds must be a positive integer")
    expiry = now + int(life)
    claims: dict[str, object] = {settings.get("principalClaimName", "sub"): principal, "iat": now, "exp": expiry}
    if settings.get("scope"):
        claims[settings.get("scopeClaimName", "scope")] = settings["scope"].split(",")
    token = f"{_b64url({'alg': 'none'})}.{_b64url(claims)}."
    return token, expiry, principal, extensions


def _b64url(obj: object) -> str:
    import json

    return base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode()).rstrip(b"=").decode()


def _saslname(name: str) -> str:
    return name.replace("=", "=3D").replace(",", "=2C")


def _text(token: bytes) -> str:
    try:
        return token.decode()
    except UnicodeDecodeError:
        raise SaslError("the server's SASL message is not UTF-8") from None


def _attributes(message: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in message.split(","):
        key, sep, value = part.partition("=")
        if sep and len(key) == 1:
            out.setdefault(key, value)
    return out


# Patterns, not compiled ones: re compiles (and caches) them when a config first has a JAAS text.
_JAAS = r"^\s*(?P<module>[\w.$]+)\s+(?P<flag>required|requisite|sufficient|optional)(?P<opts>.*?);?\s*$"
_JAAS_OPTION = r'\s*([\w.-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;"]+))'
JAAS_MODULES = {
    "org.apache.kafka.common.security.plain.PlainLoginModule": "PLAIN",
    "org.apache.kafka.common.security.scram.ScramLoginModule": "SCRAM",
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule": "OAUTHBEARER",
    "com.sun.security.auth.module.Krb5LoginModule": "GSSAPI",  # keyTab, principal, useKeyTab, ticketCache
}


def parse_jaas_config(text: str) -> tuple[str, dict[str, str]]:
    """Java's ``sasl.jaas.config`` (one login module) -> (PLAIN | SCRAM | OAUTHBEARER | GSSAPI, options).

    Raises ValueError naming what is wrong, never echoing the text (it holds a password)."""
    match = re.match(_JAAS, text, re.S)
    if match is None:
        raise ValueError("sasl.jaas.config: expected '<LoginModule class> required key=\"value\" ...;'")
    family = JAAS_MODULES.get(match["module"])
    if family is None:
        raise ValueError(
            f"sasl.jaas.config: login module {match['module']} is not supported "
            f"(supported: {', '.join(sorted(JAAS_MODULES))})"
        )
    options: dict[str, str] = {}
    rest = match["opts"]
    pos = 0
    while pos < len(rest) and rest[pos:].strip():
        opt = re.compile(_JAAS_OPTION).match(rest, pos)
        if opt is None:
            raise ValueError('sasl.jaas.config: options must be key="value" pairs')
        quoted, bare = opt.group(2), opt.group(3)
        options[opt.group(1)] = re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else bare
        pos = opt.end()
    return family, options
