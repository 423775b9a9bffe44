"""The fetch-answer verdict (core/fetch_verdict.py), row by row, without a broker: a failed Fetch
and its session, then each partition of an answer that held."""

from __future__ import annotations

import pytest

from kafkawire.core.fetch_verdict import FAILURES, REFRESHES, FetchVerdict, partition_answered, request_failed
from kafkawire.core.kafka_error import KafkaError
from kafkawire.protocol import error_codes as ec
from kafkawire.protocol.primitives import DecodeError
from kafkawire.records import CorruptRecordError

LEADER = 1


def answered(
    code: int | None = 0, damage: DecodeError | None = None, *, check_crcs: bool = False, replica: int = -1
) -> FetchVerdict:
    return partition_answered(code, damage, check_crcs=check_crcs, preferred_replica=replica, node=LEADER)


# --- the Fetch failed as a whole -------------------------------------------------------------------


SESSION_ERRORS = (ec.FETCH_SESSION_ID_NOT_FOUND, ec.INVALID_FETCH_SESSION_EPOCH, ec.FETCH_SESSION_TOPIC_ID_ERROR)


@pytest.mark.parametrize("code", SESSION_ERRORS)
def test_a_session_error_on_an_incremental_fetch_refetches_in_full_at_once(code: int) -> None:
    assert request_failed(code, incremental=True) is FetchVerdict.REFETCH_FULL


@pytest.mark.parametrize("code", SESSION_ERRORS)
def test_a_session_error_on_a_full_fetch_backs_off(code: int) -> None:
    assert request_failed(code, incremental=False) is FetchVerdict.BACK_OFF


@pytest.mark.parametrize("incremental", [False, True])
@pytest.mark.parametrize(
    "code",
    [
        KafkaError._TRANSPORT,
        KafkaError._TIMED_OUT,
        KafkaError._BAD_MSG,
        KafkaError._ALL_BROKERS_DOWN,
        ec.NOT_LEADER_OR_FOLLOWER,
    ],
)
def test_a_lost_answer_or_a_stale_route_refreshes_metadata(code: int, incremental: bool) -> None:
    assert request_failed(code, incremental) is FetchVerdict.BACK_OFF_REFRESH


@pytest.mark.parametrize("incremental", [False, True])
@pytest.mark.parametrize("code", [ec.TOPIC_AUTHORIZATION_FAILED, ec.OFFSET_OUT_OF_RANGE, KafkaError._DESTROY])
def test_a_final_request_error_is_reported(code: int, incremental: bool) -> None:
    assert request_failed(code, incremental) is FetchVerdict.REPORT


# --- each partition of an answer that held ---------------------------------------------------------


def test_a_partition_left_out_of_the_answer_has_nothing_new() -> None:
    assert answered(None) is FetchVerdict.NOTHING_NEW


def test_an_offset_out_of_range_goes_to_the_reset_policy() -> None:
    assert answered(ec.OFFSET_OUT_OF_RANGE) is FetchVerdict.OUT_OF_RANGE


@pytest.mark.parametrize("code", [ec.NOT_LEADER_OR_FOLLOWER, ec.UNKNOWN_TOPIC_OR_PARTITION, ec.FENCED_LEADER_EPOCH])
def test_a_retriable_partition_error_forgets_the_leader_quietly(code: int) -> None:
    assert answered(code) is FetchVerdict.LEADER_MOVED


@pytest.mark.parametrize("code", [ec.TOPIC_AUTHORIZATION_FAILED, ec.UNSUPPORTED_COMPRESSION_TYPE])
def test_a_final_partition_error_is_reported(code: int) -> None:
    assert answered(code) is FetchVerdict.REPORT


def test_a_partition_error_outranks_damage_and_a_preferred_replica() -> None:
    assert answered(ec.NOT_LEADER_OR_FOLLOWER, DecodeError("cut short"), replica=2) is FetchVerdict.LEADER_MOVED


def test_a_checksum_failure_is_reported_only_under_check_crcs() -> None:
    assert answered(damage=CorruptRecordError("CRC")) is FetchVerdict.BACK_OFF
    assert answered(damage=CorruptRecordError("CRC"), check_crcs=True) is FetchVerdict.REPORT


@pytest.mark.parametrize("check_crcs", [False, True])
def test_other_damage_is_always_reported(check_crcs: bool) -> None:
    assert answered(damage=DecodeError("a count past the end"), check_crcs=check_crcs) is FetchVerdict.REPORT


def test_damage_outranks_a_preferred_replica() -> None:
    assert answered(damage=DecodeError("cut short"), replica=2) is FetchVerdict.REPORT


def test_a_preferred_replica_other_than_the_broker_asked_is_followed() -> None:
    assert answered(replica=2) is FetchVerdict.PREFERRED_REPLICA
    assert answered(replica=LEADER) is FetchVerdict.RECORDS  # the broker asked is the preferred one
    assert answered(replica=-1) is FetchVerdict.RECORDS


def test_only_failures_back_off_and_only_stale_routes_refresh() -> None:
    assert REFRESHES < FAILURES
    assert FAILURES.isdisjoint(
        {
            FetchVerdict.REFETCH_FULL,
            FetchVerdict.NOTHING_NEW,
            FetchVerdict.OUT_OF_RANGE,
            FetchVerdict.PREFERRED_REPLICA,
            FetchVerdict.RECORDS,
        }
    )
