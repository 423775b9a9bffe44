"""The main job for now: produce a sample dataset to a broker and print a delivery summary.

It exercises the whole foundation end to end: CreateTopics and Metadata through the client,
records hashed to partitions by key (murmur2, as Kafka's default partitioner), batched and lz4
compressed by the record layer, sent as pipelined Produce requests (acks=all) to each leader, and
finally read back with Fetch and counted, so the summary reports what the broker really holds.
The Spark pipeline issue turns this into the data pipeline.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import IO, Any

from .core.partitioners import partition_for_key
from .errors import KafkaError, KafkaException
from .io.client import Client
from .local_broker import TansuBroker
from .protocol.apis import CREATE_TOPICS, FETCH, PRODUCE
from .protocol.codec import Struct
from .records import LZ4, BatchBuilder, decode_batches, record_size_upper_bound

TOPIC_ALREADY_EXISTS = 36
BATCH_BYTES = 256 * 1024


@dataclass
class PartitionReport:
    records: int = 0
    batches: int = 0
    first_offset: int | None = None
    last_offset: int | None = None
    read_back: int = 0


@dataclass
class DemoSummary:
    topic: str
    records: int
    payload_bytes: int
    wire_bytes: int
    seconds: float
    partitions: dict[int, PartitionReport] = field(default_factory=dict)

    @property
    def delivered(self) -> int:
        return sum(p.records for p in self.partitions.values())

    @property
    def read_back(self) -> int:
        return sum(p.read_back for p in self.partitions.values())


def sample_orders(count: int) -> Iterator[tuple[bytes, bytes, list[tuple[str, bytes | None]]]]:
    """A deterministic dataset: orders keyed by customer, so one customer's orders stay in order."""
    products = ("kettle", "lamp", "desk", "chair", "mug", "rug", "shelf")
    for i in range(count):
        customer = f"customer-{(i * 7919) % 211:03d}"
        order = {
            "order_id": i,
            "customer": customer,
            "product": products[i % len(products)],
            "quantity": 1 + i % 5,
            "unit_price_cents": 199 + (i * 37) % 9800,
        }
        yield customer.encode(), json.dumps(order, separators=(",", ":")).encode(), [("source", b"kafkawire-demo")]


def create_topic(client: Client, topic: str, partitions: int) -> None:
    body = {"topics": [{"name": topic, "num_partitions": partitions, "replication_factor": 1}], "timeout_ms": 10_000}
    result = client.request(CREATE_TOPICS, body).result().topics[0]
    if result.error_code not in (0, TOPIC_ALREADY_EXISTS):
        raise KafkaException(KafkaError(result.error_code, f"creating {topic}: {result.error_message}"))


def produce_dataset(client: Client, topic: str, count: int) -> DemoSummary:
    partition_count = client.metadata.partition_count(topic)
    if not partition_count:
        raise KafkaException(KafkaError(KafkaError._UNKNOWN_TOPIC, f"{topic} has no partitions"))
    summary = DemoSummary(topic, count, 0, 0, 0.0, {p: PartitionReport() for p in range(partition_count)})
    builders: dict[int, BatchBuilder] = {}
    sent: list[tuple[int, int, Future[Struct]]] = []
    started = time.monotonic()

    def send(partition: int, builder: BatchBuilder) -> None:
        batch = builder.build(compression=LZ4)
        leader = client.metadata.leader_for(topic, partition)
        if leader is None:
            raise KafkaException(KafkaError(KafkaError._LEADER_NOT_AVAILABLE, f"{topic}[{partition}]"))
        body = {
            "acks": -1,
            "timeout_ms": 30_000,
            "topic_data": [{"name": topic, "partition_data": [{"index": partition, "records": batch}]}],
        }
        summary.wire_bytes += len(batch)
        sent.append((partition, len(builder), client.request(PRODUCE, body, node=leader.node_id)))

    now_ms = int(time.time() * 1000)
    for key, value, headers in sample_orders(count):
        partition = partition_for_key(key, partition_count)
        builder = builders.setdefault(partition, BatchBuilder())
        if len(builder) and builder.size + record_size_upper_bound(key, value, headers) > BATCH_BYTES:
            send(partition, builder)
            builder = builders[partition] = BatchBuilder()
        builder.append(now_ms, key, value, headers)
        summary.payload_bytes += len(key) + len(value)
    for partition, builder in builders.items():
        if len(builder):
            send(partition, builder)

    for partition, records, fut in sent:
        response = fut.result().responses[0].partition_responses[0]
        if response.error_code:
            raise KafkaException(KafkaError(response.error_code, f"producing to {topic}[{partition}]"))
        report = summary.partitions[partition]
        report.records += records
        report.batches += 1
        last = response.base_offset + records - 1
        report.first_offset = response.base_offset if report.first_offset is None else report.first_offset
        report.last_offset = last if report.last_offset is None else max(report.last_offset, last)
    summary.seconds = time.monotonic() - started
    return summary


