"""We decode what confluent-kafka produced: its batches, fetched raw from Tansu, for every codec."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest

from kafkawire.client.network_client import Client
from kafkawire.local_broker import TansuBroker
from kafkawire.protocol.apis import FETCH
from kafkawire.records import CREATE_TIME, decode_batches
from tests.harness.judge import Record, produce_with_confluent

pytestmark = pytest.mark.broker

CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


@pytest.fixture
def client(tansu: TansuBroker) -> Iterator[Client]:
    with Client({"bootstrap.servers": tansu.bootstrap}) as c:
        yield c


def fetch_all(client: Client, topic: str, partition: int) -> bytes:
    info = client.refresh_metadata([topic]).result(10).topics[topic]
    leader = client.metadata.leader_for(topic, partition)
    assert leader is not None
    body = {
        "max_wait_ms": 100,
        "min_bytes": 1,
        "topics": [
            {
                "topic": topic,
                "topic_id": info.topic_id,
                "partitions": [{"partition": partition, "fetch_offset": 0, "partition_max_bytes": 1 << 20}],
            }
        ],
    }
    data = client.request(FETCH, body, node=leader.node_id).result(10).responses[0].partitions[0]
    assert data.error_code == 0
    return bytes(data.records or b"")


@pytest.mark.parametrize("codec_name", list(CODECS))
def test_decode_batches_written_by_confluent(
    tansu: TansuBroker, client: Client, topic_name: Callable[[str], str], codec_name: str
) -> None:
    topic = topic_name(codec_name)
    now = int(time.time() * 1000)
    sent = [
        Record(
            value=b"v" * i * 100,
            key=None if i % 3 == 0 else f"k{i}".encode(),
            headers=[("n", str(i).encode()), ("empty", None)],
            partition=0,
            timestamp_ms=now + i,
        )
        for i in range(50)
    ]
    produce_with_confluent(
        tansu.bootstrap,
        topic,
        sent,
        config={"compression.type": codec_name, "linger.ms": 50, "enable.idempotence": True},
    )
    batches = decode_batches(fetch_all(client, topic, 0))
    assert {b.compression for b in batches} == {CODECS[codec_name]}
    records = [r for b in batches for r in b.records]
    assert [r.offset for r in records] == list(range(50))
    for s, r in zip(sent, records, strict=True):
        assert (r.key, r.value, r.timestamp) == (s.key, s.value, s.timestamp_ms)
        assert list(r.headers) == list(s.headers)
    assert all(b.timestamp_type == CREATE_TIME for b in batches)
    # Idempotent batches carry the producer id and contiguous sequences.
    assert len({b.producer_id for b in batches}) == 1 and batches[0].producer_id >= 0
    assert [b.base_sequence for b in batches] == [b.base_offset for b in batches]
