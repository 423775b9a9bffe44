"""First end-to-end proof: our Produce requests, built by our record code, read back by confluent-kafka.

For both real brokers (Tansu and librdkafka's mock cluster), every codec, and every Produce version
the broker advertises, we write records to their own partition (partition = Produce version) and
confluent-kafka must read every record back identical: key, value, headers, timestamp.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass

import confluent_kafka
import pytest

from kafkawire import KafkaError, KafkaException
from kafkawire.client.network_client import Client
from kafkawire.core.versions import ranges_from_response
from kafkawire.local_broker import TansuBroker
from kafkawire.protocol.apis import API_VERSIONS, CREATE_TOPICS, PRODUCE
from kafkawire.records import GZIP, LZ4, NONE, SNAPPY, ZSTD, BatchBuilder, encode_message_set
from tests.harness.judge import consume_all
from tests.harness.mock_cluster import MockCluster

pytestmark = pytest.mark.broker

CODECS = {"none": NONE, "gzip": GZIP, "snappy": SNAPPY, "lz4": LZ4, "zstd": ZSTD}
ZSTD_MIN_PRODUCE_VERSION = 7  # KIP-110: brokers refuse zstd in older Produce versions
# Tansu quirk (contributing/judges.md): it advertises Produce v0-2 but parses their message sets as RecordBatch v2
# and drops the connection. Legacy message sets are proven on the mock cluster instead.
TANSU_MIN_WORKING_PRODUCE = 3
# Mock quirk (contributing/judges.md): its Produce v5 response lacks log_start_offset, so v5 is sent with acks=0
# there; the readback still proves the records.
MOCK_UNANSWERABLE_PRODUCE = 5
# Mock quirk (contributing/judges.md): it stores only magic-2 batches and uncompressed message sets; a compressed
# legacy message set is refused with UNSUPPORTED_VERSION. Compressed legacy sets are checked
# against kafka-python's reader in tests/unit/records instead.
MOCK_MIN_COMPRESSED_PRODUCE = 3


@dataclass(frozen=True)
class Sample:
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]
    timestamp: int


def samples(version: int) -> list[Sample]:
    now = int(time.time() * 1000)
    headers: tuple[tuple[str, bytes | None], ...] = (
        (("trace", f"v{version}".encode()), ("empty", b""), ("nothing", None), ("utf8-ключ", b"\x00\xff"))
        if version >= 3
        else ()  # message sets before v3 carry no headers
    )
    return [
        Sample(b"key-1", b"value-1", headers, now - 3000),
        Sample(None, b"value without key", headers, now - 2000),
        Sample(b"tombstone", None, headers, now - 1000),
        Sample(bytes(range(256)), b"x" * 5000, headers, now),  # compressible, binary key
    ]


def encode(version: int, codec: int, records: list[Sample]) -> bytes:
    if version >= 3:
        builder = BatchBuilder()
        for r in records:
            builder.append(r.timestamp, r.key, r.value, r.headers)
        return builder.build(compression=codec)
    magic = 0 if version < 2 else 1
    return encode_message_set(magic, [(r.timestamp, r.key, r.value) for r in records], codec)


def produce(client: Client, topic: str, partition: int, version: int, records: bytes, acks: int = -1) -> None:
    leader = client.metadata.leader_for(topic, partition)
    assert leader is not None, f"no leader for {topic}[{partition}]"
    body = {
        "transactional_id": None,
        "acks": acks,
        "timeout_ms": 10_000,
        "topic_data": [{"name": topic, "partition_data": [{"index": partition, "records": records}]}],
    }
    if acks == 0:  # no answer comes: the callback runs once the request is written
        written: Future[None] = Future()

        def done(_body: object, error: KafkaError | None) -> None:
            if error is not None:
                written.set_exception(KafkaException(error))
            else:
                written.set_result(None)

        client.engine.call_soon(
            lambda: client.request_io(
                PRODUCE, body, done, node=leader.node_id, max_version=version, expect_response=False
            )
        )
        written.result(15)
        return
    response = client.request(PRODUCE, body, node=leader.node_id, max_version=version).result(15)
    [topic_response] = response.responses
    [partition_response] = topic_response.partition_responses
    assert partition_response.error_code == 0, f"Produce v{version}: error {partition_response.error_code}"


def check_readback(bootstrap: str, topic: str, expected: dict[int, list[Sample]]) -> None:
    total = sum(len(v) for v in expected.values())
    got = consume_all(bootstrap, topic, total, timeout=30)
    by_partition: dict[int, list[confluent_kafka.Message]] = {}
    for m in got:
        by_partition.setdefault(m.partition(), []).append(m)
    assert sorted(by_partition) == sorted(expected), "records landed in unexpected partitions"
    for version, sent in expected.items():
        read = sorted(by_partition[version], key=lambda m: m.offset())
        assert len(read) == len(sent), f"Produce v{version}: {len(read)} records read, {len(sent)} sent"
        for s, m in zip(sent, read, strict=True):
            assert (m.key(), m.value()) == (s.key, s.value), f"Produce v{version}"
            assert list(m.headers() or []) == list(s.headers), f"Produce v{version}"
            ts_type, ts = m.timestamp()
            if version < 2:  # magic 0 has no timestamp
                assert ts_type == confluent_kafka.TIMESTAMP_NOT_AVAILABLE
            else:
                assert (ts_type, ts) == (confluent_kafka.TIMESTAMP_CREATE_TIME, s.timestamp), f"Produce v{version}"


def advertised_produce_versions(client: Client) -> tuple[int, int]:
    return ranges_from_response(client.request(API_VERSIONS, {}).result(10))[PRODUCE.key]


def versions_for(codec: int, advertised: tuple[int, int], floor: int = 0) -> list[int]:
    low = max(advertised[0], floor, ZSTD_MIN_PRODUCE_VERSION if codec == ZSTD else 0)
    return list(range(low, advertised[1] + 1))


@pytest.fixture
def tansu_client(tansu: TansuBroker) -> Iterator[Client]:
    with Client({"bootstrap.servers": tansu.bootstrap}) as client:
        yield client


@pytest.mark.parametrize("codec_name", list(CODECS))
def test_tansu_reads_back_every_produce_version_and_codec(
    tansu: TansuBroker, tansu_client: Client, topic_name: Callable[[str], str], codec_name: str
) -> None:
    codec = CODECS[codec_name]
    topic = topic_name(codec_name)
    client = tansu_client
    advertised = advertised_produce_versions(client)
    created = client.request(
        CREATE_TOPICS,
        {"topics": [{"name": topic, "num_partitions": advertised[1] + 1, "replication_factor": 1}], "timeout_ms": 5000},
    ).result(10)
    assert created.topics[0].error_code == 0
    client.refresh_metadata([topic]).result(10)

    expected: dict[int, list[Sample]] = {}
    for version in versions_for(codec, advertised, TANSU_MIN_WORKING_PRODUCE):
        expected[version] = samples(version)
        produce(client, topic, version, version, encode(version, codec, expected[version]))
    check_readback(tansu.bootstrap, topic, expected)


@pytest.mark.parametrize("codec_name", list(CODECS))
def test_mock_cluster_reads_back_every_produce_version_and_codec(
    mock_cluster: MockCluster, topic_name: Callable[[str], str], codec_name: str
) -> None:
    codec = CODECS[codec_name]
    topic = topic_name(codec_name)
    with Client({"bootstrap.servers": mock_cluster.bootstraps}) as probe:
        advertised = advertised_produce_versions(probe)
    mock_cluster.create_topic(topic, partitions=advertised[1] + 1, replication=1)

    expected: dict[int, list[Sample]] = {}
    for version in versions_for(codec, advertised, MOCK_MIN_COMPRESSED_PRODUCE if codec != NONE else 0):
        # Force the version on the broker side: the mock then advertises only up to it.
        mock_cluster.set_apiversion(PRODUCE.key, advertised[0], version)
        with Client({"bootstrap.servers": mock_cluster.bootstraps}) as client:
            client.refresh_metadata([topic]).result(10)
            leader = client.metadata.leader_for(topic, version)
            assert leader is not None
            conn = client.connection(leader.node_id)
            assert conn is not None
            expected[version] = samples(version)
            acks = 0 if version == MOCK_UNANSWERABLE_PRODUCE else -1
            produce(client, topic, version, version, encode(version, codec, expected[version]), acks)
            assert conn.versions[PRODUCE.key][1] == version, "the mock did not take the forced version"
    mock_cluster.set_apiversion(PRODUCE.key, *advertised)
    check_readback(mock_cluster.bootstraps, topic, expected)
