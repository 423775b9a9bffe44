"""confluent-kafka-helpers (Fyndiq's helpers on confluent-kafka's legacy Avro API), as its README uses
it: its schema registry helper registers a key and a value schema from .avsc files, its AvroProducer
(confluent_kafka.avro.AvroProducer underneath) writes orders with the subjects' latest schemas, and
its AvroConsumer reads them back. Prints the schema ids, then each
record read, sorted by partition and offset.

usage: helpers_avro.py LIBRARY_DIR BROKER REGISTRY_URL TOPIC GROUP COUNT
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

KEY = '"string"'
VALUE = """{"type": "record", "name": "Order", "namespace": "corpus", "fields": [
  {"name": "class", "type": "string"}, {"name": "id", "type": "int"},
  {"name": "amount", "type": "double"}, {"name": "note", "type": ["null", "string"], "default": null}]}"""


def main(broker: str, registry: str, topic: str, group: str, count: int) -> None:
    import confluent_kafka
    import structlog

    structlog.configure(logger_factory=structlog.PrintLoggerFactory(sys.stderr))  # its logs, off stdout
    from confluent_kafka_helpers.consumer import AvroConsumer
    from confluent_kafka_helpers.producer import AvroProducer
    from confluent_kafka_helpers.schema_registry import AvroSchemaRegistry

    print("client library:", confluent_kafka.__name__, file=sys.stderr)  # the test checks which one ran
    with tempfile.TemporaryDirectory() as schemas:
        key_file, value_file = Path(schemas, "key.avsc"), Path(schemas, "value.avsc")
        key_file.write_text(KEY)
        value_file.write_text(VALUE)
        helper = AvroSchemaRegistry(registry)
        ids = [helper.register_schema(f"{topic}-key", str(key_file))]
        ids.append(helper.register_schema(f"{topic}-value", str(value_file)))
    print(json.dumps({"schema_ids": ids}))

    producer = AvroProducer(
        {"bootstrap.servers": broker, "schema.registry.url": registry, "topics": [topic], "linger.ms": 5}
    )
    for i in range(count):
        value = {"class": "OrderPlaced", "id": i, "amount": i * 1.5, "note": None if i % 2 else f"n{i}"}
        producer.produce(value, key=f"customer-{i % 3}", headers={"origin": "corpus"})
    producer.flush(30)

    consumer = AvroConsumer(
        {
            "bootstrap.servers": broker,
            "group.id": group,
            "schema.registry.url": registry,
            "topics": topic,
            "non_blocking": True,  # yields None when nothing came, so the loop can give up
        }
    )
    rows = []
    deadline = time.monotonic() + 60
    with consumer:
        for message in consumer:
            if message is None:
                if time.monotonic() > deadline:
                    break
                continue
            meta = message._meta
            rows.append({"partition": meta.partition, "offset": meta.offset, "key": meta.key, "value": message.value})
            if len(rows) == count:
                break
    for row in sorted(rows, key=lambda r: (r["partition"], r["offset"])):
        print(json.dumps(row, sort_keys=True))


if __name__ == "__main__":
    library, broker, registry, topic, group, count = sys.argv[1:]
    sys.path.insert(0, library)
    main(broker, registry, topic, group, int(count))
