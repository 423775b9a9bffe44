"""What a broker connection's diagnostics say (`kafkawire.base.debug` writes them): state changes with
the address, each request and answer (API, version, correlation id, size, round trip), the
versions a broker speaks, SASL steps. Kept out of broker.py so the connection's code reads as
moving bytes; each function is called only when its context is on.

SASL lines name the mechanism and the step's size, never a token's bytes (they carry the password
under PLAIN, proofs under SCRAM).
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from typing import Any

from ..base.debug import Debug
from ..core.connection import Response
from ..protocol import apis
from ..protocol.apis import SASL_AUTHENTICATE, SASL_HANDSHAKE
from ..protocol.frame import Frame
from ..protocol.schema import Api

_FAMILIES: dict[int, str] = {socket.AF_INET: "ipv4", socket.AF_INET6: "ipv6"}


def state_changed(debug: Debug, name: str, old: Any, new: Any) -> None:
    debug.log("broker", "STATE", name, "%s: Broker changed state %s -> %s", name, old.name, new.name)


def connecting(debug: Debug, name: str, family: int, address: Any, protocol: str) -> None:
    shown = f"{_FAMILIES.get(family, family)}#{address[0]}:{address[1]}"
    debug.log("broker", "CONNECT", name, "%s: Connecting to %s (%s)", name, shown, protocol)


def failed(debug: Debug, name: str, state: Any, why: str) -> None:
    debug.log("broker", "FAIL", name, "%s: %s (in state %s)", name, why, state.name)


def sent(debug: Debug, name: str, api: Api, version: int, frame: Frame, raw: bool = False) -> None:
    """A request written (``raw``: a bare SASL token, no header and no correlation id)."""
    if raw:
        debug.log("protocol", "SEND", name, "%s: Sent SASL token (%d bytes)", name, frame.size)
        return
    corr = int.from_bytes(frame[8:12], "big")  # size, api key, api version, then the correlation id
    debug.log(
        "protocol",
        "SEND",
        name,
        "%s: Sent %sRequest (v%d, %d bytes, CorrId %d)",
        name,
        api.name,
        version,
        frame.size,
        corr,
    )


def received(debug: Debug, name: str, response: Response, rtt: float) -> None:
    req = response.request
    debug.log(
        "protocol",
        "RECV",
        name,
        "%s: Received %sResponse (v%d, %d bytes, CorrId %d, rtt %.2fms)",
        name,
        req.api.name,
        req.version,
        response.size,
        req.correlation_id,
        rtt * 1000,
    )


def features(debug: Debug, name: str, versions: Mapping[int, tuple[int, int]]) -> None:
    debug.log("feature", "APIVERSION", name, "%s: Broker API support: %d APIs", name, len(versions))
    for key, (low, high) in sorted(versions.items()):
        api = apis.API_BY_KEY.get(key)
        label = api.name if api is not None else "Unknown"
        debug.log("feature", "APIVERSION", name, "%s:   ApiKey %s (%d) Versions %d..%d", name, label, key, low, high)


def sasl_started(debug: Debug, name: str, mechanism: str | None, again: bool) -> None:
    what = "Re-authenticating" if again else "Authenticating"
    debug.log("security", "SASL", name, "%s: %s with SASL mechanism %s", name, what, mechanism)


def sasl_step(debug: Debug, name: str, api: Api, version: int, body: Mapping[str, Any]) -> None:
    """A SASL request: the mechanism asked for, or a token's size (never its bytes)."""
    if api is SASL_HANDSHAKE:
        debug.log(
            "security", "SASL", name, "%s: SaslHandshake v%d for mechanism %s", name, version, body.get("mechanism")
        )
    elif api is SASL_AUTHENTICATE:
        size = len(body.get("auth_bytes") or b"")
        debug.log(
            "security",
            "SASLAUTH",
            name,
            "%s: SaslAuthenticate v%d: sending %d bytes of SASL token",
            name,
            version,
            size,
        )


def sasl_done(debug: Debug, name: str, lifetime_ms: int | None) -> None:
    lifetime = f"session lifetime {lifetime_ms} ms" if lifetime_ms else "no session lifetime"
    debug.log("security", "SASL", name, "%s: Authenticated (%s)", name, lifetime)
