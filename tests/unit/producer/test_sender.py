"""producer/sender.py's requests, seen at the client boundary over librdkafka's mock cluster (in
this process): one Produce per leader carrying every ready partition it leads (up to
REQUEST_PARTITIONS), max.in.flight 1
holding a partition's next batch until the first is answered, a moved leader's batch sent again
after a Metadata request, a final error failing its records without another send.

A spy wraps the producer's `Client.request_io`: it records each Produce when the sender hands it
over, when its body is written (the partitions it carries) and when its answer arrives, and
forwards everything unchanged; the mock (its error stacks, its slow broker) is the peer that
answers. (The connection holds requests to max.in.flight too: the hand-over shows the sender's
own rule.)"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from kafkawire import KafkaError, Producer
from kafkawire.producer.sender import MOVE_HOLD, REQUEST_PARTITIONS
from kafkawire.protocol.apis import METADATA, PRODUCE
from tests.harness.mock_cluster import MockCluster

TOPIC = "sent"
NOT_LEADER_OR_FOLLOWER, TOPIC_AUTHORIZATION_FAILED = 6, 29


class Spy:
    """The Produce requests a producer's sender hands its client: ("handed", node, None) when it
    does, ("written", node, partitions) when the body is written, ("answered", node, error code or
    None) when the answer (or failure) comes."""

    def __init__(self, producer: Producer) -> None:
        self.events: list[tuple[str, int, Any]] = []
        self.changed = threading.Condition()
        client = producer._engine.client
        forward = client.request_io

        def request_io(api: Any, body: Any, callback: Any, **kw: Any) -> None:
            if api is not PRODUCE:
                return forward(api, body, callback, **kw)
            node = kw["node"]
            self._add(("handed", node, None))

            def written(version: int) -> Any:
                made = body(version)
                parts = sorted((t["name"], p["index"]) for t in made["topic_data"] for p in t["partition_data"])
                self._add(("written", node, parts))
                return made

            def answered(response: Any, error: KafkaError | None) -> None:
                codes = (
                    [p.error_code for t in response.responses for p in t.partition_responses]
                    if response is not None
                    else []
                )
                self._add(("answered", node, error.code() if error else max(codes, default=0) or None))
                callback(response, error)

            return forward(api, written, answered, **kw)

        client.request_io = request_io

    def _add(self, event: tuple[str, int, Any]) -> None:
        with self.changed:
            self.events.append(event)
            self.changed.notify_all()

    def wait_for(self, kind: str, count: int = 1) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: self.kinds().count(kind) >= count, timeout=20), self.events

    def kinds(self) -> list[str]:
        return [kind for kind, _node, _x in self.events]


@pytest.fixture
def mock() -> Iterator[MockCluster]:
    with MockCluster(3) as cluster:
        cluster.create_topic(TOPIC, partitions=6)
        yield cluster


def producer_on(mock: MockCluster, reports: list[Any], **conf: Any) -> Producer:
    p = Producer(
        {"bootstrap.servers": mock.bootstraps, "on_delivery": lambda err, msg: reports.append((err, msg)), **conf}
    )
    p.list_topics(TOPIC, timeout=10)  # the partitions' leaders known before the first record
    return p


def leaders(p: Producer) -> dict[int, list[tuple[str, int]]]:
    by_node: dict[int, list[tuple[str, int]]] = {}
    for partition in p.list_topics(TOPIC, timeout=10).topics[TOPIC].partitions.values():
        by_node.setdefault(partition.leader, []).append((TOPIC, partition.id))
    return {node: sorted(parts) for node, parts in by_node.items()}


def test_one_produce_per_leader_carries_every_ready_partition_it_leads(mock: MockCluster) -> None:
    reports: list[Any] = []
    p = producer_on(mock, reports, **{"linger.ms": 60_000})  # nothing leaves before flush()
    spy = Spy(p)
    for partition in range(6):
        p.produce(TOPIC, b"v%d" % partition, partition=partition)
    assert p.flush(20) == 0
    led = leaders(p)
    assert len(led) > 1  # (the mock spreads the leaders: the grouping is tested)
    sent = [(node, parts) for kind, node, parts in spy.events if kind == "written"]
    assert sorted(sent) == sorted(led.items())
    assert sorted(msg.partition() for err, msg in reports if err is None) == list(range(6))
    p.close()


def test_a_request_carries_at_most_request_partitions_and_the_rest_follow(mock: MockCluster) -> None:
    count = REQUEST_PARTITIONS * 4
    mock.create_topic("wide", partitions=count)
    reports: list[Any] = []
    p = producer_on(mock, reports, **{"linger.ms": 60_000})
    led: dict[int, int] = {}
    for partition in p.list_topics("wide", timeout=10).topics["wide"].partitions.values():
        led[partition.leader] = led.get(partition.leader, 0) + 1
    assert max(led.values()) > REQUEST_PARTITIONS  # (a leader of more than a request carries)
    spy = Spy(p)
    for partition in range(count):
        p.produce("wide", b"v%d" % partition, partition=partition)
    assert p.flush(20) == 0
    sent = [(node, parts) for kind, node, parts in spy.events if kind == "written"]
    assert max(len(parts) for _node, parts in sent) == REQUEST_PARTITIONS
    for node, partitions in led.items():  # as few requests as the cap allows
        assert len([1 for n, _parts in sent if n == node]) == -(-partitions // REQUEST_PARTITIONS)
    assert sorted(tp for _node, parts in sent for tp in parts) == [("wide", i) for i in range(count)]
    assert sorted(msg.partition() for err, msg in reports if err is None) == list(range(count))
    p.close()


def test_with_one_in_flight_a_partitions_next_batch_waits_for_the_answer(mock: MockCluster) -> None:
    reports: list[Any] = []
    p = producer_on(mock, reports, **{"linger.ms": 0, "max.in.flight.requests.per.connection": 1})
    leader = leaders(p)
    node = next(n for n, parts in leader.items() if (TOPIC, 0) in parts)
    mock.broker_set_rtt(node, 300)  # the first answer comes late: the second record is queued meanwhile
    spy = Spy(p)
    p.produce(TOPIC, b"first", partition=0)
    p.poll(0)
    spy.wait_for("written")
    p.produce(TOPIC, b"second", partition=0)
    assert p.flush(20) == 0
    assert [k for k in spy.kinds() if k != "written"] == ["handed", "answered", "handed", "answered"]
    assert [msg.value() for err, msg in reports if err is None] == [b"first", b"second"]
    assert [msg.offset() for _err, msg in reports] == [0, 1]
    p.close()


def test_a_moved_leaders_batch_is_sent_again_after_a_metadata_request(mock: MockCluster) -> None:
    reports: list[Any] = []
    p = producer_on(mock, reports, **{"linger.ms": 0, "retry.backoff.ms": 10})
    spy = Spy(p)
    mock.push_request_errors(PRODUCE.key, [NOT_LEADER_OR_FOLLOWER])
    mock.start_request_tracking()
    p.produce(TOPIC, b"moved", partition=1)
    assert p.flush(20) == 0
    assert [x for kind, _node, x in spy.events if kind == "answered"] == [NOT_LEADER_OR_FOLLOWER, None]
    keys = [r.api_key for r in mock.get_requests() if r.api_key in (PRODUCE.key, METADATA.key)]
    first, retry = (i for i, key in enumerate(keys) if key == PRODUCE.key)
    assert METADATA.key in keys[first + 1 : retry], keys  # the leader asked again before the retry
    [(err, msg)] = reports
    assert err is None and msg.offset() == 0  # delivered once
    p.close()


def _moved_while_in_flight(mock: MockCluster, refused_after_ms: int) -> tuple[list[Any], Spy, Producer, int, int]:
    """Partition 0's first record in flight at its leader, which refuses it (NOT_LEADER_OR_FOLLOWER)
    ``refused_after_ms`` later; meanwhile the leader moves and the producer learns it; then a
    second record. Returns the reports, the spy, the producer and the (old, new) leaders."""
    reports: list[Any] = []
    conf = {"linger.ms": 0, "retry.backoff.ms": 10, "topic.metadata.refresh.interval.ms": 100}
    p = producer_on(mock, reports, **conf)
    old = next(n for n, parts in leaders(p).items() if (TOPIC, 0) in parts)
    new = next(n for n in mock.broker_ids if n != old)
    mock.push_request_error_rtts(old, PRODUCE.key, [(NOT_LEADER_OR_FOLLOWER, refused_after_ms)])
    spy = Spy(p)
    p.produce(TOPIC, b"first", partition=0)
    p.poll(0)
    spy.wait_for("written")
    mock.partition_set_leader(TOPIC, 0, new)
    metadata = p._engine.client.metadata
    for _ in range(400):  # the periodic refresh names the new leader
        leader = metadata.leader_for(TOPIC, 0)
        if leader is not None and leader.node_id == new:
            break
        p.poll(0.05)
    assert metadata.leader_for(TOPIC, 0).node_id == new
    assert "answered" not in spy.kinds()  # (the move is seen while the first batch is in flight)
    p.produce(TOPIC, b"second", partition=0)
    return reports, spy, p, old, new


def test_a_moved_partitions_next_batch_waits_for_the_old_leaders_answer(mock: MockCluster) -> None:
    """Pipelined without idempotence, the old leader refusing within MOVE_HOLD: the second record
    is not sent to the new leader before that answer; the refused batch goes back to the head and
    is written first, as produced (it was written second, a reorder, when the next batch went to
    the new leader at once: the topic re-created in issue 53's scenarios)."""
    reports, spy, p, old, _new = _moved_while_in_flight(mock, int(MOVE_HOLD * 1000 * 3 // 4))
    p.poll(MOVE_HOLD / 4)
    assert [node for kind, node, _ in spy.events if kind == "handed"] == [old]  # held for the answer
    assert p.flush(30) == 0
    delivered = sorted((msg.offset(), msg.value()) for err, msg in reports if err is None)
    assert [value for _offset, value in delivered] == [b"first", b"second"]
    assert [(kind, node) for kind, node, _ in spy.events if kind != "written"][:2] == [
        ("handed", old),
        ("answered", old),
    ]
    p.close()


def test_a_moved_partition_leaves_an_old_leader_that_does_not_answer(mock: MockCluster) -> None:
    """The same move, the old leader answering only after 8 s (frozen, cut off): the partition
    waits MOVE_HOLD for it, not the request's timeout; the second record goes to the new leader
    meanwhile and is delivered before the first's refusal comes (librdkafka does not wait at all)."""
    reports, spy, p, old, new = _moved_while_in_flight(mock, 8_000)
    for _ in range(100):
        if ("handed", new) in [(kind, node) for kind, node, _ in spy.events]:
            break
        p.poll(0.05)
    assert "answered" not in [kind for kind, node, _ in spy.events if node == old], "sent before the old answer"
    assert [(kind, node) for kind, node, _ in spy.events if kind == "handed"] == [("handed", old), ("handed", new)]
    assert p.flush(30) == 0
    assert sorted(msg.value() for err, msg in reports if err is None) == [b"first", b"second"]
    p.close()


def test_a_final_error_fails_the_records_without_another_send(mock: MockCluster) -> None:
    reports: list[Any] = []
    p = producer_on(mock, reports, **{"linger.ms": 0, "retries": 5, "retry.backoff.ms": 10})
    spy = Spy(p)
    mock.push_request_errors(PRODUCE.key, [TOPIC_AUTHORIZATION_FAILED])
    p.produce(TOPIC, b"refused", partition=2)
    assert p.flush(20) == 0
    assert spy.kinds() == ["handed", "written", "answered"]
    [(err, msg)] = reports
    assert err is not None and err.code() == TOPIC_AUTHORIZATION_FAILED and msg.value() == b"refused"
    p.close()
