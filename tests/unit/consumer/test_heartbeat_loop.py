"""What a heartbeat-driven member (KIP-848's, the share group's) does between heartbeats, over the
scripted stand-in client of tests/unit/stand_in.py (a virtual clock, no sockets): an assignment's topic
ids waited for in the metadata (one request-driver operation, asked until named), changes handed
over in order, a whole new assignment replacing those still waiting; the coordinator looked up
until found, and nothing asked once the member stopped."""

from __future__ import annotations

import uuid
from typing import Any

from kafkawire.consumer.heartbeat_loop import HeartbeatLoop
from kafkawire.core.kafka_error import KafkaError
from kafkawire.protocol import error_codes as ec
from kafkawire.protocol.apis import FIND_COORDINATOR, METADATA

from ..stand_in import Call, StubClient

TOPIC = uuid.uuid4()


class NamingStub(StubClient):
    """Metadata that names topic ``TOPIC`` from the ``named_from``-th refresh on."""

    def __init__(self, named_from: int) -> None:
        super().__init__()
        self.config = {"retry.backoff.ms": 100, "retry.backoff.max.ms": 1000}
        self.named_from = named_from
        self.lanes: list[int | None] = []

    def refresh_metadata_io(
        self,
        topics: Any,
        callback: Any,
        *,
        timeout: float | None = None,
        auto_create: bool = False,
        lane: int | None = None,
    ) -> None:
        self.lanes.append(lane)
        call = self._record(METADATA, {"topics": None, "allow_auto_topic_creation": False}, None, timeout, None)
        named = len(self.requests(METADATA)) >= self.named_from
        answer = {
            "brokers": [{"node_id": 1, "host": "b", "port": 1}],
            "controller_id": 1,
            "topics": [{"error_code": 0, "name": "t", "topic_id": TOPIC, "partitions": []}] if named else [],
        }

        def done(response: Any, error: KafkaError | None) -> None:
            if response is not None:
                self.metadata.update(response, self.engine.now(), full=True)
            callback(response, error)

        self._answer(METADATA, call, answer, done)


class Member(HeartbeatLoop):
    def __init__(self, client: StubClient) -> None:
        self.client = client  # type: ignore[assignment]
        self.coordinators = client.coordinators
        self.coordinator = None
        self._group = "g"
        self._timer = None
        self._stopped = False
        self.beats = 0

    def _heartbeat(self) -> None:
        self.beats += 1

    def _retry_delay(self) -> float:
        return 0.1


def test_changes_wait_for_their_topic_names_in_order() -> None:
    client = NamingStub(named_from=3)
    member = Member(client)
    handed: list[str] = []
    member._when_named([TOPIC], lambda: handed.append("assign t"), 5.0, replace=False)
    member._when_named([], lambda: handed.append("revoke nothing"), 5.0, replace=False)
    assert handed == []  # the later change waits for the earlier one
    client.engine.run()
    assert handed == ["assign t", "revoke nothing"]
    sent = [c.at for c in client.requests(METADATA)]
    assert len(sent) == 3 and sent[1] - sent[0] < sent[2] - sent[1]  # backing off, doubling


def test_topic_names_are_asked_on_the_coordinators_connection() -> None:
    """As librdkafka asks for an assignment's unknown topic ids: not behind a Fetch long-poll."""
    client = NamingStub(named_from=2)
    member = Member(client)
    member._when_named([TOPIC], lambda: None, 5.0, replace=False)
    member.coordinator = 7  # found meanwhile
    client.engine.run()
    assert client.lanes == [None, 7]  # (no coordinator known yet: any connection)


def test_a_whole_new_assignment_replaces_the_ones_still_waiting() -> None:
    client = NamingStub(named_from=1000)
    member = Member(client)
    handed: list[str] = []
    member._when_named([TOPIC], lambda: handed.append("old"), 5.0, replace=True)
    client.engine.call_later(2.0, lambda: member._when_named([], lambda: handed.append("new"), 5.0, replace=True))
    client.engine.run()
    assert handed == ["new"]
    asked = len(client.requests(METADATA))
    client.engine.run()
    assert len(client.requests(METADATA)) == asked  # the old wait asks no more


def test_a_stopped_member_asks_nothing_more() -> None:
    client = NamingStub(named_from=1000)
    client.handler = lambda call: {
        "coordinators": [
            {"key": "g", "node_id": -1, "host": "", "port": -1, "error_code": ec.COORDINATOR_NOT_AVAILABLE}
        ]
    }
    member = Member(client)
    handed: list[str] = []
    member._when_named([TOPIC], lambda: handed.append("assign t"), 5.0, replace=False)
    member._find_coordinator(5.0)
    client.engine.call_later(3.0, member._stop)
    client.engine.run()
    assert handed == [] and member.coordinator is None and member.beats == 0
    assert client.calls and all(c.at <= 3.0 for c in client.calls)


def test_the_coordinator_is_looked_up_once_at_a_time_then_a_heartbeat_goes() -> None:
    client = NamingStub(named_from=0)
    answers = iter([ec.COORDINATOR_NOT_AVAILABLE, ec.COORDINATOR_NOT_AVAILABLE, 0])

    def handler(call: Call) -> Any:
        code = next(answers)
        return {
            "coordinators": [{"key": "g", "node_id": 1 if not code else -1, "host": "b", "port": 1, "error_code": code}]
        }

    client.handler = handler
    member = Member(client)
    member._find_coordinator(5.0)
    member._find_coordinator(5.0)  # a lookup under way: not asked twice
    client.engine.run()
    assert member.coordinator == 1 and member.beats == 1
    assert len(client.requests(FIND_COORDINATOR)) == 3
