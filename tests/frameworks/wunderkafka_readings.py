"""wunderkafka's clients, as its documentation uses them: ``ProducerConfig``/``ConsumerConfig`` (the
pydantic models that hand librdkafka its whole configuration, every property spelled out), a
``BytesProducer`` sending keyed records with timestamps, and ``BytesConsumer``s subscribed the ways
its ``subscribe`` offers: from the beginning, from an offset, from a timestamp (offsets_for_times in
its on_assign), each read with ``batch_poll``. The program prints what each subscription read.

usage: wunderkafka_readings.py BROKER TOPIC GROUP COUNT T0_MS
"""

from __future__ import annotations

import json
import sys

import confluent_kafka
from wunderkafka import BytesConsumer, BytesProducer, ConsumerConfig, ProducerConfig
from wunderkafka.consumers.subscription import TopicSubscription


def _read(broker: str, group: str, subscription: TopicSubscription, expected: int) -> list[list[object]]:
    consumer = BytesConsumer(
        ConsumerConfig(bootstrap_servers=broker, group_id=group, broker_address_family="v4", enable_auto_commit=False)
    )
    consumer.subscribe([subscription])
    rows: list[list[object]] = []
    for _ in range(60):
        for message in consumer.batch_poll(timeout=0.5):
            assert message.error() is None, message.error()
            rows.append([message.partition(), message.offset(), message.key().decode(), message.value().decode()])
        if len(rows) >= expected:
            break
    committed = consumer.commit(asynchronous=False)
    rows.append(["committed", sorted((tp.partition, tp.offset) for tp in committed)])
    consumer.close()
    return rows


def main(broker: str, topic: str, group: str, count: int, t0: int) -> None:
    print("client library:", confluent_kafka.__name__, file=sys.stderr)  # the test checks which one ran
    producer = BytesProducer(ProducerConfig(bootstrap_servers=broker, broker_address_family="v4"))
    for i in range(count):
        value = json.dumps({"sensor": i % 4, "reading": i * 1.5})
        producer.send_message(topic, value, f"sensor-{i % 4}", i % 2, timestamp=t0 + 1000 * i)
    assert producer.flush(30) == 0

    per_partition = count // 2
    ways = {
        "from the beginning": (TopicSubscription(topic, from_beginning=True), count),
        "from offset 5": (TopicSubscription(topic, offset=5), count - 10),
        "from a timestamp": (TopicSubscription(topic, ts=t0 + 1000 * (count - 8)), 8),
    }
    for n, (way, (subscription, expected)) in enumerate(ways.items()):
        rows = _read(broker, f"{group}-{n}", subscription, expected)
        print(json.dumps({"subscription": way, "partition size": per_partition}))
        for row in sorted(rows[:-1]) + rows[-1:]:
            print(json.dumps(row))


if __name__ == "__main__":
    broker, topic, group, count, t0 = sys.argv[1:]
    main(broker, topic, group, int(count), int(t0))
