"""``produce()`` of one record then ``flush()``: kafkawire against confluent-kafka (issue 49).

``python -m bench.flush_latency [--rounds 3] [--records 200] [--kafka23 | --bootstrap-servers HOST:PORT]``:
Tansu (loopback, memory only) unless given a broker; ``--kafka23`` starts the tests' Apache Kafka
2.3 (tests/harness/kafka_broker.py). Each client and form gets one producer (``linger.ms`` at its
default, acks=all as both defaults say), warmed by one record; then ``--records`` times:
``produce()`` one record and ``flush()``, the clock around both, the loop of a task queue that
publishes one message and waits for it. Two forms: without a delivery callback and with one
(``on_delivery``). Every flush must return 0 (nothing left). Prints each round, then p50/p90/mean
per client and form, the client's CPU per round (the process's, every thread: librdkafka's own
threads for confluent-kafka, the IO thread for kafkawire; the broker runs in its own process), and
the ratio kafkawire / confluent-kafka of the p50s (issue 49's target: within 2x, each form).
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid
from typing import Any

FORMS = ("no callback", "on_delivery")
CLIENTS = ("confluent-kafka", "kafkawire")
TARGET_RATIO = 2.0


def _producer(client: str, bootstrap: str) -> Any:
    if client == "confluent-kafka":
        import confluent_kafka as module
    else:
        import kafkawire as module  # type: ignore[no-redef]
    return module.Producer({"bootstrap.servers": bootstrap})


def one_run(client: str, bootstrap: str, topic: str, form: str, count: int) -> tuple[list[float], float]:
    """The latency of ``count`` produce()+flush() pairs, each checked to leave nothing behind, and
    the process's CPU seconds over them."""
    producer = _producer(client, bootstrap)
    reports: list[Any] = []
    kwargs: dict[str, Any] = {}
    if form == "on_delivery":
        kwargs["on_delivery"] = lambda err, msg: reports.append(err)
    try:
        producer.produce(topic, b"warm-up", **kwargs)
        if producer.flush(30):
            raise RuntimeError(f"{client}: the warm-up record was not delivered")
        times: list[float] = []
        cpu = time.process_time()
        for i in range(count):
            t0 = time.perf_counter()
            producer.produce(topic, b"v%d" % i, **kwargs)
            left = producer.flush(10)
            times.append(time.perf_counter() - t0)
            if left:
                raise RuntimeError(f"{client}: flush() left {left} record(s)")
        cpu = time.process_time() - cpu
        if form == "on_delivery" and (len(reports) != count + 1 or any(e is not None for e in reports)):
            raise RuntimeError(f"{client}: {len(reports)} reports for {count + 1} records, errors {reports}")
        return times, cpu
    finally:
        closer = getattr(producer, "close", None)
        if closer is not None:
            closer()


def _ms(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _create_topic(bootstrap: str, topic: str) -> None:
    from kafkawire.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(topic, 1, 1)]).values():
        future.result(30)


Times = dict[tuple[str, str], list[float]]


def run(bootstrap: str, rounds: int, records: int) -> tuple[Times, Times]:
    """Per (client, form): every round's latencies, and each round's CPU per record."""
    topic = f"flush-{uuid.uuid4().hex[:8]}"
    _create_topic(bootstrap, topic)
    times: Times = {(c, f): [] for c in CLIENTS for f in FORMS}
    cpu: Times = {(c, f): [] for c in CLIENTS for f in FORMS}
    for r in range(rounds):
        for client in CLIENTS if r % 2 == 0 else CLIENTS[::-1]:
            for form in FORMS:
                got, spent = one_run(client, bootstrap, topic, form, records)
                times[client, form].extend(got)
                cpu[client, form].append(spent / records)
                print(
                    f"  round {r + 1} {client:16} {form:12} p50 {_ms(got, 0.5):7.3f} ms  CPU {1e6 * spent / records:6.0f} us",
                    flush=True,
                )
    return times, cpu


def report(times: Times, cpu: Times) -> None:
    print("\n| client | form | p50 ms | p90 ms | mean ms | CPU us per round (median of rounds) |")
    print("|---|---|---:|---:|---:|---:|")
    for c in CLIENTS:
        for f in FORMS:
            t = times[c, f]
            print(
                f"| {c} | produce()+flush(), {f} | {_ms(t, 0.5):.3f} | {_ms(t, 0.9):.3f} | {1000 * statistics.fmean(t):.3f} "
                f"| {1e6 * statistics.median(cpu[c, f]):.0f} |"
            )
    for f in FORMS:
        ours, theirs = _ms(times["kafkawire", f], 0.5), _ms(times["confluent-kafka", f], 0.5)
        met = ours <= TARGET_RATIO * theirs
        print(
            f"{f}: kafkawire / confluent-kafka p50 {ours / theirs:.2f}x "
            f"(target <= {TARGET_RATIO:.0f}x): {'met' if met else 'NOT met'}"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--records", type=int, default=200)
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--bootstrap-servers", default=None)
    where.add_argument("--kafka23", action="store_true", help="the tests' Apache Kafka 2.3 (a JVM, ZooKeeper)")
    args = parser.parse_args(argv)
    if args.bootstrap_servers:
        report(*run(args.bootstrap_servers, args.rounds, args.records))
        return
    if args.kafka23:
        from tests.harness.kafka_broker import KafkaBroker

        with KafkaBroker() as kafka:
            bootstrap = kafka.bootstrap()
            print(
                f"Apache Kafka 2.3 on {bootstrap}; {args.records} x produce()+flush() per client and form, {args.rounds} rounds"
            )
            report(*run(bootstrap, args.rounds, args.records))
        return
    from kafkawire.local_broker import TansuBroker

    with TansuBroker() as tansu:
        print(
            f"Tansu on {tansu.bootstrap}; {args.records} x produce()+flush() per client and form, {args.rounds} rounds"
        )
        report(*run(tansu.bootstrap, args.rounds, args.records))


if __name__ == "__main__":
    main()
