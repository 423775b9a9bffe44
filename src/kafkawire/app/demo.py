"""The main job for now: produce a sample dataset to a broker and print a delivery summary.

It exercises the stack end to end: CreateTopics through the client, then kafkawire's `Producer`
(keys hashed to partitions with murmur2 as the Java client does, lz4 batches, acks=all) with a
delivery report per record, and finally a read-back with Fetch, so the summary reports what the
broker really holds.
The Spark pipeline issue turns this into the data pipeline.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import IO

from ..admin import NewTopic, create_topic_if_missing
from ..base.model import Message
from ..client.network_client import Client
from ..core.kafka_error import KafkaError, KafkaException
from ..local_broker import TansuBroker
from ..producer import Producer
from ..range_reader import fetch_range


@dataclass
class PartitionReport:
    records: int = 0
    first_offset: int | None = None
    last_offset: int | None = None
    read_back: int = 0


@dataclass
class DemoSummary:
    topic: str
    records: int
    payload_bytes: int
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


def create_topic(bootstrap: str, topic: str, partitions: int, timeout: float) -> None:
    """Create the demo topic with kafkawire's AdminClient; one left by an earlier run is fine."""
    conf = {"bootstrap.servers": bootstrap, "socket.timeout.ms": int(timeout * 1000)}
    create_topic_if_missing(conf, NewTopic(topic, partitions, 1), timeout)


def produce_dataset(bootstrap: str, topic: str, count: int, partitions: int, timeout: float) -> DemoSummary:
    """Produce the orders with kafkawire's `Producer` (lz4, acks=all) and tally the delivery reports."""
    summary = DemoSummary(topic, count, 0, 0.0, {p: PartitionReport() for p in range(partitions)})
    errors: list[KafkaError] = []

    def delivered(err: KafkaError | None, msg: Message) -> None:
        if err is not None:
            errors.append(err)
            return
        report = summary.partitions[msg.partition() or 0]
        offset = msg.offset() or 0
        report.records += 1
        report.first_offset = offset if report.first_offset is None else min(report.first_offset, offset)
        report.last_offset = offset if report.last_offset is None else max(report.last_offset, offset)

    conf = {
        "bootstrap.servers": bootstrap,
        "client.id": "kafkawire-demo",
        "compression.type": "lz4",
        "acks": "all",
        "linger.ms": 5,
        "message.timeout.ms": int(timeout * 1000),
        "max.block.ms": int(timeout * 1000),
    }
    started = time.monotonic()
    with Producer(conf) as producer:
        for key, value, headers in sample_orders(count):
            producer.produce(topic, value, key, headers=headers, on_delivery=delivered)
            summary.payload_bytes += len(key) + len(value)
        producer.flush(timeout)
    summary.seconds = time.monotonic() - started
    if errors:
        raise KafkaException(errors[0])
    return summary


def read_back(client: Client, topic: str, summary: DemoSummary) -> None:
    """Count what the broker holds from each partition's first delivered offset, with Fetch."""
    for partition, report in summary.partitions.items():
        if report.first_offset is None or report.last_offset is None:
            continue
        for _batch, records in fetch_range(client, topic, partition, report.first_offset, report.last_offset + 1):
            report.read_back += len(records)


def print_summary(summary: DemoSummary, out: IO[str]) -> None:
    rate = summary.delivered / summary.seconds if summary.seconds else 0.0
    out.write(f"\nTopic {summary.topic}: {summary.delivered:,} of {summary.records:,} records delivered")
    out.write(f" in {summary.seconds:.2f} s ({rate:,.0f} records/s, acks=all, lz4)\n")
    out.write(f"Payload {summary.payload_bytes:,} bytes\n\n")
    out.write(f"{'partition':>9} {'records':>9} {'offsets':>17} {'read back':>10}\n")
    for p, r in sorted(summary.partitions.items()):
        offsets = "-" if r.first_offset is None else f"{r.first_offset}..{r.last_offset}"
        out.write(f"{p:>9} {r.records:>9,} {offsets:>17} {r.read_back:>10,}\n")
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
        client = stack.enter_context(
            Client(
                {
                    "bootstrap.servers": bootstrap,
                    "client.id": "kafkawire-demo",
                    "socket.timeout.ms": int(timeout * 1000),
                }
            )
        )
        create_topic(bootstrap, topic, partitions, timeout)
        summary = produce_dataset(bootstrap, topic, count, partitions, timeout)
        client.refresh_metadata([topic]).result()
        read_back(client, topic, summary)
        print_summary(summary, out)
        return summary
    raise AssertionError("unreachable")  # ExitStack does not swallow exceptions
