"""Rebalance time of a 3-member consumer group on Apache Kafka 2.3: kafkawire against confluent-kafka.

``python -m bench.rebalance [--rounds 3] [--partitions 12]``: the tests' Kafka 2.3 harness (JVM +
ZooKeeper, needs Java). Each round and client gets a fresh topic and group; three consumers of
that client subscribe with the same settings (session.timeout.ms 6000, heartbeat.interval.ms 1000,
partition.assignment.strategy range, group.initial.rebalance.delay.ms 0 on the broker) and are
polled in turn from one thread, 20 ms each. Three times are measured, each until every partition
is assigned to exactly one live member:
- ``join``: three new members subscribing to an empty group;
- ``leave``: one member's ``close()`` (it leaves the group), the other two taking its partitions;
- ``add``: a fourth member subscribing to the group of two.
Prints each round and the medians per client, and the ratio kafkawire / confluent-kafka (below
1.0 is faster).
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid
from collections.abc import Callable
from typing import Any

SETTINGS = {
    "session.timeout.ms": 6000,
    "heartbeat.interval.ms": 1000,
    "partition.assignment.strategy": "range",
    "auto.offset.reset": "earliest",
    "enable.auto.commit": False,
}
PHASES = ("join", "leave", "add")
LIMIT = 60.0  # seconds a phase may take before the round fails


def make_consumer(client: str, bootstrap: str, group: str, settings: dict[str, Any] = SETTINGS) -> Any:
    """A consumer of ``client`` (confluent-kafka or kafkawire) in ``group`` with ``settings``."""
    conf = {"bootstrap.servers": bootstrap, "group.id": group, **settings}
    if client == "confluent-kafka":
        import confluent_kafka

        conf.update({"broker.address.family": "v4", "log_level": 3})
        return confluent_kafka.Consumer(conf)
    import kafkawire

    return kafkawire.Consumer(conf)


def _settled(members: list[Any], partitions: int) -> bool:
    """Every partition assigned to exactly one of ``members``, each member holding some."""
    owned = [tp.partition for m in members for tp in m.assignment()]
    return len(owned) == partitions and len(set(owned)) == partitions and all(m.assignment() for m in members)


def _until_settled(members: list[Any], partitions: int, started: float) -> float:
    while not _settled(members, partitions):
        if time.monotonic() - started > LIMIT:
            held = [sorted(tp.partition for tp in m.assignment()) for m in members]
            raise TimeoutError(f"the group did not settle within {LIMIT:.0f} s: assignments {held}")
        for m in members:
            m.poll(0.02)
    return time.monotonic() - started


def one_round(client: str, bootstrap: str, topic: str, partitions: int) -> dict[str, float]:
    group = f"bench-{uuid.uuid4().hex[:8]}"
    members: list[Any] = []
    times: dict[str, float] = {}
    try:
        started = time.monotonic()
        for _ in range(3):
            member = make_consumer(client, bootstrap, group)
            member.subscribe([topic])
            members.append(member)
        times["join"] = _until_settled(members, partitions, started)
        started = time.monotonic()
        members.pop(0).close()
        times["leave"] = _until_settled(members, partitions, started)
        started = time.monotonic()
        member = make_consumer(client, bootstrap, group)
        member.subscribe([topic])
        members.append(member)
        times["add"] = _until_settled(members, partitions, started)
    finally:
        for m in members:
            m.close()
    return times


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    from kafkawire.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(topic, partitions, 1)]).values():
        future.result(30)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--partitions", type=int, default=12)
    args = parser.parse_args(argv)
    from tests.harness.kafka_broker import KafkaBroker

    clients = ("confluent-kafka", "kafkawire")
    results: dict[str, list[dict[str, float]]] = {c: [] for c in clients}
    with KafkaBroker() as kafka:
        bootstrap = kafka.bootstrap()
        print(f"Apache Kafka 2.3 on {bootstrap}; {args.partitions} partitions, 3 members, {args.rounds} rounds")
        for r in range(args.rounds):
            order = clients if r % 2 == 0 else clients[::-1]
            for client in order:
                topic = f"rebalance-{uuid.uuid4().hex[:8]}"
                create_topic(bootstrap, topic, args.partitions)
                times = one_round(client, bootstrap, topic, args.partitions)
                results[client].append(times)
                shown = "  ".join(f"{p} {times[p]:6.2f} s" for p in PHASES)
                print(f"  round {r + 1} {client:16} {shown}", flush=True)
    median: Callable[[str, str], float] = lambda c, p: statistics.median(t[p] for t in results[c])  # noqa: E731
    print("\n| client | " + " | ".join(f"{p} s (median)" for p in PHASES) + " |")
    print("|---|" + "---:|" * len(PHASES))
    for c in clients:
        print(f"| {c} | " + " | ".join(f"{median(c, p):.2f}" for p in PHASES) + " |")
    ratios = ", ".join(f"{p} {median('kafkawire', p) / median('confluent-kafka', p):.2f}x" for p in PHASES)
    print(f"\nkafkawire / confluent-kafka time: {ratios} (below 1.0: kafkawire settles sooner)")


if __name__ == "__main__":
    main()
