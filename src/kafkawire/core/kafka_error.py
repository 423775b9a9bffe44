"""`KafkaError` and `KafkaException`, shaped like confluent-kafka's, over two tables.

Broker error codes (>= -1) come from `kafkawire.protocol.error_table`; local codes (< -1) are
librdkafka's. Every code librdkafka has gets librdkafka's number, name and text, so code that
compares against ``KafkaError._MSG_TIMED_OUT`` or matches a message keeps working after switching
imports.
"""

from __future__ import annotations

import builtins
from typing import Any

from ..protocol import error_table as broker_errors

# librdkafka's local error codes: (code, name, description), each description librdkafka's
# (rd_kafka_err2str) because applications log and sometimes match them.
LOCAL_ERRORS: tuple[tuple[int, str, str], ...] = (
    (-199, "_BAD_MSG", "Local: Bad message format"),
    (-198, "_BAD_COMPRESSION", "Local: Invalid compressed data"),
    (-197, "_DESTROY", "Local: Broker handle destroyed for termination"),
    (-196, "_FAIL", "Local: Communication failure with broker"),
    (-195, "_TRANSPORT", "Local: Broker transport failure"),
    (-194, "_CRIT_SYS_RESOURCE", "Local: Critical system resource failure"),
    (-193, "_RESOLVE", "Local: Host resolution failure"),
    (-192, "_MSG_TIMED_OUT", "Local: Message timed out"),
    (-191, "_PARTITION_EOF", "Broker: No more messages"),
    (-190, "_UNKNOWN_PARTITION", "Local: Unknown partition"),
    (-189, "_FS", "Local: File or filesystem error"),
    (-188, "_UNKNOWN_TOPIC", "Local: Unknown topic"),
    (-187, "_ALL_BROKERS_DOWN", "Local: All broker connections are down"),
    (-186, "_INVALID_ARG", "Local: Invalid argument or configuration"),
    (-185, "_TIMED_OUT", "Local: Timed out"),
    (-184, "_QUEUE_FULL", "Local: Queue full"),
    (-183, "_ISR_INSUFF", "Local: ISR count insufficient"),
    (-182, "_NODE_UPDATE", "Local: Broker node update"),
    (-181, "_SSL", "Local: SSL error"),
    (-180, "_WAIT_COORD", "Local: Waiting for coordinator"),
    (-179, "_UNKNOWN_GROUP", "Local: Unknown group"),
    (-178, "_IN_PROGRESS", "Local: Operation in progress"),
    (-177, "_PREV_IN_PROGRESS", "Local: Previous operation in progress"),
    (-176, "_EXISTING_SUBSCRIPTION", "Local: Existing subscription"),
    (-175, "_ASSIGN_PARTITIONS", "Local: Assign partitions"),
    (-174, "_REVOKE_PARTITIONS", "Local: Revoke partitions"),
    (-173, "_CONFLICT", "Local: Conflicting use"),
    (-172, "_STATE", "Local: Erroneous state"),
    (-171, "_UNKNOWN_PROTOCOL", "Local: Unknown protocol"),
    (-170, "_NOT_IMPLEMENTED", "Local: Not implemented"),
    (-169, "_AUTHENTICATION", "Local: Authentication failure"),
    (-168, "_NO_OFFSET", "Local: No offset stored"),
    (-167, "_OUTDATED", "Local: Outdated"),
    (-166, "_TIMED_OUT_QUEUE", "Local: Timed out in queue"),
    (-165, "_UNSUPPORTED_FEATURE", "Local: Required feature not supported by broker"),
    (-164, "_WAIT_CACHE", "Local: Awaiting cache update"),
    (-163, "_INTR", "Local: Operation interrupted"),
    (-162, "_KEY_SERIALIZATION", "Local: Key serialization error"),
    (-161, "_VALUE_SERIALIZATION", "Local: Value serialization error"),
    (-160, "_KEY_DESERIALIZATION", "Local: Key deserialization error"),
    (-159, "_VALUE_DESERIALIZATION", "Local: Value deserialization error"),
    (-158, "_PARTIAL", "Local: Partial response"),
    (-157, "_READ_ONLY", "Local: Read-only object"),
    (-156, "_NOENT", "Local: No such entry"),
    (-155, "_UNDERFLOW", "Local: Read underflow"),
    (-154, "_INVALID_TYPE", "Local: Invalid type"),
    (-153, "_RETRY", "Local: Retry operation"),
    (-152, "_PURGE_QUEUE", "Local: Purged in queue"),
    (-151, "_PURGE_INFLIGHT", "Local: Purged in flight"),
    (-150, "_FATAL", "Local: Fatal error"),
    (-149, "_INCONSISTENT", "Local: Inconsistent state"),
    (-148, "_GAPLESS_GUARANTEE", "Local: Gap-less ordering would not be guaranteed if proceeding"),
    (-147, "_MAX_POLL_EXCEEDED", "Local: Maximum application poll interval (max.poll.interval.ms) exceeded"),
    (-146, "_UNKNOWN_BROKER", "Local: Unknown broker"),
    (-145, "_NOT_CONFIGURED", "Local: Functionality not configured"),
    (-144, "_FENCED", "Local: This instance has been fenced by a newer instance"),
    (-143, "_APPLICATION", "Local: Application generated error"),
    (-142, "_ASSIGNMENT_LOST", "Local: Group partition assignment lost"),
    (-141, "_NOOP", "Local: No operation performed"),
    (-140, "_AUTO_OFFSET_RESET", "Local: No offset to automatically reset to"),
    (-139, "_LOG_TRUNCATION", "Local: Partition log truncation detected"),
    (-138, "_INVALID_DIFFERENT_RECORD", "Local: an invalid record in the same batch caused the failure of this message too"),
    (-137, "_DESTROY_BROKER", "Local: Broker handle destroyed without termination"),
)  # fmt: skip

