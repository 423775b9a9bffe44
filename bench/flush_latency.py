"""``produce()`` of one record then ``flush()``: kafkawire against confluent-kafka (issue 49).

``python -m bench.flush_latency [--rounds 3] [--records 300] [--block 50] [--kafka23 | --bootstrap-servers HOST:PORT]``:
Tansu (loopback, memory only) unless given a broker; ``--kafka23`` starts the tests' Apache Kafka
2.3 (tests/harness/kafka_broker.py). Each client and form gets one producer (``linger.ms`` at its
default, acks=all as both defaults say), all four made first and warmed by one record each; then
``--records`` times per round: ``produce()`` one record and ``flush()``, the clock around both,
the loop of a task queue that publishes one message and waits for it. The four take turns every
``--block`` records inside one process, so that what moves a process's latency (which cores its
threads land on, the host's load at the moment) falls on all of them alike: runs of separate
processes spread by more than the difference measured (bench/PROFILE.md). Two forms: without a
delivery callback and with one (``on_delivery``). Every flush must return 0 (nothing left).
Prints each round, then p50/p90/mean per client and form, the client's CPU per round (the
process's, every thread, over that client's turns: the others wait meanwhile), and the ratio
kafkawire / confluent-kafka of the p50s (issue 49's target: within 2x, each form).
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


class Turns:
    """One client's producer in one form, and its ``produce()``+``flush()`` rounds, a block at a time."""

    def __init__(self, client: str, bootstrap: str, topic: str, form: str) -> None:
        self.client, self.topic = client, topic
        self.producer = _producer(client, bootstrap)
        self.reports: list[Any] = []
        self.kwargs: dict[str, Any] = {}
        if form == "on_delivery":
            self.kwargs["on_delivery"] = lambda err, msg: self.reports.append(err)
        self.produced = 0
        self.producer.produce(topic, b"warm-up", **self.kwargs)
        if self.producer.flush(30):
            raise RuntimeError(f"{client}: the warm-up record was not delivered")

    def block(self, count: int) -> tuple[list[float], float]:
        """``count`` produce()+flush() pairs, each checked to leave nothing behind, and the process's
        CPU seconds over them."""
        producer, topic, kwargs = self.producer, self.topic, self.kwargs
        times: list[float] = []
        cpu = time.process_time()
        for i in range(count):
            t0 = time.perf_counter()
            producer.produce(topic, b"v%d" % i, **kwargs)
            left = producer.flush(10)
            times.append(time.perf_counter() - t0)
            if left:
                raise RuntimeError(f"{self.client}: flush() left {left} record(s)")
        self.produced += count
        return times, time.process_time() - cpu

    def close(self) -> None:
        if self.kwargs and (len(self.reports) != self.produced + 1 or any(e is not None for e in self.reports)):
            raise RuntimeError(f"{self.client}: {len(self.reports)} reports for {self.produced + 1} records")
        closer = getattr(self.producer, "close", None)
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


def run(bootstrap: str, rounds: int, records: int, block: int) -> tuple[Times, Times]:
    """Per (client, form): every round's latencies, and each round's CPU per record."""
    topic = f"flush-{uuid.uuid4().hex[:8]}"
    _create_topic(bootstrap, topic)
    times: Times = {(c, f): [] for c in CLIENTS for f in FORMS}
    cpu: Times = {(c, f): [] for c in CLIENTS for f in FORMS}
    turns = {(c, f): Turns(c, bootstrap, topic, f) for c in CLIENTS for f in FORMS}
    try:
        for r in range(rounds):
            got: Times = {key: [] for key in turns}
            spent = dict.fromkeys(turns, 0.0)
            for b in range(0, records, block):
                order = list(turns) if (r + b // block) % 2 == 0 else list(turns)[::-1]
                for key in order:
                    t, c = turns[key].block(min(block, records - b))
                    got[key] += t
                    spent[key] += c
            for client, form in turns:
                times[client, form] += got[client, form]
                cpu[client, form].append(spent[client, form] / records)
                print(
                    f"  round {r + 1} {client:16} {form:12} p50 {_ms(got[client, form], 0.5):7.3f} ms"
                    f"  CPU {1e6 * spent[client, form] / records:6.0f} us",
                    flush=True,
                )
    finally:
        for t in turns.values():
            t.close()
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
    parser.add_argument("--records", type=int, default=300)
    parser.add_argument("--block", type=int, default=50, help="records per client's turn")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--bootstrap-servers", default=None)
    where.add_argument("--kafka23", action="store_true", help="the tests' Apache Kafka 2.3 (a JVM, ZooKeeper)")
    args = parser.parse_args(argv)
    if args.bootstrap_servers:
        report(*run(args.bootstrap_servers, args.rounds, args.records, args.block))
        return
    if args.kafka23:
        from tests.harness.kafka_broker import KafkaBroker

        with KafkaBroker() as kafka:
            bootstrap = kafka.bootstrap()
            print(
                f"Apache Kafka 2.3 on {bootstrap}; {args.records} x produce()+flush() per client and form, {args.rounds} rounds"
            )
            report(*run(bootstrap, args.rounds, args.records, args.block))
        return
    from kafkawire.local_broker import TansuBroker

    with TansuBroker() as tansu:
        print(
            f"Tansu on {tansu.bootstrap}; {args.records} x produce()+flush() per client and form, {args.rounds} rounds"
        )
        report(*run(tansu.bootstrap, args.rounds, args.records, args.block))


if __name__ == "__main__":
    main()
