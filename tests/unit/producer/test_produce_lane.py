"""produce()'s C path (`kafkawire._native` ProduceLane) against the Python path it stands in for.

Two producers get the same records, one with the engine's lane and one without (``_lane`` None:
every record through `ProducerEngine.accept`); their sticky partitioners draw from equally seeded
generators. Both must end with the same batches (records, partitions, byte counts, full flags),
the same buffer counters and the same refusals, and the lane must have taken the common records
(the lane state's count of the path that served each record says which).
No broker: the topic's partition count is put in each producer's metadata as a refresh would.
"""

from __future__ import annotations

import os
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkawire import Producer
from kafkawire.core.lane_state import served
from kafkawire.core.partitioners import BUILTIN_PARTITIONERS
from kafkawire.native import native

pytestmark = pytest.mark.skipif(
    native is None and os.environ.get("KAFKAWIRE_REQUIRE_NATIVE") != "1", reason="kafkawire._native is not built"
)

TOPIC = "lane-topic"


def _producer(lane: bool, **conf: Any) -> tuple[Producer, list[int]]:
    p = Producer(
        {
            "bootstrap.servers": "127.0.0.1:1",
            "linger.ms": 600_000,
            "message.timeout.ms": 900_000,
            **conf,
        }
    )
    engine = p._engine
    engine._sticky._rng = random.Random(7)
    engine.client.metadata.partition_counts = {TOPIC: 4, "other": 2}
    if not lane:
        p._lane = None
    slow = [0]
    accept = p._accept

    def counted(*args: Any) -> None:
        slow[0] += 1
        accept(*args)

    p._accept = counted
    return p, slow


def _state(p: Producer) -> Any:
    engine = p._engine
    batches = []
    for tp, queue in sorted(engine.acc._queues.items()):
        for batch in queue:
            records = [
                (m.topic, m.partition, m.key, m.value, m.headers, m.callback, m.size, m.future) for m in batch.messages
            ]
            batches.append((tp, batch.bytes, batch.full, records))
    sticks = {t: (s.partition, s.produced) for t, s in engine._sticky.topics.items()}
    return batches, engine.state.outstanding, engine.state.buffered_bytes, len(engine.acc), sticks


def _call(p: Producer, record: tuple[Any, ...]) -> Any:
    args, kwargs = record
    try:
        p.produce(*args, **kwargs)
    except BaseException as exc:  # the same refusal from both paths
        return type(exc), str(exc)
    return None


def _done(err: Any, msg: Any) -> None:
    pass


def _other(err: Any, msg: Any) -> None:
    pass


values = st.one_of(st.none(), st.binary(max_size=300), st.text(max_size=5))
keys = st.one_of(st.none(), st.none(), st.sampled_from([b"a", b"b", b"key-3", b""]), st.just("text-key"))
calls = st.tuples(
    st.tuples(st.sampled_from([TOPIC, TOPIC, TOPIC, "other", "unknown", "bad topic!"]), values, keys),
    st.fixed_dictionaries(
        {},
        optional={
            "partition": st.sampled_from([-1, 0, 3, 7, 2**40]),
            "timestamp": st.sampled_from([0, 1_700_000_000_000, -5]),
            "on_delivery": st.sampled_from([_done, None, 42]),
            "callback": st.sampled_from([_other, None]),
            "headers": st.sampled_from([None, [("h", b"v")]]),
        },
    ),
)


@pytest.mark.parametrize("partitioner", ["murmur2_random", "murmur2", "consistent_random", "fnv1a"])
@settings(max_examples=40, deadline=None)
@given(records=st.lists(calls, min_size=1, max_size=120))
def test_the_lane_queues_as_the_python_path(partitioner: str, records: list[Any]) -> None:
    conf = {"batch.size": 700, "batch.num.messages": 9, "queue.buffering.max.messages": 60, "partitioner": partitioner}
    with_lane, _ = _producer(True, **conf)
    without, _ = _producer(False, **conf)
    try:
        for record in records:
            assert _call(with_lane, record) == _call(without, record)
            a, b = _state(with_lane), _state(without)
            # Timestamps of 0 are the clock's: compared apart, as set or not.
            assert a == b
    finally:
        for p in (with_lane, without):
            p.purge()
            p.close(0)


