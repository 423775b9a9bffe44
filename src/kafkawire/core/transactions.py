"""The transactional producer's states and legal transitions: one table, as h11's ``_state.py``.

Every decision about what a transactional call may do next lives here. The producer asks
`TransactionState.require(call)` before acting; an illegal order raises `KafkaException` with
``_STATE`` (or ``_CONFLICT`` for a call already under way) whose message says what to call
instead. Errors move the state to ``ABORTABLE_ERROR`` (abort, then begin again: every other
call raises the transaction's first error again, with ``txn_requires_abort()`` true) or
``FATAL_ERROR`` (the producer is unusable: every call raises the fatal error).
"""

from __future__ import annotations

import enum

from ..protocol import error_codes as ec
from .kafka_error import KafkaError, KafkaException, error_description
from .policy import Meanings


class TxnState(enum.Enum):
    UNINITIALIZED = "uninitialized"
    INITIALIZING = "initializing"
    READY = "ready"
    IN_TRANSACTION = "in transaction"
    COMMITTING = "committing"
    ABORTING = "aborting"
    ABORTABLE_ERROR = "abortable error"
    FATAL_ERROR = "fatal error"


class Call(enum.Enum):
    INIT = "init_transactions"
    BEGIN = "begin_transaction"
    PRODUCE = "produce"
    SEND_OFFSETS = "send_offsets_to_transaction"
    COMMIT = "commit_transaction"
    ABORT = "abort_transaction"


# call -> states it may start from (and the state it moves to while running)
ALLOWED: dict[Call, tuple[frozenset[TxnState], TxnState | None]] = {
    Call.INIT: (frozenset({TxnState.UNINITIALIZED, TxnState.INITIALIZING}), TxnState.INITIALIZING),
    Call.BEGIN: (frozenset({TxnState.READY}), TxnState.IN_TRANSACTION),
    Call.PRODUCE: (frozenset({TxnState.IN_TRANSACTION}), None),
    Call.SEND_OFFSETS: (frozenset({TxnState.IN_TRANSACTION}), None),
    Call.COMMIT: (frozenset({TxnState.IN_TRANSACTION, TxnState.COMMITTING}), TxnState.COMMITTING),
    Call.ABORT: (frozenset({TxnState.IN_TRANSACTION, TxnState.ABORTING, TxnState.ABORTABLE_ERROR}), TxnState.ABORTING),
}

# Where a call leads when it succeeds.
ON_SUCCESS: dict[Call, TxnState] = {
    Call.INIT: TxnState.READY,
    Call.COMMIT: TxnState.READY,
    Call.ABORT: TxnState.READY,
}

# What to tell a user who called at the wrong time, by state.
HINTS: dict[TxnState, str] = {
    TxnState.UNINITIALIZED: "call init_transactions() first",
    TxnState.INITIALIZING: "init_transactions() has not finished: call it again",
    TxnState.READY: "call begin_transaction() first",
    TxnState.IN_TRANSACTION: "a transaction is open: commit_transaction() or abort_transaction() it",
    TxnState.COMMITTING: "a commit is under way: call commit_transaction() again to finish it",
    TxnState.ABORTING: "an abort is under way: call abort_transaction() again to finish it",
    TxnState.ABORTABLE_ERROR: "the transaction failed: call abort_transaction(), then begin_transaction()",
    TxnState.FATAL_ERROR: "the producer hit a fatal error: close it and create a new one",
}


class Failure(enum.Enum):
    """What an error inside a transaction does to it."""

    FATAL = "fatal"  # the producer is done for: another instance took over, or it may not use this id
    ABORTABLE = "abortable"  # the transaction can only be aborted
    FORGOTTEN = "abortable, new epoch"  # the broker forgot the producer (KIP-360): the abort bumps the epoch
    PURGED = "purged"  # the application purged the records: not the transaction's failure


# Errors not listed make the transaction abortable (unless the error itself says fatal).
FAILURES = Meanings(
    "transactions (InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit, EndTxn)",
    {
        ec.INVALID_PRODUCER_EPOCH: Failure.FATAL,
        ec.TRANSACTIONAL_ID_AUTHORIZATION_FAILED: Failure.FATAL,
        ec.PRODUCER_FENCED: Failure.FATAL,
        ec.INVALID_TXN_STATE: Failure.FATAL,
        KafkaError._FENCED: Failure.FATAL,
        ec.UNKNOWN_PRODUCER_ID: Failure.FORGOTTEN,
        ec.INVALID_PRODUCER_ID_MAPPING: Failure.FORGOTTEN,
        KafkaError._PURGE_QUEUE: Failure.PURGED,
        KafkaError._PURGE_INFLIGHT: Failure.PURGED,
    },
    Failure.ABORTABLE,
)


def failure_of(error: KafkaError) -> Failure:
    if error.fatal():
        return Failure.FATAL
    return FAILURES.meaning(error.code())


# The broker's two ways of saying another instance took the transactional id over: one code to the
# application, as librdkafka's.
FENCING = frozenset({ec.INVALID_PRODUCER_EPOCH, ec.PRODUCER_FENCED})


def fenced_code(code: int) -> int:
    return KafkaError._FENCED if code in FENCING else code


