"""AdminClient routing, retries, timeouts and per-entity errors, unit-tested at the client boundary.

No sockets and no threads: the AdminClient gets a `StubClient` in place of the network `Client`.
The stub offers exactly what the admin code calls (``request_io``, ``refresh_metadata_io``,
``metadata``, ``engine``), records every request as (api, version, body, node, timeout) and answers
with the test's scripted responses, turned into real `Struct`s by our codec. Its engine runs on a
virtual clock that the test drives, so timeouts and backoffs are exact and instant.

Tansu cannot play these parts (one broker, no NOT_CONTROLLER; it ignores validate_only and accepts
any partition count or config). The request bodies of the APIs Tansu lacks are encoded at every
version kafka-python implements and compared with kafka-python's encoder.
"""

from __future__ import annotations

import heapq
import importlib
import itertools
import uuid
import warnings
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

import pytest

from kafkawire.admin import (
    AdminClient,
    ConfigResource,
    KafkaError,
    KafkaException,
    NewPartitions,
    NewTopic,
)
from kafkawire.client.coordinators import Coordinators
from kafkawire.core.metadata import ClusterView
from kafkawire.io.broker import Body, Callback
from kafkawire.io.io_engine import Timer
from kafkawire.protocol import codec, headers
from kafkawire.protocol.apis import (
    ALTER_CONFIGS,
    CONSUMER_GROUP_DESCRIBE,
    CREATE_PARTITIONS,
    CREATE_TOPICS,
    DESCRIBE_CONFIGS,
    DESCRIBE_GROUPS,
    FIND_COORDINATOR,
    METADATA,
)
from kafkawire.protocol.codec import Struct
from kafkawire.protocol.schema import Api

NOT_CONTROLLER, INVALID_PARTITIONS, INVALID_CONFIG, NOT_COORDINATOR = 41, 37, 40, 16
GROUP_ID_NOT_FOUND, UNSUPPORTED_VERSION, GROUP_AUTHORIZATION_FAILED, INVALID_REQUEST = 69, 35, 30, 42


class VirtualEngine:
    """The `Engine` surface the admin code uses (now, call_soon, call_later) on a virtual clock.
    Nothing runs until the test calls `run`, which plays calls and timers in order, in its thread."""

    def __init__(self) -> None:
        self.clock = 0.0
        self._calls: deque[Callable[[], None]] = deque()
        self._timers: list[Timer] = []
        self._seq = itertools.count()

    def now(self) -> float:
        return self.clock

    def call_soon(self, fn: Callable[[], None]) -> None:
        self._calls.append(fn)

    def call_later(self, delay: float, fn: Callable[[], None]) -> Timer:
        timer = Timer(self.clock + max(0.0, delay), next(self._seq), fn)
        heapq.heappush(self._timers, timer)
        return timer

    def run(self, limit: float = 600.0) -> None:
        """Run until nothing is left to do (the clock jumps to each next timer)."""
        while True:
            while self._calls:
                self._calls.popleft()()
            while self._timers and self._timers[0].cancelled:
                heapq.heappop(self._timers)
            if not self._timers:
                return
            timer = heapq.heappop(self._timers)
            assert timer.when <= limit, "the virtual clock ran past its limit: something retries forever"
            self.clock = max(self.clock, timer.when)
            timer.fn()


@dataclass
class Call:
    """One request the admin client handed to the client."""

    api: str
    version: int
    body: Struct  # the body at ``version``, through our encoder and decoder
    node: int | None
    timeout: float | None
    at: float  # virtual time it was sent
    make_body: Body  # what the admin client passed: a body, or a function of the version
    lane: bool = False  # sent over the node's coordinator lane


# A handler answers a request: a response body, a KafkaError, or None (it never answers, so the
# client's deadline fails it with _TIMED_OUT, as `Client.request_io` promises).
Handler = Callable[[Call], Mapping[str, Any] | KafkaError | None]