def test_the_lane_takes_the_common_records_keyless_and_keyed() -> None:
    p, slow = _producer(True, **{"batch.size": 1_000_000})
    try:
        for i in range(2_000):
            p.produce(TOPIC, b"v" * 100, None if i % 2 else b"key-%d" % (i % 10), on_delivery=_done)
        # The first record of a topic, of a batch and of each key go through Python; the rest not.
        assert slow[0] < 100
        assert len(p) == 2_000
        assert sum(len(b.messages) for q in p._engine.acc._queues.values() for b in q) == 2_000
    finally:
        p.purge()
        p.close(0)


@pytest.mark.parametrize("name", ["murmur2_random", "murmur2", "consistent_random"])
def test_the_lane_hashes_keys_as_the_python_partitioner(name: str) -> None:
    """The lane computes these partitioners' answers itself (no remembered key): the same as Python's."""
    partitioner = BUILTIN_PARTITIONERS[name]
    rng = random.Random(name)
    keys = [None, b"", b"a", b"ab", b"abc", b"abcd", b"\xff" * 5, b"\x80\x00\x7f"]
    keys += [rng.randbytes(rng.randrange(41)) for _ in range(1_500)]
    for count in (1, 2, 3, 4, 7, 16, 101, 1000):
        p, slow = _producer(True, **{"batch.size": 1_000_000, "partitioner": name})
        p._engine.client.metadata.partition_counts = {TOPIC: count}
        try:
            for key in keys:
                p.produce(TOPIC, b"v", key)
            queued = [m for q in p._engine.acc._queues.values() for b in q for m in b.messages]
            assert len(queued) == len(keys)
            for m in queued:
                expected = partitioner(m.key, count)
                if expected >= 0:  # STICKY (None, or consistent_random's b""): the sticky partitioner's
                    assert m.partition == expected, (m.key, count)
            # Python takes the first record of each partition's batch and of the sticky partition, and
            # consistent_random's empty keys (its STICKY), not the rest.
            empty = sum(1 for key in keys if key is not None and partitioner(key, count) < 0)
            assert slow[0] <= min(count, len(keys)) + 1 + empty
        finally:
            p.purge()
            p.close(0)


def test_records_to_topics_in_turn_join_their_own_topics_batches() -> None:
    """The lane keeps the last topic's queue keys; a record to another topic (or to an equal name in
    another str object) must still find its own topic's queue."""
    with_lane, slow = _producer(True, **{"batch.size": 1_000_000})
    without, _ = _producer(False, **{"batch.size": 1_000_000})
    try:
        for i in range(400):
            topic = (TOPIC, "other", "".join(["oth", "er"]), TOPIC[:4] + TOPIC[4:])[i % 4]
            for p in (with_lane, without):
                p.produce(topic, b"v%d" % i, None if i % 3 else b"k%d" % i)
        assert _state(with_lane) == _state(without)
        for tp, queue in with_lane._engine.acc._queues.items():
            assert {m.topic for b in queue for m in b.messages} == {tp[0]}
        assert slow[0] < 40  # and the lane took most of them
    finally:
        for p in (with_lane, without):
            p.purge()
            p.close(0)


def test_a_closed_producer_refuses_through_the_python_path() -> None:
    p, _ = _producer(True)
    p.produce(TOPIC, b"x")
    p.purge()
    p.close(0)
    with pytest.raises(RuntimeError):
        p.produce(TOPIC, b"x")


def test_produce_keeps_its_signature_and_docstring() -> None:
    import inspect

    params = list(inspect.signature(Producer.produce).parameters)
    assert params == ["self", "topic", "value", "key", "partition", "on_delivery", "timestamp", "headers", "callback"]
    assert Producer.produce.__doc__ and "Queue one record" in Producer.produce.__doc__


def _partitions(p: Producer) -> list[int]:
    """The partition of each record queued, in the order produced."""
    records = [m for q in p._engine.acc._queues.values() for b in q for m in b.messages]
    return [m.partition for m in sorted(records, key=lambda m: m.enqueued)]


