"""The C extension against its pure-Python twins: the same bytes, fields and bookkeeping.

``make test`` sets KAFKAWIRE_REQUIRE_NATIVE=1, so there a missing build fails instead of skipping
the comparisons (the rest of the suite then runs on the C code; the pure twins are exercised here
and by a KAFKAWIRE_PURE_PYTHON=1 run of the unit tests).
"""

from __future__ import annotations

import gc
import os
import sys
import threading
import time
import weakref
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkawire.base.message_fields import _MessageFields
from kafkawire.base.model import TIMESTAMP_CREATE_TIME, TIMESTAMP_LOG_APPEND_TIME, Message
from kafkawire.consumer.decode import decode_messages
from kafkawire.native import native
from kafkawire.producer.delivery import serve_delivered, tally_delivered
from kafkawire.producer.pending import PurePendingMessage
from kafkawire.records import LZ4, NONE, BatchBuilder, decode_batches
from kafkawire.records.batch import encode_records

pytestmark = pytest.mark.skipif(
    native is None and os.environ.get("KAFKAWIRE_REQUIRE_NATIVE") != "1", reason="kafkawire._native is not built"
)

INT64_MAX = 2**63 - 1


def test_the_extension_is_built_where_it_is_required() -> None:
    assert native is not None, "kafkawire._native did not build (or KAFKAWIRE_PURE_PYTHON is set)"


def long_blobs(low: int, high: int) -> st.SearchStrategy[bytes]:
    """Long values as a short pattern repeated: what the paths depend on is their length (drawn
    byte by byte, kilobytes took these tests past their timeout on a loaded host)."""
    return st.builds(lambda n, unit: (unit * n)[:n], st.integers(low, high), st.binary(min_size=1, max_size=16))


blobs = st.one_of(st.none(), st.binary(max_size=40), long_blobs(4090, 5000))
headers = st.one_of(
    st.none(),
    st.just([]),
    st.lists(st.tuples(st.text(max_size=8), st.one_of(st.none(), st.binary(max_size=20))), max_size=4),
)
timestamps = st.one_of(st.integers(0, 10_000), st.integers(1_600_000_000_000, 1_800_000_000_000), st.just(INT64_MAX))
records = st.lists(st.tuples(timestamps, blobs, blobs, headers), max_size=30)


@settings(max_examples=300, deadline=None)
@given(first=records, second=records)
def test_encode_records_gives_the_bytes_of_the_python_twin(first: list[Any], second: list[Any]) -> None:
    buf_c, buf_py = bytearray(b"head"), bytearray(b"head")
    state_c: tuple[int, ...] = (0, -1, -1)
    state_py: tuple[int, ...] = (0, -1, -1)
    for part in (first, second):  # a second call carries on from the first's count and timestamps
        state_c = native.encode_records(buf_c, part, *state_c)
        state_py = encode_records(buf_py, part, *state_py)
        assert state_c == state_py
        assert buf_c == buf_py


@settings(max_examples=200, deadline=None)
@given(first=records, second=records, spare=st.integers(0, 3000), plain=st.booleans())
def test_encode_records_over_a_longer_buffer_gives_the_bytes_of_the_python_twin(
    first: list[Any], second: list[Any], spare: int, plain: bool
) -> None:
    """Written at ``end`` of a buffer longer than that (a spare batch buffer): the same bytes up to
    the returned end as the twin's, the buffer grown only when they do not fit, the rest left."""
    buf_c, buf_py = bytearray(b"head" + b"\xee" * spare), bytearray(b"head" + b"\xee" * spare)
    state_c: tuple[int, ...] = (0, -1, -1, 4)
    state_py: tuple[int, ...] = state_c
    parts = [first, second]
    if plain:
        parts = [[native.PendingMessage("t", 0, k, v, None, ts, None, None, 0.0) for ts, k, v, _ in p] for p in parts]
    for part in parts:
        state_c = native.encode_records(buf_c, part, *state_c)
        state_py = encode_records(buf_py, part, *state_py)
        assert state_c == state_py
        assert buf_c == buf_py
        assert len(buf_c) == max(4 + spare, state_c[3])
    fresh = bytearray(b"head")
    state = encode_records(fresh, parts[0], 0, -1, -1)
    encode_records(fresh, parts[1], *state)
    assert buf_c[: state_c[3]] == fresh