class StubClient:
    """Stands in for `kafkawire.client.network_client.Client` at the request boundary; see the module docstring.

    Metadata refreshes answer the cluster in ``nodes`` and ``controller`` (the test may change
    them at any time; the next refresh reports the change) and fold it into ``metadata``.
    """

    def __init__(self, nodes: tuple[int, ...] = (1, 2), controller: int = 1) -> None:
        self.engine = VirtualEngine()
        self.metadata = ClusterView()
        self.nodes = nodes
        self.controller = controller
        self.handler: Handler = lambda call: None
        self.calls: list[Call] = []
        self.on_error: Callable[[KafkaError], None] | None = None
        self.closed = False
        self.coordinators = Coordinators(self)  # type: ignore[arg-type]

    def requests(self, api: Api) -> list[Call]:
        return [c for c in self.calls if c.api == api.name]

    def _record(
        self, api: Api, make_body: Body, node: int | None, timeout: float | None, max_version: int | None
    ) -> Call:
        version = api.max_version if max_version is None else min(max_version, api.max_version)
        raw = make_body(version) if callable(make_body) else make_body
        body = codec.decode(api.request, version, codec.encode(api.request, version, raw))
        call = Call(api.name, version, body, node, timeout, self.engine.now(), make_body)
        self.calls.append(call)
        return call

    def _answer(self, api: Api, call: Call, answer: Mapping[str, Any] | KafkaError | None, callback: Callback) -> None:
        if answer is None:
            assert call.timeout is not None, f"{api.name} was sent without a timeout"
            error = KafkaError(KafkaError._TIMED_OUT, f"{api.name} timed out")
            self.engine.call_later(call.timeout, lambda: callback(None, error))
        elif isinstance(answer, KafkaError):
            self.engine.call_soon(lambda: callback(None, answer))
        else:
            response = codec.decode(api.response, call.version, codec.encode(api.response, call.version, answer))
            self.engine.call_soon(lambda: callback(response, None))

    # --- the Client methods the admin code calls ------------------------------------------------

    def request_io(
        self,
        api: Api,
        body: Body,
        callback: Callback,
        *,
        node: int | None = None,
        timeout: float | None = None,
        max_version: int | None = None,
        expect_response: bool = True,
        coordinator_lane: bool = False,
        fail_fast: bool = False,
    ) -> None:
        assert expect_response
        call = self._record(api, body, node, timeout, max_version)
        call.lane = coordinator_lane
        self._answer(api, call, self.handler(call), callback)

    def blocking_failure(self) -> KafkaError | None:
        return None

    def refresh_metadata_io(
        self, topics: list[str] | None, callback: Callback, *, timeout: float | None = None, auto_create: bool = False
    ) -> None:
        wanted = None if topics is None else [{"name": t} for t in topics]
        call = self._record(METADATA, {"topics": wanted, "allow_auto_topic_creation": auto_create}, None, timeout, None)
        brokers = [{"node_id": n, "host": f"broker{n}", "port": 9092} for n in self.nodes]
        answer = {"brokers": brokers, "cluster_id": "stub", "controller_id": self.controller, "topics": []}

        def done(response: Struct | None, error: KafkaError | None) -> None:
            if response is not None:
                self.metadata.update(response, self.engine.now(), full=topics is None)
            callback(response, error)

        self._answer(METADATA, call, answer, done)

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def client() -> StubClient:
    return StubClient()


@pytest.fixture
def admin(client: StubClient) -> Iterator[AdminClient]:
    a = AdminClient({"bootstrap.servers": "unused:9092", "retry.backoff.ms": 10}, _client=client)  # type: ignore[arg-type]
    yield a
    a.close()
    assert client.closed


def result(client: StubClient, fut: Future[Any]) -> Any:
    client.engine.run()
    assert fut.done(), "the call did not finish once nothing was left to do"
    return fut.result(0)


def error_of(client: StubClient, fut: Future[Any]) -> KafkaError:
    with pytest.raises(KafkaException) as exc:
        result(client, fut)
    err = exc.value.args[0]
    assert isinstance(err, KafkaError)
    return err


def created(topics: list[Struct], errors: Mapping[str, tuple[int, str | None]] | None = None) -> dict[str, Any]:
    errors = errors or {}
    return {
        "topics": [
            {
                "name": t.name,
                "error_code": errors.get(t.name, (0, None))[0],
                "error_message": errors.get(t.name, (0, None))[1],
            }
            for t in topics
        ]
    }


