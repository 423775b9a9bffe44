"""The serde-avro scenario: Avro with a Schema Registry, serialize + produce, then consume + deserialize.

One worker per client library does both halves on its own topic: its SerializingProducer with its
AvroSerializer writes the records (first clock: first record handed over to the last one
acknowledged), then its DeserializingConsumer with its AvroDeserializer reads them back from the
beginning, every partition assigned, no group (second clock: assign to the last record decoded).
Both libraries use fastavro and the same registry: confluent-kafka's registry logic behind a
loopback HTTP front the driver runs (tests/serde/registry_front.py). The schema is registered
before the clocks (one record serialized and deserialized as a warm-up; ``auto.register.schemas``
on, so the warm-up registers it), so both clocks hold only cached registry look-ups.
Verified: the count and the sum of the ``id`` field read back, and every 1024th record compared
field by field, then the driver's read-back of the topic.
"""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Callable
from typing import Any

from bench.scenarios import Scenario
from bench.workload import BATCH_BYTES, LINGER_MS, Counts, measure

DISTINCT = 1024  # distinct records, cycled over (as the other scenarios cycle their values)
OFFSET_BEGINNING = -2

SCHEMA = json.dumps(
    {
        "type": "record",
        "name": "Customer",
        "namespace": "bench.serde",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "name", "type": "string"},
            {"name": "email", "type": "string"},
            {"name": "age", "type": "int"},
            {"name": "visits", "type": "int"},
            {"name": "created_ms", "type": "long"},
            {"name": "score", "type": "double"},
            {"name": "balance", "type": "double"},
            {"name": "active", "type": "boolean"},
            {"name": "note", "type": ["null", "string"], "default": None},
        ],
    }
)


def make_records(distinct: int = DISTINCT, seed: int = 11) -> list[dict[str, Any]]:
    """Distinct 10-field records, about 72 bytes of Avro each; half have no note."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    out = []
    for i in range(distinct):
        name = "".join(rng.choices(letters, k=rng.randint(5, 14)))
        out.append(
            {
                "id": i,
                "name": name,
                "email": f"{name}@{''.join(rng.choices(letters, k=6))}.example",
                "age": rng.randint(18, 90),
                "visits": rng.randint(0, 100_000),
                "created_ms": 1_700_000_000_000 + rng.randint(0, 10**10),
                "score": rng.random() * 100,
                "balance": rng.uniform(-1e6, 1e6),
                "active": rng.random() < 0.5,
                "note": None if i % 2 else " ".join(rng.choices(["vip", "late", "new", "eu", "b2b"], k=3)),
            }
        )
    return out


class _Library:
    """One client library's classes, so both sides run the same code below."""

    def __init__(self, name: str) -> None:
        if name == "confluent":
            import confluent_kafka as kafka
            from confluent_kafka.schema_registry import SchemaRegistryClient
            from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
            from confluent_kafka.serialization import MessageField, SerializationContext

            self.extra: dict[str, Any] = {"enable.metrics.push": False, "broker.address.family": "v4", "log_level": 3}
        else:
            import kafkawire as kafka  # type: ignore[no-redef]
            from kafkawire.schema_registry import SchemaRegistryClient  # type: ignore[no-redef,assignment]
            from kafkawire.schema_registry.avro import AvroDeserializer, AvroSerializer  # type: ignore[no-redef,assignment]
            from kafkawire.serialization import MessageField, SerializationContext  # type: ignore[no-redef,assignment]

            self.extra = {}
        self.kafka = kafka
        self.registry_client = SchemaRegistryClient
        self.serializer, self.deserializer = AvroSerializer, AvroDeserializer
        self.field, self.context = MessageField, SerializationContext


def _run(library: str, sc: Scenario, bootstrap: str, topic: str, records: int) -> dict[str, Any]:

    lib = _Library(library)
    registry = lib.registry_client({"url": sc.client_conf["schema.registry.url"]})
    serializer = lib.serializer(registry, SCHEMA, conf={"auto.register.schemas": True})
    deserializer = lib.deserializer(registry)
    pool = make_records()
    # The warm-up: registers the schema (the serializer's cache) and learns its id (the deserializer's).
    ctx = lib.context(topic, lib.field.VALUE)
    if deserializer(serializer(pool[0], ctx), ctx) != pool[0]:
        raise RuntimeError("the warm-up record did not come back equal")

    counts = Counts()
    producer = lib.kafka.SerializingProducer(
        {
            "bootstrap.servers": bootstrap,
            "linger.ms": LINGER_MS,
            "batch.size": BATCH_BYTES,
            "acks": 1,
            "value.serializer": serializer,
            **lib.extra,
        }
    )
    producer.list_topics(topic, timeout=10)

    def write() -> None:
        produce, poll, report = producer.produce, producer.poll, counts.report
        for i in range(records):
            value = pool[i % DISTINCT]
            while True:
                try:
                    produce(topic, value=value, on_delivery=report)
                    break
                except BufferError:
                    poll(0.01)
            if not i & 1023:
                poll(0)
        producer.flush(120)

    produced = measure(write)
    producer.flush(10)

    consumer = lib.kafka.DeserializingConsumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"bench-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "value.deserializer": deserializer,
            **lib.extra,
        }
    )
    partitions = sorted(consumer.list_topics(topic, timeout=10).topics[topic].partitions)
    read = [0, 0]  # records, sum of their ids
    samples: list[Any] = []

    def consume() -> None:
        consumer.assign([lib.kafka.TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
        poll = consumer.poll
        n = ids = 0
        while n < counts.acked:
            m = poll(1.0)
            if m is None:
                continue
            value = m.value()
            ids += value["id"]
            if not n & 1023:
                samples.append(value)
            n += 1
        read[:] = [n, ids]

    consumed = measure(consume)
    consumer.close()
    expected_ids = sum(pool[i % DISTINCT]["id"] for i in range(counts.acked))
    error = counts.first_error
    if error is None and (read[0] != counts.acked or read[1] != expected_ids):
        error = f"read back {read[0]:,} records (id sum {read[1]:,}) of {counts.acked:,} (id sum {expected_ids:,})"
    if error is None and any(v != pool[v["id"]] for v in samples):
        error = "a record read back differs from the one written"
    return {
        **produced,
        "read_seconds": consumed["seconds"],
        "read_cpu": consumed["cpu"],
        "acked": counts.acked,
        "failed": counts.failed if error is None or counts.failed else counts.acked,
        "error": error,
    }


SERDE: dict[str, Callable[[Scenario, str, str, int], dict[str, Any]]] = {
    "confluent-avro": lambda sc, b, t, n: _run("confluent", sc, b, t, n),
    "kafkawire-avro": lambda sc, b, t, n: _run("kafkawire", sc, b, t, n),
}