def test_encode_records_decodes_to_what_went_in() -> None:
    builder = BatchBuilder()
    sent = [(1_700_000_000_000 + i, b"k%d" % i, b"v" * i, [("h", b"x"), ("n", None)]) for i in range(300)]
    builder.append_records(sent)
    (batch,) = decode_batches(builder.build())
    got = [(r.timestamp, r.key, r.value, r.headers) for r in batch.records]
    assert got == [(t, k, v, h) for t, k, v, h in sent]


@pytest.mark.parametrize("bytes_like", [bytearray, memoryview])
def test_encode_records_takes_bytes_like_fields_as_join_does(bytes_like: Any) -> None:
    record = (5, bytes_like(b"key"), bytes_like(b"value"), [("h", bytes_like(b"hv"))])
    buf_c, buf_py = bytearray(), bytearray()
    assert native.encode_records(buf_c, [record], 0, -1, -1) == encode_records(buf_py, [record], 0, -1, -1)
    assert buf_c == buf_py


@pytest.mark.parametrize(
    "record",
    [
        (5, "text key", b"v", None),  # str where bytes belong
        (5, None, 7, None),
        (5, None, b"v", [("h",)]),  # a header that is not a pair
        (5, None, b"v", [(b"bytes key", b"v")]),  # a header key that is not str
    ],
)
def test_encode_records_refuses_what_the_python_twin_refuses(record: Any) -> None:
    good = (1, None, b"ok", None)
    with pytest.raises((TypeError, AttributeError, ValueError)):  # what unpacking or join raise
        encode_records(bytearray(), [good, record], 0, -1, -1)
    buf = bytearray(b"head")
    with pytest.raises(TypeError):
        native.encode_records(buf, [good, record], 0, -1, -1)
    assert buf == b"head"  # nothing appended, not even the good record


def _pending(kind: Any, i: int, callback: Any, hdrs: Any = None) -> Any:
    value = None if i % 7 == 3 else b"v" * i
    key = None if i % 2 else b"key-%d" % i
    return kind("orders", i % 4, key, value, hdrs, 1_700_000_000_000 + i, callback, None, 10.0 + i / 1000)


@settings(max_examples=200, deadline=None)
@given(key=blobs, value=blobs, hdrs=headers)
def test_pending_message_has_the_python_twins_fields_and_size(key: Any, value: Any, hdrs: Any) -> None:
    args = ("orders", -1, key, value, hdrs, 123, None, None, 4.5)
    c, py = native.PendingMessage(*args), PurePendingMessage(*args)
    fields = ("topic", "partition", "key", "value", "headers", "timestamp", "callback", "future", "enqueued", "size")
    assert [getattr(c, f) for f in fields] == [getattr(py, f) for f in fields]
    c.partition = 2  # the producer sets it once the partitioner has chosen
    assert c.partition == 2


def test_pending_message_timestamp_zero_is_now_in_both() -> None:
    args = ("orders", -1, None, b"v", None, 0, None, None, 4.5)
    before = int(time.time() * 1000)
    c, py = native.PendingMessage(*args), PurePendingMessage(*args)
    after = int(time.time() * 1000)
    assert before <= c.timestamp <= after and before <= py.timestamp <= after


def test_pending_message_is_left_out_of_cyclic_garbage_collection() -> None:
    """On purpose (see native_c/pending.c): the most numerous long-lived objects of a busy producer, never
    reachable from user code; the twin is an ordinary class."""
    assert not gc.is_tracked(native.PendingMessage("t", 0, None, b"v", None, 1, print, None, 0.0))


