"""Fetched batches to consumed Messages in one step: the consumer's per-record decoding.

A batch decoded lazily (``decode_batches(lazy=True)``) keeps its checked, decompressed record bytes;
`messages_of` turns them straight into `kafkawire.Message`s (no Record in between) with the C
extension's ``decode_messages``, or with its pure-Python twin `decode_messages` here
(tests/unit/native_c/test_twins.py holds the two equal). Messages are made without Message's argument
checks: every field comes from the decoder, already of the right type and range.
"""

from __future__ import annotations

import sys
from typing import Any

from ..base.model import TIMESTAMP_CREATE_TIME, TIMESTAMP_LOG_APPEND_TIME, Message
from ..native import native
from ..protocol.primitives import DecodeError
from ..records import DEFAULT_DECODE_BUDGET, DecodeBudget, Record, RecordBatch, decode_batches
from ..records.decoder import decode_records


def decode_messages(
    body: bytes | bytearray | memoryview,
    pos: int,
    end: int,
    count: int,
    base_offset: int,
    base_timestamp: int,
    log_append_time: int,
    min_offset: int,
    topic: str,
    partition: int,
    timestamp_type: int,
    leader_epoch: int | None,
    message_type: type[Message],
    stop_offset: int = sys.maxsize,
) -> list[Message] | None:
    """The twin of ``kafkawire._native.decode_messages``: the records at ``min_offset`` or later,
    before ``stop_offset``, as Messages, or None when the bytes are malformed."""
    try:
        records, stop = decode_records(
            body,
            pos,
            end,
            count,
            base_offset,
            base_timestamp,
            None if log_append_time < 0 else log_append_time,
            DecodeBudget(DEFAULT_DECODE_BUDGET),
        )
    except (DecodeError, IndexError):
        return None
    if stop != end:
        return None
    return from_records(
        [r for r in records if min_offset <= r.offset < stop_offset],
        topic,
        partition,
        timestamp_type,
        leader_epoch,
        message_type,
    )


def from_records(
    records: list[Record],
    topic: str,
    partition: int,
    timestamp_type: int,
    leader_epoch: int | None,
    message_type: type[Message],
) -> list[Message]:
    """Messages of decoded records (legacy batches, and the twin above)."""
    new = message_type.__new__
    out = []
    for r in records:
        m = new(message_type)
        m._topic = topic
        m._partition = partition
        m._offset = r.offset
        m._key = r.key
        m._value = r.value
        m._headers = r.headers or None
        m._timestamp = (timestamp_type, r.timestamp)
        m._error = None
        m._latency = None
        m._leader_epoch = leader_epoch
        m._delivery_count = None
        out.append(m)
    return out


def offset_at(records: Any, i: int) -> int:
    """The offset of a buffered record: of a list of consumed Messages, or of Arrow Columns."""
    if type(records) is list:
        return records[i]._offset  # type: ignore[no-any-return]
    return int(records.offset_at(i))


_decode = native.decode_messages if native is not None else decode_messages


def messages_of(
    batch: RecordBatch, min_offset: int, topic: str, partition: int, stop_offset: int = sys.maxsize
) -> list[Message]:
    """The batch's records at ``min_offset`` or later (before ``stop_offset``: a slice of a batch
    larger than the room left), as consumed Messages. Raises DecodeError."""
    kind = TIMESTAMP_LOG_APPEND_TIME if batch.timestamp_type else TIMESTAMP_CREATE_TIME
    epoch = batch.partition_leader_epoch if batch.partition_leader_epoch >= 0 else None
    if batch.body is None:  # decoded already (legacy formats)
        records = [r for r in batch.records if min_offset <= r.offset < stop_offset]
        return from_records(records, topic, partition, kind, epoch, Message)
    body, pos, end, count = batch.body
    log_append = batch.max_timestamp if batch.timestamp_type else -1
    args = (
        body,
        pos,
        end,
        count,
        batch.base_offset,
        batch.base_timestamp,
        log_append,
        min_offset,
        topic,
        partition,
        kind,
        epoch,
        Message,
    )
    out = _decode(*args) if stop_offset == sys.maxsize else _decode(*args, stop_offset)
    if out is None:
        raise DecodeError(f"the records of the batch at offset {batch.base_offset} are malformed")
    batch.body = None  # decoded (once, a slice too): the batch no longer holds a view of the Fetch answer
    return out


def batches_of(records: Any) -> list[RecordBatch] | DecodeError:
    """A partition's record batches in a Fetch answer, decoded lazily (off the fetch table's lock),
    or the DecodeError that stopped them, kept without its traceback: the frames would hold the
    decompression buffer (up to a frame's declared size) in a cycle until the collector ran."""
    try:
        return decode_batches(records, lazy=True)
    except DecodeError as exc:
        return type(exc)(*exc.args)