def test_not_controller_is_retried_on_the_new_controller(client: StubClient, admin: AdminClient) -> None:
    def handler(call: Call) -> Mapping[str, Any] | None:
        if call.node == 1:  # the old controller: says so, and the cluster's metadata now names broker 2
            client.controller = 2
            return created(call.body.topics, {t.name: (NOT_CONTROLLER, None) for t in call.body.topics})
        return created(call.body.topics)

    client.handler = handler
    futures = admin.create_topics([NewTopic("a", 1, 1), NewTopic("b", 2, 1)])
    assert [result(client, f) for f in futures.values()] == [None, None]
    assert [c.node for c in client.requests(CREATE_TOPICS)] == [1, 2]
    # metadata first (to find the controller), then again between the two attempts
    assert [c.api for c in client.calls] == ["Metadata", "CreateTopics", "Metadata", "CreateTopics"]
    assert client.requests(METADATA)[1].body.topics == []  # brokers and controller only
    assert client.requests(CREATE_TOPICS)[1].body.topics == client.requests(CREATE_TOPICS)[0].body.topics


def test_per_entity_errors_land_on_their_own_futures(client: StubClient, admin: AdminClient) -> None:
    def handler(call: Call) -> Mapping[str, Any] | None:
        if call.api == CREATE_TOPICS.name:
            return created(
                call.body.topics,
                {
                    "bad-parts": (INVALID_PARTITIONS, "Number of partitions is invalid."),
                    "bad-config": (INVALID_CONFIG, "Invalid value abc for retention.ms"),
                },
            )
        if call.api == CREATE_PARTITIONS.name:
            return {
                "results": [
                    {"name": t.name, "error_code": INVALID_PARTITIONS if t.count < 5 else 0} for t in call.body.topics
                ]
            }
        return None

    client.handler = handler
    futures = admin.create_topics(
        [
            NewTopic("ok", 1, 1),
            NewTopic("bad-parts", 1, 1),
            NewTopic("bad-config", 1, 1, config={"retention.ms": "abc"}),
        ]
    )
    assert result(client, futures["ok"]) is None
    assert error_of(client, futures["bad-parts"]).code() == KafkaError.INVALID_PARTITIONS
    config_error = error_of(client, futures["bad-config"])
    assert config_error.code() == KafkaError.INVALID_CONFIG
    assert "retention.ms" in config_error.str()
    (request,) = client.requests(CREATE_TOPICS)  # one request for all three
    assert [t.name for t in request.body.topics] == ["ok", "bad-parts", "bad-config"]
    assert [(c.name, c.value) for c in request.body.topics[2].configs] == [("retention.ms", "abc")]

    grown = admin.create_partitions([NewPartitions("ok", 6), NewPartitions("shrink", 2)])
    assert result(client, grown["ok"]) is None
    assert error_of(client, grown["shrink"]).name() == "INVALID_PARTITIONS"
    assert len(client.requests(CREATE_PARTITIONS)) == 1


def test_validate_only_and_operation_timeout_reach_the_broker(client: StubClient, admin: AdminClient) -> None:
    client.handler = lambda call: created(call.body.topics)
    result(client, admin.create_topics([NewTopic("v", 3, 1)], validate_only=True, operation_timeout=1.5)["v"])
    result(client, admin.create_topics([NewTopic("w", 3, 1)])["w"])
    first, second = (c.body for c in client.requests(CREATE_TOPICS))
    assert (first.validate_only, first.timeout_ms) == (True, 1500)
    assert (second.validate_only, second.timeout_ms) == (False, 60000)  # librdkafka's: socket.timeout.ms


def test_request_timeout_is_honoured_when_the_broker_never_answers(client: StubClient, admin: AdminClient) -> None:
    futures = admin.create_topics([NewTopic("slow", 1, 1), NewTopic("slower", 1, 1)], request_timeout=0.5)
    errors = [error_of(client, f) for f in futures.values()]
    assert {e.code() for e in errors} == {KafkaError._TIMED_OUT}
    (request,) = client.requests(CREATE_TOPICS)  # not retried: a change may have been applied
    assert request.timeout == pytest.approx(0.5)  # the call's whole remaining time, not the default
    assert client.engine.clock == pytest.approx(0.5)  # failed at the request timeout, not later


