"""A streamz pipeline on its Kafka nodes, as its documentation shows them: ``Stream.from_kafka`` (a
group consumer polled on streamz's event loop) -> parse, filter, reshape -> ``to_kafka``, whose
delivery reports flow downstream. The program prints the values in the order the producer's
delivery reports came back, once every record it expects has been delivered.

usage: streamz_pipeline.py BROKER SOURCE SINK GROUP EXPECTED
"""

from __future__ import annotations

import json
import sys
import time

import confluent_kafka
from streamz import Stream


def main(broker: str, source_topic: str, sink_topic: str, group: str, expected: int) -> None:
    print("client library:", confluent_kafka.__name__, file=sys.stderr)  # the test checks which one ran
    base = {"bootstrap.servers": broker, "broker.address.family": "v4"}
    consumer = {**base, "group.id": group, "auto.offset.reset": "earliest"}
    source = Stream.from_kafka([source_topic], consumer, poll_interval=0.05)
    delivered: list[dict[str, object]] = []
    to_kafka = (
        source.map(json.loads)
        .filter(lambda event: event["amount"] % 3 != 0)
        .map(lambda event: json.dumps({"id": event["id"], "doubled": event["amount"] * 2}).encode())
        .to_kafka(sink_topic, {**base, "linger.ms": 2})
    )
    to_kafka.map(json.loads).sink(delivered.append)
    source.start()
    deadline = time.monotonic() + 60
    while len(delivered) < expected and time.monotonic() < deadline:
        time.sleep(0.05)
    to_kafka.flush(10)
    source.stop()
    time.sleep(0.2)  # the poll loop sees the stop and closes its consumer
    for row in delivered:
        print(json.dumps(row, sort_keys=True))


if __name__ == "__main__":
    broker, source_topic, sink_topic, group, expected = sys.argv[1:]
    main(broker, source_topic, sink_topic, group, int(expected))
