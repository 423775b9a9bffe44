"""The transaction state table: legal orders pass, illegal ones say what to call instead."""

from __future__ import annotations

import pytest

from kafkawire.core.kafka_error import KafkaError, KafkaException
from kafkawire.core.transactions import ALLOWED, HINTS, Call, TransactionState, TxnState


def code_of(exc: pytest.ExceptionInfo[KafkaException]) -> int:
    err = exc.value.args[0]
    assert isinstance(err, KafkaError)
    return err.code()


def test_happy_path() -> None:
    t = TransactionState()
    for call in (Call.INIT, Call.BEGIN, Call.PRODUCE, Call.SEND_OFFSETS, Call.COMMIT):
        t.require(call)
        t.succeeded(call)
    assert t.state is TxnState.READY
    t.require(Call.BEGIN)
    t.succeeded(Call.BEGIN)
    t.require(Call.ABORT)
    t.succeeded(Call.ABORT)
    assert t.state is TxnState.READY


@pytest.mark.parametrize(
    "call,hint",
    [(Call.BEGIN, "init_transactions"), (Call.PRODUCE, "init_transactions"), (Call.COMMIT, "init_transactions")],
)
def test_calls_before_init_are_state_errors(call: Call, hint: str) -> None:
    with pytest.raises(KafkaException) as exc:
        TransactionState().require(call)
    assert code_of(exc) == KafkaError._STATE and hint in str(exc.value)


def test_produce_and_commit_need_an_open_transaction() -> None:
    t = TransactionState()
    t.require(Call.INIT)
    t.succeeded(Call.INIT)
    for call in (Call.PRODUCE, Call.COMMIT, Call.ABORT, Call.SEND_OFFSETS):
        with pytest.raises(KafkaException) as exc:
            t.require(call)
        assert code_of(exc) == KafkaError._STATE and "begin_transaction" in str(exc.value)


def test_concurrent_calls_conflict_and_a_timed_out_call_can_resume() -> None:
    t = TransactionState()
    t.require(Call.INIT)
    t.succeeded(Call.INIT)
    t.require(Call.BEGIN)
    t.succeeded(Call.BEGIN)
    t.require(Call.COMMIT)
    with pytest.raises(KafkaException) as exc:
        t.require(Call.ABORT)
    assert code_of(exc) == KafkaError._STATE  # aborting from COMMITTING is not allowed
    t.interrupted(Call.COMMIT)
    t.require(Call.COMMIT)  # resumes
    t.succeeded(Call.COMMIT)
    assert t.state is TxnState.READY


def test_abortable_error_allows_only_abort() -> None:
    t = TransactionState()
    for call in (Call.INIT, Call.BEGIN):
        t.require(call)
        t.succeeded(call)
    t.abortable(KafkaError(KafkaError._MSG_TIMED_OUT))
    for call in (Call.PRODUCE, Call.COMMIT, Call.BEGIN):
        with pytest.raises(KafkaException) as exc:
            t.require(call)
        assert "abort_transaction" in str(exc.value)
    t.require(Call.ABORT)
    t.succeeded(Call.ABORT)
    t.require(Call.BEGIN)


def test_in_abortable_error_other_calls_raise_the_first_error_as_abortable() -> None:
    t = TransactionState()
    for call in (Call.INIT, Call.BEGIN):
        t.require(call)
        t.succeeded(call)
    assert t.cannot_commit is None
    t.abortable(KafkaError(KafkaError._MSG_TIMED_OUT, "first"))
    t.abortable(KafkaError(KafkaError._INCONSISTENT, "a consequence"))
    assert t.cannot_commit is not None and t.cannot_commit.code() == KafkaError._MSG_TIMED_OUT
    for call in (Call.PRODUCE, Call.COMMIT, Call.BEGIN, Call.SEND_OFFSETS, Call.INIT):
        with pytest.raises(KafkaException) as exc:
            t.require(call)
        err = exc.value.args[0]
        assert isinstance(err, KafkaError)
        assert err.code() == KafkaError._MSG_TIMED_OUT and err.txn_requires_abort() and not err.fatal()
        assert "first" in err.str() and "abort_transaction" in err.str()
    t.require(Call.ABORT)
    assert t.cannot_commit is None  # aborting: nothing left to fail
    t.succeeded(Call.ABORT)
    t.require(Call.BEGIN)
    t.succeeded(Call.BEGIN)
    t.abortable(KafkaError(KafkaError._STATE, "a new transaction's own error"))
    assert t.last_error is not None and t.last_error.code() == KafkaError._STATE


def test_fatal_is_final() -> None:
    t = TransactionState()
    t.fatal(KafkaError(KafkaError.PRODUCER_FENCED))
    for call in Call:
        with pytest.raises(KafkaException) as exc:
            t.require(call)
        err = exc.value.args[0]
        assert isinstance(err, KafkaError) and err.fatal() and err.code() == KafkaError.PRODUCER_FENCED


def test_every_state_has_a_hint_and_every_call_a_rule() -> None:
    assert set(HINTS) == set(TxnState)
    assert set(ALLOWED) == set(Call)
