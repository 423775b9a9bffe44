"""The fetch-answer verdict (core/fetch_verdict.py), row by row, without a broker: a failed Fetch
and its session, then each partition of an answer that held."""

from __future__ import annotations

import pytest

from kafkawire.core.fetch_verdict import (
    FAILURES,
    REFRESHES,
    FetchVerdict,
    larger_limit,
    part_of_one_batch,
    partition_answered,
    request_failed,
    too_large,
)
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


# --- an answer holding part of one batch (too large): the rule all three fetchers follow -----------


def test_part_of_one_batch_is_records_and_no_whole_batch() -> None:
    assert part_of_one_batch(b"\x00" * 30, 0)
    assert not part_of_one_batch(b"\x00" * 30, 1)  # a whole batch (a control one too) and a cut tail
    assert not part_of_one_batch(b"", 0) and not part_of_one_batch(None, 0)


def test_part_of_one_batch_is_too_large_unless_something_else_decides() -> None:
    assert partition_answered(0, None, check_crcs=False, preferred_replica=-1, node=1, partial=True) is (
        FetchVerdict.TOO_LARGE
    )
    for code, verdict in ((ec.OFFSET_OUT_OF_RANGE, FetchVerdict.OUT_OF_RANGE), (None, FetchVerdict.NOTHING_NEW)):
        assert partition_answered(code, None, check_crcs=False, preferred_replica=-1, node=1, partial=True) is verdict
    damaged = partition_answered(0, DecodeError("cut"), check_crcs=False, preferred_replica=-1, node=1, partial=True)
    assert damaged is FetchVerdict.REPORT


def test_the_limit_doubles_up_to_the_ceiling_then_the_record_is_too_large() -> None:
    """librdkafka's rd_kafka_msgset_reader_run: twice the bytes next time; none left to grow: told."""
    limits = [1 << 20]
    while (larger := larger_limit(limits[-1], 5 << 20)) is not None:
        limits.append(larger)
    assert limits == [1 << 20, 2 << 20, 4 << 20, 5 << 20]
    error = too_large("t", 3, 42)
    assert error.code() == KafkaError.MSG_SIZE_TOO_LARGE
    assert "offset 42 might be too large to fetch" in error.str() and "t [3]" in error.str()
