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
    assert last["tx"] >= 3 and last["rx"] >= 3  # ApiVersions, Metadata, InitProducerId, Produce...
    broker = next(b for b in last["brokers"].values() if b["nodeid"] >= 0 and b["rx"])
    assert broker["req"]["Produce"] >= 1 and broker["txbytes"] > 70 and broker["connects"] == 1
    rtt = [s["brokers"][name]["rtt"] for s in seen for name, b in s["brokers"].items() if b["nodeid"] >= 0]
    assert sum(w["cnt"] for w in rtt) <= broker["rx"]  # a window counts its interval's answers only
    assert any(w["cnt"] and w["p99_99"] >= w["max"] >= w["min"] > 0 for w in rtt)  # percentiles: bucket tops
    assert last["type"] == "producer" and last["age"] > 0
