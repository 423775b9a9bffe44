"""A service traced with opentelemetry-instrumentation-confluent-kafka, as its documentation shows:
``ConfluentKafkaInstrumentor().instrument()`` first, then plain ``Producer``/``Consumer`` objects.
The producer sends keyed records to three partitions; a group consumer polls them back. The program
prints every finished span (name, kind, attributes, whether a consumer span is linked to the
producer span whose context travelled in the record's headers), then what the consumer read.

usage: otel_traced.py BROKER TOPIC GROUP RECORDS
"""

from __future__ import annotations

import json
import sys

import confluent_kafka
from confluent_kafka.admin import AdminClient, NewTopic
from opentelemetry import trace
from opentelemetry.instrumentation.confluent_kafka import ConfluentKafkaInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

BASE = {"broker.address.family": "v4", "enable.metrics.push": False}


def main(broker: str, topic: str, group: str, count: int) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    ConfluentKafkaInstrumentor().instrument()
    print("client library:", confluent_kafka.__name__, file=sys.stderr)  # the test checks which one ran

    admin = AdminClient({"bootstrap.servers": broker, **BASE})
    admin.create_topics([NewTopic(topic, 3, 1)])[topic].result(30)

    delivered: list[tuple[str, int, int]] = []
    producer = confluent_kafka.Producer({"bootstrap.servers": broker, "linger.ms": 5, **BASE})
    tracer = trace.get_tracer("corpus")
    for i in range(count):
        with tracer.start_as_current_span(f"order {i}"):
            producer.produce(
                topic,
                json.dumps({"order": i}).encode(),
                key=f"customer-{i % 4}".encode(),
                partition=i % 3,
                on_delivery=lambda err, msg: delivered.append((msg.key().decode(), msg.partition(), msg.offset())),
            )
    assert producer.flush(30) == 0

    consumer = confluent_kafka.Consumer(
        {"bootstrap.servers": broker, "group.id": group, "auto.offset.reset": "earliest", **BASE}
    )
    consumer.subscribe([topic])
    read: list[tuple[str, int, int]] = []
    for _ in range(600):
        if len(read) == count:
            break
        msg = consumer.poll(0.5)
        if msg is None or msg.error():
            continue
        read.append((msg.key().decode(), msg.partition(), msg.offset()))
    consumer.poll(0.1)  # ends the last record's consume span, as the next poll does
    consumer.close()

    producer_spans = {s.context.span_id for s in exporter.get_finished_spans() if s.kind == trace.SpanKind.PRODUCER}
    rows = []
    for span in exporter.get_finished_spans():
        attributes = {
            k: v.replace(topic, "<topic>") if isinstance(v, str) else v for k, v in (span.attributes or {}).items()
        }
        linked = any(link.context.span_id in producer_spans for link in span.links)
        parent_is_producer = span.parent is not None and span.parent.span_id in producer_spans
        rows.append(
            {
                "name": span.name.replace(topic, "<topic>"),
                "kind": span.kind.name,
                "attributes": attributes,
                "linked_to_producer": linked or parent_is_producer,
            }
        )
    for row in sorted(rows, key=lambda r: (r["kind"], json.dumps(r["attributes"], sort_keys=True), r["name"])):
        print(json.dumps(row, sort_keys=True))
    print(json.dumps({"delivered": sorted(delivered), "read": sorted(read)}))
    print(json.dumps({"read_order_per_partition": [[o for _, p, o in read if p == q] for q in range(3)]}))


if __name__ == "__main__":
    broker, topic, group, count = sys.argv[1:]
    main(broker, topic, group, int(count))