def test_the_lane_leaves_a_sticky_partition_when_its_time_is_up() -> None:
    """sticky.partitioning.linger.ms (by default twice linger.ms, librdkafka's timer): a keyless
    record produced after it has passed goes to another partition, on the lane as in Python, and
    produce_batch's C loop does the same; before, it stays (and the lane takes it)."""
    import time

    p, slow = _producer(True, **{"sticky.partitioning.linger.ms": 1})
    try:
        p.produce(TOPIC, b"v")
        p.produce(TOPIC, b"v")  # (within 1 ms or not: either way the answer is the partitioner's)
        time.sleep(0.005)
        p.produce(TOPIC, b"v")
        first, _, third = _partitions(p)
        assert third != first  # moved on (never to the partition it leaves, while others have a leader)
        time.sleep(0.005)
        assert p.produce_batch(TOPIC, [{"value": b"v"}] * 3) == 3
        *_, last = _partitions(p)
        assert last != third
    finally:
        p.purge()
        p.close(0)
    p, slow = _producer(True, **{"sticky.partitioning.linger.ms": 60_000})
    try:
        for _ in range(5):
            p.produce(TOPIC, b"v")
            time.sleep(0.002)
        assert len(set(_partitions(p))) == 1 and slow[0] == 1  # the first record alone chose, in Python
    finally:
        p.purge()
        p.close(0)


def _served_since(p: Producer, before: dict[str, int]) -> dict[str, int]:
    now = served(p._engine.state)
    return {path: now[path] - before[path] for path in now if now[path] != before[path]}


def test_each_record_is_counted_on_the_path_that_served_it() -> None:
    """The lane state counts the records each path queued: a plain record to an open batch is the C
    lane's, produce_batch()'s plain ones the bulk loop's, the first of a batch the Python twin's
    (the lane leaves new batches to it), and headers or a str value the Python path's alone."""
    p, _ = _producer(True, **{"batch.size": 1_000_000})
    try:
        before = served(p._engine.state)
        p.produce(TOPIC, b"first", partition=0)
        assert _served_since(p, before) == {"twin": 1}
        before = served(p._engine.state)
        for _ in range(3):
            p.produce(TOPIC, b"v", partition=0, on_delivery=_done)
        p.produce(TOPIC, b"v", b"key", partition=0)
        assert _served_since(p, before) == {"lane": 4}
        before = served(p._engine.state)
        p.produce(TOPIC, b"v", partition=0, headers=[("h", b"x")])
        p.produce(TOPIC, "text", partition=0)
        assert _served_since(p, before) == {"slow": 2}
        before = served(p._engine.state)
        assert p.produce_batch(TOPIC, [{"value": b"v", "partition": 0}] * 5) == 5
        assert _served_since(p, before) == {"bulk": 5}
        before = served(p._engine.state)
        assert p.produce_batch(TOPIC, [{"value": b"v", "partition": 0, "headers": [("h", b"x")]}] * 2) == 2
        assert _served_since(p, before) == {"slow": 2}
        assert sum(served(p._engine.state).values()) == len(p)
    finally:
        p.purge()
        p.close(0)


def test_a_renamed_slot_fails_the_producers_construction(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lane finds the slots core/lane_state.py names when it is made: a name that is no slot of
    its class fails the Producer at once, instead of every record moving to the Python path."""
    from kafkawire.core.lane_state import LANE_SLOTS

    conf = {"bootstrap.servers": "127.0.0.1:1"}
    monkeypatch.setitem(LANE_SLOTS, "ClusterView", ("partition_count",))
    with pytest.raises(TypeError, match="partition_count"):
        Producer(conf)
    monkeypatch.undo()

    class Renamed:  # the sticky state with its produced bytes renamed
        __slots__ = ("partition", "produced_bytes", "until")

    monkeypatch.setattr("kafkawire.producer.producer_engine._Stick", Renamed)
    with pytest.raises(TypeError, match="produced"):
        Producer(conf)
