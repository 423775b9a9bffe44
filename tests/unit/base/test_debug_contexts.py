"""The debug contexts that need no broker to speak: ``plugin`` and ``telemetry`` (said once, at
INIT), ``topic`` (how a Metadata answer changed the picture), ``interceptor`` (each hook called,
each failure) and ``mock`` (kafkawire.testing's cluster: requests served, faults set up and
served). Each checked for librdkafka's line shape, and for silence when its context is off."""

from __future__ import annotations

import re
from typing import Any

import pytest

from kafkawire import Consumer, KafkaError, Producer
from kafkawire.admin import AdminClient
from kafkawire.base.debug import Debug, parse_contexts
from kafkawire.client import topic_log
from kafkawire.core.metadata import PartitionInfo, TopicInfo
from kafkawire.protocol import error_codes as E
from kafkawire.protocol.apis import METADATA
from kafkawire.testing import MockCluster
from tests.unit.base.test_debug import Capture, capturing

NOWHERE = "127.0.0.1:1"
LINE = re.compile(r"^(?P<fac>[A-Z_]+) \[(?P<name>[^\]]+)\] \[thrd:(?P<thrd>[^\]]+)\]: (?P<msg>.*)$")  # any client kind


def parsed(handler: Capture, facility: str | None = None) -> list[re.Match[str]]:
    """The captured DEBUG lines (each in librdkafka's shape), of one facility or all."""
    lines = handler.lines()
    found = [m for line in lines if (m := LINE.match(line))]
    assert len(found) == len(lines), [line for line in lines if not LINE.match(line)]
    return [m for m in found if facility is None or m["fac"] == facility]


@pytest.mark.parametrize("debug", ["plugin,telemetry", "all", None])
def test_plugin_says_once_what_kafkawire_does_not_do(debug: str | None) -> None:
    logger, handler = capturing(f"pt.{debug}")
    conf: dict[str, Any] = {"bootstrap.servers": NOWHERE, "logger": logger, **({"debug": debug} if debug else {})}
    clients = [Producer(conf), AdminClient(conf), Consumer({**conf, "group.id": "g"})]
    try:
        clients[0].poll(0)  # (the producer's records reach the logger as poll() serves them)
        plugin = [m["msg"] for m in parsed(handler, "PLUGLOAD")]
    finally:
        clients[0].flush(0)
        clients[2].close()
    if debug is None:
        assert plugin == []
        return
    assert len(plugin) == 3  # once per client
    assert all("plugin.library.paths" in m and "does not load" in m for m in plugin)


def _topic(name: str, leaders: dict[int, tuple[int, int]], error: int = 0) -> TopicInfo:
    parts = {p: PartitionInfo(p, leader, epoch, (leader,), (leader,), 0) for p, (leader, epoch) in leaders.items()}
    return TopicInfo(name, error, parts)


def test_topic_lines_say_state_partition_count_and_leader_changes() -> None:
    logger, handler = capturing("topic")
    debug = Debug({"topic"}, logger, "c#consumer-1")
    first = {"a": _topic("a", {0: (1, 0)}), "gone": _topic("gone", {}, E.UNKNOWN_TOPIC_OR_PARTITION)}
    topic_log.changes(debug, {}, first)
    topic_log.changes(debug, first, dict(first))  # the same picture again: nothing to say
    second = {"a": _topic("a", {0: (2, 1), 1: (3, 0)})}  # a full answer without "gone"
    topic_log.changes(debug, first, second)
    said = [(m["fac"], m["thrd"], m["msg"]) for m in parsed(handler)]
    assert said == [
        ("TOPIC", "main", "Topic a changed state unknown -> exists"),
        ("PARTCNT", "main", "Topic a partition count changed from 0 to 1"),
        ("LEADER", "main", "a [0]: leader -1 epoch -1 -> leader 1 epoch 0"),
        (
            "TOPIC",
            "main",
            "Topic gone changed state unknown -> notexists: " + KafkaError(E.UNKNOWN_TOPIC_OR_PARTITION).str(),
        ),
        ("PARTCNT", "main", "Topic a partition count changed from 1 to 2"),
        ("LEADER", "main", "a [0]: leader 1 epoch 0 -> leader 2 epoch 1"),
        ("LEADER", "main", "a [1]: leader -1 epoch -1 -> leader 3 epoch 0"),
    ], said
    handler.records.clear()
    topic_log.changes(debug, second, {})  # a full answer without "a": it is gone
    assert [m["msg"] for m in parsed(handler)] == ["Topic a changed state exists -> notexists"]