def test_request_timeout_bounds_the_metadata_lookup_too(client: StubClient, admin: AdminClient) -> None:
    client.handler = lambda call: created(call.body.topics)
    result(client, admin.create_topics([NewTopic("t", 1, 1)], request_timeout=2.5)["t"])
    assert [(c.api, c.timeout) for c in client.calls] == [
        ("Metadata", pytest.approx(2.5)),
        ("CreateTopics", pytest.approx(2.5)),
    ]


def test_retries_stop_at_the_request_timeout(client: StubClient, admin: AdminClient) -> None:
    client.handler = lambda call: created(call.body.topics, {t.name: (NOT_CONTROLLER, None) for t in call.body.topics})
    err = error_of(client, admin.create_topics([NewTopic("never", 1, 1)], request_timeout=0.6)["never"])
    assert err.code() == KafkaError._TIMED_OUT and "NOT_CONTROLLER" in err.str()
    # It gives up once the next backoff would pass the deadline, so never later than the timeout.
    assert client.engine.clock <= 0.6
    attempts = client.requests(CREATE_TOPICS)
    assert len(attempts) >= 3
    # each attempt is given only what is left of the call's time, never less than the driver's
    # 1 ms (an attempt may start with less left: the backoff's jitter lands it there)
    assert all(c.timeout == pytest.approx(max(0.001, 0.6 - c.at)) for c in attempts)
    assert [c.at for c in attempts] == sorted(c.at for c in attempts) and attempts[-1].at > attempts[0].at


def test_broker_config_resource_goes_to_that_broker(client: StubClient, admin: AdminClient) -> None:
    def handler(call: Call) -> Mapping[str, Any] | None:
        results = [
            {
                "error_code": 0,
                "resource_type": r.resource_type,
                "resource_name": r.resource_name,
                "configs": [
                    {
                        "name": "log.retention.ms",
                        "value": "5",
                        "read_only": False,
                        "config_source": 4,
                        "is_sensitive": False,
                        "synonyms": [],
                    }
                ],
            }
            for r in call.body.resources
        ]
        return {"results": results}

    client.handler = handler
    broker2 = ConfigResource(ConfigResource.Type.BROKER, "2")
    entry = result(client, admin.describe_configs([broker2])[broker2])["log.retention.ms"]
    assert (entry.value, entry.source.name, entry.is_default) == ("5", "STATIC_BROKER_CONFIG", False)
    (request,) = client.requests(DESCRIBE_CONFIGS)
    assert request.node == 2
    assert (request.body.resources[0].resource_type, request.body.resources[0].resource_name) == (4, "2")

    # A topic resource may go to any broker; a broker not in the metadata fails without a request.
    topic = ConfigResource(ConfigResource.Type.TOPIC, "t")
    assert result(client, admin.describe_configs([topic])[topic])["log.retention.ms"].value == "5"
    assert client.requests(DESCRIBE_CONFIGS)[1].node is None
    broker7 = ConfigResource(ConfigResource.Type.BROKER, "7")
    assert error_of(client, admin.describe_configs([broker7])[broker7]).code() == KafkaError._UNKNOWN_BROKER
    assert len(client.requests(DESCRIBE_CONFIGS)) == 2


def test_alter_configs_of_a_broker_go_to_that_broker_else_to_the_controller(
    client: StubClient, admin: AdminClient
) -> None:
    def handler(call: Call) -> Mapping[str, Any] | None:
        return {
            "responses": [
                {"error_code": 0, "resource_type": r.resource_type, "resource_name": r.resource_name}
                for r in call.body.resources
            ]
        }

    client.handler = handler
    client.controller = 2
    topic = ConfigResource("topic", "t", set_config={"retention.ms": "1"})
    broker1 = ConfigResource("broker", "1", set_config={"log.retention.ms": "1"})
    with pytest.warns(DeprecationWarning):
        assert result(client, admin.alter_configs([topic])[topic]) is None
    with pytest.warns(DeprecationWarning):
        assert result(client, admin.alter_configs([broker1])[broker1]) is None
    assert [c.node for c in client.requests(ALTER_CONFIGS)] == [2, 1]


def _coordinator_answer(call: Call) -> Mapping[str, Any]:
    """Broker 2 coordinates every group."""
    entry = {"node_id": 2, "host": "broker2", "port": 9092, "error_code": 0}
    if call.version >= 4:
        return {"coordinators": [{**entry, "key": key} for key in call.body.coordinator_keys]}
    return entry


