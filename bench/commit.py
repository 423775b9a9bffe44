"""Synchronous commit latency on Apache Kafka 2.3: kafkawire against confluent-kafka (issue 27's target).

``python -m bench.commit [--rounds 3] [--commits 50]``: the tests' Kafka 2.3 harness (JVM +
ZooKeeper, needs Java). Each round and client gets a fresh one-partition topic holding
``--commits`` records and a fresh group; one consumer subscribes, and once it holds the partition
every record it polls is committed with ``commit(message=m, asynchronous=False)``, the
commit-per-record loop of an at-least-once application. The clock runs around each commit call
only (not the poll), so the figure is the commit's round trip to the group coordinator.
Then the same again with ``commit(offsets=[...], asynchronous=False)``. Prints each round, the
medians and 90th percentiles per client, and the ratio kafkawire / confluent-kafka (target: at
most 2.0x, below 1.0 is faster). Every commit is checked: ``committed()`` must give the last offset.
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid
from typing import Any

from bench.rebalance import create_topic, make_consumer

SETTINGS = {"auto.offset.reset": "earliest", "enable.auto.commit": False, "session.timeout.ms": 6000}
FORMS = ("message", "offsets")
LIMIT = 30.0  # seconds a round may wait for its assignment or its records


def _produce(bootstrap: str, topic: str, count: int) -> None:
    import kafkawire

    producer = kafkawire.Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    try:
        for i in range(count):
            producer.produce(topic, b"v%d" % i, partition=0)
        if producer.flush(LIMIT):
            raise RuntimeError("the records were not delivered")
    finally:
        producer.close()


def _topic_partition(client: str) -> Any:
    """The client's own TopicPartition class (confluent-kafka's calls take only theirs)."""
    if client == "confluent-kafka":
        import confluent_kafka

        return confluent_kafka.TopicPartition
    import kafkawire

    return kafkawire.TopicPartition


def _commit_each(consumer: Any, tp_class: Any, form: str, count: int, started: float) -> list[float]:
    """Poll ``count`` records and commit each synchronously; the latency of each commit call."""
    times: list[float] = []
    while len(times) < count:
        if time.monotonic() - started > LIMIT:
            raise TimeoutError(f"{len(times)} of {count} records arrived within {LIMIT:.0f} s")
        m = consumer.poll(0.5)
        if m is None or m.error():
            continue
        if form == "message":
            t0 = time.perf_counter()
            consumer.commit(message=m, asynchronous=False)
        else:
            offsets = [tp_class(m.topic(), m.partition(), m.offset() + 1)]
            t0 = time.perf_counter()
            consumer.commit(offsets=offsets, asynchronous=False)
        times.append(time.perf_counter() - t0)
    return times


def one_round(client: str, bootstrap: str, count: int) -> dict[str, list[float]]:
    tp_class = _topic_partition(client)
    result: dict[str, list[float]] = {}
    for form in FORMS:
        topic = f"commit-{uuid.uuid4().hex[:8]}"
        create_topic(bootstrap, topic, 1)
        _produce(bootstrap, topic, count)
        consumer = make_consumer(client, bootstrap, f"bench-{uuid.uuid4().hex[:8]}", SETTINGS)
        try:
            consumer.subscribe([topic])
            result[form] = _commit_each(consumer, tp_class, form, count, time.monotonic())
            (got,) = consumer.committed([tp_class(topic, 0)], timeout=10)
            if got.offset != count:
                raise RuntimeError(f"{client} committed offset {got.offset}, expected {count}")
        finally:
            consumer.close()
    return result


def _ms(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--commits", type=int, default=50)
    args = parser.parse_args(argv)
    from tests.harness.kafka_broker import KafkaBroker

    clients = ("confluent-kafka", "kafkawire")
    times: dict[tuple[str, str], list[float]] = {(c, f): [] for c in clients for f in FORMS}
    with KafkaBroker() as kafka:
        bootstrap = kafka.bootstrap()
        print(f"Apache Kafka 2.3 on {bootstrap}; {args.commits} synchronous commits per form, {args.rounds} rounds")
        for r in range(args.rounds):
            for client in clients if r % 2 == 0 else clients[::-1]:
                got = one_round(client, bootstrap, args.commits)
                shown = "  ".join(f"{f} p50 {_ms(got[f], 0.5):6.2f} ms" for f in FORMS)
                print(f"  round {r + 1} {client:16} {shown}", flush=True)
                for f in FORMS:
                    times[client, f].extend(got[f])
    print("\n| client | form | p50 ms | p90 ms | mean ms |")
    print("|---|---|---:|---:|---:|")
    for c in clients:
        for f in FORMS:
            t = times[c, f]
            print(
                f"| {c} | commit({f}=..., asynchronous=False) | {_ms(t, 0.5):.2f} | {_ms(t, 0.9):.2f} | {1000 * statistics.fmean(t):.2f} |"
            )
    for f in FORMS:
        ratio = _ms(times["kafkawire", f], 0.5) / _ms(times["confluent-kafka", f], 0.5)
        print(
            f"commit({f}=...): kafkawire / confluent-kafka p50 {ratio:.2f}x (target <= 2.0x): {'met' if ratio <= 2.0 else 'NOT met'}"
        )


if __name__ == "__main__":
    main()