class Counting:
    def __init__(self) -> None:
        self.sent = 0

    def on_send(self, record: Any) -> Any:
        self.sent += 1
        return record

    def on_acknowledgement(self, metadata: Any, exception: Any) -> None:
        pass


class Failing:
    def on_send(self, record: Any) -> Any:
        raise RuntimeError("boom")


def _produce_one_and_purge(conf: dict[str, Any]) -> None:
    """One record through the interceptors, purged (acknowledged as failed), then close()."""
    p = Producer({"bootstrap.servers": NOWHERE, **conf})
    try:
        p.produce("t", b"v", partition=0)
        p.purge()
        p.flush(5)
    finally:
        p.close()


def test_interceptor_lines_name_each_hook_call_and_failure() -> None:
    logger, handler = capturing("ic")
    counting = Counting()
    _produce_one_and_purge({"logger": logger, "debug": "interceptor", "interceptor.classes": [counting, Failing()]})
    said = [(m["fac"], m["msg"]) for m in parsed(handler) if m["fac"] != "INIT"]
    assert ("INTERCEPTOR", "Interceptor Counting added (on_send, on_acknowledgement)") in said
    assert ("INTERCEPTOR", "Interceptor Failing added (on_send)") in said
    assert ("INTERCEPTOR", "Interceptor Counting on_send for t [0]") in said
    assert ("ICFAIL", "Interceptor Failing failed on_send for t [0]: RuntimeError: boom") in said
    assert ("INTERCEPTOR", "Interceptor Counting on_acknowledgement for t [0]") in said
    assert counting.sent == 1


def test_interceptors_say_nothing_with_the_context_off() -> None:
    logger, handler = capturing("icoff")
    _produce_one_and_purge({"logger": logger, "debug": "broker", "interceptor.classes": [Counting(), Failing()]})
    assert not [m for m in parsed(handler) if m["fac"] in ("INTERCEPTOR", "ICFAIL")]


def test_the_mock_cluster_says_what_it_served_and_which_faults_it_injected() -> None:
    logger, handler = capturing("mock")
    debug = Debug(parse_contexts("mock"), logger, "test#producer-1")
    with MockCluster(1, topics={"t": 1}, debug=debug) as cluster:
        cluster.push_request_errors(METADATA.key, E.LEADER_NOT_AVAILABLE)
        p = Producer({"bootstrap.servers": cluster.bootstrap_servers(), "client.id": "me"})
        try:
            p.list_topics("t", timeout=10)
        finally:
            p.flush(0)
    said = [m["msg"] for m in parsed(handler, "MOCK")]
    assert all(m["thrd"] == "mock" for m in parsed(handler))
    assert "Fault set up: Metadata: 1 error(s) pushed: LEADER_NOT_AVAILABLE" in said
    assert any(
        re.fullmatch(r"Broker 1: Received MetadataRequestV\d+ from connection \d+ \(client\.id me\)", s) for s in said
    )
    assert any(
        re.fullmatch(r"Broker 1: Injecting error LEADER_NOT_AVAILABLE into MetadataResponseV\d+ \(delayed 0 ms\)", s)
        for s in said
    )
    assert any(re.fullmatch(r"Broker 1: Sending MetadataResponseV\d+ \(\d+ bytes, delayed 0 ms\)", s) for s in said)


def test_a_client_with_its_own_mock_cluster_writes_the_mock_lines() -> None:
    logger, handler = capturing("ownmock")
    for debug in ("mock", "broker"):
        handler.records.clear()
        p = Producer({"test.mock.num.brokers": 1, "logger": logger, "debug": debug})
        try:
            p.list_topics(timeout=10)
        finally:
            p.close()  # (left open, its cluster's lines would go on: the next round's debug is another's)
        mock = parsed(handler, "MOCK")
        if debug == "mock":
            assert mock and all(m["name"].split("#")[1].startswith("producer-") for m in mock)
        else:
            assert mock == []