def read_back(client: Client, topic: str, summary: DemoSummary) -> None:
    """Count what the broker holds from each partition's first delivered offset, with Fetch."""
    info = client.metadata.topics[topic]
    for partition, report in summary.partitions.items():
        if report.first_offset is None or report.last_offset is None:
            continue
        leader = client.metadata.leader_for(topic, partition)
        assert leader is not None
        offset = report.first_offset
        while offset <= report.last_offset:
            body: dict[str, Any] = {
                "max_wait_ms": 500,
                "min_bytes": 1,
                "max_bytes": 8 << 20,
                "topics": [
                    {
                        "topic": topic,
                        "topic_id": info.topic_id,
                        "partitions": [{"partition": partition, "fetch_offset": offset, "partition_max_bytes": 8 << 20}],
                    }
                ],
            }
            data = client.request(FETCH, body, node=leader.node_id).result().responses[0].partitions[0]
            if data.error_code:
                raise KafkaException(KafkaError(data.error_code, f"fetching {topic}[{partition}]"))
            batches = decode_batches(data.records or b"")
            if not batches:
                break
            for batch in batches:
                report.read_back += sum(1 for r in batch.records if offset <= r.offset <= report.last_offset)
                offset = max(offset, batch.next_offset)


def print_summary(summary: DemoSummary, out: IO[str]) -> None:
    rate = summary.delivered / summary.seconds if summary.seconds else 0.0
    out.write(f"\nTopic {summary.topic}: {summary.delivered:,} of {summary.records:,} records delivered")
    out.write(f" in {summary.seconds:.2f} s ({rate:,.0f} records/s, acks=all, lz4)\n")
    out.write(f"Payload {summary.payload_bytes:,} bytes; on the wire {summary.wire_bytes:,} bytes\n\n")
    out.write(f"{'partition':>9} {'records':>9} {'batches':>8} {'offsets':>17} {'read back':>10}\n")
    for p, r in sorted(summary.partitions.items()):
        offsets = "-" if r.first_offset is None else f"{r.first_offset}..{r.last_offset}"
        out.write(f"{p:>9} {r.records:>9,} {r.batches:>8} {offsets:>17} {r.read_back:>10,}\n")
    verdict = "OK" if summary.read_back == summary.delivered == summary.records else "MISMATCH"
    out.write(f"\nRead back {summary.read_back:,} records with Fetch: {verdict}\n")


def run(
    bootstrap: str | None, count: int, partitions: int, topic: str, out: IO[str], timeout: float = 30.0
) -> DemoSummary:
    """Every request is bounded by ``timeout`` seconds; the client fails it then, so waits never hang."""
    with ExitStack() as stack:
        if bootstrap is None:
            broker = stack.enter_context(TansuBroker())
            bootstrap = broker.bootstrap
            out.write(f"Started an embedded Tansu broker on {bootstrap}\n")
        client = stack.enter_context(Client(
                {"bootstrap.servers": bootstrap, "client.id": "kafkawire-demo", "socket.timeout.ms": int(timeout * 1000)}
            ))
        create_topic(client, topic, partitions)
        client.refresh_metadata([topic]).result()
        summary = produce_dataset(client, topic, count)
        read_back(client, topic, summary)
        print_summary(summary, out)
        return summary
    raise AssertionError("unreachable")  # ExitStack does not swallow exceptions