def _serve(
    serve: Any, kind: Any, raise_at: int | None, base: int, log_append: Any, forwarding: str = "none"
) -> tuple[Any, list[Any]]:
    """``forwarding``: "none"; "live", every third record carries a forwarder standing for the
    callback; "gone", the forwarder stands for nothing (its face was collected)."""
    got: list[Any] = []

    def callback(err: Any, msg: Message) -> None:
        got.append(
            (
                err,
                msg.topic(),
                msg.partition(),
                msg.offset(),
                msg.key(),
                msg.value(),
                msg.headers(),
                msg.timestamp(),
                msg.error(),
                msg.latency(),
                msg.leader_epoch(),
            )
        )
        if len(got) == raise_at:
            raise ValueError("from the callback")

    forward = object()  # what records carry: compared by identity only
    messages = [
        _pending(
            kind,
            i,
            None if i % 5 == 4 else forward if forwarding != "none" and i % 3 == 0 else callback,
            [("h", b"x")] if i % 3 else None,
        )
        for i in range(40)
    ]
    if forwarding == "none":
        outcome = serve(messages, 2, base, log_append, TIMESTAMP_CREATE_TIME, 10.02, Message)
    else:
        target = callback if forwarding == "live" else None
        args = (TIMESTAMP_CREATE_TIME, 10.02, Message, forward, target)
        outcome = serve(messages, 2, base, log_append, *args)
    return outcome, got


@pytest.mark.parametrize("raise_at", [None, 1, 17])
@pytest.mark.parametrize("base", [-1, 0, 1_000])
@pytest.mark.parametrize("log_append", [None, (TIMESTAMP_LOG_APPEND_TIME, 1_700_000_999_000)])
def test_serve_delivered_reports_as_the_python_twin(raise_at: int | None, base: int, log_append: Any) -> None:
    (i_c, served_c, charge_c, exc_c), got_c = _serve(
        native.serve_delivered, native.PendingMessage, raise_at, base, log_append
    )
    (i_py, served_py, charge_py, exc_py), got_py = _serve(
        serve_delivered, PurePendingMessage, raise_at, base, log_append
    )
    assert (i_c, served_c, charge_c) == (i_py, served_py, charge_py)
    assert got_c == got_py
    assert len(got_c) == (raise_at or 30)  # 30 of the 38 records from index 2 have a callback
    if raise_at is None:
        assert exc_c is None and exc_py is None
    else:
        assert isinstance(exc_c, ValueError) and isinstance(exc_py, ValueError)
        assert exc_c.__traceback__ is not None


@pytest.mark.parametrize("raise_at", [None, 7])
@pytest.mark.parametrize("forwarding", ["live", "gone"])
def test_serve_delivered_calls_what_a_forwarder_stands_for_as_the_python_twin(
    raise_at: int | None, forwarding: str
) -> None:
    """The configured callback reaches records as a forwarder (client/dropped.py): reported to what
    it stands for, called directly; to nobody once that is gone, the records counted as served all
    the same (their buffer room is freed by the count)."""
    outcomes = [
        _serve(serve, kind, raise_at, 0, None, forwarding)
        for serve, kind in ((native.serve_delivered, native.PendingMessage), (serve_delivered, PurePendingMessage))
    ]
    (c_outcome, got_c), (py_outcome, got_py) = outcomes
    assert c_outcome[:3] == py_outcome[:3] and got_c == got_py
    with_callback = [i for i in range(2, 40) if i % 5 != 4]
    if forwarding == "live":
        assert len(got_c) == (raise_at or len(with_callback))
        assert [r[3] for r in got_c] == with_callback[: len(got_c)]  # every one, in order, offsets from 0
    elif raise_at is None:
        forwarded = [i for i in with_callback if i % 3 == 0]
        assert [r[3] for r in got_c] == [i for i in with_callback if i not in forwarded]
        assert c_outcome[1] == len(with_callback)  # the forwarded records served, uncalled


