"""The bulk paths on the lane (`kafkawire._native` pending_from_dicts, pending_from_columns,
lane_queue) against the Python paths they stand in for.

Two producers get the same ``produce_batch()`` calls or Arrow batches, one with the engine's lane
and one without (``_lane`` None: the checks of `check_batch` and `ProducerEngine.queue_checked`,
or the Arrow writer's per-row lists); their sticky partitioners draw from equally seeded
generators. Both must end with the same batches (records, partitions, byte counts, full flags),
the same buffer counters and the same refusals, and the lane must take the common records without
the Python admission path. No broker: the partition counts are put in the metadata.
"""

from __future__ import annotations

import os
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkawire import KafkaException, Producer
from kafkawire.native import native

pytestmark = pytest.mark.skipif(
    native is None and os.environ.get("KAFKAWIRE_REQUIRE_NATIVE") != "1", reason="kafkawire._native is not built"
)

TOPIC = "bulk-topic"


def _producer(lane: bool, **conf: Any) -> tuple[Producer, list[int]]:
    p = Producer({"bootstrap.servers": "127.0.0.1:1", "linger.ms": 600_000, "message.timeout.ms": 900_000, **conf})
    engine = p._engine
    engine._sticky._rng = random.Random(11)
    engine.client.metadata.partition_counts = {TOPIC: 4}
    if not lane:
        p._lane = None
    admitted = [0]
    admit = engine.admit

    def counted(*args: Any) -> bool:
        admitted[0] += 1
        return admit(*args)

    engine.admit = counted  # type: ignore[method-assign]
    return p, admitted


def _state(p: Producer, timestamps: bool = True) -> Any:
    engine = p._engine
    batches = []
    for tp, queue in sorted(engine.acc._queues.items()):
        for batch in queue:
            records = [  # (ArrowRows entries, one per run of an Arrow batch's rows, expanded)
                (m.partition, m.key, m.value, m.headers, m.callback, m.size, m.timestamp if timestamps else None)
                for m in batch.records()
            ]
            assert batch.count == len(records)
            batches.append((tp, batch.bytes, batch.full, records))
    sticks = {t: (s.partition, s.produced) for t, s in engine._sticky.topics.items()}
    return batches, engine.state.outstanding, engine.state.buffered_bytes, len(engine.acc), sticks


def _close(*producers: Producer) -> None:
    for p in producers:
        p.purge()
        p.close(0)


def _done(err: Any, msg: Any) -> None:
    pass


def _other(err: Any, msg: Any) -> None:
    pass


def _batch_call(p: Producer, messages: list[dict[str, Any]], **kwargs: Any) -> Any:
    copies = [dict(m) for m in messages]
    try:
        n = p.produce_batch(TOPIC, copies, **kwargs)
    except BaseException as exc:  # the same refusal from both paths
        return type(exc), str(exc)
    return n, [str(m.get("_error")) for m in copies]


values = st.one_of(st.none(), st.binary(max_size=300), st.text(max_size=5))
keys = st.one_of(st.none(), st.none(), st.sampled_from([b"a", b"b", b"key-3", b""]), st.just("text-key"))
messages = st.fixed_dictionaries(
    {"value": values},
    optional={
        "key": keys,
        "partition": st.sampled_from([-1, 0, 3, 7]),
        "timestamp": st.sampled_from([1_700_000_000_000, 5]),
        "on_delivery": st.sampled_from([_done, None]),
        "callback": st.sampled_from([_other, None]),
    },
)
rare = st.fixed_dictionaries(
    {"value": values},
    optional={
        "headers": st.sampled_from([None, [("h", b"v")]]),
        "timestamp": st.sampled_from([-5, 2**70]),
        "partition": st.sampled_from([2**40, "x"]),
        "key": st.sampled_from([bytearray(b"k"), 7]),
        "on_delivery": st.just(42),
    },
)


