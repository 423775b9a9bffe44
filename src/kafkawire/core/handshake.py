"""What a fresh connection says before it carries requests, as a list of sans-IO steps.

The IO layer asks `Handshake.next_request()` for the request to send, hands the decoded answer
to `Handshake.receive()`, and repeats until `done`. The steps are ApiVersions (with the downgrade a
broker asks for by answering UNSUPPORTED_VERSION), then, under SASL, SaslHandshake v1 (choose the
mechanism) and SaslAuthenticate round trips carrying the conversation of `core/sasl.py`. A step that
cannot go on raises `HandshakeError`: the IO layer fails that connection (never the client) and
the next connection starts the list afresh.

KIP-368: a broker that limits SASL sessions says so in the last SaslAuthenticate answer
(``session_lifetime_ms``); before the session runs out the IO layer runs the SASL steps again on the
same connection (`Handshake(..., versions=known)`: no ApiVersions) at `reauthenticate_at`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..protocol.apis import API_VERSIONS, SASL_AUTHENTICATE, SASL_HANDSHAKE
from ..protocol.codec import Struct
from ..protocol.error_codes import ILLEGAL_SASL_STATE, NONE, UNSUPPORTED_SASL_MECHANISM, UNSUPPORTED_VERSION
from ..protocol.schema import Api
from ..protocol.value_class import ValueClass
from .kafka_error import KafkaError
from .mismatch import LISTENER_WITHOUT_SASL
from .sasl import SaslClient, SaslError
from .versions import UnsupportedVersionError, VersionsError, choose_version, ranges_from_response

# Re-authenticate when this share of the session lifetime has passed (counted from when the last
# SaslAuthenticate request left, before the broker started the session's clock): the rest covers
# the requests already on the wire, which the broker reads before the SaslHandshake.
REAUTH_AT = 0.85


def reauthenticate_at(sent_at: float, session_lifetime_ms: int) -> float | None:
    """When to re-authenticate a session that began at ``sent_at``; None: it never expires."""
    return sent_at + session_lifetime_ms / 1000 * REAUTH_AT if session_lifetime_ms > 0 else None


class HandshakeError(Exception):
    """The handshake cannot go on; ``code`` is the KafkaError code the connection fails with."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


class HandshakeStep(ValueClass):
    """A request the handshake wants sent. (A plain class: protocol/value_class.py.)"""

    __slots__ = ("api", "body", "raw", "version")
    _fields = ("api", "version", "body", "raw")

    def __init__(self, api: Api, version: int, body: Mapping[str, Any], raw: bool = False) -> None:
        self.api = api
        self.version = version
        self.body = body
        self.raw = raw  # a bare SASL token (``body["auth_bytes"]``) outside Kafka framing: SaslHandshake v0

    __hash__ = None  # type: ignore[assignment]  # its body is a mapping

    def __repr__(self) -> str:
        return f"HandshakeStep({self.api.name} v{self.version}, raw={self.raw})"


# Patterns, compiled (and cached by re) at the first connection rather than at import.
_NOT_SOFTWARE = r"[^A-Za-z0-9.-]"
_NOT_ALNUM_ENDS = r"^[^A-Za-z0-9]+|[^A-Za-z0-9]+$"


def software_token(text: str) -> str:
    """A client software name or version in the form brokers accept (KIP-511: letters, digits, '.'
    and '-', alphanumeric at both ends; a broker refuses the connection's ApiVersions otherwise): any
    other character becomes '-', then the ends are trimmed, as librdkafka sends them."""
    return re.sub(_NOT_ALNUM_ENDS, "", re.sub(_NOT_SOFTWARE, "-", text))


class ApiVersionsStep:
    """Ask which versions the broker speaks; step down when it does not know our version."""

    def __init__(
        self, software_name: str, software_version: str, versions: dict[int, tuple[int, int]] | None = None
    ) -> None:
        self._version = API_VERSIONS.max_version
        self._body = {
            "client_software_name": software_token(software_name),
            "client_software_version": software_token(software_version),
        }
        self.versions = versions  # known already: a re-authentication asks nothing

    def request(self) -> HandshakeStep | None:
        return None if self.versions is not None else HandshakeStep(API_VERSIONS, self._version, self._body)

    def receive(self, body: Struct) -> None:
        if body.error_code == UNSUPPORTED_VERSION and self._version > 0:
            # Retry with the highest version the broker named, or v0 when it named none.
            theirs = next((k.max_version for k in body.api_keys if k.api_key == API_VERSIONS.key), 0)
            self._version = max(0, min(theirs, self._version - 1))
            return
        if body.error_code != NONE:
            raise HandshakeError(body.error_code, f"ApiVersions v{self._version} failed")
        try:
            self.versions = ranges_from_response(body)
        except VersionsError as exc:
            raise HandshakeError(KafkaError._BAD_MSG, str(exc)) from None