def _not_kip848(call: Call) -> Mapping[str, Any]:
    """Kafka's ConsumerGroupDescribe answer for a group that is not a KIP-848 group."""
    return {"groups": [{"error_code": GROUP_ID_NOT_FOUND, "group_id": "g", "group_state": "", "assignor_name": ""}]}


def test_group_requests_follow_the_coordinator_and_retry_not_coordinator(
    client: StubClient, admin: AdminClient
) -> None:
    answered_once: set[str] = set()

    def handler(call: Call) -> Mapping[str, Any] | None:
        if call.api == FIND_COORDINATOR.name:
            return _coordinator_answer(call)
        if call.api == CONSUMER_GROUP_DESCRIBE.name:
            return _not_kip848(call)
        error = NOT_COORDINATOR if "g" not in answered_once else 0
        answered_once.add("g")
        group = {
            "error_code": error,
            "group_id": "g",
            "group_state": "Stable",
            "protocol_type": "consumer",
            "protocol_data": "range",
            "members": [],
        }
        return {"groups": [group]}

    client.handler = handler
    description = result(client, admin.describe_consumer_groups(["g"])["g"])
    assert (description.state.name, description.partition_assignor) == ("STABLE", "range")
    assert description.type.name == "CLASSIC"
    assert description.coordinator is not None and description.coordinator.id == 2
    assert [c.node for c in client.requests(DESCRIBE_GROUPS)] == [2, 2]
    # A coordinator's conversation has its own connection, never queued behind a long-poll Fetch.
    assert [c.lane for c in client.requests(DESCRIBE_GROUPS)] == [True, True]
    assert not any(c.lane for c in client.requests(FIND_COORDINATOR))
    (find, again) = client.requests(FIND_COORDINATOR)  # found again before the retry
    assert find.body.coordinator_keys == again.body.coordinator_keys == ["g"]
    assert [c.api for c in client.calls] == [
        "Metadata",
        "FindCoordinator",
        "ConsumerGroupDescribe",
        "DescribeGroups",  # the coordinator known already
        "Metadata",
        "FindCoordinator",
        "DescribeGroups",
    ]


def _kip848_group(state: str, authorized_operations: int = -(2**31)) -> dict[str, Any]:
    """A KIP-848 group as Kafka's ConsumerGroupDescribe describes it: one static member moving
    partition 1 of "b" to itself while it owns partition 0 of "a"."""
    topic_a = {"topic_id": uuid.UUID(int=1), "topic_name": "a", "partitions": [0]}
    topic_b = {"topic_id": uuid.UUID(int=2), "topic_name": "b", "partitions": [1]}
    member = {
        "member_id": "m1",
        "instance_id": "static-1",
        "member_epoch": 5,
        "client_id": "c1",
        "client_host": "/10.0.0.1",
        "subscribed_topic_names": ["a", "b"],
        "assignment": {"topic_partitions": [topic_a]},
        "target_assignment": {"topic_partitions": [topic_a, topic_b]},
    }
    return {
        "group_id": "g",
        "group_state": state,
        "group_epoch": 6,
        "assignment_epoch": 6,
        "assignor_name": "uniform",
        "members": [member],
        "authorized_operations": authorized_operations,
    }


def test_a_kip848_group_is_described_by_consumer_group_describe(client: StubClient, admin: AdminClient) -> None:
    """What librdkafka fills from ConsumerGroupDescribe: type CONSUMER, never simple, the assignor's
    name, each member's assignment and target assignment, its instance id; no DescribeGroups."""
    read, describe = 3, 8  # the bits of READ and DESCRIBE
    client.handler = lambda call: (
        _coordinator_answer(call)
        if call.api == FIND_COORDINATOR.name
        else {"groups": [_kip848_group("Reconciling", 1 << read | 1 << describe | 1 << 2)]}
    )
    description = result(client, admin.describe_consumer_groups(["g"], include_authorized_operations=True)["g"])
    assert [c.body.include_authorized_operations for c in client.requests(CONSUMER_GROUP_DESCRIBE)] == [True]
    assert not client.requests(DESCRIBE_GROUPS)
    assert (description.type.name, description.is_simple_consumer_group) == ("CONSUMER", False)
    assert (description.state.name, description.partition_assignor) == ("UNKNOWN", "uniform")  # no such state
    assert description.coordinator is not None and description.coordinator.id == 2
    assert [op.name for op in description.authorized_operations] == ["READ", "DESCRIBE"]  # ALL's bit is no operation
    (member,) = description.members
    assert (member.member_id, member.client_id, member.host, member.group_instance_id) == (
        "m1",
        "c1",
        "/10.0.0.1",
        "static-1",
    )
    assert [(tp.topic, tp.partition) for tp in member.assignment.topic_partitions] == [("a", 0)]
    assert member.target_assignment is not None
    assert [(tp.topic, tp.partition) for tp in member.target_assignment.topic_partitions] == [("a", 0), ("b", 1)]


