"""kafkian's producer and consumer, as its README uses them: a ``Producer`` with a serializer of ours
(JSON values, str keys; kafkian's defaults: idempotence, acks=all), a ``Consumer`` iterated as a
generator that commits each message synchronously and reports the commits through its callback.
The program prints what was delivered, consumed and committed, in order (one partition).

usage: kafkian_orders.py BROKER TOPIC GROUP COUNT
"""

from __future__ import annotations

import json
import sys

import confluent_kafka

print("client library:", confluent_kafka.__name__, file=sys.stderr)  # the test checks which one ran (before kafkian)
from kafkian import Consumer, Producer  # noqa: E402
from kafkian.serde.deserialization import Deserializer  # noqa: E402
from kafkian.serde.serialization import Serializer  # noqa: E402


class JsonSerializer(Serializer):
    def serialize(self, value: object, topic: str, **kwargs: object) -> bytes:
        return json.dumps(value, sort_keys=True).encode()


class JsonDeserializer(Deserializer):
    def deserialize(self, value: bytes, **kwargs: object) -> object:
        return json.loads(value)


class StrSerializer(Serializer):
    def serialize(self, value: object, topic: str, **kwargs: object) -> bytes:
        return str(value).encode()


class StrDeserializer(Deserializer):
    def deserialize(self, value: bytes, **kwargs: object) -> str:
        return value.decode()


def main(broker: str, topic: str, group: str, count: int) -> None:
    base = {"bootstrap.servers": broker, "broker.address.family": "v4"}
    delivered: list[tuple[int, int]] = []
    producer = Producer(
        base,
        value_serializer=JsonSerializer(),
        key_serializer=StrSerializer(),
        delivery_success_callback=lambda msg: delivered.append((msg.partition(), msg.offset())),
        delivery_error_callback=lambda msg, err: print("delivery failed:", err.name()),
    )
    for i in range(count):
        producer.produce(topic, f"customer-{i % 4}", {"order": i, "amount": 3 * i}, headers={"n": str(i)})
    producer.flush(30)
    print(json.dumps({"delivered": sorted(delivered)}))

    commits: list[list[tuple[int, int]]] = []
    consumer = Consumer(
        {**base, "group.id": group, "auto.offset.reset": "earliest"},
        [topic],
        value_deserializer=JsonDeserializer(),
        key_deserializer=StrDeserializer(),
        commit_success_callback=lambda tps: commits.append(sorted((tp.partition, tp.offset) for tp in tps)),
        commit_error_callback=lambda tps, err: print("commit failed:", err.name()),
    )
    results: list[list[tuple[int, int]]] = []
    for message in consumer:
        row = {
            "key": message.key,
            "partition": message.partition,
            "offset": message.offset,
            "headers": [(k, v.decode()) for k, v in message.headers],
            **message.value,
        }
        print(json.dumps(row, sort_keys=True))
        committed = sorted((tp.partition, tp.offset) for tp in consumer.commit(message) or [])
        results.append(committed)
        print(json.dumps({"commit": committed}))
        if len(results) == count:
            break
    consumer._close()
    # The callbacks are served by later polls (or not at all once the loop ends): how many is timing.
    print(json.dumps({"callbacks are the commits": commits == results[: len(commits)]}))


if __name__ == "__main__":
    broker, topic, group, count = sys.argv[1:]
    main(broker, topic, group, int(count))
