"""aio-confluent-kafka's subclasses of confluent-kafka's clients, as its README uses them: an
``AIOProducer`` whose ``produce`` is a coroutine passing explicit defaults (partition=-1,
timestamp=0) and an async delivery callback run on the event loop, and an ``AIOConsumer`` whose
``poll`` is awaited (a worker thread). The program produces keyed events, reads them back as a
group, commits, and prints the delivery reports and what was read, in order.

usage: aio_confluent_pipeline.py BROKER TOPIC GROUP COUNT
"""

from __future__ import annotations

import asyncio
import json
import sys

import confluent_kafka

print("client library:", confluent_kafka.__name__, file=sys.stderr)  # the test checks which one ran
from aio_confluent_kafka import AIOConsumer, AIOProducer  # noqa: E402


async def main(broker: str, topic: str, group: str, count: int) -> None:
    base = {"bootstrap.servers": broker, "broker.address.family": "v4"}
    delivered: list[tuple[int, int, str]] = []

    async def on_delivery(err: confluent_kafka.KafkaError | None, msg: confluent_kafka.Message) -> None:
        assert err is None, err
        delivered.append((msg.partition(), msg.offset(), msg.key().decode()))

    producer = AIOProducer(base)
    for i in range(count):
        await producer.produce(topic, key=f"device-{i % 5}", value=json.dumps({"n": i}), on_delivery=on_delivery)
    assert producer.flush(30) == 0
    await asyncio.sleep(0.1)  # the callbacks run on this loop, scheduled from flush()
    print(json.dumps({"delivered": sorted(delivered)}))

    consumer = AIOConsumer({**base, "group.id": group, "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    read: list[tuple[int, int, str, int]] = []
    for _ in range(120):
        msg = await consumer.poll(0.5)
        if msg is None:
            if len(read) == count:
                break
            continue
        assert msg.error() is None, msg.error()
        read.append((msg.partition(), msg.offset(), msg.key().decode(), json.loads(msg.value())["n"]))
        if len(read) == count:
            break
    committed = consumer.commit(asynchronous=False)
    consumer.close()
    print(json.dumps({"read": sorted(read)}))
    print(json.dumps({"committed": sorted((tp.partition, tp.offset) for tp in committed)}))


if __name__ == "__main__":
    broker, topic, group, count = sys.argv[1:]
    asyncio.run(main(broker, topic, group, int(count)))