def test_delivery_reports_without_headers_are_left_out_of_cyclic_garbage_collection() -> None:
    """As a consumed record: an AIOProducer keeps each report in a pending future, 100,000s of
    them, which every full collection walked. One with headers (a list) stays tracked; a setter
    tracks one again before it can hold anything that leads back to it."""
    got: list[Message] = []
    messages = [
        _pending(native.PendingMessage, i, lambda err, msg: got.append(msg), [("h", b"x")] if i else None)
        for i in range(2)
    ]
    native.serve_delivered(messages, 0, 0, None, TIMESTAMP_CREATE_TIME, 1.0, Message)
    plain, with_headers = got
    assert not gc.is_tracked(plain) and not gc.is_tracked(plain.timestamp())
    assert gc.is_tracked(with_headers)
    plain.set_value([plain])
    assert gc.is_tracked(plain)


def test_serve_delivered_refuses_python_pending_messages() -> None:
    messages = [_pending(PurePendingMessage, 1, print)]
    _, served, _, exc = native.serve_delivered(messages, 0, 0, None, TIMESTAMP_CREATE_TIME, 1.0, Message)
    assert served == 0 and isinstance(exc, TypeError)


def test_encode_records_takes_pending_messages_as_their_four_fields() -> None:
    def records(kind: Any) -> list[Any]:
        return [_pending(kind, i, None, [("h", b"x")] if i % 3 else None) for i in range(50)]

    as_tuples = [(m.timestamp, m.key, m.value, m.headers) for m in records(PurePendingMessage)]
    bufs = [bytearray(), bytearray(), bytearray()]
    native.encode_records(bufs[0], records(native.PendingMessage), 0, -1, -1)
    encode_records(bufs[1], records(PurePendingMessage), 0, -1, -1)
    encode_records(bufs[2], as_tuples, 0, -1, -1)
    assert bufs[0] == bufs[1] == bufs[2]


plain_blobs = st.one_of(st.none(), st.binary(max_size=40), long_blobs(9_000, 12_000))
plain_records = st.lists(st.tuples(timestamps, plain_blobs, plain_blobs, st.sampled_from([None, []])), max_size=30)


@settings(max_examples=150, deadline=None)
@given(first=plain_records, second=plain_records, start=st.sampled_from([0, 3]))
def test_plain_pending_messages_encode_as_the_python_twin_with_the_gil_let_go(
    first: list[Any], second: list[Any], start: int
) -> None:
    """Records of bytes or None without headers take the path that writes without the GIL (from 64 KiB
    a call): byte for byte the Python twin's, over two calls and after records already there."""
    buf_c, buf_py = bytearray(b"head"), bytearray(b"head")
    state_c: tuple[int, ...] = (start, -1 if not start else 5, -1 if not start else 9)
    state_py = state_c
    for part in (first, second):
        pending = [native.PendingMessage("t", 0, k, v, h, ts, None, None, 0.0) for ts, k, v, h in part]
        state_c = native.encode_records(buf_c, pending, *state_c)
        state_py = encode_records(buf_py, [(m.timestamp, m.key, m.value, m.headers) for m in pending], *state_py)
        assert state_c == state_py
        assert buf_c == buf_py


def test_a_batch_written_without_the_gil_lets_another_thread_run_meanwhile() -> None:
    """The point of the plain path: a thread running Python is not stopped by a large batch's encoding.
    The other thread sleeps between ticks, so it needs the GIL only briefly, and the switch interval
    is longer than the test: it can tick only while encode_records has let the GIL go."""
    value = b"v" * 10_000
    big = [native.PendingMessage("t", 0, None, value, None, 1_700_000_000_000, None, None, 0.0) for _ in range(3000)]
    ticks, done = [0], threading.Event()

    def count() -> None:
        while not done.is_set():
            ticks[0] += 1
            time.sleep(0.0005)

    t = threading.Thread(target=count)
    t.start()
    switch = sys.getswitchinterval()
    try:
        time.sleep(0.05)
        sys.setswitchinterval(60.0)  # longer than the loop below
        before = ticks[0]
        deadline = time.monotonic() + 30  # a bound on a hang: it ends at the first tick
        while ticks[0] == before and time.monotonic() < deadline:
            native.encode_records(bytearray(), big, 0, -1, -1)
        advanced = ticks[0] > before
    finally:
        sys.setswitchinterval(switch)
        done.set()
        t.join(10)
    assert advanced