@settings(max_examples=40, deadline=None)
@given(
    calls=st.lists(
        st.tuples(
            st.lists(st.one_of(messages, messages, messages, rare), max_size=150),
            st.sampled_from([-1, -1, 1, 9]),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_produce_batch_on_the_lane_queues_as_the_python_path(calls: list[Any]) -> None:
    conf = {"batch.size": 900, "batch.num.messages": 9, "queue.buffering.max.messages": 200, "message.max.bytes": 2000}
    (with_lane, _), (without, _) = _producer(True, **conf), _producer(False, **conf)
    try:
        for batch, partition in calls:
            assert _batch_call(with_lane, batch, partition=partition) == _batch_call(
                without, batch, partition=partition
            )
            assert _state(with_lane, timestamps=False) == _state(without, timestamps=False)
    finally:
        _close(with_lane, without)


def test_produce_batch_takes_plain_messages_on_the_lane() -> None:
    (p, admitted), (q, _) = _producer(True, **{"batch.size": 100_000}), _producer(False, **{"batch.size": 100_000})
    try:
        batch = [
            {"value": b"v" * 100, "key": None if i % 3 else b"k%d" % (i % 5), "timestamp": 1_000 + i}
            for i in range(3_000)
        ]
        batch += [{"value": "text", "partition": 2, "on_delivery": _done, "timestamp": 7} for _ in range(100)]
        assert p.produce_batch(TOPIC, [dict(m) for m in batch]) == q.produce_batch(TOPIC, [dict(m) for m in batch])
        assert _state(p) == _state(q)
        # New batches, new sticky partitions and first keys go through admit; the rest not.
        assert admitted[0] < 200
        assert len(p) == 3_100
    finally:
        _close(p, q)


def test_message_keys_that_are_not_the_literal_names_read_the_same() -> None:
    """The C path walks a message dict matching its keys by identity with the interned names, as a
    program's literals are; keys made at run time (equal, other objects) and unknown keys take the
    lookups instead, with the same outcome."""
    made = {name: "".join(list(name)) for name in ("value", "key", "partition", "timestamp", "on_delivery")}
    assert all(made[n] is not n for n in made)
    calls = [
        [{made["value"]: b"v%d" % i, made["key"]: b"k%d" % (i % 3)} for i in range(20)],
        [{made["value"]: b"w", made["partition"]: 2, made["timestamp"]: 1_700_000_000_000 + i} for i in range(20)],
        [{"value": b"x", "unknown": 1, made["on_delivery"]: _done} for _ in range(20)],
        [{"value": b"y", "key": b"k", "on_delivery": None, "callback": _other} for _ in range(20)],
    ]
    with_lane, admitted = _producer(True)
    without, _ = _producer(False)
    try:
        for messages in calls:
            assert _batch_call(with_lane, messages) == _batch_call(without, messages)
        assert _state(with_lane, timestamps=False) == _state(without, timestamps=False)
        assert admitted[0] < 40
    finally:
        _close(with_lane, without)


def test_a_full_buffer_refuses_the_rest_as_the_python_path() -> None:
    conf = {"queue.buffering.max.messages": 50, "batch.num.messages": 7}
    (p, _), (q, _) = _producer(True, **conf), _producer(False, **conf)
    try:
        batch = [{"value": b"x" * 10, "timestamp": 3} for _ in range(80)]
        assert _batch_call(p, batch) == _batch_call(q, batch)
        assert _batch_call(p, batch)[0] == 0
        assert _state(p) == _state(q)
    finally:
        _close(p, q)


# --- the Arrow writer ------------------------------------------------------------------------------


def _arrow_state(lane: bool, batches: list[Any], **conf: Any) -> tuple[Any, Any, int]:
    from kafkawire.producer.arrow import produce_arrow

    p, admitted = _producer(lane, **conf)
    try:
        counts = []
        for batch in batches:
            try:
                counts.append(produce_arrow(p, batch, TOPIC, on_delivery=_done))
            except (KafkaException, OverflowError, TypeError) as exc:  # the same refusal from both paths
                counts.append(f"{type(exc).__name__}: {exc}")
        return counts, _state(p, timestamps=False), admitted[0]
    finally:
        _close(p)


def _header_type(pa: Any, large: bool, string: bool) -> Any:
    value = pa.large_binary() if large else pa.string() if string else pa.binary()
    item = pa.struct([("key", pa.large_string() if large else pa.string()), ("value", value)])
    return pa.large_list(item) if large else pa.list_(item)


def _headers(rng: random.Random, i: int) -> Any:
    if i % 7 == 0:
        return None
    return [{"key": f"h{j}", "value": None if rng.random() < 0.2 else "x" * rng.randrange(9)} for j in range(i % 4)]


def _arrow_batches() -> list[Any]:
    pa = pytest.importorskip("pyarrow")
    rng = random.Random(3)
    out = []
    for string, large in ((False, False), (True, False), (False, True), (True, True)):
        n = 700
        cells = [None if rng.random() < 0.1 else f"v{rng.randrange(10**6)}" * rng.randrange(1, 30) for _ in range(n)]
        kind = {(False, False): pa.binary(), (True, False): pa.string(), (False, True): pa.large_binary()}.get(
            (string, large), pa.large_string()
        )
        value = pa.array([c if c is None or string else c.encode() for c in cells], kind)
        key = pa.array([None if i % 2 else b"key-%d" % (i % 7) for i in range(n)], pa.binary())
        partition = pa.array([None if i % 5 else i % 4 for i in range(n)], pa.int32())
        timestamp = pa.array([1_700_000_000_000 + i for i in range(n)], pa.int64())
        full = pa.RecordBatch.from_arrays(
            [value, key, partition, timestamp], ["value", "key", "partition", "timestamp"]
        )
        out.append(full.slice(13, 600))  # sliced: every column read from an offset
        headers = pa.array([_headers(rng, i) for i in range(n)], _header_type(pa, large, string))
        with_headers = pa.RecordBatch.from_arrays([value, headers], ["value", "headers"])
        out.append(with_headers.slice(5, 650))
        out.append(pa.RecordBatch.from_arrays([value], ["value"]))
        out.append(pa.RecordBatch.from_arrays([pa.nulls(n), key], ["value", "key"]))
    return out


def test_produce_arrow_on_the_lane_queues_as_the_python_path() -> None:
    batches = _arrow_batches()
    conf = {"batch.size": 4_000, "batch.num.messages": 50}
    with_lane = _arrow_state(True, batches, **conf)
    without = _arrow_state(False, batches, **conf)
    assert with_lane[:2] == without[:2]
    total = sum(b.num_rows for b in batches)
    assert with_lane[2] < total // 5 < without[2]


def test_produce_arrow_refusals_and_odd_columns_match() -> None:
    pa = pytest.importorskip("pyarrow")
    n = 40
    big = pa.array([b"x" * (3_000 if i == 7 else 10) for i in range(n)], pa.binary())
    bad_partition = pa.array([9] * n, pa.int64())  # the topic has 4 partitions
    odd_partition = pa.array([2**40] * n, pa.int64())  # not an int32: the per-row path
    negative = pa.array([-1] * n, pa.int64())  # a negative timestamp: the per-row path
    batches = [
        pa.RecordBatch.from_arrays([big], ["value"]),
        pa.RecordBatch.from_arrays([big[:5], bad_partition[:5]], ["value", "partition"]),
        pa.RecordBatch.from_arrays([big[:5], odd_partition[:5]], ["value", "partition"]),
        pa.RecordBatch.from_arrays([big[:5], negative[:5]], ["value", "timestamp"]),
    ]
    item = pa.struct([("key", pa.string()), ("value", pa.binary())])
    null_key = pa.array([[{"key": None, "value": b"v"}]] * 5, pa.list_(item))  # the per-row path refuses it
    batches.append(pa.RecordBatch.from_arrays([big[:5], null_key], ["value", "headers"]))
    conf = {"message.max.bytes": 2_000}
    assert _arrow_state(True, batches, **conf)[:2] == _arrow_state(False, batches, **conf)[:2]


def test_pending_from_columns_checks_the_buffers() -> None:
    pa = pytest.importorskip("pyarrow")
    assert native is not None
    value = pa.array([b"ab", b"c"], pa.binary())
    _, offsets, data = value.buffers()
    with pytest.raises(ValueError):  # more rows than the offsets hold
        native.pending_from_columns(TOPIC, 5, (None, offsets, data, 0, False), None, None, None, None, None, 0.0)
    short = pa.py_buffer(b"a")  # offsets past the data
    with pytest.raises(ValueError):
        native.pending_from_columns(TOPIC, 2, (None, offsets, short, 0, False), None, None, None, None, None, 0.0)
    records = native.pending_from_columns(TOPIC, 2, (None, offsets, data, 0, False), None, None, None, None, None, 0.0)
    assert [(r.value, r.key, r.partition) for r in records] == [(b"ab", None, -1), (b"c", None, -1)]


@pytest.mark.parametrize("partitioner", [None, "murmur2_random"])
def test_produce_arrow_rows_keep_the_sticky_timer_and_the_partitioner(partitioner: str | None) -> None:
    """Value/key Arrow batches (ArrowRows entries on the lane) against the per-row path, with a clock
    that passes sticky.partitioning.linger.ms between some calls: keyless rows stay on their
    partition within the time and move on after it, on the lane as in Python; keyed rows land
    where the configured partitioner puts them (consistent_random, CRC-32, by default)."""
    import functools
    import zlib

    from kafkawire.core.partitioners import murmur2
    from kafkawire.producer.arrow import produce_arrow

    pa = pytest.importorskip("pyarrow")
    rng = random.Random(8)
    value = pa.array([bytes(rng.randrange(256) for _ in range(rng.randrange(40))) for _ in range(300)], pa.binary())
    key = pa.array([None if i % 3 == 0 else b"key-%d" % (i % 11) for i in range(300)], pa.binary())
    keyless = pa.RecordBatch.from_arrays([value], ["value"])
    keyed = pa.RecordBatch.from_arrays([value, key], ["value", "key"])
    steps = [(keyless, 0.0), (keyless, 0.01), (keyless, 0.2), (keyed, 0.0), (keyed, 0.3), (keyless, 0.0)] * 3
    conf: dict[str, Any] = {"sticky.partitioning.linger.ms": 100, "batch.size": 1_000_000}
    if partitioner is not None:
        conf["partitioner"] = partitioner
    states = []
    for lane in (True, False):
        p, admitted = _producer(lane, **conf)
        clock = [p._engine._now()]
        p._engine._now = functools.partial(clock.__getitem__, 0)  # type: ignore[method-assign]
        try:
            for table, wait in steps:
                clock[0] += wait
                assert produce_arrow(p, table, TOPIC, on_delivery=_done).rows == table.num_rows
            state = _state(p, timestamps=False)
            records = [r for *_, rows in state[0] for r in rows]
            assert len(records) == 300 * len(steps)
            hashed = (lambda k: (murmur2(k) & 0x7FFFFFFF) % 4) if partitioner else (lambda k: zlib.crc32(k) % 4)
            assert all(part == hashed(k) for part, k, *_ in records if k)
            assert len({part for part, k, *_ in records if k is None}) > 1  # the timer moved them on
            states.append((state, admitted[0]))
        finally:
            _close(p)
    (with_lane, taken_in_python), (without, _) = states
    assert with_lane == without
    assert taken_in_python < 300 * len(steps) // 20  # the lane took the rows, Python chose the new partitions