def as_reported(what: str, error: KafkaError) -> KafkaError:
    """A coordinator conversation's final ``error`` as librdkafka's transaction manager reports a
    fatal one: fencing as _FENCED, and the text 'Failed to <what>: <description>'. Other errors
    are left as they are."""
    if FAILURES.get(error.code()) is not Failure.FATAL or error.code() == KafkaError._FENCED:
        return error
    code = fenced_code(error.code())
    return KafkaError(code, f"Failed to {what}: {error_description(code)}", fatal=True)


class TransactionState:
    """The current state and the rules that move it (the producer guards it with a lock:
    `kafkawire.producer.transactions.SharedTransactionState`)."""

    def __init__(self) -> None:
        self.state = TxnState.UNINITIALIZED
        self.last_error: KafkaError | None = None
        self._busy: Call | None = None

    def require(self, call: Call) -> None:
        """Raise unless ``call`` is legal now; for a long call, mark it as running."""
        if self.state is TxnState.FATAL_ERROR:
            raise _fatal_again(self.last_error)
        allowed, running = ALLOWED[call]
        if self.state is TxnState.ABORTABLE_ERROR and call is not Call.ABORT:
            raise _abortable_again(call, self.last_error)
        if self.state is TxnState.INITIALIZING and call is not Call.INIT:
            # An init_transactions() that timed out is still under way (it resumes when called
            # again): as librdkafka, any other call conflicts with it and may be retried.
            raise KafkaException(
                KafkaError(
                    KafkaError._CONFLICT,
                    f"{call.value}() conflicts with init_transactions() in progress: {HINTS[self.state]}",
                    retriable=True,
                )
            )
        if self.state not in allowed:
            raise KafkaException(
                KafkaError(
                    KafkaError._STATE,
                    f"{call.value}() is not allowed in state '{self.state.value}': {HINTS[self.state]}",
                )
            )
        if running is not None:
            if self._busy is not None and self._busy is not call:
                raise KafkaException(
                    KafkaError(KafkaError._CONFLICT, f"{self._busy.value}() is still running; {call.value}() must wait")
                )
            self._busy = call
            self.state = running

    def succeeded(self, call: Call) -> None:
        self._busy = None if self._busy is call else self._busy
        if self.state is not TxnState.FATAL_ERROR and call in ON_SUCCESS:
            self.state = ON_SUCCESS[call]

    def allows(self, call: Call) -> bool:
        """Whether ``call`` may be made now (without marking it running)."""
        return self.state in ALLOWED[call][0] or (call is Call.ABORT and self.state is TxnState.ABORTABLE_ERROR)

    def call_failed(self, call: Call | None, error: KafkaError) -> KafkaError:
        """A call's coordinator conversation failed with ``error`` (already recorded by `abortable`
        or `fatal` when `moves_state` said so): the call may be made again, and what it raises is
        the transaction's fatal or abortable error if it has one, else ``error``, retriable."""
        if self.state is TxnState.FATAL_ERROR and self.last_error is not None:
            return self.last_error
        if call is not None:
            self._busy = None if self._busy is call else self._busy
        if self.state is TxnState.ABORTABLE_ERROR and self.last_error is not None:
            return self.last_error
        return KafkaError(error.code(), error.str(), retriable=True)

    def interrupted(self, call: Call) -> None:
        """A call gave up (timeout) but may be called again to resume."""
        self._busy = None if self._busy is call else self._busy

    def abortable(self, error: KafkaError) -> None:
        """The open transaction cannot commit any more. The first error is kept: it is the cause."""
        if self.state is not TxnState.FATAL_ERROR:
            if self.state is not TxnState.ABORTABLE_ERROR or self.last_error is None:
                self.last_error = error
            self.state = TxnState.ABORTABLE_ERROR
        self._busy = None

    @property
    def cannot_commit(self) -> KafkaError | None:
        """The error every record still waiting in the open transaction must fail with, if any."""
        if self.state in (TxnState.ABORTABLE_ERROR, TxnState.FATAL_ERROR):
            return self.last_error
        return None

    def fatal(self, error: KafkaError) -> None:
        self.state = TxnState.FATAL_ERROR
        self.last_error = error
        self._busy = None


def moves_state(call: Call | None, error: KafkaError) -> bool:
    """Whether a call's failure changes the transaction (abortable or fatal). A retriable error (a
    timeout, a lost connection) leaves it as it was, so that the same call resumes; an
    ``init_transactions()`` that failed only needs calling again."""
    return call is not Call.INIT and not (error.retriable() and not error.fatal())


def _abortable_again(call: Call, error: KafkaError | None) -> KafkaException:
    """Any call but abort in ABORTABLE_ERROR: the transaction's error again (``txn_requires_abort``)."""
    code = error.code() if error is not None else KafkaError._STATE
    reason = error.str() if error is not None else "unknown"
    return KafkaException(
        KafkaError(
            code,
            f"{call.value}() is not allowed: the transaction failed earlier ({reason}); {HINTS[TxnState.ABORTABLE_ERROR]}",
            txn_requires_abort=True,
        )
    )


def _fatal_again(error: KafkaError | None) -> KafkaException:
    """Any call after a fatal error: that error as it was, as librdkafka raises it again."""
    if error is None:
        return KafkaException(KafkaError(KafkaError._FATAL, HINTS[TxnState.FATAL_ERROR], fatal=True))
    return KafkaException(KafkaError(error.code(), error.str(), fatal=True))
