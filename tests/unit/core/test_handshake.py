"""The connection handshake and the trust put in an ApiVersions answer: scripted answers only."""

from __future__ import annotations

from typing import Any

import pytest

from kafkawire.core.cluster_health import ClusterHealth
from kafkawire.core.handshake import Handshake, HandshakeError
from kafkawire.core.kafka_error import KafkaError
from kafkawire.core.versions import Doubts, UnsupportedVersionError
from kafkawire.protocol import codec
from kafkawire.protocol.apis import API_VERSIONS, METADATA, PRODUCE
from kafkawire.protocol.codec import Struct

GOOD = [(18, 0, 4), (3, 0, 12), (0, 3, 11)]


def answer(keys: list[tuple[int, int, int]], error_code: int = 0) -> Struct:
    body: dict[str, Any] = {
        "error_code": error_code,
        "api_keys": [{"api_key": k, "min_version": lo, "max_version": hi} for k, lo, hi in keys],
    }
    encoded = codec.encode(API_VERSIONS.response, 0, body)
    return codec.decode(API_VERSIONS.response, 0, encoded, 0)


def test_api_versions_is_the_first_step_and_gives_the_ranges() -> None:
    hs = Handshake("kafkawire", "1")
    step = hs.next_request()
    assert step is not None and step.api is API_VERSIONS and step.version == API_VERSIONS.max_version
    hs.receive(answer(GOOD))
    assert hs.done and hs.versions[PRODUCE.key] == (3, 11)


def test_the_software_name_and_version_go_out_as_brokers_accept_them() -> None:
    """KIP-511: a broker refuses an ApiVersions whose name or version has another character than
    letters, digits, '.' and '-', or does not start and end alphanumeric."""
    step = Handshake(" my app/2 ", "1.0+local_build.").next_request()
    assert step is not None
    assert step.body == {"client_software_name": "my-app-2", "client_software_version": "1.0-local-build"}


def test_a_clients_software_name_and_version_are_its_configurations() -> None:
    from kafkawire import __version__
    from kafkawire.base.config import parse_config
    from kafkawire.io.connection_settings import ConnectionSettings
    from kafkawire.producer.producer_config import PRODUCER_OPTIONS

    def settings(**conf: str) -> tuple[str, str]:
        parsed = parse_config({k.replace("_", "."): v for k, v in conf.items()}, PRODUCER_OPTIONS)
        made = ConnectionSettings.from_config(parsed)
        return made.software_name, made.software_version

    assert settings() == ("kafkawire", __version__)
    assert settings(client_software_name="payments", client_software_version="3.1") == ("payments", "3.1")


def test_unsupported_version_steps_down_to_what_the_broker_names_then_to_v0() -> None:
    hs = Handshake("kafkawire", "1")
    hs.receive(answer([(18, 0, 2)], error_code=35))
    step = hs.next_request()
    assert step is not None and step.version == 2
    hs.receive(answer([], error_code=35))  # names no ApiVersions range: straight to v0
    step = hs.next_request()
    assert step is not None and step.version == 0
    with pytest.raises(HandshakeError) as exc:
        hs.receive(answer([], error_code=35))  # v0 refused too: nothing lower to try
    assert exc.value.code == 35


@pytest.mark.parametrize(
    "keys,reason",
    [
        ([*GOOD[:2], (0, 3, -32768)], "versions 3..-32768"),  # the mutation of issue 13 defect 2
        ([*GOOD[:2], (0, -1, 11)], "versions -1..11"),
        ([*GOOD, (0, 3, 11)], "twice"),
        ([(18, 0, 4), (0, 3, 11)], "does not list Metadata"),
        ([(3, 0, 12)], "does not list ApiVersions"),
    ],
)
def test_an_answer_that_cannot_be_true_fails_the_connection_not_the_client(keys: Any, reason: str) -> None:
    """Issue 13 defect 2: a mutated ApiVersions answer is a connection failure (_BAD_MSG), so the
    next connection asks again; never a verdict about the broker."""
    hs = Handshake("kafkawire", "1")
    with pytest.raises(HandshakeError, match=reason) as exc:
        hs.receive(answer(keys))
    assert exc.value.code == KafkaError._BAD_MSG


def test_an_error_answer_fails_the_connection() -> None:
    with pytest.raises(HandshakeError) as exc:
        Handshake("kafkawire", "1").receive(answer(GOOD, error_code=-1))
    assert exc.value.code == -1


