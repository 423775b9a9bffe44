"""The produce-failure verdict (core/produce_verdict.py), row by row, without a broker or a clock:
every input the sender used to weigh inline is passed in, the step it must carry out comes back."""

from __future__ import annotations

import struct
from typing import Any

import pytest

from kafkawire.core.idempotence import IdempotenceVerdict
from kafkawire.core.kafka_error import KafkaError
from kafkawire.core.produce_verdict import (
    ProduceStep,
    ProduceVerdict,
    produce_verdict,
    record_reports,
    reported_error,
)
from kafkawire.protocol import error_codes as ec
from kafkawire.protocol.apis import PRODUCE
from kafkawire.protocol.headers import decode_response

TIMEOUT = 300.0  # message.timeout.ms, in seconds


def judge(code: int, **given: Any) -> ProduceVerdict:
    """The verdict for an error on a batch queued at 0 and sent once, retries left, in time."""
    args: dict[str, Any] = dict(
        stopped=False,
        idempotent=None,
        transactional=False,
        attempts=1,
        retries=5,
        now=10.0,
        first_queued=0.0,
        delivery_timeout=TIMEOUT,
    )
    args.update(given)
    return produce_verdict(code, **args)


# --- the producer already stopped ------------------------------------------------------------------


@pytest.mark.parametrize("idempotent", [None, IdempotenceVerdict.DELIVERED, IdempotenceVerdict.POLICY])
def test_once_stopped_every_answer_fails_with_the_fatal_error(idempotent: IdempotenceVerdict | None) -> None:
    assert judge(ec.NOT_LEADER_OR_FOLLOWER, stopped=True, idempotent=idempotent) == (ProduceStep.STOPPED, False)
    assert judge(ec.DUPLICATE_SEQUENCE_NUMBER, stopped=True, idempotent=idempotent).step is ProduceStep.STOPPED


# --- idempotence decides before the error table ----------------------------------------------------


@pytest.mark.parametrize(
    ("idempotent", "transactional", "step"),
    [
        (IdempotenceVerdict.DELIVERED, False, ProduceStep.DELIVERED),
        (IdempotenceVerdict.DELIVERED, True, ProduceStep.DELIVERED),
        (IdempotenceVerdict.FATAL, False, ProduceStep.FATAL),
        (IdempotenceVerdict.FATAL, True, ProduceStep.FATAL),
        (IdempotenceVerdict.REQUEUE, False, ProduceStep.RESEND),
        (IdempotenceVerdict.REQUEUE, True, ProduceStep.RESEND),
        (IdempotenceVerdict.BUMP_EPOCH, False, ProduceStep.BUMP_AND_RESEND),
        (IdempotenceVerdict.BUMP_EPOCH, True, ProduceStep.FAIL_AND_BUMP_EPOCH),
    ],
)
def test_idempotence_verdicts(idempotent: IdempotenceVerdict, transactional: bool, step: ProduceStep) -> None:
    # The error (a retriable, leader-moving one) and the retry budget do not matter here: no
    # metadata refresh either, the sequence rules own the batch.
    verdict = judge(ec.NOT_LEADER_OR_FOLLOWER, idempotent=idempotent, transactional=transactional)
    assert verdict == (step, False)
    exhausted = judge(
        ec.NOT_LEADER_OR_FOLLOWER, idempotent=idempotent, transactional=transactional, attempts=9, now=TIMEOUT
    )
    assert exhausted == (step, False)


def test_idempotence_leaving_it_to_the_table_is_the_same_as_no_idempotence() -> None:
    for code in (ec.NOT_LEADER_OR_FOLLOWER, ec.REQUEST_TIMED_OUT, ec.MESSAGE_TOO_LARGE, KafkaError._TRANSPORT):
        for transactional in (False, True):
            assert judge(code, idempotent=IdempotenceVerdict.POLICY, transactional=transactional) == judge(code)


# --- the error table, the retry count and the delivery timeout -------------------------------------


def test_a_moved_leader_retries_after_a_metadata_refresh() -> None:
    assert judge(ec.NOT_LEADER_OR_FOLLOWER) == (ProduceStep.RETRY, True)
    assert judge(KafkaError._TRANSPORT) == (ProduceStep.RETRY, True)  # the request was lost as a whole


