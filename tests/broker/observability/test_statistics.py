"""stats_cb: librdkafka-named statistics with message counts, per-broker RTT and requests,
per-partition queue depth."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from kafkawire import Producer
from kafkawire.local_broker import TansuBroker

pytestmark = pytest.mark.broker


def test_statistics_report_queue_depth_then_sends_and_round_trips(
    tansu: TansuBroker, topic_name: Callable[[str], str]
) -> None:
    topic = topic_name("stats")
    seen: list[dict[str, Any]] = []
    conf = {
        "bootstrap.servers": tansu.bootstrap,
        "statistics.interval.ms": 50,
        "stats_cb": lambda doc: seen.append(json.loads(doc)),
        "linger.ms": 60_000,  # hold the records in the queue until flush
    }
    with Producer(conf) as p:
        p.list_topics(topic, timeout=10)
        for _ in range(7):
            p.produce(topic, b"x" * 10, partition=0)
        while not any(s["topics"] for s in seen):  # served by poll(), at least one report after produce
            p.poll(1)
        queued = next(s for s in seen if s["topics"])
        assert queued["topics"][topic]["partitions"]["0"]["msgq_cnt"] == 7
        assert queued["msg_cnt"] == 7 and queued["txmsgs"] == 0
        assert p.flush(30) == 0
        count = len(seen)
        while len(seen) == count:
            p.poll(1)
    last = seen[-1]
    assert last["txmsgs"] == 7 and last["txmsg_bytes"] == 70 and last["msg_cnt"] == 0
    # The leader's connection: ApiVersions, Produce... (the bootstrap one's counts left with it, as a
    # broker librdkafka decommissions takes its counters out of the totals)
    assert last["tx"] >= 2 and last["rx"] >= 2
    broker = next(b for b in last["brokers"].values() if b["nodeid"] >= 0 and b["rx"])
    assert broker["req"]["Produce"] >= 1 and broker["txbytes"] > 70 and broker["connects"] == 1
    rtt = [s["brokers"][name]["rtt"] for s in seen for name, b in s["brokers"].items() if b["nodeid"] >= 0]
    assert sum(w["cnt"] for w in rtt) <= broker["rx"]  # a window counts its interval's answers only
    assert any(w["cnt"] and w["p99_99"] >= w["max"] >= w["min"] > 0 for w in rtt)  # percentiles: bucket tops
    assert last["type"] == "producer" and last["age"] > 0


def _broker_names(module: Any, bootstrap: str, topic: str) -> set[str]:
    """The brokers a producer's statistics name once it has produced and stayed idle a second."""
    seen: list[dict[str, Any]] = []
    p = module.Producer(
        {
            "bootstrap.servers": bootstrap,
            "statistics.interval.ms": 100,
            "stats_cb": lambda d: seen.append(json.loads(d)),
        }
    )
    p.produce(topic, b"x")
    assert p.flush(30) == 0
    count = len(seen)
    while len(seen) < count + 10:
        p.poll(0.2)
    if hasattr(p, "close"):
        p.close()
    return set(seen[-1]["brokers"])


def test_the_bootstrap_connection_leaves_the_statistics_once_the_brokers_are_known(
    tansu: TansuBroker, topic_name: Callable[[str], str]
) -> None:
    """As librdkafka decommissions its bootstrap brokers (2.10+), the bootstrap connection closes
    once the metadata named the brokers and had nothing more to carry: the statistics name the
    brokers alone, as confluent-kafka's (they listed "<address>/bootstrap" for good)."""
    import confluent_kafka

    import kafkawire

    topic = topic_name("stats-brokers")
    names = {m.__name__: _broker_names(m, tansu.bootstrap, topic) for m in (confluent_kafka, kafkawire)}
    assert names["kafkawire"] == names["confluent_kafka"], names
    assert not any(name.endswith("/bootstrap") for name in names["kafkawire"]), names
