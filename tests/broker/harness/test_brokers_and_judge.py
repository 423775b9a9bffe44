"""Self-tests of the test harness: Tansu, the mock cluster and the judge."""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import crc32c
import pytest
from confluent_kafka import KafkaError, Producer
from confluent_kafka.admin import AdminClient
from confluent_kafka.cimpl import NewTopic

from kafkawire.local_broker import LocalBrokerError, TansuBroker, probe_api_versions
from kafkawire.protocol.apis import API_VERSIONS, FETCH, INIT_PRODUCER_ID, METADATA, PRODUCE
from tests.harness.judge import (
    JudgeError,
    Record,
    consume_all,
    judge_config,
    partitions_of,
    produce_with_confluent,
)
from tests.harness.mock_cluster import (
    MockCluster,
    MockClusterError,
    api_key_names,
)

pytestmark = [pytest.mark.broker, pytest.mark.timeout(90)]

TopicName = Callable[[str], str]

# Kafka error codes used below.
NOT_ENOUGH_REPLICAS = 19
TOPIC_AUTHORIZATION_FAILED = 29
REQUEST_TIMED_OUT = 7


def _create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AdminClient(judge_config(bootstrap))
    futures = admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1)])
    futures[topic].result(10)


def _split(bootstrap: str) -> tuple[str, int]:
    host, _, port = bootstrap.rpartition(":")
    return host, int(port)


def _pid_alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            state = handle.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return state not in ("Z", "X")


# -- a minimal raw Produce v3, to put bytes on Tansu that no client would send --


def _varint(value: int) -> bytes:
    zigzag = (value << 1) ^ (value >> 63)
    out = bytearray()
    while True:
        byte = zigzag & 0x7F
        zigzag >>= 7
        if zigzag:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _record_batch(value: bytes, *, corrupt_crc: bool = False) -> bytes:
    body = b"\x00" + _varint(0) + _varint(0) + _varint(-1) + _varint(len(value)) + value
    body += _varint(0)  # no headers
    record = _varint(len(body)) + body
    now_ms = int(time.time() * 1000)
    # attributes, last offset delta, first/max timestamp, producer id/epoch,
    # base sequence, record count
    after_crc = struct.pack(">hiqqqhii", 0, 0, now_ms, now_ms, -1, -1, -1, 1) + record
    crc = crc32c.crc32c(after_crc)
    if corrupt_crc:
        crc ^= 0x5A5A5A5A
    batch_length = 4 + 1 + 4 + len(after_crc)  # leader epoch, magic, crc, rest
    return struct.pack(">qiibI", 0, batch_length, -1, 2, crc) + after_crc


def _raw_produce(bootstrap: str, topic: str, batch: bytes) -> tuple[int, int]:
    """Send one Produce v3 (acks=1) to partition 0; return (error, base offset)."""

    def string(data: bytes) -> bytes:
        return struct.pack(">h", len(data)) + data

    body = struct.pack(">hhi", PRODUCE.key, 3, 42) + string(b"harness-raw")
    body += struct.pack(">h", -1)  # null transactional id
    body += struct.pack(">hi", 1, 5000)  # acks, timeout
    body += struct.pack(">i", 1) + string(topic.encode())
    body += struct.pack(">ii", 1, 0) + struct.pack(">i", len(batch)) + batch
    with socket.create_connection(_split(bootstrap), timeout=5) as sock:
        sock.sendall(struct.pack(">i", len(body)) + body)
        header = b""
        while len(header) < 4:
            header += sock.recv(4 - len(header))
        (size,) = struct.unpack(">i", header)
        payload = b""
        while len(payload) < size:
            chunk = sock.recv(size - len(payload))
            assert chunk, "broker closed the connection"
            payload += chunk
    correlation, topic_count = struct.unpack_from(">ii", payload, 0)
    assert correlation == 42 and topic_count == 1
    (name_length,) = struct.unpack_from(">h", payload, 8)
    offset = 10 + name_length
    (partition_count,) = struct.unpack_from(">i", payload, offset)
    assert partition_count == 1
    partition, error, base_offset = struct.unpack_from(">ihq", payload, offset + 4)
    assert partition == 0
    return error, base_offset


