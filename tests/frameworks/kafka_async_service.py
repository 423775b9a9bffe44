"""kafka-async's asyncio faces of confluent-kafka's clients (anyio, the blocking calls in worker
threads, the admin futures awaited through their done-callbacks), as its README uses them: an
``AdminClient`` creates the topic and later reads the group's offsets and deletes it; a
transactional ``Producer`` sends orders with an async delivery callback; a ``Consumer`` subscribed
with an async ``on_assign`` consumes them in batches and commits. The program prints what each
step saw.

usage: kafka_async_service.py BROKER TOPIC GROUP TRANSACTIONAL_ID COUNT
"""

from __future__ import annotations

import json
import sys

import anyio
import confluent_kafka
from confluent_kafka.admin import NewTopic

print("client library:", confluent_kafka.__name__, file=sys.stderr)  # the test checks which one ran
from kafka_async import AdminClient, Consumer, Producer  # noqa: E402


async def service(broker: str, topic: str, group: str, transactional_id: str, count: int) -> None:
    base = {"bootstrap.servers": broker, "broker.address.family": "v4"}
    admin = AdminClient(base)
    created = await admin.create_topics([NewTopic(topic, 3, 1)], operation_timeout=30)
    print(json.dumps({"created": sorted(created)}))

    delivered: list[tuple[int, int, str]] = []

    async def on_delivery(err: confluent_kafka.KafkaError | None, msg: confluent_kafka.Message) -> None:
        assert err is None, err
        delivered.append((msg.partition(), msg.offset(), msg.key().decode()))

    async with Producer({**base, "transactional.id": transactional_id}) as producer:
        await producer.init_transactions()  # (its timeout= is a keyword, which confluent-kafka refuses)
        producer.begin_transaction()
        for i in range(count):
            producer.produce(topic, json.dumps({"order": i}), key=f"k{i}", partition=i % 3, on_delivery=on_delivery)
        await producer.commit_transaction()
    print(json.dumps({"delivered": sorted(delivered)}))

    assigned: list[list[int]] = []

    async def on_assign(consumer: confluent_kafka.Consumer, partitions: list[confluent_kafka.TopicPartition]) -> None:
        assigned.append(sorted(tp.partition for tp in partitions))

    read: list[tuple[int, int, str, int]] = []
    config = {**base, "group.id": group, "auto.offset.reset": "earliest", "isolation.level": "read_committed"}
    async with Consumer({**config, "enable.auto.commit": False}) as consumer:
        consumer.subscribe([topic], on_assign=on_assign)
        for _ in range(60):
            for msg in await consumer.consume(100, 0.5):
                assert msg.error() is None, msg.error()
                read.append((msg.partition(), msg.offset(), msg.key().decode(), json.loads(msg.value())["order"]))
            if len(read) >= count:
                break
        committed = await consumer.commit(asynchronous=False)
        print(json.dumps({"committed": sorted((tp.partition, tp.offset) for tp in committed)}))
        positions = consumer.position([confluent_kafka.TopicPartition(topic, p) for p in range(3)])
        print(json.dumps({"positions": [tp.offset for tp in positions]}))
    print(json.dumps({"assigned": assigned}))
    print(json.dumps({"read": sorted(read)}))

    request = [confluent_kafka.ConsumerGroupTopicPartitions(group)]
    offsets = await admin.list_consumer_group_offsets(request)
    print(json.dumps({"group offsets": sorted((tp.partition, tp.offset) for tp in offsets[group].topic_partitions)}))
    deleted = await admin.delete_topics([topic], operation_timeout=30)
    print(json.dumps({"deleted": sorted(deleted)}))


if __name__ == "__main__":
    broker, topic, group, transactional_id, count = sys.argv[1:]
    anyio.run(service, broker, topic, group, transactional_id, int(count))
