"""The consumer's columnar hand-over: fetched records as Arrow columns, with no Python object per
record (``FetchEngine.take_arrow``). Imported only when asked for: pyarrow is optional.

The columns are the Spark connector's with includeHeaders: key, value (binary), topic (string),
partition (int32), offset (int64), timestamp (timestamp[ms, UTC]), timestampType (int32: 0
CreateTime, 1 LogAppendTime), headers (list<struct<key: string, value: binary>>, null for a record
without headers). A fetched batch is decoded into Arrow buffers by the C extension's
``decode_columns`` (its pure-Python twin `decode_columns` here; tests/unit/native_c/test_twins.py holds them
equal), wrapped as `Columns`, which the fetch table slices like a list.
"""

from __future__ import annotations

import importlib
import struct
from typing import TYPE_CHECKING, Any, cast

from ..base.model import Message
from ..native import native
from ..protocol.primitives import DecodeError
from ..records import DecodeBudget, Record, RecordBatch
from ..records.decoder import decode_records

if TYPE_CHECKING:
    pass

# pyarrow ships no type information: its objects are typed Any here.
pa: Any = importlib.import_module("pyarrow")
STAMP = pa.timestamp("ms", tz="UTC")
HEADER = pa.struct([("key", pa.string()), ("value", pa.binary())])
HEADERS = pa.list_(HEADER)
SCHEMA = pa.schema(
    [
        ("key", pa.binary()),
        ("value", pa.binary()),
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("offset", pa.int64()),
        ("timestamp", STAMP),
        ("timestampType", pa.int32()),
        ("headers", HEADERS),
    ]
)


class Columns:
    """One batch's records as an Arrow record batch of SCHEMA; sliced like a list by the table."""

    __slots__ = ("batch",)

    def __init__(self, batch: Any) -> None:
        self.batch = batch

    def __len__(self) -> int:
        return int(self.batch.num_rows)

    def __getitem__(self, index: slice) -> Columns:
        start, stop, _ = index.indices(self.batch.num_rows)
        return Columns(self.batch.slice(start, stop - start))

    def offset_at(self, i: int) -> int:
        return int(self.batch.column(4)[i].as_py())


def decode_columns(
    body: bytes | bytearray | memoryview,
    pos: int,
    end: int,
    count: int,
    base_offset: int,
    base_timestamp: int,
    log_append_time: int,
    min_offset: int,
) -> tuple[Any, ...] | None:
    """The twin of ``kafkawire._native.decode_columns`` (same buffers, as far as the rows go)."""
    try:
        records, stop = decode_records(
            body,
            pos,
            end,
            count,
            base_offset,
            base_timestamp,
            None if log_append_time < 0 else log_append_time,
            DecodeBudget(),
        )
    except (DecodeError, IndexError):
        return None
    if stop != end:
        return None
    rows = [r for r in records if r.offset >= min_offset]
    n = len(rows)
    out: list[Any] = [
        n,
        struct.pack(f"<{n}q", *(r.offset for r in rows)),
        struct.pack(f"<{n}q", *(r.timestamp for r in rows)),
    ]
    for field in ("key", "value"):
        out += _binary_buffers([getattr(r, field) for r in rows])
    headers = [h for r in rows for h in r.headers]
    valid, ends, _ = _binary_buffers([r.headers or None for r in rows])  # a list per record: ends count headers
    out += [valid, ends, len(headers)]
    out += _binary_buffers([k.encode() for k, _ in headers])[1:]
    out += _binary_buffers([v for _, v in headers])
    return tuple(out)


