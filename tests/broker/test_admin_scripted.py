"""AdminClient routing, retries, timeouts and per-entity errors, against scripted loopback brokers.

Tansu cannot play these parts (one broker, no NOT_CONTROLLER, it ignores validate_only and accepts
any partition count or config), so small scripted brokers answer what each test says and record
what arrived. The request bytes of the APIs Tansu lacks are checked against kafka-python's encoder.
"""

from __future__ import annotations

import importlib
import socket
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
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
from kafkawire.protocol import headers
from kafkawire.protocol.apis import (
    ALL_APIS,
    API_VERSIONS,
    CREATE_TOPICS,
    DESCRIBE_CONFIGS,
    DESCRIBE_GROUPS,
    FIND_COORDINATOR,
    METADATA,
)
from kafkawire.protocol.codec import Struct
from kafkawire.protocol.schema import Api

pytestmark = pytest.mark.broker

NOT_CONTROLLER, INVALID_PARTITIONS, INVALID_CONFIG, NOT_COORDINATOR = 41, 37, 40, 16


@dataclass
class Seen:
    node: int
    api: str
    version: int
    body: Struct
    frame: bytes


# A handler returns the response body, or None to never answer.
Handler = Callable[[int, Api, int, Struct], Mapping[str, Any] | None]


class ScriptedCluster:
    """Loopback brokers (one listening socket per node id) that answer ApiVersions and Metadata
    themselves and everything else through ``handler``; every request is recorded in ``seen``."""

    def __init__(self, nodes: tuple[int, ...] = (1, 2), controller: int = 1) -> None:
        self.controller = controller
        self.handler: Handler = lambda node, api, version, body: None
        self.seen: list[Seen] = []
        self.lock = threading.Lock()
        self.servers = {n: socket.create_server(("127.0.0.1", 0)) for n in nodes}
        self.ports = {n: s.getsockname()[1] for n, s in self.servers.items()}
        self._conns: list[socket.socket] = []
        self._threads = [threading.Thread(target=self._accept, args=(n,), daemon=True) for n in nodes]
        for t in self._threads:
            t.start()

    @property
    def bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{p}" for p in self.ports.values())

    def requests(self, api: Api) -> list[Seen]:
        with self.lock:
            return [s for s in self.seen if s.api == api.name]

    def _accept(self, node: int) -> None:
        server = self.servers[node]
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with self.lock:
                self._conns.append(conn)
            threading.Thread(target=self._serve, args=(node, conn), daemon=True).start()

    def _serve(self, node: int, conn: socket.socket) -> None:
        try:
            while True:
                size = int.from_bytes(_read(conn, 4), "big")
                frame = _read(conn, size)
                header, body = headers.decode_request(frame)
                api = next(a for a in ALL_APIS if a.key == header.request_api_key)
                version = header.request_api_version
                with self.lock:
                    self.seen.append(Seen(node, api.name, version, body, frame))
                    answer = self._answer(node, api, version, body)
                if answer is None:
                    continue
                payload = headers.encode_response(api, version, header.correlation_id, answer)
                conn.sendall(len(payload).to_bytes(4, "big") + payload)
        except (OSError, EOFError):
            conn.close()

    def _answer(self, node: int, api: Api, version: int, body: Struct) -> Mapping[str, Any] | None:
        if api is API_VERSIONS:
            keys = [{"api_key": a.key, "min_version": a.min_version, "max_version": a.max_version} for a in ALL_APIS]
            return {"error_code": 0, "api_keys": keys}
        if api is METADATA:
            brokers = [{"node_id": n, "host": "127.0.0.1", "port": p} for n, p in self.ports.items()]
            return {"brokers": brokers, "cluster_id": "scripted", "controller_id": self.controller, "topics": []}
        return self.handler(node, api, version, body)

    def close(self) -> None:
        for server in self.servers.values():
            try:
                server.shutdown(socket.SHUT_RDWR)  # wakes the thread blocked in accept()
            except OSError:
                pass
            server.close()
        with self.lock:
            for conn in self._conns:
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                conn.close()
        for t in self._threads:
            t.join(5)