def test_tally_delivered_counts_as_the_python_twin() -> None:
    def records(kind: Any) -> list[Any]:
        out = []
        for i in range(60):
            m = _pending(kind, i, None if i % 4 == 0 else print)
            if i % 9 == 0:
                m.future = object()  # only its presence counts
            out.append(m)
        return out

    assert native.tally_delivered(records(native.PendingMessage)) == tally_delivered(records(PurePendingMessage))
    assert tally_delivered(records(PurePendingMessage))[3] == list(range(0, 60, 9))


def _fetched(records_: list[Any], compression: int, base_offset: int) -> Any:
    builder = BatchBuilder()
    builder.append_records(records_)
    (batch,) = decode_batches(builder.build(compression=compression, base_offset=base_offset), lazy=True)
    return batch


def _decoded_both(batch: Any, min_offset: int, log_append: int = -1) -> tuple[Any, Any]:
    body, pos, end, count = batch.body
    args = (
        body,
        pos,
        end,
        count,
        batch.base_offset,
        batch.base_timestamp,
        log_append,
        min_offset,
        "t",
        3,
        1,
        7,
        Message,
    )
    return native.decode_messages(*args), decode_messages(*args)


@settings(max_examples=200, deadline=None)
@given(
    recs=st.lists(st.tuples(timestamps, blobs, blobs, headers), min_size=1, max_size=30),
    skip=st.integers(0, 31),
    lz4=st.booleans(),
)
def test_decode_messages_gives_the_python_twins_messages(recs: list[Any], skip: int, lz4: bool) -> None:
    batch = _fetched(recs, LZ4 if lz4 else NONE, 1000)
    ours, twin = _decoded_both(batch, 1000 + skip)
    assert ours == twin
    assert [m.offset() for m in ours] == list(range(1000 + min(skip, len(recs)), 1000 + len(recs)))
    for m, (ts, key, value, hdrs) in zip(ours, recs[skip:], strict=True):
        assert (m.topic(), m.partition(), m.key(), m.value(), m.leader_epoch()) == ("t", 3, key, value, 7)
        assert m.headers() == (list(hdrs) or None if hdrs else None)
        assert m.timestamp() == (1, ts)
        assert m.error() is None and m.latency() is None
    log_append, twin_log_append = _decoded_both(batch, 0, log_append=123)
    assert log_append == twin_log_append and {m.timestamp() for m in log_append} == {(1, 123)}


@settings(max_examples=100, deadline=None)
@given(
    recs=st.lists(st.tuples(timestamps, blobs, blobs, headers), min_size=1, max_size=30),
    skip=st.integers(0, 31),
    take=st.integers(0, 31),
)
def test_decode_messages_stops_at_the_stop_offset_as_the_python_twin_does(
    recs: list[Any], skip: int, take: int
) -> None:
    """A slice of a batch (the consumer's room ran out inside it): records in [min, stop) only."""
    batch = _fetched(recs, NONE, 1000)
    body, pos, end, count = batch.body
    args = (
        body,
        pos,
        end,
        count,
        batch.base_offset,
        batch.base_timestamp,
        -1,
        1000 + skip,
        "t",
        3,
        1,
        7,
        Message,
        1000 + skip + take,
    )
    ours, twin = native.decode_messages(*args), decode_messages(*args)
    assert ours == twin
    assert [m.offset() for m in ours] == list(range(1000 + min(skip, len(recs)), 1000 + min(skip + take, len(recs))))


