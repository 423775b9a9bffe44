"""A Celery application whose broker is Kafka through kombu's ``confluentkafka`` transport, as Celery's
documentation configures it: a worker (started in-process, as ``celery.contrib.testing`` does) runs
tasks the program sends with ``delay()``/``apply_async()``; results go to an in-memory backend. The
program prints each task's result in the order it sent them.

usage: celery_worker.py BROKER QUEUE TASKS
"""

from __future__ import annotations

import json
import sys

import confluent_kafka
from celery import Celery
from celery.contrib.testing.worker import start_worker


def main(broker: str, queue: str, count: int) -> None:
    print("client library:", confluent_kafka.__name__, file=sys.stderr)  # the test checks which one ran
    app = Celery("corpus", broker=f"confluentkafka://{broker}", backend="cache+memory://")
    app.conf.update(
        task_default_queue=queue,
        broker_transport_options={"wait_time_seconds": 1, "kafka_common_config": {"broker.address.family": "v4"}},
        worker_hijack_root_logger=False,
    )

    @app.task(name="corpus.invoice")
    def invoice(order: int, quantity: int, price: float) -> dict[str, object]:
        return {"order": order, "total": round(quantity * price, 2)}

    with start_worker(app, pool="solo", concurrency=1, perform_ping_check=False, shutdown_timeout=30):
        pending = [invoice.delay(i, 1 + i % 4, 2.5 + i % 3) for i in range(count)]
        results = [result.get(timeout=60) for result in pending]
    for result in results:
        print(json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    broker, queue, count = sys.argv[1:]
    main(broker, queue, int(count))