def test_a_retriable_error_retries_without_refreshing() -> None:
    assert judge(ec.REQUEST_TIMED_OUT) == (ProduceStep.RETRY, False)
    assert judge(ec.NOT_ENOUGH_REPLICAS) == (ProduceStep.RETRY, False)


def test_the_last_allowed_attempt_still_retries_the_next_fails() -> None:
    assert judge(ec.REQUEST_TIMED_OUT, attempts=5, retries=5) == (ProduceStep.RETRY, False)
    assert judge(ec.REQUEST_TIMED_OUT, attempts=6, retries=5) == (ProduceStep.FAIL, False)
    assert judge(ec.REQUEST_TIMED_OUT, attempts=1, retries=0) == (ProduceStep.FAIL, False)


def test_out_of_retries_a_stale_leader_is_still_forgotten() -> None:
    assert judge(ec.NOT_LEADER_OR_FOLLOWER, attempts=6, retries=5) == (ProduceStep.FAIL, True)


def test_past_the_delivery_timeout_a_retriable_error_expires() -> None:
    assert judge(ec.REQUEST_TIMED_OUT, now=TIMEOUT) == (ProduceStep.EXPIRED, False)  # the deadline itself counts
    assert judge(ec.REQUEST_TIMED_OUT, now=TIMEOUT - 0.001) == (ProduceStep.RETRY, False)
    assert judge(ec.NOT_LEADER_OR_FOLLOWER, now=TIMEOUT + 1, first_queued=1.0) == (ProduceStep.EXPIRED, True)
    # Out of time and out of retries: the timeout is what the report names.
    assert judge(ec.REQUEST_TIMED_OUT, now=TIMEOUT, attempts=9) == (ProduceStep.EXPIRED, False)


@pytest.mark.parametrize(
    "code",
    [ec.MESSAGE_TOO_LARGE, ec.TOPIC_AUTHORIZATION_FAILED, ec.INVALID_RECORD, KafkaError._MSG_TIMED_OUT, 9999],
)
def test_a_permanent_error_fails_at_once_even_late(code: int) -> None:
    assert judge(code) == (ProduceStep.FAIL, False)
    assert judge(code, now=TIMEOUT * 2) == (ProduceStep.FAIL, False)  # not renamed a timeout: it was not one


def test_without_idempotence_sequence_errors_follow_the_table() -> None:
    # A non-idempotent producer never reads these itself: Kafka's flags decide.
    assert judge(ec.OUT_OF_ORDER_SEQUENCE_NUMBER).step is ProduceStep.FAIL
    assert judge(ec.UNKNOWN_PRODUCER_ID).step is ProduceStep.FAIL


# --- enable.gapless.guarantee ----------------------------------------------------------------------


def test_gapless_turns_a_failure_of_an_idempotent_producer_into_a_stop() -> None:
    policy = IdempotenceVerdict.POLICY  # idempotence on, the error table decides
    assert judge(ec.MESSAGE_TOO_LARGE, idempotent=policy, gapless=True).step is ProduceStep.GAP
    assert judge(ec.NOT_LEADER_OR_FOLLOWER, idempotent=policy, gapless=True, attempts=6).step is ProduceStep.GAP
    # retries left: still retried; the delivery timeout passed: expired, not covered (as librdkafka)
    assert judge(ec.NOT_LEADER_OR_FOLLOWER, idempotent=policy, gapless=True).step is ProduceStep.RETRY
    assert judge(ec.NOT_LEADER_OR_FOLLOWER, idempotent=policy, gapless=True, now=TIMEOUT).step is ProduceStep.EXPIRED
    # without the guarantee, without idempotence, or in a transaction (aborted instead): failed
    assert judge(ec.MESSAGE_TOO_LARGE, idempotent=policy).step is ProduceStep.FAIL
    assert judge(ec.MESSAGE_TOO_LARGE, idempotent=None, gapless=True).step is ProduceStep.FAIL
    assert judge(ec.MESSAGE_TOO_LARGE, idempotent=policy, gapless=True, transactional=True).step is ProduceStep.FAIL


# --- what the reports carry --------------------------------------------------------------------------