@pytest.mark.parametrize(
    ("state", "expected"),
    [("Empty", "EMPTY"), ("Assigning", "UNKNOWN"), ("Reconciling", "UNKNOWN"), ("Stable", "STABLE"), ("Dead", "DEAD")],
)
def test_kip848_states_as_librdkafka_names_them(
    client: StubClient, admin: AdminClient, state: str, expected: str
) -> None:
    """librdkafka knows the classic states only: a KIP-848 state of another name is UNKNOWN."""
    client.handler = lambda call: (
        _coordinator_answer(call) if call.api == FIND_COORDINATOR.name else {"groups": [_kip848_group(state)]}
    )
    description = result(client, admin.describe_consumer_groups(["g"])["g"])
    assert (description.state.name, description.authorized_operations) == (expected, None)


def test_a_calls_descriptions_arrive_together(client: StubClient, admin: AdminClient) -> None:
    """A KIP-848 group's description waits for the classic one asked again with DescribeGroups:
    librdkafka hands a call's results over in one event."""
    futures: dict[str, Future[Any]] = {}
    done_while_asking_again: list[bool] = []

    def handler(call: Call) -> Mapping[str, Any]:
        if call.api == FIND_COORDINATOR.name:
            return _coordinator_answer(call)
        if call.api == CONSUMER_GROUP_DESCRIBE.name:
            assert call.body.group_ids == ["g", "h"]  # one request per coordinator
            not_kip848 = {"error_code": GROUP_ID_NOT_FOUND, "group_id": "h", "group_state": "", "assignor_name": ""}
            return {"groups": [_kip848_group("Stable"), not_kip848]}
        done_while_asking_again.append(futures["g"].done())
        entry = {"error_code": 0, "group_id": "h", "group_state": "Empty", "protocol_type": "consumer"}
        return {"groups": [{**entry, "protocol_data": "", "members": []}]}

    client.handler = handler
    futures.update(admin.describe_consumer_groups(["g", "h"]))
    assert (result(client, futures["g"]).type.name, result(client, futures["h"]).type.name) == ("CONSUMER", "CLASSIC")
    assert done_while_asking_again == [False]


@pytest.mark.parametrize(
    ("answer", "classic"),
    [
        (GROUP_ID_NOT_FOUND, True),  # a classic group, or none
        (UNSUPPORTED_VERSION, True),
        (KafkaError(KafkaError._UNSUPPORTED_FEATURE, "no ConsumerGroupDescribe"), True),  # a broker before 4.0
        (GROUP_AUTHORIZATION_FAILED, False),
        (INVALID_REQUEST, False),
    ],
)
def test_describe_groups_only_when_consumer_group_describe_cannot_answer(
    client: StubClient, admin: AdminClient, answer: int | KafkaError, classic: bool
) -> None:
    """librdkafka's fallback: DescribeGroups, for that group alone, after these answers only."""

    def handler(call: Call) -> Mapping[str, Any] | KafkaError:
        if call.api == FIND_COORDINATOR.name:
            return _coordinator_answer(call)
        if call.api == CONSUMER_GROUP_DESCRIBE.name:
            if isinstance(answer, KafkaError):
                return answer
            group = {"error_code": answer, "group_id": call.body.group_ids[0], "group_state": "", "assignor_name": ""}
            return {"groups": [group]}
        (group_id,) = call.body.groups
        entry = {"error_code": 0, "group_id": group_id, "group_state": "Empty", "protocol_type": "consumer"}
        return {"groups": [{**entry, "protocol_data": "", "members": []}]}

    client.handler = handler
    futures = admin.describe_consumer_groups(["g"])
    if classic:
        assert result(client, futures["g"]).type.name == "CLASSIC"
        assert [c.body.groups for c in client.requests(DESCRIBE_GROUPS)] == [["g"]]
    else:
        assert error_of(client, futures["g"]).code() == answer
        assert not client.requests(DESCRIBE_GROUPS)