# ----------------------------------------------------------------- Tansu


def test_tansu_roundtrip_with_keys_headers_timestamps(tansu: TansuBroker, topic_name: TopicName) -> None:
    topic = topic_name("roundtrip")
    _create_topic(tansu.bootstrap, topic, partitions=3)
    assert partitions_of(tansu.bootstrap, topic) == [0, 1, 2]
    base_ts = 1_700_000_000_000
    records = [
        Record(
            value=f"value-{i}".encode(),
            key=f"key-{i}".encode(),
            headers=[("h", f"hv-{i}".encode()), ("empty", None)],
            partition=i % 3,
            timestamp_ms=base_ts + i,
        )
        for i in range(10)
    ]
    delivered = produce_with_confluent(tansu.bootstrap, topic, records)
    assert [partition for partition, _ in delivered] == [i % 3 for i in range(10)]
    for partition in range(3):
        offsets = [offset for p, offset in delivered if p == partition]
        assert offsets == list(range(len(offsets)))

    messages = consume_all(tansu.bootstrap, topic, expected_count=10, settle=0.5)
    assert len(messages) == 10
    by_value = {message.value(): message for message in messages}
    for i, record in enumerate(records):
        message = by_value[record.value]
        assert message.key() == record.key
        assert message.partition() == i % 3
        assert message.timestamp()[1] == base_ts + i
        assert message.headers() == [("h", f"hv-{i}".encode()), ("empty", None)]


def test_tansu_listens_on_loopback_and_advertises_core_apis(tansu: TansuBroker) -> None:
    host, port = _split(tansu.bootstrap)
    assert host == "127.0.0.1" and port == tansu.port
    versions = tansu.api_versions()
    for api in (
        PRODUCE.key,
        METADATA.key,
        API_VERSIONS.key,
        INIT_PRODUCER_ID.key,
    ):
        assert api in versions, api_key_names([api])
    assert versions[PRODUCE.key][1] >= 3  # record batches (magic 2)
    metadata = AdminClient(judge_config(tansu.bootstrap)).list_topics(timeout=10)
    advertised = [f"{b.host}:{b.port}" for b in metadata.brokers.values()]
    assert advertised == [tansu.bootstrap]


def test_tansu_auto_creates_only_when_metadata_asks(tansu: TansuBroker, topic_name: TopicName) -> None:
    not_created = topic_name("noauto")
    # One answer is the check (a timeout here is the host's load, not the broker's verdict).
    asker = Producer(judge_config(tansu.bootstrap, **{"allow.auto.create.topics": False}))
    info = asker.list_topics(not_created, timeout=30).topics[not_created]
    assert info.error is not None and info.error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART
    with pytest.raises(JudgeError, match="no partitions"):
        partitions_of(tansu.bootstrap, not_created, timeout=1.0)

    auto = topic_name("auto")
    producer = Producer(judge_config(tansu.bootstrap))  # allow.auto.create.topics=true
    info = producer.list_topics(auto, timeout=10).topics[auto]
    assert info.error is None
    assert len(info.partitions) == 4
    producer.flush(1)


def test_judge_rejects_a_batch_with_a_bad_crc(tansu: TansuBroker, topic_name: TopicName) -> None:
    topic = topic_name("crc")
    _create_topic(tansu.bootstrap, topic, partitions=1)
    assert _raw_produce(tansu.bootstrap, topic, _record_batch(b"good")) == (0, 0)
    assert consume_all(tansu.bootstrap, topic, 1)[0].value() == b"good"
    # Tansu stores the corrupt batch without checking it; the judge must not.
    error, base_offset = _raw_produce(tansu.bootstrap, topic, _record_batch(b"bad", corrupt_crc=True))
    assert (error, base_offset) == (0, 1)
    with pytest.raises(JudgeError, match="CRC"):
        consume_all(tansu.bootstrap, topic, 2, timeout=5)


