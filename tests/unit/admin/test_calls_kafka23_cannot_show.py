"""The admin calls of issue 17 at the client boundary (the `StubClient` of tests/unit/stand_in.py):
request bodies, where they go, and how answers land on futures, for what Kafka 2.3 cannot show
(SCRAM credentials, per-ACL delete errors, throttling, a broker without DescribeCluster)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from kafkawire import ThrottleEvent
from kafkawire.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ConsumerGroupTopicPartitions,
    ElectionType,
    KafkaError,
    ResourcePatternType,
    ResourceType,
    ScramCredentialInfo,
    ScramMechanism,
    TopicPartition,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)
from kafkawire.base.model import OFFSET_INVALID
from kafkawire.core.sasl import salted_password
from kafkawire.protocol.apis import (
    ALTER_USER_SCRAM_CREDENTIALS,
    CREATE_ACLS,
    DELETE_ACLS,
    DESCRIBE_CLUSTER,
    DESCRIBE_USER_SCRAM_CREDENTIALS,
    ELECT_LEADERS,
    FIND_COORDINATOR,
    METADATA,
    OFFSET_FETCH,
)
from tests.unit.stand_in import Call, StubClient, error_of, result

SECURITY_DISABLED, RESOURCE_NOT_FOUND, UNSUPPORTED_VERSION = 54, 91, 35


def _binding(name: str, op: AclOperation = AclOperation.READ) -> AclBinding:
    return AclBinding(ResourceType.TOPIC, name, ResourcePatternType.LITERAL, "User:u", "*", op, AclPermissionType.ALLOW)


def _matching(b: AclBinding, code: int = 0) -> dict[str, Any]:
    return {**b.wire(), "pattern_type": b.resource_pattern_type.value, "error_code": code, "error_message": None}


def _coordinator(call: Call) -> Mapping[str, Any]:
    return {
        "coordinators": [
            {"key": k, "node_id": 2, "host": "broker2", "port": 9092, "error_code": 0}
            for k in call.body.coordinator_keys
        ]
    }


def test_acls_created_per_binding_and_deleted_per_filter(client: StubClient, admin: AdminClient) -> None:
    read, write = _binding("a"), _binding("b", AclOperation.WRITE)
    stuck = _binding("c")

    def handler(call: Call) -> Mapping[str, Any] | None:
        if call.api == CREATE_ACLS.name:
            return {
                "results": [
                    {"error_code": SECURITY_DISABLED if c.resource_name == "b" else 0} for c in call.body.creations
                ]
            }
        if call.api == DELETE_ACLS.name:
            return {
                "filter_results": [
                    {"error_code": 0, "matching_acls": [_matching(read)]},
                    {"error_code": 0, "matching_acls": [_matching(write), _matching(stuck, SECURITY_DISABLED)]},
                ]
            }
        return None

    client.handler = handler
    created = admin.create_acls([read, write])
    assert result(client, created[read]) is None
    assert error_of(client, created[write]).code() == KafkaError.SECURITY_DISABLED
    (request,) = client.requests(CREATE_ACLS)
    assert [(c.resource_name, c.resource_pattern_type, c.operation) for c in request.body.creations] == [
        ("a", ResourcePatternType.LITERAL.value, AclOperation.READ.value),
        ("b", ResourcePatternType.LITERAL.value, AclOperation.WRITE.value),
    ]

    any_a = AclBindingFilter(
        ResourceType.TOPIC, "a", ResourcePatternType.ANY, None, None, AclOperation.ANY, AclPermissionType.ANY
    )
    any_topic = AclBindingFilter(
        ResourceType.TOPIC, None, ResourcePatternType.MATCH, None, None, AclOperation.ANY, AclPermissionType.ANY
    )
    deleted = admin.delete_acls([any_a, any_topic])
    assert result(client, deleted[any_a]) == [read]
    # one matching ACL the broker could not delete fails its filter's future
    assert error_of(client, deleted[any_topic]).code() == KafkaError.SECURITY_DISABLED
    filters = client.requests(DELETE_ACLS)[0].body.filters
    assert [(f.resource_name_filter, f.pattern_type_filter, f.principal_filter) for f in filters] == [
        ("a", ResourcePatternType.ANY.value, None),
        (None, ResourcePatternType.MATCH.value, None),
    ]


def test_scram_upsertion_sends_the_salted_password_to_the_controller(client: StubClient, admin: AdminClient) -> None:
    client.handler = lambda call: {"results": [{"user": u, "error_code": 0} for u in ("alice", "bob")]}
    given_salt = b"0123456789abcdef"
    alterations = [
        UserScramCredentialUpsertion(
            "alice", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192), b"pw-alice", given_salt
        ),
        UserScramCredentialUpsertion("bob", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), b"pw-bob"),
        UserScramCredentialDeletion("bob", ScramMechanism.SCRAM_SHA_512),
    ]
    assert "pw-alice" not in repr(alterations[0]) and "0123" not in repr(alterations[0])
    futures = admin.alter_user_scram_credentials(alterations)
    assert sorted(futures) == ["alice", "bob"]
    assert [result(client, f) for f in futures.values()] == [None, None]
    (call,) = client.requests(ALTER_USER_SCRAM_CREDENTIALS)
    assert call.node == client.controller
    alice, bob = call.body.upsertions
    assert (alice.name, alice.mechanism, alice.iterations, alice.salt) == ("alice", 2, 8192, given_salt)
    # what the broker stores is what a SCRAM login with that password derives
    assert alice.salted_password == salted_password("SCRAM-SHA-512", b"pw-alice", given_salt, 8192)
    assert len(bob.salt) == 64 and bob.salted_password == salted_password("SCRAM-SHA-256", b"pw-bob", bob.salt, 4096)
    assert [(d.name, d.mechanism) for d in call.body.deletions] == [("bob", 2)]
    encoded = repr(call.body)
    assert "pw-alice" not in encoded and "pw-bob" not in encoded


def test_scram_described_per_user_or_all_at_once(client: StubClient, admin: AdminClient) -> None:
    def handler(call: Call) -> Mapping[str, Any]:
        return {
            "error_code": 0,
            "results": [
                {"user": "alice", "error_code": 0, "credential_infos": [{"mechanism": 1, "iterations": 4096}]},
                {
                    "user": "nobody",
                    "error_code": RESOURCE_NOT_FOUND,
                    "error_message": "no credentials",
                    "credential_infos": [],
                },
            ],
        }

    client.handler = handler
    per_user = admin.describe_user_scram_credentials(["alice", "nobody"])
    assert isinstance(per_user, dict)
    alice = result(client, per_user["alice"])
    assert [(i.mechanism, i.iterations) for i in alice.scram_credential_infos] == [(ScramMechanism.SCRAM_SHA_256, 4096)]
    assert error_of(client, per_user["nobody"]).code() == KafkaError.RESOURCE_NOT_FOUND
    assert [u.name for u in client.requests(DESCRIBE_USER_SCRAM_CREDENTIALS)[0].body.users] == ["alice", "nobody"]

    everyone = admin.describe_user_scram_credentials()
    assert not isinstance(everyone, dict)
    assert sorted(result(client, everyone)) == ["alice"]
    assert client.requests(DESCRIBE_USER_SCRAM_CREDENTIALS)[1].body.users is None


def test_group_offsets_listed_with_nothing_committed_as_offset_invalid(client: StubClient, admin: AdminClient) -> None:
    def handler(call: Call) -> Mapping[str, Any] | None:
        if call.api == FIND_COORDINATOR.name:
            return _coordinator(call)
        if call.api == OFFSET_FETCH.name:
            parts = [
                {"partition_index": 0, "committed_offset": 12, "metadata": "m", "error_code": 0},
                {"partition_index": 1, "committed_offset": -1, "metadata": "", "error_code": 0},
            ]
            return {"groups": [{"group_id": "g", "error_code": 0, "topics": [{"name": "t", "partitions": parts}]}]}
        return None

    client.handler = handler
    every = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions("g")])["g"]
    listed = result(client, every)
    assert listed.group_id == "g"
    assert [(tp.topic, tp.partition, tp.offset) for tp in listed.topic_partitions] == [
        ("t", 0, 12),
        ("t", 1, OFFSET_INVALID),
    ]
    (fetch,) = client.requests(OFFSET_FETCH)
    assert fetch.node == 2 and fetch.body.groups[0].topics is None  # every partition of the group

    admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions("g", [TopicPartition("t", 1)])])
    client.engine.run()
    named = client.requests(OFFSET_FETCH)[1].body.groups[0].topics
    assert [(t.name, t.partition_indexes) for t in named] == [("t", [1])]


def test_describe_cluster_falls_back_to_metadata_without_describe_cluster(
    client: StubClient, admin: AdminClient
) -> None:
    def handler(call: Call) -> Mapping[str, Any] | KafkaError | None:
        if call.api == DESCRIBE_CLUSTER.name:
            return KafkaError(KafkaError._UNSUPPORTED_FEATURE, "the broker does not support DescribeCluster")
        if call.api == METADATA.name:
            brokers = [
                {"node_id": 1, "host": "b1", "port": 9092},
                {"node_id": 2, "host": "b2", "port": 9093, "rack": "r"},
            ]
            return {"brokers": brokers, "cluster_id": "c-1", "controller_id": 2, "topics": []}
        return None

    client.handler = handler
    described = result(client, admin.describe_cluster())
    assert described.cluster_id == "c-1" and described.controller.id == 2
    assert [(n.id, n.host, n.port, n.rack) for n in described.nodes] == [(1, "b1", 9092, None), (2, "b2", 9093, "r")]
    assert [c.api for c in client.calls][-2:] == ["DescribeCluster", "Metadata"]
    assert client.calls[-1].body.topics == []  # brokers only, no topic


def test_throttle_cb_and_error_cb_run_in_poll(client: StubClient) -> None:
    seen: list[Any] = []
    admin = AdminClient(
        {"bootstrap.servers": "unused:9092", "throttle_cb": seen.append, "error_cb": seen.append},
        _client=client,  # type: ignore[arg-type]
    )
    try:
        client.handler = lambda call: {
            "throttle_time_ms": 250,
            "results": [{"error_code": 0} for _ in call.body.creations],
        }
        binding = _binding("t")
        assert result(client, admin.create_acls([binding])[binding]) is None
        assert client.on_error is not None
        client.on_error(KafkaError(KafkaError._ALL_BROKERS_DOWN, "all down"))
        assert seen == [] and len(admin) == 2  # queued, not yet served
        assert admin.poll(0) == 2
        throttle, error = seen
        assert isinstance(throttle, ThrottleEvent) and throttle.throttle_time == 0.25
        assert isinstance(error, KafkaError) and error.code() == KafkaError._ALL_BROKERS_DOWN
    finally:
        admin.close()
    assert len(admin) == 0


def test_logger_option_takes_a_handler_and_hears_init(client: StubClient) -> None:
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    conf = {"bootstrap.servers": "unused:9092", "client.id": "adm", "logger": handler, "debug": "admin"}
    admin = AdminClient(conf, _client=client)  # type: ignore[arg-type]
    admin.close()
    assert any("INIT" in r.getMessage() and "adm" in r.getMessage() for r in records)


def test_elect_leaders_operation_timeout_is_librdkafkas_whatever_the_request_timeout(
    client: StubClient, admin: AdminClient
) -> None:
    """librdkafka's ElectLeaders operation_timeout defaults to the admin request timeout of the handle
    (socket.timeout.ms), not to the call's request_timeout; confluent-kafka passes only what it is
    given. Kafka 2.3's single broker elects at once, so only the request's field can show it."""

    def elected(call: Call) -> dict[str, Any]:
        topics = call.body.topic_partitions or []
        return {
            "error_code": 0,
            "replica_election_results": [
                {"topic": t.topic, "partition_result": [{"partition_id": p, "error_code": 0} for p in t.partitions]}
                for t in topics
            ],
        }

    client.handler = elected
    tp = [TopicPartition("t", 0)]
    assert result(client, admin.elect_leaders(ElectionType.PREFERRED, tp)) == {TopicPartition("t", 0): None}
    result(client, admin.elect_leaders(ElectionType.PREFERRED, tp, request_timeout=5))
    result(client, admin.elect_leaders(ElectionType.PREFERRED, tp, request_timeout=5, operation_timeout=2.5))
    result(client, admin.elect_leaders(ElectionType.PREFERRED, tp, operation_timeout=0))
    assert [c.body.timeout_ms for c in client.requests(ELECT_LEADERS)] == [60000, 60000, 2500, 0]
    assert all(c.node == client.controller for c in client.requests(ELECT_LEADERS))
