"""librdkafka properties with an effect on a real broker (Tansu): connections.max.idle.ms closes an
idle connection (and the client carries on), log.connection.close says when a broker closes one,
delivery.report.only.error reports failed deliveries only, judged by confluent-kafka doing the same."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import confluent_kafka as ck
import pytest

import kafkawire
from kafkawire.io.broker import ConnectionState
from kafkawire.local_broker import TansuBroker
from tests.harness.hostile_scenarios import wait_until
from tests.harness.topics import create_topic


def test_an_idle_connection_is_closed_and_the_client_reconnects(tansu: TansuBroker) -> None:
    with kafkawire.admin.AdminClient({"bootstrap.servers": tansu.bootstrap, "connections.max.idle.ms": 300}) as admin:
        client = admin._client  # the admin client's network client, to see its connections
        admin.list_topics(timeout=10)
        conns = client.connections
        # (No look at a connection "ready" now: on a busy host 300 ms of idleness can be over
        # before the look, and the bootstrap connection, retired, closes as soon as it is idle.)
        assert wait_until(lambda: all(c.state is ConnectionState.DISCONNECTED for c in conns()))
        made = sum(c.stats.connects for c in conns())
        assert made >= 1 and sum(c.stats.disconnects for c in conns()) == made
        assert all(c.last_error is None for c in conns())  # closed quietly: not a failure
        assert admin.list_topics(timeout=10).brokers  # the next request connects again
        assert sum(c.stats.connects for c in conns()) > made


def test_without_connections_max_idle_ms_connections_stay(tansu: TansuBroker) -> None:
    with kafkawire.admin.AdminClient({"bootstrap.servers": tansu.bootstrap}) as admin:
        admin.list_topics(timeout=10)

        def conns() -> list[Any]:
            """The named brokers' (the bootstrap connection, retired, closes once idle, as librdkafka's)."""
            return [c for c in admin._client.connections() if c.node_id >= 0]

        assert wait_until(lambda: any(c.state is ConnectionState.READY for c in conns()))
        up = [c for c in conns() if c.state is ConnectionState.READY]
        time.sleep(1.0)
        assert all(c.state is ConnectionState.READY and c.stats.connects == 1 for c in up)


def _deliveries(producer: Any, topic: str) -> list[tuple[str | None, int]]:
    reports: list[tuple[str | None, int]] = []

    def on_delivery(err: Any, msg: Any) -> None:
        reports.append((None if err is None else err.name(), msg.partition()))

    producer.produce(topic, b"good", partition=0, on_delivery=on_delivery)
    try:  # the topic has 1 partition: refused at once if the metadata is in already, else reported
        producer.produce(topic, b"bad", partition=7, on_delivery=on_delivery)
    except Exception as exc:
        reports.append((exc.args[0].name(), 7))
    producer.flush(30)
    _close(producer)
    return sorted(reports, key=str)


def _close(producer: Any) -> None:
    close = getattr(producer, "close", None)  # (kafkawire's; confluent-kafka's may have none)
    if close is not None:
        close()


@pytest.mark.parametrize("only_error", [False, True])
def test_delivery_report_only_error_as_confluent_kafka(
    tansu: TansuBroker, topic_name: Callable[[str], str], only_error: bool
) -> None:
    topic = topic_name("dr")
    create_topic(tansu.bootstrap, topic, 1)
    conf = {
        "bootstrap.servers": tansu.bootstrap,
        "delivery.report.only.error": only_error,
        "message.timeout.ms": 10_000,
    }
    ours = _deliveries(kafkawire.Producer(conf), topic)
    theirs = _deliveries(ck.Producer(conf), topic)
    assert ours == theirs
    expected = [("_UNKNOWN_PARTITION", 7)] + ([] if only_error else [(None, 0)])
    assert sorted(ours, key=str) == sorted(expected, key=str)


def test_log_connection_close(caplog: pytest.LogCaptureFixture) -> None:
    """A broker closing a connection is logged unless log.connection.close is false."""
    import socket
    import threading

    for log_close in (True, False):
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen()
        host, port = server.getsockname()

        def accept_and_close(server: socket.socket = server) -> None:
            conn, _ = server.accept()
            conn.recv(4096)  # the ApiVersions request, then the "broker" closes the connection
            conn.close()

        threading.Thread(target=accept_and_close, daemon=True).start()
        caplog.clear()
        with (
            caplog.at_level(logging.INFO, logger="kafkawire"),
            kafkawire.admin.AdminClient(
                {
                    "bootstrap.servers": f"{host}:{port}",
                    "log.connection.close": log_close,
                    "reconnect.backoff.ms": 10_000,
                }
            ) as admin,
            pytest.raises(kafkawire.KafkaException),
        ):
            admin.list_topics(timeout=2)
        server.close()
        closed = [r for r in caplog.records if "Disconnected" in r.getMessage()]
        assert bool(closed) is log_close


def _unknown_topic_outcome(
    module: Any, bootstrap: str, topic: str, propagation: int, created: Callable[[], None]
) -> str:
    """A record for a topic the metadata says does not exist; the topic appears after the first
    answers (``created``): delivered if the producer still waited, else failed. Judged by the log's
    end offset (confluent-kafka cannot build the delivery report of a record that never had a
    partition: its callback machinery fails with TypeError)."""
    producer = module.Producer(
        {"bootstrap.servers": bootstrap, "topic.metadata.propagation.max.ms": propagation, "message.timeout.ms": 60_000}
    )
    producer.produce(topic, b"v")
    producer.poll(1.0)  # the first metadata answers: unknown topic
    created()
    producer.flush(60)
    _close(producer)
    judge = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": "watermarks"})
    try:
        _low, high = judge.get_watermark_offsets(ck.TopicPartition(topic, 0), timeout=10)
    finally:
        judge.close()
    return "delivered" if high == 1 else "failed"


@pytest.mark.parametrize("propagation", [0, 30_000])
def test_topic_metadata_propagation_max_ms_as_confluent_kafka(
    mock_cluster: Any, topic_name: Callable[[str], str], propagation: int
) -> None:
    outcomes = []
    for module in (kafkawire, ck):
        topic = topic_name("prop")
        mock_cluster.create_topic(topic, partitions=1, replication=1)
        mock_cluster.topic_set_error(topic, 3)  # UNKNOWN_TOPIC_OR_PARTITION until "created"
        created = lambda t=topic: mock_cluster.topic_set_error(t, 0)  # noqa: E731
        outcomes.append(_unknown_topic_outcome(module, mock_cluster.bootstraps, topic, propagation, created))
    assert outcomes[0] == outcomes[1] == ("failed" if propagation == 0 else "delivered")


def test_every_address_of_a_name_is_tried_use_all_dns_ips(tansu: TansuBroker, monkeypatch: pytest.MonkeyPatch) -> None:
    """client.dns.lookup=use_all_dns_ips (librdkafka's default): a name whose first address refuses
    connections is reached through its next one."""
    import socket

    dead = socket.socket()
    dead.bind(("127.0.0.1", 0))  # bound, never listening: connections to it are refused
    tansu_port = int(tansu.bootstrap.rsplit(":", 1)[1])
    real = socket.getaddrinfo

    def two_addresses(host: str, port: int, *args: Any, **kw: Any) -> Any:
        if host != "two.addresses.test":
            return real(host, port, *args, **kw)
        stream, tcp = socket.SOCK_STREAM, socket.IPPROTO_TCP
        return [
            (socket.AF_INET, stream, tcp, "", ("127.0.0.1", dead.getsockname()[1])),
            (socket.AF_INET, stream, tcp, "", ("127.0.0.1", tansu_port)),
        ]

    monkeypatch.setattr(socket, "getaddrinfo", two_addresses)
    try:
        with kafkawire.admin.AdminClient(
            {"bootstrap.servers": f"two.addresses.test:{tansu_port}", "client.dns.lookup": "use_all_dns_ips"}
        ) as admin:
            assert admin.list_topics(timeout=20).brokers
    finally:
        dead.close()
