"""A task queue on kombu's ``confluentkafka`` transport, as a Celery-less worker would use it: a
producer publishes task messages (JSON bodies, headers, a routing key) to a direct exchange, then a
consumer drains the queue, acking each one, and the program prints each task it ran and its result.
The test runs it plainly and under ``python -m kafkawire.run`` and compares the output.

usage: kombu_tasks.py BROKER QUEUE TASKS
"""

from __future__ import annotations

import json
import sys

import confluent_kafka
from kombu import Connection, Consumer, Exchange, Producer, Queue


def main(broker: str, queue_name: str, count: int) -> None:
    exchange = Exchange(f"{queue_name}-exchange", type="direct")
    queue = Queue(queue_name, exchange=exchange, routing_key=queue_name)
    print("client library:", confluent_kafka.__name__, file=sys.stderr)  # the test checks which one ran
    ran: list[dict[str, object]] = []
    options = {"wait_time_seconds": 1, "kafka_common_config": {"broker.address.family": "v4"}}
    with Connection(f"confluentkafka://{broker}", transport_options=options) as conn:
        channel = conn.channel()
        producer = Producer(channel, exchange=exchange, routing_key=queue_name)
        queue(channel).declare()
        for i in range(count):
            task = {"task": "add", "args": [i, i * i], "id": f"task-{i}"}
            producer.publish(task, serializer="json", headers={"attempt": 1, "origin": "corpus"})
        print("published:", count, file=sys.stderr)

        def run_task(body: dict[str, object], message: object) -> None:
            args = body["args"]
            assert isinstance(args, list)
            headers = message.headers  # type: ignore[attr-defined]
            ran.append({"id": body["id"], "result": sum(args), "origin": headers.get("origin")})
            message.ack()  # type: ignore[attr-defined]

        with Consumer(channel, queues=[queue], callbacks=[run_task], accept=["json"]):
            idle = 0
            while len(ran) < count and idle < 30:
                try:
                    conn.drain_events(timeout=1)
                except TimeoutError:
                    idle += 1
    for task in ran:
        print(json.dumps(task, sort_keys=True))


if __name__ == "__main__":
    broker, queue_name, count = sys.argv[1:]
    main(broker, queue_name, int(count))