@pytest.mark.parametrize("code", [KafkaError._TIMED_OUT, KafkaError._TIMED_OUT_QUEUE])
def test_a_request_level_timeout_is_reported_as_msg_timed_out_keeping_its_cause(code: int) -> None:
    """As librdkafka translates it for every record it fails: the program checks one code."""
    why = "Produce to 127.0.0.1:9092 timed out (the request timeout)"
    reported = reported_error(KafkaError(code, why))
    assert reported.code() == KafkaError._MSG_TIMED_OUT
    assert reported.str() == f"Local: Message timed out ({why})"
    assert not reported.retriable()


@pytest.mark.parametrize("code", [ec.NOT_LEADER_OR_FOLLOWER, ec.MESSAGE_TOO_LARGE, KafkaError._TRANSPORT])
def test_other_errors_are_reported_as_they_are(code: int) -> None:
    error = KafkaError(code, "as met")
    assert reported_error(error) is error


def _string(text: str | None) -> bytes:
    if text is None:
        return struct.pack(">h", -1)
    raw = text.encode()
    return struct.pack(">h", len(raw)) + raw


REFUSED = "Compacted topic cannot accept message without key in topic partition compacted-0."
SUMMARY = "One or more records have been rejected"


def _produce_v8_answer(record_errors: list[tuple[int, str | None]], message: str | None) -> bytes:
    """A Produce v8 answer's frame as Kafka (>= 2.4) writes it when it refuses records of a batch
    (a compacted topic given keyless records): correlation id, then one topic, one partition with
    INVALID_RECORD, no offsets, the records it names (KIP-467) and the partition's message."""
    body = struct.pack(">ii", 7, 1) + _string("compacted") + struct.pack(">i", 1)
    body += struct.pack(">ihqqq", 0, ec.INVALID_RECORD, -1, -1, -1)
    body += struct.pack(">i", len(record_errors))
    for index, text in record_errors:
        body += struct.pack(">i", index) + _string(text)
    return body + _string(message) + struct.pack(">i", 0)  # throttle_time_ms


def _reports_of(frame: bytes, count: int) -> list[tuple[list[int], int, str]]:
    """The sender's path: decode the answer, then the records' errors from its partition."""
    correlation_id, answer = decode_response(PRODUCE, 8, frame)
    assert correlation_id == 7
    p = answer.responses[0].partition_responses[0]
    named = [(e.batch_index, e.batch_index_error_message) for e in p.record_errors]
    runs = record_reports(count, KafkaError(p.error_code, p.error_message or None), named)
    return [(list(run), err.code(), err.str()) for run, err in runs]


def test_records_a_broker_names_carry_its_reason_and_the_others_say_why_they_failed_too() -> None:
    """KIP-467 as librdkafka reports it: several named records are INVALID_RECORD each with its
    reason, the rest of the batch _INVALID_DIFFERENT_RECORD; the reports keep the records' order."""
    frame = _produce_v8_answer([(0, REFUSED), (2, REFUSED)], SUMMARY)
    different = f"Local: an invalid record in the same batch caused the failure of this message too ({SUMMARY})"
    assert _reports_of(frame, 4) == [
        ([0], ec.INVALID_RECORD, REFUSED),
        ([1], KafkaError._INVALID_DIFFERENT_RECORD, different),
        ([2], ec.INVALID_RECORD, REFUSED),
        ([3], KafkaError._INVALID_DIFFERENT_RECORD, different),
    ]


def test_one_named_record_carries_the_partition_code_and_a_missing_reason_its_description() -> None:
    frame = _produce_v8_answer([(1, None)], SUMMARY)
    assert _reports_of(frame, 3)[1] == ([1], ec.INVALID_RECORD, "Broker: Broker failed to validate record")
    assert [run for run, _, _ in _reports_of(frame, 3)] == [[0], [1], [2]]


def test_without_named_records_every_record_carries_the_partition_message() -> None:
    frame = _produce_v8_answer([], SUMMARY)
    assert _reports_of(frame, 3) == [([0, 1, 2], ec.INVALID_RECORD, SUMMARY)]
    assert _reports_of(_produce_v8_answer([], None), 2) == [
        ([0, 1], ec.INVALID_RECORD, "Broker: Broker failed to validate record")
    ]