def _read(conn: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


@pytest.fixture
def cluster() -> Iterator[ScriptedCluster]:
    c = ScriptedCluster()
    try:
        yield c
    finally:
        c.close()


@pytest.fixture
def admin(cluster: ScriptedCluster) -> Iterator[AdminClient]:
    with AdminClient({"bootstrap.servers": cluster.bootstrap, "retry.backoff.ms": 10}) as a:
        yield a


def error_of(fut: Any, timeout: float = 10) -> KafkaError:
    with pytest.raises(KafkaException) as exc:
        fut.result(timeout)
    err = exc.value.args[0]
    assert isinstance(err, KafkaError)
    return err


def created(topics: list[Struct], errors: Mapping[str, tuple[int, str | None]] | None = None) -> dict[str, Any]:
    errors = errors or {}
    return {
        "topics": [
            {"name": t.name, "error_code": errors.get(t.name, (0, None))[0], "error_message": errors.get(t.name, (0, None))[1]}
            for t in topics
        ]
    }


def test_not_controller_is_retried_on_the_new_controller(cluster: ScriptedCluster, admin: AdminClient) -> None:
    def handler(node: int, api: Api, version: int, body: Struct) -> Mapping[str, Any] | None:
        if node == 1:  # the old controller: says so, and the metadata now names broker 2
            cluster.controller = 2
            return created(body.topics, {t.name: (NOT_CONTROLLER, None) for t in body.topics})
        return created(body.topics)

    cluster.handler = handler
    futures = admin.create_topics([NewTopic("a", 1, 1), NewTopic("b", 2, 1)])
    assert [f.result(10) for f in futures.values()] == [None, None]
    assert [s.node for s in cluster.requests(CREATE_TOPICS)] == [1, 2]
    # metadata was refreshed between the two attempts
    sent = [s.api for s in cluster.seen if s.api in (CREATE_TOPICS.name, METADATA.name)]
    assert sent.index(CREATE_TOPICS.name) < len(sent) - 1 - sent[::-1].index(METADATA.name)


def test_per_entity_errors_land_on_their_own_futures(cluster: ScriptedCluster, admin: AdminClient) -> None:
    def handler(node: int, api: Api, version: int, body: Struct) -> Mapping[str, Any] | None:
        if api is CREATE_TOPICS:
            return created(body.topics, {"bad-parts": (INVALID_PARTITIONS, "Number of partitions is invalid."),
                                         "bad-config": (INVALID_CONFIG, "Invalid value abc for retention.ms")})  # fmt: skip
        return {"results": [{"name": t.name, "error_code": INVALID_PARTITIONS if t.count < 5 else 0} for t in body.topics]}

    cluster.handler = handler
    futures = admin.create_topics(
        [NewTopic("ok", 1, 1), NewTopic("bad-parts", 1, 1), NewTopic("bad-config", 1, 1, config={"retention.ms": "abc"})]
    )
    assert futures["ok"].result(10) is None
    assert error_of(futures["bad-parts"]).code() == KafkaError.INVALID_PARTITIONS
    config_error = error_of(futures["bad-config"])
    assert config_error.code() == KafkaError.INVALID_CONFIG
    assert "retention.ms" in config_error.str()
    assert len(cluster.requests(CREATE_TOPICS)) == 1  # one request for all three

    grown = admin.create_partitions([NewPartitions("ok", 6), NewPartitions("shrink", 2)])
    assert grown["ok"].result(10) is None
    assert error_of(grown["shrink"]).name() == "INVALID_PARTITIONS"


def test_validate_only_and_operation_timeout_reach_the_broker(cluster: ScriptedCluster, admin: AdminClient) -> None:
    cluster.handler = lambda node, api, version, body: created(body.topics)
    admin.create_topics([NewTopic("v", 3, 1)], validate_only=True, operation_timeout=1.5)["v"].result(10)
    admin.create_topics([NewTopic("w", 3, 1)])["w"].result(10)
    first, second = (s.body for s in cluster.requests(CREATE_TOPICS))
    assert (first.validate_only, first.timeout_ms) == (True, 1500)
    assert (second.validate_only, second.timeout_ms) == (False, 0)


def test_request_timeout_is_honoured_when_the_broker_never_answers(cluster: ScriptedCluster, admin: AdminClient) -> None:
    start = time.monotonic()
    futures = admin.create_topics([NewTopic("slow", 1, 1), NewTopic("slower", 1, 1)], request_timeout=0.5)
    errors = [error_of(f, 5) for f in futures.values()]
    elapsed = time.monotonic() - start
    assert {e.code() for e in errors} == {KafkaError._TIMED_OUT}
    assert 0.4 <= elapsed < 2.0


def test_retries_stop_at_the_request_timeout(cluster: ScriptedCluster, admin: AdminClient) -> None:
    cluster.handler = lambda node, api, version, body: created(body.topics, {t.name: (NOT_CONTROLLER, None) for t in body.topics})
    start = time.monotonic()
    err = error_of(admin.create_topics([NewTopic("never", 1, 1)], request_timeout=0.6)["never"], 5)
    elapsed = time.monotonic() - start
    assert err.code() == KafkaError._TIMED_OUT and "NOT_CONTROLLER" in err.str()
    # It gives up once the next backoff would pass the deadline, so never later than the timeout.
    assert elapsed < 0.6 + 0.5
    assert len(cluster.requests(CREATE_TOPICS)) >= 3


def test_broker_config_resource_goes_to_that_broker(cluster: ScriptedCluster, admin: AdminClient) -> None:
    def handler(node: int, api: Api, version: int, body: Struct) -> Mapping[str, Any] | None:
        results = [
            {"error_code": 0, "resource_type": r.resource_type, "resource_name": r.resource_name,
             "configs": [{"name": "log.retention.ms", "value": "5", "read_only": False, "config_source": 4,
                          "is_sensitive": False, "synonyms": []}]}
            for r in body.resources
        ]  # fmt: skip
        return {"results": results}

    cluster.handler = handler
    broker2 = ConfigResource(ConfigResource.Type.BROKER, "2")
    entry = admin.describe_configs([broker2])[broker2].result(10)["log.retention.ms"]
    assert (entry.value, entry.source.name, entry.is_default) == ("5", "STATIC_BROKER_CONFIG", False)
    assert [s.node for s in cluster.requests(DESCRIBE_CONFIGS)] == [2]
    assert cluster.requests(DESCRIBE_CONFIGS)[0].body.resources[0].resource_type == 4


def test_group_requests_follow_the_coordinator_and_retry_not_coordinator(
    cluster: ScriptedCluster, admin: AdminClient
) -> None:
    answered_once: set[str] = set()

    def handler(node: int, api: Api, version: int, body: Struct) -> Mapping[str, Any] | None:
        if api is FIND_COORDINATOR:
            entry = {"key": "g", "node_id": 2, "host": "127.0.0.1", "port": cluster.ports[2], "error_code": 0}
            if version >= 4:
                return {"coordinators": [entry]}
            return {k: v for k, v in entry.items() if k != "key"}
        error = NOT_COORDINATOR if "g" not in answered_once else 0
        answered_once.add("g")
        group = {"error_code": error, "group_id": "g", "group_state": "Stable", "protocol_type": "consumer",
                 "protocol_data": "range", "members": []}  # fmt: skip
        return {"groups": [group]}

    cluster.handler = handler
    description = admin.describe_consumer_groups(["g"])["g"].result(10)
    assert (description.state.name, description.partition_assignor) == ("STABLE", "range")
    assert description.coordinator is not None and description.coordinator.id == 2
    assert [s.node for s in cluster.requests(DESCRIBE_GROUPS)] == [2, 2]
    assert len(cluster.requests(FIND_COORDINATOR)) == 2  # found again before the retry


# --- request bytes of the APIs Tansu lacks, against kafka-python's encoder ---------------------------


def _kafka_python(name: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return getattr(importlib.import_module("kafka.protocol.admin"), name)


def _same_bytes(seen: Seen, request: Any) -> None:
    header, _ = headers.decode_request_header(seen.frame)
    request.with_header(correlation_id=header.correlation_id, client_id=header.client_id)
    assert request.encode(header=True) == seen.frame


def test_create_partitions_bytes_match_kafka_python(cluster: ScriptedCluster, admin: AdminClient) -> None:
    cluster.handler = lambda node, api, version, body: {"results": [{"name": t.name, "error_code": 0} for t in body.topics]}
    futures = admin.create_partitions(
        [NewPartitions("p", 4), NewPartitions("q", 3, replica_assignment=[[1, 2]])], operation_timeout=2, validate_only=True
    )
    assert [f.result(10) for f in futures.values()] == [None, None]
    (seen,) = [s for s in cluster.seen if s.api == "CreatePartitions"]
    kcls = _kafka_python("CreatePartitionsRequest")
    topic = kcls.CreatePartitionsTopic
    request = kcls[seen.version](
        topics=[
            topic(name="p", count=4, assignments=None),
            topic(name="q", count=3, assignments=[topic.CreatePartitionsAssignment(broker_ids=[1, 2])]),
        ],
        timeout_ms=2000,
        validate_only=True,
    )
    _same_bytes(seen, request)


def test_alter_configs_bytes_match_kafka_python(cluster: ScriptedCluster, admin: AdminClient) -> None:
    def handler(node: int, api: Api, version: int, body: Struct) -> Mapping[str, Any] | None:
        responses = [{"error_code": 0, "resource_type": r.resource_type, "resource_name": r.resource_name} for r in body.resources]
        return {"responses": responses}

    cluster.handler = handler
    resource = ConfigResource("topic", "t", set_config={"retention.ms": "1000", "cleanup.policy": "compact"})
    with pytest.warns(DeprecationWarning):
        futures = admin.alter_configs([resource], validate_only=False)
    assert futures[resource].result(10) is None
    (seen,) = [s for s in cluster.seen if s.api == "AlterConfigs"]
    assert seen.node == cluster.controller
    kcls = _kafka_python("AlterConfigsRequest")
    res = kcls.AlterConfigsResource
    request = kcls[seen.version](
        resources=[
            res(resource_type=2, resource_name="t", configs=[
                res.AlterableConfig(name="retention.ms", value="1000"),
                res.AlterableConfig(name="cleanup.policy", value="compact"),
            ])
        ],
        validate_only=False,
    )  # fmt: skip
    _same_bytes(seen, request)