def _binary_buffers(values: list[Any]) -> list[Any]:
    """A column's validity bitmap (None without nulls), int32 ends (the values' lengths added up)
    and bytes (the values joined, when they are bytes)."""
    ends, used = [0], 0
    bits = bytearray(b"\xff" * ((len(values) + 7) // 8))
    for i, v in enumerate(values):
        if v is None:
            bits[i // 8] &= ~(1 << (i % 8)) & 0xFF
        else:
            used += len(v)
        ends.append(used)
    has_null = any(v is None for v in values)
    data = b"".join(v for v in values if isinstance(v, bytes))
    return [bytes(bits) if has_null else None, struct.pack(f"<{len(values) + 1}i", *ends), data]


_decode = native.decode_columns if native is not None else decode_columns


def _binary(n: int, valid: bytes | None, offsets: bytes, data: bytes) -> Any:
    return pa.Array.from_buffers(
        pa.binary(), n, [None if valid is None else pa.py_buffer(valid), pa.py_buffer(offsets), pa.py_buffer(data)]
    )


def _headers(
    n: int, valid: bytes | None, ends: bytes, count: int, key_ends: bytes, key_data: bytes, *value: Any
) -> Any:
    if not count:  # no record has headers (the common case): every row null, built cheaper
        return pa.nulls(n, HEADERS)
    keys = pa.Array.from_buffers(pa.string(), count, [None, pa.py_buffer(key_ends), pa.py_buffer(key_data)])
    items = pa.StructArray.from_arrays([keys, _binary(count, *value)], fields=list(HEADER))
    buffers = [None if valid is None else pa.py_buffer(valid), pa.py_buffer(ends)]
    return pa.Array.from_buffers(HEADERS, n, buffers, children=[items])


def _columns(
    n: int, keys: Any, values: Any, offsets: Any, stamps: Any, headers: Any, topic: str, partition: int, kind: int
) -> Columns:
    arrays = [
        keys,
        values,
        pa.repeat(pa.scalar(topic, pa.string()), n),
        pa.repeat(pa.scalar(partition, pa.int32()), n),
        offsets,
        stamps,
        pa.repeat(pa.scalar(kind, pa.int32()), n),
        headers,
    ]
    return Columns(pa.RecordBatch.from_arrays(arrays, schema=SCHEMA))


def columns_of(batch: RecordBatch, min_offset: int, topic: str, partition: int) -> Columns:
    """The batch's records at ``min_offset`` or later as Columns. Raises DecodeError."""
    kind = batch.timestamp_type
    if batch.body is None:  # decoded already (legacy formats)
        return from_records([r for r in batch.records if r.offset >= min_offset], topic, partition, kind)
    body, pos, end, count = batch.body
    log_append = batch.max_timestamp if batch.timestamp_type else -1
    found = _decode(body, pos, end, count, batch.base_offset, batch.base_timestamp, log_append, min_offset)
    if found is None:
        raise DecodeError(f"the records of the batch at offset {batch.base_offset} are malformed")
    batch.body = None  # decoded (once): the batch no longer holds a view of the Fetch answer
    n, offsets, stamps, key_valid, key_offsets, key_data, value_valid, value_offsets, value_data = found[:9]
    return _columns(
        n,
        _binary(n, key_valid, key_offsets, key_data),
        _binary(n, value_valid, value_offsets, value_data),
        pa.Array.from_buffers(pa.int64(), n, [None, pa.py_buffer(offsets)]),
        pa.Array.from_buffers(STAMP, n, [None, pa.py_buffer(stamps)]),
        _headers(n, *found[9:]),
        topic,
        partition,
        kind,
    )


def from_records(records: list[Record], topic: str, partition: int, kind: int) -> Columns:
    return _columns(
        len(records),
        pa.array([r.key for r in records], pa.binary()),
        pa.array([r.value for r in records], pa.binary()),
        pa.array([r.offset for r in records], pa.int64()),
        pa.array([r.timestamp for r in records], STAMP),
        pa.array([[{"key": k, "value": v} for k, v in r.headers] or None for r in records], HEADERS),
        topic,
        partition,
        kind,
    )


def from_messages(messages: list[Message]) -> Columns:
    """Messages decoded before the first take_arrow() (they exist already)."""
    first = messages[0]
    kind = first.timestamp()[0] - 1  # Message's types are 1 CreateTime, 2 LogAppendTime
    records = [
        Record(
            m.offset() or 0,
            m.timestamp()[1],
            m.key(),
            m.value(),
            cast("list[tuple[str, bytes | None]]", m.headers() or []),
        )
        for m in messages
    ]
    return from_records(records, first.topic() or "", first.partition() or 0, kind)


def to_messages(columns: Columns, leader_epoch: int | None) -> list[Message]:
    """take() after take_arrow(): the columns as Messages."""
    data = columns.batch.to_pydict()
    n = columns.batch.num_rows
    return [
        Message(
            data["topic"][i],
            data["partition"][i],
            data["offset"][i],
            data["key"][i],
            data["value"][i],
            None if (hs := data["headers"][i]) is None else [(h["key"], h["value"]) for h in hs],
            None,
            (data["timestampType"][i] + 1, int(columns.batch.column(5)[i].value)),
            None,
            leader_epoch,
        )
        for i in range(n)
    ]


def record_batch(pieces: list[Columns]) -> Any:
    """One record batch of the pieces a take_arrow() gathered (None when there are none)."""
    if not pieces:
        return None
    if len(pieces) == 1:
        return pieces[0].batch
    return pa.concat_batches([p.batch for p in pieces])
