"""A Django project using django-kafka, as its documentation sets one up: the ``DJANGO_KAFKA``
settings, a ``Topic`` class that produces and consumes (string serializers), a ``Consumer`` class
registered with ``kafka.consumers()`` whose offsets are stored only once a message is processed.
The program produces orders through the topic, runs the consumer until it has them all, then reads
the group's committed offsets with a plain consumer and prints what was consumed and committed.

usage: django_kafka_app.py BROKER TOPIC GROUP ORDERS
"""

from __future__ import annotations

import json
import sys
import threading

import django
from django.conf import settings


def main(broker: str, topic_name: str, group: str, count: int) -> None:
    settings.configure(
        INSTALLED_APPS=["django.contrib.contenttypes", "django_kafka"],
        DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}},
        DJANGO_KAFKA={
            "CLIENT_ID": "corpus-django",
            "GLOBAL_CONFIG": {"bootstrap.servers": broker, "broker.address.family": "v4"},
            "POLLING_FREQUENCY": 0.5,
        },
    )
    django.setup()
    import confluent_kafka
    from django_kafka import kafka
    from django_kafka.consumer import Consumer, Topics
    from django_kafka.topic import Topic

    print("client library:", confluent_kafka.__name__, file=sys.stderr)  # the test checks which one ran
    consumed: list[dict[str, object]] = []
    done = threading.Event()

    class Orders(Topic):
        name = topic_name

        def consume(self, msg: confluent_kafka.Message) -> None:
            key = self.deserialize(msg.key(), confluent_kafka.serialization.MessageField.KEY, msg.headers())
            order = json.loads(self.deserialize(msg.value(), confluent_kafka.serialization.MessageField.VALUE))
            consumed.append({"key": key, "partition": msg.partition(), "offset": msg.offset(), **order})
            if len(consumed) == count:
                done.set()

    @kafka.consumers()
    class Billing(Consumer):
        topics = Topics(Orders())
        config = {"group.id": group, "auto.offset.reset": "earliest", "enable.auto.offset.store": False}  # noqa: RUF012

    for i in range(count):
        Orders().produce(json.dumps({"order": i, "amount": 5 * i}), key=f"shop-{i % 3}", partition=i % 2)
    assert kafka.producer.flush(30) == 0

    Billing().start(stop_event=done)  # returns once `done` is set; stop() closes (and commits)

    reader = confluent_kafka.Consumer({"bootstrap.servers": broker, "group.id": group, "broker.address.family": "v4"})
    committed = reader.committed([confluent_kafka.TopicPartition(topic_name, p) for p in (0, 1)], 10)
    reader.close()
    for row in sorted(consumed, key=lambda r: (r["partition"], r["offset"])):
        print(json.dumps(row, sort_keys=True))
    print(json.dumps({"committed": [(tp.partition, tp.offset) for tp in committed]}))


if __name__ == "__main__":
    broker, topic_name, group, count = sys.argv[1:]
    main(broker, topic_name, group, int(count))