def test_tansu_start_failure_reports_log_tail(tmp_path: Path) -> None:
    fake = tmp_path / "fake-tansu"
    fake.write_text("#!/bin/sh\necho 'fake broker exploding' >&2\nexit 3\n")
    fake.chmod(0o755)
    broker = TansuBroker(binary=fake, startup_timeout=5)
    with pytest.raises(LocalBrokerError) as caught:
        broker.start()
    assert "fake broker exploding" in str(caught.value)
    assert "code 3" in str(caught.value)
    assert not broker.running
    broker.stop()


def test_tansu_stop_terminates_and_frees_port() -> None:
    with TansuBroker() as broker:
        pid = broker.pid
        port = broker.port
        log_path = broker.log_path
        assert pid is not None and _pid_alive(pid)
        assert log_path is not None and log_path.exists()
        probe_api_versions("127.0.0.1", port)
    assert not broker.running
    assert not _pid_alive(pid)
    assert not log_path.exists()
    with pytest.raises(OSError):
        probe_api_versions("127.0.0.1", port, timeout=1)
    broker.stop()  # idempotent


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux-only")
def test_tansu_dies_with_its_parent() -> None:
    script = textwrap.dedent(
        """
        import sys, time
        from kafkawire.local_broker import TansuBroker
        broker = TansuBroker().start()
        print(broker.pid, broker.port, broker.log_path, flush=True)
        time.sleep(120)
        """
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    log_path: Path | None = None
    try:
        assert parent.stdout is not None
        pid_text, port_text, log_text = parent.stdout.readline().decode().split()
        broker_pid, port, log_path = int(pid_text), int(port_text), Path(log_text)
        assert _pid_alive(broker_pid)
        probe_api_versions("127.0.0.1", port)
    finally:
        parent.kill()
        parent.wait()
        if parent.stdout is not None:
            parent.stdout.close()
        if log_path is not None:  # the killed parent could not remove it
            log_path.unlink(missing_ok=True)
    deadline = time.monotonic() + 60
    while _pid_alive(broker_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    alive = _pid_alive(broker_pid)
    if alive:  # do not leave it behind even when the assertion fails
        os.kill(broker_pid, 9)
    assert not alive, "the broker outlived the process that started it"


# ----------------------------------------------------------- mock cluster


def test_mock_bootstraps_are_loopback(mock_cluster: MockCluster) -> None:
    entries = mock_cluster.bootstraps.split(",")
    assert len(entries) == 3 == mock_cluster.broker_count
    for entry in entries:
        host, port = _split(entry)
        assert host == "127.0.0.1" and port > 0
        assert PRODUCE.key in probe_api_versions(host, port)
    metadata = AdminClient(judge_config(mock_cluster.bootstraps)).list_topics(timeout=10)
    assert sorted(metadata.brokers) == mock_cluster.broker_ids


def test_mock_topic_created_through_c_api_roundtrip(mock_cluster: MockCluster, topic_name: TopicName) -> None:
    topic = topic_name("mock")
    mock_cluster.create_topic(topic, partitions=4, replication=3)
    assert partitions_of(mock_cluster.bootstraps, topic) == [0, 1, 2, 3]
    records = [Record(value=b"v%d" % i, key=b"k%d" % i, partition=i % 4) for i in range(8)]
    produce_with_confluent(mock_cluster.bootstraps, topic, records)
    messages = consume_all(mock_cluster.bootstraps, topic, 8, settle=0.3)
    assert sorted((m.partition(), m.key(), m.value()) for m in messages) == sorted(
        (i % 4, b"k%d" % i, b"v%d" % i) for i in range(8)
    )


def test_mock_set_apiversion_changes_what_is_advertised(
    mock_cluster: MockCluster,
) -> None:
    host, port = _split(mock_cluster.bootstraps.split(",")[0])
    before = probe_api_versions(host, port)
    assert before[PRODUCE.key][1] > 3
    mock_cluster.set_apiversion(PRODUCE.key, 2, 3)
    assert probe_api_versions(host, port)[PRODUCE.key] == (2, 3)
    mock_cluster.set_apiversion(INIT_PRODUCER_ID.key, -1, -1)
    assert INIT_PRODUCER_ID.key not in probe_api_versions(host, port)


def test_mock_request_tracking_records_client_requests(mock_cluster: MockCluster, topic_name: TopicName) -> None:
    topic = topic_name("track")
    mock_cluster.create_topic(topic, partitions=1, replication=1)
    mock_cluster.start_request_tracking()
    produce_with_confluent(mock_cluster.bootstraps, topic, [b"one"])
    requests = mock_cluster.get_requests()
    seen = {request.api_key for request in requests}
    assert {API_VERSIONS.key, METADATA.key, PRODUCE.key} <= seen, api_key_names(seen)
    assert len(mock_cluster.requests_of(PRODUCE.key)) == 1
    assert {request.broker_id for request in requests} <= set(mock_cluster.broker_ids)
    stamps = [request.timestamp_us for request in requests]
    assert stamps == sorted(stamps) and stamps[0] > 0

    mock_cluster.clear_requests()
    assert mock_cluster.get_requests() == []
    mock_cluster.stop_request_tracking()
    produce_with_confluent(mock_cluster.bootstraps, topic, [b"two"])
    assert mock_cluster.get_requests() == []


def test_mock_partition_leader_and_follower_route_requests(mock_cluster: MockCluster, topic_name: TopicName) -> None:
    topic = topic_name("leader")
    mock_cluster.create_topic(topic, partitions=1, replication=3)
    mock_cluster.partition_set_leader(topic, 0, 2)
    mock_cluster.start_request_tracking()
    produce_with_confluent(mock_cluster.bootstraps, topic, [b"x"])
    assert [r.broker_id for r in mock_cluster.requests_of(PRODUCE.key)] == [2]

    mock_cluster.partition_set_leader(topic, 0, 1)
    mock_cluster.clear_requests()
    produce_with_confluent(mock_cluster.bootstraps, topic, [b"y"])
    assert [r.broker_id for r in mock_cluster.requests_of(PRODUCE.key)] == [1]

    # A follower makes the leader answer Fetch with it as preferred read
    # replica (KIP-392), so the consumer moves its fetches there. (Setting the
    # follower to the leader itself leaves a consumer fetching nothing.)
    mock_cluster.partition_set_follower(topic, 0, 3)
    mock_cluster.clear_requests()
    assert len(consume_all(mock_cluster.bootstraps, topic, 2, settle=0.3)) == 2
    fetch_brokers = [r.broker_id for r in mock_cluster.requests_of(FETCH.key)]
    assert fetch_brokers[0] == 1 and 3 in fetch_brokers, fetch_brokers


def test_mock_push_request_errors_makes_the_client_retry(mock_cluster: MockCluster, topic_name: TopicName) -> None:
    topic = topic_name("retry")
    mock_cluster.create_topic(topic, partitions=1, replication=1)
    mock_cluster.start_request_tracking()
    mock_cluster.push_request_errors(PRODUCE.key, [NOT_ENOUGH_REPLICAS])
    delivered = produce_with_confluent(mock_cluster.bootstraps, topic, [b"once"], config={"retry.backoff.ms": 10})
    assert delivered == [(0, 0)]
    assert len(mock_cluster.requests_of(PRODUCE.key)) == 2
    messages = consume_all(mock_cluster.bootstraps, topic, 1, settle=0.3)
    assert [m.value() for m in messages] == [b"once"]


def test_mock_non_retriable_error_reaches_the_judge(mock_cluster: MockCluster, topic_name: TopicName) -> None:
    topic = topic_name("fatal")
    mock_cluster.create_topic(topic, partitions=1, replication=1)
    mock_cluster.push_request_errors(PRODUCE.key, [TOPIC_AUTHORIZATION_FAILED])
    with pytest.raises(JudgeError, match="TOPIC_AUTHORIZATION_FAILED"):
        produce_with_confluent(mock_cluster.bootstraps, topic, [b"denied"])


def test_mock_broker_error_rtts_delay_the_response(mock_cluster: MockCluster, topic_name: TopicName) -> None:
    topic = topic_name("rtt")
    mock_cluster.create_topic(topic, partitions=1, replication=1)
    mock_cluster.partition_set_leader(topic, 0, 1)
    mock_cluster.push_request_error_rtts(1, PRODUCE.key, [(REQUEST_TIMED_OUT, 0), (0, 600)])
    assert mock_cluster.error_stack_count(1, PRODUCE.key) == 2
    mock_cluster.start_request_tracking()
    started = time.monotonic()
    produce_with_confluent(mock_cluster.bootstraps, topic, [b"slow"], config={"retry.backoff.ms": 10})
    elapsed = time.monotonic() - started
    assert elapsed >= 0.55, elapsed
    assert mock_cluster.error_stack_count(1, PRODUCE.key) == 0
    assert len(mock_cluster.requests_of(PRODUCE.key)) == 2
    with pytest.raises(MockClusterError, match=r"UNKNOWN_BROKER|_UNKNOWN"):
        mock_cluster.error_stack_count(99, PRODUCE.key)


def test_mock_broker_set_rtt_slows_every_response(mock_cluster: MockCluster, topic_name: TopicName) -> None:
    topic = topic_name("brtt")
    mock_cluster.create_topic(topic, partitions=1, replication=1)
    partitions_of(mock_cluster.bootstraps, topic)
    host, port = _split(mock_cluster.bootstraps.split(",")[0])
    mock_cluster.broker_set_rtt(1, 800)
    started = time.monotonic()
    probe_api_versions(host, port, timeout=5)
    assert time.monotonic() - started >= 0.75
    mock_cluster.broker_set_rtt(1, 0)
    started = time.monotonic()
    probe_api_versions(host, port, timeout=5)
    assert time.monotonic() - started < 0.75  # generous: only the delay is gone


def test_mock_broker_down_is_unreachable_until_up(mock_cluster: MockCluster, topic_name: TopicName) -> None:
    topic = topic_name("down")
    mock_cluster.create_topic(topic, partitions=1, replication=1)
    mock_cluster.partition_set_leader(topic, 0, 1)
    host, port = _split(mock_cluster.bootstraps.split(",")[0])

    mock_cluster.broker_set_down(1)
    with pytest.raises(ConnectionRefusedError):
        probe_api_versions(host, port, timeout=2)
    with pytest.raises(JudgeError):
        produce_with_confluent(
            mock_cluster.bootstraps,
            topic,
            [b"lost"],
            config={"message.timeout.ms": 1500},
            timeout=10,
        )

    mock_cluster.broker_set_up(1)
    assert PRODUCE.key in probe_api_versions(host, port)
    produce_with_confluent(mock_cluster.bootstraps, topic, [b"after"])
    assert [m.value() for m in consume_all(mock_cluster.bootstraps, topic, 1, settle=0.3)] == [b"after"]


def test_mock_topic_set_error_shows_in_metadata(mock_cluster: MockCluster, topic_name: TopicName) -> None:
    topic = topic_name("terr")
    mock_cluster.create_topic(topic, partitions=1, replication=1)
    mock_cluster.topic_set_error(topic, TOPIC_AUTHORIZATION_FAILED)
    admin = AdminClient(judge_config(mock_cluster.bootstraps))
    error = admin.list_topics(topic, timeout=10).topics[topic].error
    assert error is not None and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    mock_cluster.topic_set_error(topic, 0)
    assert admin.list_topics(topic, timeout=10).topics[topic].error is None


def test_mock_cluster_close_is_idempotent_and_final() -> None:
    cluster = MockCluster(broker_count=1)
    host, port = _split(cluster.bootstraps)
    probe_api_versions(host, port)
    cluster.close()
    cluster.close()
    assert cluster.closed
    with pytest.raises(MockClusterError, match="closed"):
        cluster.create_topic("after-close")
    with pytest.raises(OSError):
        probe_api_versions(host, port, timeout=1)