def test_find_coordinator_body_before_v4(client: StubClient) -> None:
    """The coordinator lookup carries a single ``key`` before v4 (the stub sends v4+ otherwise)."""
    client.handler = lambda call: None
    admin = AdminClient({"bootstrap.servers": "unused:9092"}, _client=client)  # type: ignore[arg-type]
    admin.describe_consumer_groups(["g"], request_timeout=1)
    client.engine.run()
    admin.close()
    (find,) = client.requests(FIND_COORDINATOR)
    assert callable(find.make_body)
    assert find.make_body(3) == {"key": "g", "key_type": 0}
    assert find.make_body(4) == {"key_type": 0, "coordinator_keys": ["g"]}


# --- request bytes of the APIs Tansu lacks, against kafka-python's encoder ---------------------------


def _kafka_python(name: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return getattr(importlib.import_module("kafka.protocol.admin"), name)


def _same_bytes(api: Api, call: Call, build: Callable[[Any], Any]) -> list[int]:
    """Encode the body the admin client built at every version both sides know; compare with
    kafka-python's message from ``build(its class for that version)``. Answers the versions compared."""
    kcls = _kafka_python(f"{api.name}Request")
    versions = [v for v in range(api.min_version, api.max_version + 1) if kcls.min_version <= v <= kcls.max_version]
    for version in versions:
        body = call.make_body(version) if callable(call.make_body) else call.make_body
        ours = headers.encode_request(api, version, 7, "kafkawire-test", body)
        request = build(kcls[version])
        request.with_header(correlation_id=7, client_id="kafkawire-test")
        assert request.encode(header=True) == ours, f"{api.name} v{version}"
    return versions


def test_create_partitions_bytes_match_kafka_python(client: StubClient, admin: AdminClient) -> None:
    client.handler = lambda call: {"results": [{"name": t.name, "error_code": 0} for t in call.body.topics]}
    futures = admin.create_partitions(
        [NewPartitions("p", 4), NewPartitions("q", 3, replica_assignment=[[1, 2]])],
        operation_timeout=2,
        validate_only=True,
    )
    assert [result(client, f) for f in futures.values()] == [None, None]
    (call,) = client.requests(CREATE_PARTITIONS)

    def build(kcls: Any) -> Any:
        topic = kcls.CreatePartitionsTopic
        return kcls(
            topics=[
                topic(name="p", count=4, assignments=None),
                topic(name="q", count=3, assignments=[topic.CreatePartitionsAssignment(broker_ids=[1, 2])]),
            ],
            timeout_ms=2000,
            validate_only=True,
        )

    assert _same_bytes(CREATE_PARTITIONS, call, build) == [0, 1, 2, 3]


def test_alter_configs_bytes_match_kafka_python(client: StubClient, admin: AdminClient) -> None:
    def handler(call: Call) -> Mapping[str, Any] | None:
        responses = [
            {"error_code": 0, "resource_type": r.resource_type, "resource_name": r.resource_name}
            for r in call.body.resources
        ]
        return {"responses": responses}

    client.handler = handler
    resource = ConfigResource("topic", "t", set_config={"retention.ms": "1000", "cleanup.policy": "compact"})
    with pytest.warns(DeprecationWarning):
        futures = admin.alter_configs([resource], validate_only=False)
    assert result(client, futures[resource]) is None
    (call,) = client.requests(ALTER_CONFIGS)
    assert call.node == client.controller

    def build(kcls: Any) -> Any:
        res = kcls.AlterConfigsResource
        return kcls(
            resources=[
                res(
                    resource_type=2,
                    resource_name="t",
                    configs=[
                        res.AlterableConfig(name="retention.ms", value="1000"),
                        res.AlterableConfig(name="cleanup.policy", value="compact"),
                    ],
                )
            ],
            validate_only=False,
        )

    assert _same_bytes(ALTER_CONFIGS, call, build) == [0, 1, 2]
