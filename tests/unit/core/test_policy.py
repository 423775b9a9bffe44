"""The error-policy tables (core/policy): what each API family does about an error."""

from __future__ import annotations

from kafkawire.core.kafka_error import KafkaError
from kafkawire.core.policy import Action, ErrorPolicy
from kafkawire.core.policy.admin import ADMIN_READ, ADMIN_STARTED, ADMIN_WRITE
from kafkawire.core.policy.coordinator import COORDINATOR, TXN_OFFSET_COMMIT
from kafkawire.core.policy.group_offsets import COMMIT_OFFSETS, GROUP_OFFSETS
from kafkawire.core.policy.offsets import LIST_OFFSETS
from kafkawire.protocol import error_codes as ec


def retries(policy: ErrorPolicy, code: int) -> bool:
    return policy.action(code) not in (Action.FAIL, Action.SUCCEED)


def test_admin_retry_classification() -> None:
    assert retries(ADMIN_WRITE, ec.NOT_CONTROLLER)
    assert ADMIN_WRITE.action(ec.NOT_CONTROLLER) is Action.REFRESH_METADATA
    assert ADMIN_WRITE.action(ec.NOT_COORDINATOR) is Action.REFIND_COORDINATOR
    assert not retries(ADMIN_READ, ec.REQUEST_TIMED_OUT)  # the operation timeout
    assert not retries(ADMIN_READ, ec.UNKNOWN_TOPIC_OR_PARTITION)  # final for admin calls
    assert not retries(ADMIN_READ, ec.TOPIC_ALREADY_EXISTS)
    assert retries(ADMIN_READ, KafkaError._TRANSPORT)  # read-only calls: the request changed nothing
    assert not retries(ADMIN_WRITE, KafkaError._TRANSPORT)  # it may have been carried out
    assert not retries(ADMIN_READ, KafkaError._TIMED_OUT)


def test_kafka23_started_is_success_only_without_waiting() -> None:
    assert ADMIN_STARTED.action(ec.REQUEST_TIMED_OUT) is Action.SUCCEED
    assert ADMIN_WRITE.action(ec.REQUEST_TIMED_OUT) is Action.FAIL
    assert ADMIN_STARTED.action(ec.TOPIC_ALREADY_EXISTS) is Action.FAIL


def test_coordinator_policy() -> None:
    for code in (ec.NOT_COORDINATOR, ec.COORDINATOR_NOT_AVAILABLE, KafkaError._TRANSPORT, KafkaError._TIMED_OUT):
        assert COORDINATOR.action(code) is Action.REFIND_COORDINATOR
    for code in (ec.COORDINATOR_LOAD_IN_PROGRESS, ec.CONCURRENT_TRANSACTIONS):
        assert COORDINATOR.action(code) is Action.RETRY
    for code in (ec.PRODUCER_FENCED, ec.INVALID_PRODUCER_EPOCH, ec.UNKNOWN_PRODUCER_ID, ec.REQUEST_TIMED_OUT):
        assert COORDINATOR.action(code) is Action.FAIL
    assert TXN_OFFSET_COMMIT.action(ec.REQUEST_TIMED_OUT) is Action.RETRY
    assert TXN_OFFSET_COMMIT.action(ec.UNKNOWN_TOPIC_OR_PARTITION) is Action.RETRY
    assert TXN_OFFSET_COMMIT.action(ec.ILLEGAL_GENERATION) is Action.FAIL


def test_a_commit_of_a_partition_the_broker_lacks_fails_at_once() -> None:
    """As librdkafka's: asked again, the broker would only say the same until the timeout."""
    assert COMMIT_OFFSETS.action(ec.UNKNOWN_TOPIC_OR_PARTITION) is Action.FAIL
    assert GROUP_OFFSETS.action(ec.UNKNOWN_TOPIC_OR_PARTITION) is Action.RETRY  # a fetch asks again
    for code in (ec.UNSTABLE_OFFSET_COMMIT, ec.COORDINATOR_LOAD_IN_PROGRESS):
        assert COMMIT_OFFSETS.action(code) is GROUP_OFFSETS.action(code) is Action.RETRY


def test_list_offsets_policy_refreshes_on_anything_retriable() -> None:
    for code in (
        ec.NOT_LEADER_OR_FOLLOWER,
        ec.UNKNOWN_TOPIC_OR_PARTITION,
        ec.LEADER_NOT_AVAILABLE,
        KafkaError._TRANSPORT,
    ):
        assert LIST_OFFSETS.action(code) is Action.REFRESH_METADATA
    assert LIST_OFFSETS.action(ec.TOPIC_AUTHORIZATION_FAILED) is Action.FAIL
    assert LIST_OFFSETS.action(KafkaError._DESTROY) is Action.FAIL


def test_unknown_codes_fall_back_on_kafkas_flag() -> None:
    policy = ErrorPolicy("empty")
    assert policy.action(ec.NOT_ENOUGH_REPLICAS) is Action.RETRY  # retriable in Kafka's table
    assert policy.action(ec.INVALID_CONFIG) is Action.FAIL
    assert policy.action(9999) is Action.FAIL  # a code from a newer broker
    assert policy.action(KafkaError._FAIL) is Action.FAIL
