"""A service traced with ddtrace's confluent-kafka integration, set up as its documentation shows
(``patch(kafka=True)`` before the clients are made). A producer sends keyed records, a
group consumer polls them and commits each one. A trace filter collects every finished span and
drops it (nothing is sent to an agent); the program prints the Kafka tags of the producer spans and
of the consume spans that carried a record, then what was delivered and read.

usage: ddtrace_traced.py BROKER TOPIC GROUP RECORDS
"""

from __future__ import annotations

import json
import os
import sys

# No agent here: no telemetry, remote configuration or agent probes (the filter drops every trace).
for name, value in {
    "DD_INSTRUMENTATION_TELEMETRY_ENABLED": "false",
    "DD_REMOTE_CONFIGURATION_ENABLED": "false",
    "DD_TRACE_STARTUP_LOGS": "false",
    "DD_DATA_STREAMS_ENABLED": "false",
    "DD_TRACE_AGENT_URL": "http://127.0.0.1:9",
}.items():
    os.environ.setdefault(name, value)

from ddtrace import patch  # noqa: E402

patch(kafka=True)

import confluent_kafka  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402
from ddtrace.trace import TraceFilter, tracer  # noqa: E402

BASE = {"broker.address.family": "v4", "enable.metrics.push": False}


class Collect(TraceFilter):
    def __init__(self) -> None:
        self.spans: list[object] = []

    def process_trace(self, trace):  # type: ignore[no-untyped-def]
        self.spans.extend(trace)
        return None


def main(broker: str, topic: str, group: str, count: int) -> None:
    collect = Collect()
    tracer.configure(trace_processors=[collect])
    print("client library:", confluent_kafka.__name__, file=sys.stderr)  # the test checks which one ran
    admin = AdminClient({"bootstrap.servers": broker, **BASE})
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(30)

    delivered: list[tuple[str, int, int]] = []
    producer = confluent_kafka.Producer({"bootstrap.servers": broker, **BASE})
    for i in range(count):
        producer.produce(
            topic,
            json.dumps({"n": i}).encode() if i % 5 else b"",
            key=f"device-{i % 3}".encode(),
            partition=i % 2,
            on_delivery=lambda err, msg: delivered.append((msg.key().decode(), msg.partition(), msg.offset())),
        )
    assert producer.flush(30) == 0

    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": broker,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            **BASE,
        }
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
        consumer.commit(message=msg, asynchronous=False)
    committed = consumer.committed([confluent_kafka.TopicPartition(topic, p) for p in (0, 1)], 10)
    consumer.close()
    tracer.flush()

    rows = []
    for span in collect.spans:
        tags = {k: v for k, v in span.get_tags().items() if k.startswith(("kafka.", "messaging.", "span.kind"))}
        tags.update({k: v for k, v in span.get_metrics().items() if k.startswith("kafka.")})
        if tags.get("kafka.received_message") == "False":
            continue  # a poll that returned nothing: how many there are is timing
        tags = {k: str(v).replace(topic, "<topic>").replace(group, "<group>") for k, v in tags.items()}
        rows.append({"name": span.name, "service": span.service, "tags": tags})
    for row in sorted(rows, key=lambda r: json.dumps(r, sort_keys=True)):
        print(json.dumps(row, sort_keys=True))
    print(json.dumps({"delivered": sorted(delivered), "read": sorted(read)}))
    print(json.dumps({"committed": [(tp.partition, tp.offset) for tp in committed]}))


if __name__ == "__main__":
    broker, topic, group, count = sys.argv[1:]
    main(broker, topic, group, int(count))
