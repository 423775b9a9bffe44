"""SASL after SaslHandshake v0, the framing of brokers before Kafka 1.0 (bare size-prefixed tokens,
no SaslAuthenticate), judged by Kafka 2.3, which still speaks it.

Kafka 2.3 also offers SaslAuthenticate, so a client would never choose v0 on its own: a forwarder
in front of its SASL_PLAINTEXT listener (a test double for an old broker's ApiVersions answer)
rewrites only that answer into a pre-1.0 broker's (SaslHandshake v0 only, no SaslAuthenticate) and
forwards every other byte unchanged. Kafka then judges the bare tokens: it answers a Metadata
request only on an authenticated connection, and closes one whose credentials it refuses."""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from kafkawire import KafkaException
from kafkawire.client.network_client import Client
from kafkawire.protocol import codec
from kafkawire.protocol.apis import API_VERSIONS, METADATA, SASL_AUTHENTICATE, SASL_HANDSHAKE
from tests.harness.kafka_broker import KafkaBroker

pytestmark = pytest.mark.broker

SCRAM_PASSWORD = "erin-pw"


def _frame(sock: socket.socket) -> bytes | None:
    """One size-prefixed frame (prefix included), or None at the end of the stream."""
    data = b""
    while len(data) < 4 or len(data) < 4 + struct.unpack_from(">i", data)[0]:
        chunk = sock.recv(4 if len(data) < 4 else 4 + struct.unpack_from(">i", data)[0] - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _as_old_broker(payload: bytes, version: int) -> bytes:
    """An ApiVersions answer (correlation id + body) with SaslHandshake capped at v0, no SaslAuthenticate."""
    if struct.unpack_from(">h", payload, 4)[0] != 0:
        return payload  # "unsupported version", in v0 form: the client asks again, lower
    body = codec.decode(API_VERSIONS.response, version, payload, 4)
    keys = [k for k in body.api_keys if k.api_key != SASL_AUTHENTICATE.key]
    for k in keys:
        if k.api_key == SASL_HANDSHAKE.key:
            k.max_version = 0
    body.api_keys = keys
    return payload[:4] + bytes(codec.encode(API_VERSIONS.response, version, body))


class OldBrokerFront:
    def __init__(self, upstream_port: int) -> None:
        self._upstream = upstream_port
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.handshakes: list[int] = []  # the SaslHandshake versions clients sent
        self._sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        for sock in [self._listener, *self._sockets]:
            sock.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self._upstream))
            self._sockets += [client, upstream]
            asked: list[tuple[int, int]] = []  # (api key, version) of requests before SASL starts
            threading.Thread(target=self._requests, args=(client, upstream, asked), daemon=True).start()
            threading.Thread(target=self._answers, args=(upstream, client, asked), daemon=True).start()

    def _requests(self, client: socket.socket, upstream: socket.socket, asked: list[tuple[int, int]]) -> None:
        try:
            while (frame := _frame(client)) is not None:
                if asked is not None:
                    api_key, version = struct.unpack_from(">hh", frame, 4)
                    asked.append((api_key, version))
                    if api_key == SASL_HANDSHAKE.key:
                        self.handshakes.append(version)
                        asked = None  # type: ignore[assignment]  # bare tokens from here on
                upstream.sendall(frame)
        except OSError:
            pass
        finally:
            upstream.close()

    def _answers(self, upstream: socket.socket, client: socket.socket, asked: list[tuple[int, int]]) -> None:
        answered = 0
        try:
            while (frame := _frame(upstream)) is not None:
                if answered < len(asked):
                    api_key, version = asked[answered]
                    answered += 1
                    if api_key == API_VERSIONS.key:
                        payload = _as_old_broker(frame[4:], version)
                        frame = struct.pack(">i", len(payload)) + payload
                client.sendall(frame)
        except OSError:
            pass
        finally:
            client.close()


@pytest.fixture
def old_front(kafka23: KafkaBroker) -> Iterator[OldBrokerFront]:
    front = OldBrokerFront(kafka23.ports["SASL_PLAINTEXT"])
    try:
        yield front
    finally:
        front.close()


CREDENTIALS: dict[str, dict[str, Any]] = {
    "PLAIN": {"sasl.mechanism": "PLAIN", "sasl.username": "alice", "sasl.password": "alice-secret"},
    "SCRAM-SHA-256": {"sasl.mechanism": "SCRAM-SHA-256", "sasl.username": "erin", "sasl.password": SCRAM_PASSWORD},
    "OAUTHBEARER": {
        "sasl.mechanism": "OAUTHBEARER",
        "enable.sasl.oauthbearer.unsecure.jwt": True,
        "sasl.oauthbearer.config": "principal=alice",
    },
}


def _metadata(front: OldBrokerFront, credentials: dict[str, Any]) -> Callable[[], Any]:
    conf = {"bootstrap.servers": f"127.0.0.1:{front.port}", "security.protocol": "sasl_plaintext", **credentials}
    client = Client({**conf, "reconnect.backoff.ms": 200})

    def ask() -> Any:
        try:
            return client.request(METADATA, {"topics": []}, node=-1, timeout=5).result(10)
        finally:
            client.close()

    return ask


@pytest.mark.parametrize("mechanism", sorted(CREDENTIALS))
def test_bare_tokens_after_sasl_handshake_v0_authenticate(
    kafka23: KafkaBroker, old_front: OldBrokerFront, mechanism: str
) -> None:
    kafka23.add_scram_user("erin", SCRAM_PASSWORD)
    answer = _metadata(old_front, CREDENTIALS[mechanism])()
    assert [b.port for b in answer.brokers] == [kafka23.ports["SASL_PLAINTEXT"]]
    assert old_front.handshakes and set(old_front.handshakes) == {0}


def test_refused_bare_credentials_close_the_connection(kafka23: KafkaBroker, old_front: OldBrokerFront) -> None:
    wrong = {**CREDENTIALS["PLAIN"], "sasl.password": "wrong"}
    with pytest.raises(KafkaException):
        _metadata(old_front, wrong)()
    assert old_front.handshakes and set(old_front.handshakes) == {0}