_LOCAL_BY_CODE = {code: (name, text) for code, name, text in LOCAL_ERRORS}
_CODE_BY_NAME = (
    {name: code for code, name, _ in LOCAL_ERRORS}
    | {e.name: e.code for e in broker_errors.ERROR_CODES}
    | broker_errors.ALIASES
)


def error_name(code: int) -> str:
    """librdkafka's name for the code, as confluent-kafka reports it (``ERR_<code>?`` when unknown)."""
    local = _LOCAL_BY_CODE.get(code)
    if local:
        return local[0]
    if code not in broker_errors.BY_CODE:
        return f"ERR_{code}?"
    return broker_errors.LIBRDKAFKA_NAMES.get(code) or broker_errors.error_for(code).name


def error_description(code: int) -> str:
    local = _LOCAL_BY_CODE.get(code)
    if local:
        return local[1]
    return broker_errors.error_for(code).description


class _ErrorConstants(type):
    """``KafkaError.NAME`` -> the code, for every broker and local error (confluent-kafka's constants)."""

    def __getattr__(cls, name: str) -> int:
        code = _CODE_BY_NAME.get(name)
        if code is None:
            raise AttributeError(name)
        return code


def c_int(value: Any) -> int:
    """An argument confluent-kafka's C code reads as a C int ("i"): an int or a bool (as 0/1),
    TypeError for anything else, OverflowError past 32 bits, in its words."""
    if isinstance(value, bool):
        return int(value)
    if not isinstance(value, int):
        raise TypeError(f"'{type(value).__name__}' object cannot be interpreted as an integer")
    if value > 2**31 - 1:
        raise OverflowError("signed integer is greater than maximum")
    if value < -(2**31):
        raise OverflowError("signed integer is less than minimum")
    return value


class KafkaError(metaclass=_ErrorConstants):
    """An error code with its name and description, and how the application should react.

    ``retriable()`` defaults to the broker table's verdict; the producer may say more (for
    example that a transaction must be aborted) through the keyword arguments.
    """

    __slots__ = ("_code", "_fatal", "_reason", "_retriable", "_txn_requires_abort")

    def __init__(
        self,
        error: int,
        reason: builtins.str | None = None,
        fatal: bool = False,
        retriable: bool | None = None,
        txn_requires_abort: bool = False,
    ) -> None:
        code = c_int(error)  # confluent-kafka's keyword is ``error``
        if reason is not None and not isinstance(reason, builtins.str):
            raise TypeError(f"argument 2 must be str or None, not {type(reason).__name__}")
        self._code = code
        self._reason = reason
        self._fatal = bool(c_int(fatal))
        if retriable is None:  # (kafkawire's own errors: Kafka's flag for the code)
            retriable = code >= -1 and broker_errors.error_for(code).retriable
        self._retriable = bool(c_int(retriable))
        self._txn_requires_abort = bool(c_int(txn_requires_abort))

    def code(self) -> int:
        return self._code

    def name(self) -> builtins.str:
        return error_name(self._code)

    def str(self) -> builtins.str:
        return self._reason if self._reason is not None else error_description(self._code)

    def retriable(self) -> bool:
        return self._retriable

    def fatal(self) -> bool:
        return self._fatal

    def txn_requires_abort(self) -> bool:
        return self._txn_requires_abort

    def __eq__(self, other: object) -> bool:
        if isinstance(other, KafkaError):
            return self._code == other._code
        if isinstance(other, int):
            return self._code == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._code)

    def __repr__(self) -> builtins.str:
        flags = "FATAL," if self._fatal else ""
        return f'KafkaError{{{flags}code={self.name()},val={self._code},str="{self.str()}"}}'

    __str__ = __repr__


class KafkaException(Exception):
    """Raised with a `KafkaError` as its first argument, as confluent-kafka does (subclasses may
    raise it with no argument at all)."""

    def __init__(self, *args: Any) -> None:
        if args and isinstance(args[0], int):
            args = (KafkaError(args[0]), *args[1:])
        super().__init__(*args)

    @property
    def error(self) -> KafkaError | builtins.str | None:
        err: KafkaError | builtins.str | None = self.args[0] if self.args else None
        return err


class IllegalStateException(RuntimeError):
    """A share consumer call its state does not allow (closed, not subscribed, an explicit
    acknowledgement in implicit mode, a record not in flight): confluent-kafka's, a RuntimeError on
    purpose and not a KafkaException, so ``except KafkaException`` does not swallow it."""


class ConcurrentModificationException(RuntimeError):
    """A share consumer used from a second thread while another thread is inside one of its calls."""
