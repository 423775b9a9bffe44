"""A bytewax dataflow on its Kafka connectors: ``KafkaSource`` reads every partition of a topic to its
end (``tail=False``, so the source stops at each partition's end-of-partition event), a stateful
step keeps a running total per key, and ``KafkaSink`` writes each update to a second topic. The
program prints every update the flow emitted, per key in order, with the offset it came from.

usage: bytewax_flow.py BROKER SOURCE SINK
"""

from __future__ import annotations

import json
import sys

import confluent_kafka
from bytewax import operators as op
from bytewax.connectors.kafka import KafkaSink, KafkaSinkMessage, KafkaSource, KafkaSourceMessage
from bytewax.dataflow import Dataflow
from bytewax.testing import TestingSink, run_main

Update = tuple[str, dict[str, int]]


def main(broker: str, source: str, sink: str) -> None:
    print("client library:", confluent_kafka.__name__, file=sys.stderr)  # the test checks which one ran
    flow = Dataflow("running-totals")
    config = {"broker.address.family": "v4"}
    records = op.input("in", flow, KafkaSource([broker], [source], tail=False, batch_size=50, add_config=config))

    def keyed(msg: KafkaSourceMessage[bytes | None, bytes | None]) -> tuple[str, tuple[int, int, int]]:
        assert msg.key is not None and msg.value is not None
        return msg.key.decode(), (msg.partition, msg.offset, json.loads(msg.value)["amount"])

    def running(total: int | None, item: tuple[int, int, int]) -> tuple[int, dict[str, int]]:
        partition, offset, amount = item
        total = (total or 0) + amount
        return total, {"partition": partition, "offset": offset, "amount": amount, "total": total}

    updates = op.stateful_map("total", op.map("key", records, keyed), running)
    seen: list[Update] = []
    op.output("seen", updates, TestingSink(seen))

    def to_message(update: Update) -> KafkaSinkMessage[bytes, bytes]:
        key, row = update
        return KafkaSinkMessage(key.encode(), json.dumps(row, sort_keys=True).encode())

    op.output("out", op.map("encode", updates, to_message), KafkaSink([broker], sink, add_config=config))
    run_main(flow)
    for key, row in sorted(seen, key=lambda u: (u[0], u[1]["offset"])):
        print(json.dumps({"key": key, **row}, sort_keys=True))


if __name__ == "__main__":
    broker, source, sink = sys.argv[1:]
    main(broker, source, sink)
