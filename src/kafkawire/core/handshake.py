"""What a fresh connection says before it carries requests, as a list of sans-IO steps.

The IO layer asks `Handshake.next_request()` for the request to send, hands the decoded answer
to `Handshake.receive()`, and repeats until `done`. Today the one step is ApiVersions (with the
downgrade a broker asks for by answering UNSUPPORTED_VERSION); SASL steps go after it. A step that
cannot go on raises `HandshakeError`: the IO layer fails that connection (never the client) and
the next connection starts the list afresh.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import KafkaError
from ..protocol.apis import API_VERSIONS
from ..protocol.codec import Struct
from ..protocol.error_codes import NONE, UNSUPPORTED_VERSION
from ..protocol.schema import Api
from .versions import VersionsError, ranges_from_response


class HandshakeError(Exception):
    """The handshake cannot go on; ``code`` is the KafkaError code the connection fails with."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Step:
    api: Api
    version: int
    body: Mapping[str, Any]


class ApiVersionsStep:
    """Ask which versions the broker speaks; step down when it does not know our version."""

    def __init__(self, software_name: str, software_version: str) -> None:
        self._version = API_VERSIONS.max_version
        self._body = {"client_software_name": software_name, "client_software_version": software_version}
        self.versions: dict[int, tuple[int, int]] | None = None

    def request(self) -> Step | None:
        return None if self.versions is not None else Step(API_VERSIONS, self._version, self._body)

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


class Handshake:
    """The steps of one connection's handshake, run in order."""

    def __init__(self, software_name: str, software_version: str) -> None:
        self.api_versions = ApiVersionsStep(software_name, software_version)
        self._steps = [self.api_versions]

    def next_request(self) -> Step | None:
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