def test_a_version_gap_is_believed_only_when_the_next_connection_agrees() -> None:
    doubts = Doubts()
    lacking = {18: (0, 4), 3: (0, 12)}
    with pytest.raises(UnsupportedVersionError) as first:
        doubts.choose(PRODUCE, lacking)
    assert not first.value.confirmed
    assert doubts.choose(PRODUCE, {**lacking, 0: (3, 11)}) == 11  # the next answer had it: a fluke
    with pytest.raises(UnsupportedVersionError) as again:
        doubts.choose(PRODUCE, lacking)
    assert not again.value.confirmed
    with pytest.raises(UnsupportedVersionError, match="does not support Produce") as second:
        doubts.choose(PRODUCE, lacking)
    assert second.value.confirmed
    assert doubts.choose(METADATA, lacking) == 12


def test_all_brokers_down_is_reported_once_until_one_comes_back() -> None:
    health = ClusterHealth()
    known = {("a", 1), ("b", 1)}
    down = KafkaError(KafkaError._TRANSPORT, "refused")
    assert health.failed(("a", 1), down, known, any_live=False) == []  # b never failed
    [err] = health.failed(("b", 1), down, known, any_live=False)
    assert err.code() == KafkaError._ALL_BROKERS_DOWN
    assert health.failed(("a", 1), down, known, any_live=False) == []
    health.up(("a", 1))
    assert health.failed(("a", 1), down, known, any_live=False)[0].code() == KafkaError._ALL_BROKERS_DOWN


def test_a_name_that_does_not_resolve_is_reported_once_per_address() -> None:
    health = ClusterHealth()
    known = {("a..b", 1), ("c", 1)}
    resolve = KafkaError(KafkaError._RESOLVE, "Failed to resolve")
    assert [e.code() for e in health.failed(("a..b", 1), resolve, known, any_live=True)] == [KafkaError._RESOLVE]
    assert health.failed(("a..b", 1), resolve, known, any_live=True) == []
    health.up(("a..b", 1))
    assert [e.code() for e in health.failed(("a..b", 1), resolve, known, any_live=True)] == [KafkaError._RESOLVE]


def test_a_failure_no_retry_mends_stands_until_that_address_connects() -> None:
    """Records timing out meanwhile name it (producer/sender.py): the latest such failure stands."""
    health = ClusterHealth()
    known = {("a", 1), ("b", 1)}
    assert health.standing() is None
    health.failed(("a", 1), KafkaError(KafkaError._TRANSPORT, "refused"), known, any_live=True)
    assert health.standing() is None
    auth = KafkaError(KafkaError._AUTHENTICATION, "a:1: SASL PLAIN: bad credentials")
    tls = KafkaError(KafkaError._SSL, "b:1: certificate verify failed")
    health.failed(("a", 1), auth, known, any_live=True)
    health.failed(("b", 1), tls, known, any_live=True)
    assert health.standing() is tls
    assert health.failed(("a", 1), auth, known, any_live=True) == []  # reported once, now the latest
    assert health.standing() is auth
    health.up(("a", 1))
    health.up(("b", 1))
    assert health.standing() is None


def _sasl_answer(api: Any, version: int, **fields: Any) -> Struct:
    encoded = codec.encode(api.response, version, {"error_code": 0, **fields})
    return codec.decode(api.response, version, encoded, 0)


@pytest.mark.parametrize("version,lifetime", [(1, 3000), (0, 0)])
def test_reauthentication_runs_only_the_sasl_steps_and_reads_the_session_lifetime(version: int, lifetime: int) -> None:
    """KIP-368: the versions are known, so a re-authentication starts at SaslHandshake; the last
    SaslAuthenticate answer (v1+) says how long the session lasts (v0 cannot: no limit)."""
    from kafkawire.core.handshake import reauthenticate_at
    from kafkawire.core.sasl import PlainClient
    from kafkawire.protocol.apis import SASL_AUTHENTICATE, SASL_HANDSHAKE

    known = {API_VERSIONS.key: (0, 3), SASL_HANDSHAKE.key: (0, 1), SASL_AUTHENTICATE.key: (0, version)}
    hs = Handshake("kafkawire", "1", PlainClient("u", "p"), versions=known)
    step = hs.next_request()
    assert step is not None and step.api is SASL_HANDSHAKE and step.version == 1
    hs.receive(_sasl_answer(SASL_HANDSHAKE, 1, mechanisms=["PLAIN"]))
    step = hs.next_request()
    assert step is not None and step.api is SASL_AUTHENTICATE and step.version == version
    assert step.body["auth_bytes"] == b"\0u\0p"
    hs.receive(_sasl_answer(SASL_AUTHENTICATE, version, auth_bytes=b"", session_lifetime_ms=lifetime))
    assert hs.done and hs.session_lifetime_ms == lifetime
    due = reauthenticate_at(100.0, hs.session_lifetime_ms)
    assert due is None if lifetime == 0 else 100.0 < due < 100.0 + lifetime / 1000