def test_decoded_messages_without_headers_are_left_out_of_cyclic_garbage_collection() -> None:
    """On purpose (see native_c/decode_messages.c): a consumed record's fields cannot reach it back, and a prefetch
    of them would be walked by every collection. One with headers (a list) stays tracked."""
    batch = _fetched([(1, b"k", b"v", []), (2, None, b"w", [("h", b"x")])], NONE, 0)
    plain, with_headers = _decoded_both(batch, 0)[0]
    assert not gc.is_tracked(plain) and not gc.is_tracked(plain.timestamp())
    assert gc.is_tracked(with_headers) and not gc.is_tracked(with_headers.headers()[0])


@pytest.mark.parametrize("setter", ["set_key", "set_value", "set_headers", "set_topic", "set_error"])
def test_a_setter_tracks_a_decoded_message_again_so_a_cycle_through_it_is_collected(setter: str) -> None:
    import weakref

    class Holder:
        message: Any = None

    (m,) = _decoded_both(_fetched([(1, b"k", b"v", [])], NONE, 0), 0)[0]
    assert not gc.is_tracked(m)
    holder = Holder()
    holder.message = m
    getattr(m, setter)(holder)  # m -> holder -> m: only the cycle collector can free them
    assert gc.is_tracked(m)
    gone = weakref.ref(holder)
    del m, holder
    gc.collect()
    assert gone() is None


@settings(max_examples=300, deadline=None)
@given(cut=st.integers(1, 200), junk=st.binary(min_size=1, max_size=8))
def test_decode_messages_refuses_what_the_python_twin_refuses(cut: int, junk: bytes) -> None:
    batch = _fetched([(5, b"key", b"value" * 10, [("h", b"v")]), (6, None, b"x", None)], NONE, 0)
    body, pos, end, count = batch.body
    damaged = [
        (body[: max(pos, end - cut)], pos, max(pos, end - cut), count),  # truncated
        (body[:end] + junk, pos, end + len(junk), count),  # bytes left over
        (body, pos, end, count + 1),  # a record more than the bytes hold
        (bytes(body[:pos]) + junk + bytes(body[pos + len(junk) :]), pos, end, count),  # overwritten
    ]
    for data, p, e, n in damaged:
        args = (data, p, e, n, 0, 0, -1, 0, "t", 0, 1, None, Message)
        ours, twin = native.decode_messages(*args), decode_messages(*args)
        assert ours == twin