class SaslStep:
    """SaslHandshake v1 then SaslAuthenticate until the conversation is done (KIP-152).

    Brokers older than Kafka 1.0 know SaslHandshake v0 only: the tokens then travel bare,
    size-prefixed outside Kafka framing (``Step.raw``), and refused credentials close the connection
    instead of answering an error."""

    def __init__(self, api_versions: ApiVersionsStep, client: SaslClient) -> None:
        self._api_versions = api_versions
        self._client = client
        self._mechanism_agreed = False
        self._raw = False  # SaslHandshake v0 was spoken: bare tokens follow
        self._token: bytes | None = None
        self.done = False
        self.session_lifetime_ms = 0  # from the last SaslAuthenticate answer (v1+); 0: no limit

    def _version(self, api: Api) -> int:
        assert self._api_versions.versions is not None
        try:
            return choose_version(api, self._api_versions.versions)
        except UnsupportedVersionError as exc:
            raise HandshakeError(KafkaError._UNSUPPORTED_FEATURE, f"SASL: {exc}") from None

    def request(self) -> HandshakeStep | None:
        if self.done:
            return None
        if not self._mechanism_agreed:
            version = self._version(SASL_HANDSHAKE)
            self._raw = version == 0
            return HandshakeStep(SASL_HANDSHAKE, version, {"mechanism": self._client.mechanism})
        if self._token is None:
            self._token = self._start()
        if self._raw:
            return HandshakeStep(SASL_AUTHENTICATE, 0, {"auth_bytes": self._token}, raw=True)
        return HandshakeStep(SASL_AUTHENTICATE, self._version(SASL_AUTHENTICATE), {"auth_bytes": self._token})

    def _start(self) -> bytes:
        try:
            return self._client.start()
        except (SaslError, ValueError) as exc:  # a token source that failed (oauth_cb, config)
            raise HandshakeError(KafkaError._AUTHENTICATION, f"SASL {self._client.mechanism}: {exc}") from None

    def receive(self, body: Struct) -> None:
        if not self._mechanism_agreed:
            if body.error_code == ILLEGAL_SASL_STATE or (
                body.error_code == UNSUPPORTED_SASL_MECHANISM and not body.mechanisms
            ):  # a listener without SASL refuses the handshake itself
                raise HandshakeError(KafkaError._AUTHENTICATION, LISTENER_WITHOUT_SASL)
            if body.error_code == UNSUPPORTED_SASL_MECHANISM:
                offered = ", ".join(body.mechanisms or []) or "none"
                raise HandshakeError(
                    KafkaError._AUTHENTICATION,
                    f"the broker does not accept SASL mechanism {self._client.mechanism} (it offers: {offered})",
                )
            if body.error_code != NONE:
                raise HandshakeError(body.error_code, f"SaslHandshake failed for {self._client.mechanism}")
            self._mechanism_agreed = True
            return
        if body.error_code != NONE:
            why = body.error_message or "authentication failed"
            raise HandshakeError(KafkaError._AUTHENTICATION, f"SASL {self._client.mechanism}: {why}")
        try:
            reply = self._client.receive(body.auth_bytes or b"")
        except SaslError as exc:
            raise HandshakeError(KafkaError._AUTHENTICATION, f"SASL {self._client.mechanism}: {exc}") from None
        if reply is None:
            self.done = True
            self.session_lifetime_ms = body.session_lifetime_ms or 0
        else:
            self._token = reply


class Handshake:
    """The steps of one connection's handshake, run in order (with ``versions``: a re-authentication)."""

    def __init__(
        self,
        software_name: str,
        software_version: str,
        sasl: SaslClient | None = None,
        versions: dict[int, tuple[int, int]] | None = None,
    ) -> None:
        self.api_versions = ApiVersionsStep(software_name, software_version, versions)
        self._steps: list[ApiVersionsStep | SaslStep] = [self.api_versions]
        self._sasl = None if sasl is None else SaslStep(self.api_versions, sasl)
        if self._sasl is not None:
            self._steps.append(self._sasl)

    @property
    def session_lifetime_ms(self) -> int:
        """How long the broker keeps the SASL session (KIP-368); 0: without limit, or no SASL."""
        return 0 if self._sasl is None else self._sasl.session_lifetime_ms

    def next_request(self) -> HandshakeStep | None:
        """The request to send now, or None when the handshake is over."""
        for step in self._steps:
            req = step.request()
            if req is not None:
                return req
        return None

    @property
    def done(self) -> bool:
        return self.next_request() is None

    def receive(self, body: Struct) -> None:
        """The answer to the last `next_request()`; raises `HandshakeError` to fail the connection."""
        for step in self._steps:
            if step.request() is not None:
                step.receive(body)
                return
        raise HandshakeError(KafkaError._BAD_MSG, "handshake answer with no handshake request")

    @property
    def versions(self) -> dict[int, tuple[int, int]]:
        assert self.api_versions.versions is not None, "handshake not done"
        return self.api_versions.versions
