"""What becomes of a batch whose Produce attempt failed: one pure function, so that every rule the
sender used to weigh inline (the producer stopped for good, idempotence's reading of the error,
the transaction, the produce error table, the retry count, the delivery timeout) is decided in one
place and tested without a broker. ``producer/sender.py`` only carries the answer out.
"""

from __future__ import annotations

import enum
from typing import NamedTuple

from ..protocol import error_codes as ec
from .idempotence import IdempotenceVerdict
from .kafka_error import KafkaError, error_description
from .policy import Action
from .policy.produce import PRODUCE


class ProduceStep(enum.Enum):
    DELIVERED = "delivered"  # a duplicate of a batch the log holds: reported as written
    STOPPED = "stopped"  # the producer had already stopped for good: failed with that error
    FATAL = "fatal"  # the producer stops for good now (fenced, sequences broken)
    RESEND = "resend"  # behind an earlier failure: sent again at once, in sequence order
    BUMP_AND_RESEND = "bump and resend"  # a new epoch first, then sent again under it
    FAIL_AND_BUMP_EPOCH = "fail and bump epoch"  # in a transaction: the batch fails, the abort takes a new epoch
    RETRY = "retry"  # sent again after the retry backoff
    FAIL = "fail"  # given up on with the error it met
    EXPIRED = "expired"  # retriable, but the delivery timeout passed: given up as _MSG_TIMED_OUT
    GAP = "gap"  # would fail and leave a gap under enable.gapless.guarantee: the producer stops (_GAPLESS_GUARANTEE)


class ProduceVerdict(NamedTuple):
    step: ProduceStep
    # The partition's leader is stale: forget it and refresh metadata (whether or not it retries).
    refresh_metadata: bool = False


_IDEMPOTENT_STEPS = {
    # (idempotence's verdict, transactional) -> step; POLICY is absent: the error table decides.
    (IdempotenceVerdict.DELIVERED, False): ProduceStep.DELIVERED,
    (IdempotenceVerdict.DELIVERED, True): ProduceStep.DELIVERED,
    (IdempotenceVerdict.FATAL, False): ProduceStep.FATAL,
    (IdempotenceVerdict.FATAL, True): ProduceStep.FATAL,
    (IdempotenceVerdict.REQUEUE, False): ProduceStep.RESEND,
    (IdempotenceVerdict.REQUEUE, True): ProduceStep.RESEND,
    (IdempotenceVerdict.BUMP_EPOCH, False): ProduceStep.BUMP_AND_RESEND,
    (IdempotenceVerdict.BUMP_EPOCH, True): ProduceStep.FAIL_AND_BUMP_EPOCH,
}


def produce_verdict(
    code: int,
    *,
    stopped: bool,
    idempotent: IdempotenceVerdict | None,
    transactional: bool,
    attempts: int,
    retries: int,
    now: float,
    first_queued: float,
    delivery_timeout: float,
    gapless: bool = False,
) -> ProduceVerdict:
    """The step for a batch that failed with ``code`` on its ``attempts``-th send. ``idempotent``
    is the idempotence state's verdict on the error (None without idempotence or once stopped);
    ``first_queued`` + ``delivery_timeout`` (``message.timeout.ms``) is the batch's deadline.
    ``gapless`` (enable.gapless.guarantee, idempotent and not transactional): a batch that would
    fail stops the producer instead, as librdkafka's; one that expires does not."""
    if stopped:
        return ProduceVerdict(ProduceStep.STOPPED)
    if idempotent is not None and idempotent is not IdempotenceVerdict.POLICY:
        return ProduceVerdict(_IDEMPOTENT_STEPS[idempotent, transactional])
    action = PRODUCE.action(code)
    refresh = action is Action.REFRESH_METADATA
    fail = ProduceStep.GAP if gapless and idempotent is not None and not transactional else ProduceStep.FAIL
    if action is not Action.RETRY and not refresh:
        return ProduceVerdict(fail, refresh)
    if now - first_queued >= delivery_timeout:
        return ProduceVerdict(ProduceStep.EXPIRED, refresh)
    if attempts <= retries:
        return ProduceVerdict(ProduceStep.RETRY, refresh)
    return ProduceVerdict(fail, refresh)


# A Produce that timed out (or was given up at its records' message timeout) fails its records
# with librdkafka's message-level code, as rd_kafka_handle_Produce_error translates it: a program
# checks ``err.code() == KafkaError._MSG_TIMED_OUT``.
_REPORTED_AS = {
    KafkaError._TIMED_OUT: KafkaError._MSG_TIMED_OUT,
    KafkaError._TIMED_OUT_QUEUE: KafkaError._MSG_TIMED_OUT,
}


def reported_error(error: KafkaError) -> KafkaError:
    """The error the reports of records that failed with ``error`` carry (the cause kept in its text)."""
    code = _REPORTED_AS.get(error.code())
    if code is None:
        return error
    return KafkaError(code, f"{error_description(code)} ({error.str()})")


def record_reports(
    count: int, error: KafkaError, record_errors: list[tuple[int, str | None]]
) -> list[tuple[range, KafkaError]]:
    """KIP-467: the errors of a refused batch's ``count`` records, in runs of consecutive records,
    as librdkafka sets them. Without records named (``record_errors``: batch index, the broker's
    reason), every record carries ``error`` (the partition's code and error_message). With them,
    a named record carries its own reason, under INVALID_RECORD when several were named, else
    under the partition's code; every other record failed only for being in that batch
    (_INVALID_DIFFERENT_RECORD)."""
    if not record_errors:
        return [(range(count), error)]
    named = dict(record_errors)
    code = ec.INVALID_RECORD if len(record_errors) > 1 else error.code()
    others = KafkaError(
        KafkaError._INVALID_DIFFERENT_RECORD,
        f"{error_description(KafkaError._INVALID_DIFFERENT_RECORD)} ({error.str()})",
    )
    errors = [KafkaError(code, named[i]) if i in named else others for i in range(count)]
    runs: list[tuple[range, KafkaError]] = []
    start = 0
    for index in range(1, count + 1):
        if index == count or (errors[index].code(), errors[index].str()) != (errors[start].code(), errors[start].str()):
            runs.append((range(start, index), errors[start]))
            start = index
    return runs
