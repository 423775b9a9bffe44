"""Produce an Arrow record batch: one column per record field, no Python object per cell where avoidable.

The columns are Spark's Kafka connector's: ``value`` (binary or string, required), ``key``,
``topic``, ``partition``, ``headers`` (``list<struct<key: string, value: binary>>``) and
``timestamp`` (an Arrow timestamp of any unit, an integer of epoch milliseconds, or a double of
epoch seconds as Spark casts it). Other columns are ignored.

The common batch (one topic, with the C extension and a plain producer) is read in C straight
from the columns' buffers (`producer.queue_columns`). With value and key columns only, no object
is made per row: the rows join the producer's batches as row numbers into the columns (ArrowRows
entries, `native_c/arrow_rows.c`), encoded from the buffers when a batch is sent, so the batch's
Arrow buffers are held (not copied) until its rows are reported. With partition, timestamp or
headers columns each record's bytes (and header pairs) and its pending record are the only
objects made per row. Otherwise each column becomes what `Producer.produce` takes, cheaply:

- ``value``/``key``: a string column is *viewed* as binary (same buffers, no copy), then Arrow's
  C++ converter makes the list of ``bytes`` in one call. Those ``bytes`` are the only per-cell
  objects, and the producer keeps them as the record's payload, so nothing is made twice (no
  ``str`` decoded then encoded again, no Row, no dict per record).
- ``partition``/``timestamp``: converted in Arrow (nulls filled, units scaled) and read straight
  from the data buffer as machine integers (``memoryview.cast``), not through Arrow scalars.
- ``topic``: dictionary-encoded, so each distinct topic name is one ``str``.
- ``headers``: flattened once; each row takes a slice of the flat list of pairs.

Usable outside Spark (the benchmark calls it): ``produce_arrow(producer, batch, "orders")``.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import repeat
from typing import TYPE_CHECKING, Any

from ..core.kafka_error import KafkaError
from .delivery import BatchDeliveryCallback
from .producer import delivery_callback, queue_columns, queue_rows
from .producer_config import INT32_MAX

if TYPE_CHECKING:
    from .producer import Producer

# pyarrow ships no type information: its objects are typed Any here.
Array = Any
DataType = Any
RecordBatch = Any

__all__ = [
    "ArrowProduceCounts",
    "ArrowSchemaError",
    "BatchDeliveryCallback",
    "DeliveryTracker",
    "NullTopicError",
    "check_arrow_schema",
    "produce_arrow",
]

NULL_TOPIC_MESSAGE = "null topic present in the data. Use the topic option for setting a default topic."


class ArrowSchemaError(TypeError):
    """A column has a type the producer cannot take (or ``value`` is missing)."""


class NullTopicError(ValueError):
    """A row has a null ``topic`` and no default topic was given."""


@dataclass
class ArrowProduceCounts:
    """What `produce_arrow` queued: rows, and the key + value + header bytes they carry."""

    rows: int = 0
    bytes: int = 0

    def add(self, other: ArrowProduceCounts) -> None:
        self.rows += other.rows
        self.bytes += other.bytes


@dataclass
class DeliveryTracker(BatchDeliveryCallback):
    """An ``on_delivery`` callback that counts deliveries, notes the (topic, partition)s written to and
    keeps the first error, so a writer can flush once and fail on the first failed delivery. It
    takes a produced batch's reports in one call (`BatchDeliveryCallback`), so the records of an
    Arrow batch cost no report object each."""

    delivered: int = 0
    failed: int = 0
    first_error: KafkaError | None = None
    partitions: set[tuple[str, int]] = field(default_factory=set)

    def __call__(self, error: KafkaError | None, message: Any) -> None:
        if error is not None:
            self.failed += 1
            if self.first_error is None:
                self.first_error = error
            return
        self.delivered += 1
        self.partitions.add((message.topic(), message.partition()))

    def report_batch(self, topic: str, partition: int, count: int, base_offset: int, error: KafkaError | None) -> None:
        if error is not None:
            self.failed += count
            if self.first_error is None:
                self.first_error = error
            return
        self.delivered += count
        self.partitions.add((topic, partition))


def _pa() -> Any:
    return importlib.import_module("pyarrow")


def _pc() -> Any:
    return importlib.import_module("pyarrow.compute")


def _is_binary_like(t: DataType) -> bool:
    pa = _pa()

    return bool(
        pa.types.is_binary(t)
        or pa.types.is_large_binary(t)
        or pa.types.is_string(t)
        or pa.types.is_large_string(t)
        or pa.types.is_null(t)
    )


def _headers_type_ok(t: DataType) -> bool:
    pa = _pa()

    if not (pa.types.is_list(t) or pa.types.is_large_list(t)):
        return False
    item = t.value_type
    if not pa.types.is_struct(item) or item.num_fields != 2:
        return False
    key, value = item.field(0), item.field(1)
    return (
        key.name == "key"
        and (pa.types.is_string(key.type) or pa.types.is_large_string(key.type))
        and value.name == "value"
        and _is_binary_like(value.type)
    )


def check_arrow_schema(schema: Any, default_topic: str | None) -> None:
    """Raise `ArrowSchemaError` unless ``schema`` can be produced (the rules of Spark's connector)."""
    pa = _pa()

    names = set(schema.names)
    if "value" not in names:
        raise ArrowSchemaError("Required attribute 'value' not found")
    checks: dict[str, tuple[Callable[[DataType], bool], str]] = {
        "value": (_is_binary_like, "string or binary"),
        "key": (_is_binary_like, "string or binary"),
        "partition": (pa.types.is_integer, "an integer"),
        "headers": (_headers_type_ok, "list<struct<key: string, value: binary>>"),
        "timestamp": (
            lambda t: pa.types.is_timestamp(t) or pa.types.is_integer(t) or pa.types.is_floating(t),
            "a timestamp, integer milliseconds or double seconds",
        ),
    }
    if default_topic is None:
        if "topic" not in names:
            raise ArrowSchemaError(
                "topic option required when no 'topic' attribute is present. Use the topic option for setting a topic."
            )
        checks["topic"] = (lambda t: pa.types.is_string(t) or pa.types.is_large_string(t), "string")
    for name, (ok, wanted) in checks.items():
        if name in names and not ok(schema.field(name).type):
            raise ArrowSchemaError(f"{name} column has unsupported type {schema.field(name).type}: it must be {wanted}")


# --- column conversions --------------------------------------------------------------------------


def _bytes_list(column: Array) -> list[bytes | None]:
    """A binary or string column as a list of ``bytes``/None, strings viewed as binary (no copy)."""
    pa = _pa()

    t = column.type
    if pa.types.is_null(t):
        return [None] * len(column)
    if pa.types.is_string(t):
        column = column.view(pa.binary())
    elif pa.types.is_large_string(t):
        column = column.view(pa.large_binary())
    bytes_list: list[bytes | None] = column.to_pylist()
    return bytes_list


def _byte_total(column: Array) -> int:
    pa = _pa()
    pc = _pc()

    if pa.types.is_null(column.type) or len(column) == column.null_count:
        return 0
    return int(pc.sum(pc.binary_length(column)).as_py() or 0)


def _int64_list(column: Array, null_as: int) -> list[int]:
    """An integer column as Python ints, read from its data buffer (nulls become ``null_as``)."""
    pa = _pa()

    column = column.fill_null(null_as).cast(pa.int64())
    if isinstance(column, pa.ChunkedArray):  # pragma: no cover - record batches hold plain arrays
        column = column.combine_chunks()
    data = column.buffers()[1]
    if data is None:
        return [null_as] * len(column)
    view = memoryview(data).cast("q")
    ints = view[column.offset : column.offset + len(column)].tolist()
    if sys.byteorder != "little":  # pragma: no cover - Arrow buffers are little-endian
        ints = [int.from_bytes(i.to_bytes(8, "big", signed=True), "little", signed=True) for i in ints]
    result: list[int] = ints
    return result


_UNIT_PER_MS = {"s": None, "ms": 1, "us": 1_000, "ns": 1_000_000}


def _timestamps_ms(column: Array) -> Array:
    """Epoch milliseconds per row (an Arrow array; nulls stay null, "now" for the producer), as
    Spark's connector reads the column."""
    pa = _pa()
    pc = _pc()

    t = column.type
    if pa.types.is_timestamp(t):
        raw = column.cast(pa.int64())
        per_ms = _UNIT_PER_MS[t.unit]
        return pc.multiply(raw, 1000) if per_ms is None else raw if per_ms == 1 else pc.divide(raw, per_ms)
    if pa.types.is_floating(t):  # double seconds, as Spark casts a double to a timestamp
        return pc.cast(pc.floor(pc.multiply(column, 1000.0)), pa.int64())
    return column


def _binary_buffers(column: Array) -> tuple[Any, ...] | None:
    """A binary or string column as the lane reads it: (validity or None, offsets, data, offset,
    large); None for a null-typed column (every cell None)."""
    pa = _pa()

    t = column.type
    if pa.types.is_null(t):
        return None
    validity, offsets, data = column.buffers()
    large = pa.types.is_large_binary(t) or pa.types.is_large_string(t)
    return (validity if column.null_count else None, offsets, data, column.offset, large)


def _int64_buffer(column: Array, null_as: int) -> tuple[Any, int]:
    """An integer column as the lane reads it: (int64 data, offset), nulls as ``null_as``."""
    pa = _pa()

    column = column.fill_null(null_as).cast(pa.int64())
    return column.buffers()[1], column.offset


def _header_buffers(column: Array) -> tuple[Any, ...] | None:
    """A headers column as the lane reads it: (list validity or None, list offsets, offset, large,
    struct rows, key column, value column or None); None when the struct has no rows."""
    pa = _pa()

    validity, offsets = column.buffers()[:2]
    struct = column.values
    if not len(struct):
        return None
    keys, values = struct.field("key"), struct.field("value")
    return (
        validity if column.null_count else None,
        offsets,
        column.offset,
        pa.types.is_large_list(column.type),
        len(struct),
        _binary_buffers(keys),
        _binary_buffers(values),
    )


def _columns_in_c(producer: Producer, topic: str, batch: RecordBatch, on_delivery: Any) -> bool:
    """The rows queued by the producer's lane straight from the columns' buffers (no Python object
    per cell but each record's bytes and headers); False, nothing queued, when it cannot take them all."""
    pa = _pa()

    names = batch.schema.names
    wanted = ("value", "key", "partition", "timestamp", "headers")
    columns = [batch.column(names.index(n)) if n in names else None for n in wanted]
    if any(isinstance(c, pa.ChunkedArray) for c in columns):
        return False
    value, key, part, ts, headers = columns
    if headers is not None and headers.values.null_count:  # a null header struct: the per-row path
        return False
    specs = (
        _binary_buffers(value),
        None if key is None else _binary_buffers(key),
        None if part is None else _int64_buffer(part, -1),
        None if ts is None else _int64_buffer(_timestamps_ms(ts), 0),
        None if headers is None else _header_buffers(headers),
    )
    return queue_columns(producer, topic, batch.num_rows, specs, delivery_callback(producer, on_delivery))


def _topics(column: Array) -> tuple[list[str], Iterator[str]]:
    """The distinct topic names, and the per-row names, each distinct name one ``str``
    (dictionary-encoded)."""
    pa = _pa()

    if column.null_count:
        raise NullTopicError(NULL_TOPIC_MESSAGE)
    encoded = column.dictionary_encode()
    names: list[str] = encoded.dictionary.to_pylist()
    indices = _int64_list(encoded.indices.cast(pa.int64()), 0)
    return names, (names[i] for i in indices)


def _in_range(partitions: Any, timestamps: Any) -> bool:
    """Whether every partition is -1 (any) or an int32 and every timestamp non-negative, as
    produce() requires (the other values take the per-row path, which refuses them one by one)."""
    if isinstance(partitions, list) and partitions and not (min(partitions) >= -1 and max(partitions) <= INT32_MAX):
        return False
    return not (isinstance(timestamps, list) and timestamps and min(timestamps) < 0)


def _header_bytes(column: Array) -> int:
    """The key and value bytes of a headers column's rows."""
    flat = column.flatten()  # skips null rows and honours slicing
    return _byte_total(flat.field("key")) + _byte_total(flat.field("value"))


def _header_lists(column: Array) -> tuple[list[list[tuple[str, bytes | None]] | None], int]:
    """Per-row header lists (None for a null or empty list) and the total header bytes."""
    pc = _pc()

    lengths = _int64_list(pc.list_value_length(column), 0)
    flat = column.flatten()  # skips null rows and honours slicing
    keys = flat.field("key")
    values = flat.field("value")
    pairs = list(zip(keys.to_pylist(), _bytes_list(values), strict=True))
    total = _header_bytes(column)
    out: list[list[tuple[str, bytes | None]] | None] = []
    start = 0
    for n in lengths:
        if n:
            out.append(pairs[start : start + n])
            start += n
        else:
            out.append(None)
    return out, total


# --- producing -----------------------------------------------------------------------------------


def produce_arrow(
    producer: Producer,
    batch: RecordBatch,
    topic: str | None = None,
    *,
    on_delivery: Callable[..., Any] | None = None,
    check_schema: bool = True,
) -> ArrowProduceCounts:
    """Queue every row of ``batch`` on ``producer``; returns the rows and bytes queued.

    ``topic`` overrides a ``topic`` column (as Spark's ``topic`` option does). Without it, each row
    goes to its ``topic`` column's topic, and a null there raises `NullTopicError` before any row of
    the batch is queued. ``on_delivery`` (say a `DeliveryTracker`) gets every record's report when
    the caller polls or flushes: a `BatchDeliveryCallback` one call per produced batch, counting
    its records. When the producer's queue is full, this serves delivery reports
    (``poll``) until there is room, so a batch larger than the queue still goes through.
    """
    if check_schema:
        check_arrow_schema(batch.schema, topic)
    rows = batch.num_rows
    if rows == 0:
        return ArrowProduceCounts()
    names = batch.schema.names

    def column(name: str) -> Array | None:
        return batch.column(names.index(name)) if name in names else None

    value_col = column("value")
    assert value_col is not None
    single_topic = topic
    if topic is not None:
        topics: Iterator[str] = repeat(topic, rows)
    else:
        names_used, topics = _topics(column("topic"))
        if len(names_used) == 1:
            single_topic = names_used[0]
    hdr_col = column("headers")
    key_col = column("key")
    if single_topic is not None and _columns_in_c(producer, single_topic, batch, on_delivery):
        size = _byte_total(value_col) + (0 if key_col is None else _byte_total(key_col))
        return ArrowProduceCounts(rows, size if hdr_col is None else size + _header_bytes(hdr_col))
    values = _bytes_list(value_col)
    size = _byte_total(value_col)
    keys: Any = repeat(None, rows)
    if key_col is not None:
        keys = _bytes_list(key_col)
        size += _byte_total(key_col)
    part_col = column("partition")
    partitions: Any = repeat(-1, rows) if part_col is None else _int64_list(part_col, -1)
    ts_col = column("timestamp")
    timestamps: Any = repeat(0, rows) if ts_col is None else _int64_list(_timestamps_ms(ts_col), 0)
    headers: Any = repeat(None, rows)
    if hdr_col is not None:
        headers, header_bytes = _header_lists(hdr_col)
        size += header_bytes

    if single_topic is not None and hdr_col is None and _in_range(partitions, timestamps):
        # One topic, no headers, fields in range: the rows are what produce() would make of them,
        # queued in slices under one lock hold each (`queue_rows`).
        callback = delivery_callback(producer, on_delivery)
        rows_in_order = list(zip(range(rows), values, keys, partitions, timestamps, headers, repeat(callback)))
        queue_rows(producer, single_topic, rows_in_order)
        return ArrowProduceCounts(rows, size)

    produce = producer.produce
    for row_topic, value, key, partition, timestamp, hdrs in zip(
        topics,
        values,
        keys,
        partitions,
        timestamps,
        headers,
        strict=False,  # some are endless repeat()s
    ):
        try:
            produce(row_topic, value, key, partition, on_delivery, timestamp, hdrs)
        except BufferError:
            while True:  # the queue is full: serve reports (frees room), then try again
                producer.poll(0.05)
                try:
                    produce(row_topic, value, key, partition, on_delivery, timestamp, hdrs)
                    break
                except BufferError:
                    continue
    return ArrowProduceCounts(rows, size)