@settings(max_examples=150, deadline=None)
@given(
    recs=st.lists(st.tuples(timestamps, blobs, blobs, headers), min_size=1, max_size=30),
    skip=st.integers(0, 31),
    lz4=st.booleans(),
)
def test_decode_columns_gives_the_python_twins_columns(recs: list[Any], skip: int, lz4: bool) -> None:
    pa = pytest.importorskip("pyarrow")
    from kafkawire.consumer import arrow

    batch = _fetched(recs, LZ4 if lz4 else NONE, 1000)
    body, pos, end, count = batch.body
    ours = native.decode_columns(body, pos, end, count, batch.base_offset, batch.base_timestamp, -1, 1000 + skip)
    twin = arrow.decode_columns(body, pos, end, count, batch.base_offset, batch.base_timestamp, -1, 1000 + skip)
    assert ours[0] == twin[0] == max(0, len(recs) - skip)
    got = arrow.columns_of(batch, 1000 + skip, "t", 3).batch
    expected = recs[skip:]
    assert got.schema == arrow.SCHEMA
    assert got.column("key").to_pylist() == [k for _, k, _, _ in expected]
    assert got.column("value").to_pylist() == [v for _, _, v, _ in expected]
    assert got.column("offset").to_pylist() == list(range(1000 + skip, 1000 + len(recs)))
    assert got.column("timestamp").cast(pa.int64()).to_pylist() == [ts for ts, _, _, _ in expected]
    assert set(got.column("topic").to_pylist()) <= {"t"} and set(got.column("partition").to_pylist()) <= {3}
    assert got.column("headers").to_pylist() == [
        [{"key": k, "value": v} for k, v in h] if h else None for *_, h in expected
    ]
    got.validate(full=True)
    n, headers = ours[0], ours[11]
    assert headers == twin[11] == sum(len(h or ()) for *_, h in expected)
    for ours_buf, twin_buf, width in zip(ours[1:3], twin[1:3], (8, 8), strict=True):
        assert ours_buf[: n * width] == twin_buf
    # validity bitmaps (None without nulls, else the same bits for the rows there are), int32 ends, data
    for valid, ends, data in ((3, 4, 5), (6, 7, 8), (9, 10, None)):  # sized for every record: rows skipped leave room
        if ours[valid] is not None:
            mask = [bool(ours[valid][i // 8] >> (i % 8) & 1) for i in range(n)]
            assert twin[valid] is not None and mask == [bool(twin[valid][i // 8] >> (i % 8) & 1) for i in range(n)]
        assert (ours[valid] is None) == (twin[valid] is None) and ours[ends][: (n + 1) * 4] == twin[ends]
        assert data is None or ours[data] == twin[data]
    assert ours[12:] == twin[12:]  # the headers' keys and values: byte for byte


def test_decode_columns_replaces_undecodable_header_keys_as_the_python_twin_does() -> None:
    pytest.importorskip("pyarrow")
    from kafkawire.consumer import arrow

    batch = _fetched([(5, b"k", b"v", [("h\u00e9!", b"x"), ("plain", None)])], NONE, 0)
    body, pos, end, count = batch.body
    data = bytearray(body)
    at = data.index("h\u00e9!".encode(), pos)
    data[at + 1 : at + 3] = b"\xff\xc3"  # not UTF-8: 0xff, then a lead byte without its continuation
    ours = native.decode_columns(bytes(data), pos, end, count, 0, 0, -1, 0)
    twin = arrow.decode_columns(bytes(data), pos, end, count, 0, 0, -1, 0)
    assert ours[11:] == twin[11:] and ours[13] == "h\ufffd\ufffd!plain".encode()


def test_decode_columns_refuses_what_the_python_twin_refuses() -> None:
    from kafkawire.consumer import arrow

    batch = _fetched([(5, b"key", b"value" * 10, [("h", b"v")]), (6, None, b"x", None)], NONE, 0)
    body, pos, end, count = batch.body
    for data, p, e, n in [
        (body[: end - 3], pos, end - 3, count),
        (body, pos, end, count + 1),
        (body[:end] + b"\x00", pos, end + 1, count),
    ]:
        assert native.decode_columns(data, p, e, n, 0, 0, -1, 0) is None
        assert arrow.decode_columns(data, p, e, n, 0, 0, -1, 0) is None


ACCESSORS = (
    "topic",
    "partition",
    "offset",
    "key",
    "value",
    "headers",
    "timestamp",
    "latency",
    "error",
    "leader_epoch",
    "delivery_count",
)


@pytest.mark.parametrize("name", ACCESSORS)
def test_message_fields_accessors_are_the_python_twins(name: str) -> None:
    class Twin(_MessageFields):
        __slots__ = ()

    assert Message.__mro__[1] is native.MessageFields  # the C base where the extension is built
    ours, twin = native.MessageFields(), Twin()
    for m in (ours, twin):  # a field never set: AttributeError, as a slot's
        with pytest.raises(AttributeError):
            getattr(m, name)()
    held = object()
    setattr(ours, f"_{name}", held)
    setattr(twin, f"_{name}", held)
    assert getattr(ours, name)() is held is getattr(twin, name)()


def test_message_fields_collects_a_cycle_through_a_field() -> None:
    m = Message("t", value=b"v")
    m.set_headers([m])  # a cycle: only the collector frees it
    collected = []

    class Marker:
        pass

    marker = Marker()
    m.set_key(marker)
    weakref.finalize(marker, collected.append, True)
    del m, marker
    gc.collect()
    assert collected == [True]
