"""The producer's public API against real brokers, with confluent-kafka as the judge.

Every test runs on Tansu and on librdkafka's mock cluster (3 brokers) unless it says why not.
What reached the broker is read back by confluent-kafka (`tests.harness.judge.consume_all`);
where the question is "does kafkawire behave like confluent-kafka", the same scenario runs on
both clients against the same broker. Faults (errors, timeouts, brokers down) are tested in
``tests/broker/faults/test_producer.py``; here only the API's contract is.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import confluent_kafka
import pytest

import kafkawire
from kafkawire import (
    TIMESTAMP_CREATE_TIME,
    TIMESTAMP_LOG_APPEND_TIME,
    AIOProducer,
    KafkaError,
    KafkaException,
    Message,
    Producer,
    RecordMetadata,
    SyncProducer,
)
from kafkawire.local_broker import TansuBroker
from tests.harness.judge import consume_all, judge_config
from tests.harness.mock_cluster import MockCluster
from tests.harness.topics import create_topic

pytestmark = pytest.mark.broker

PARTITIONS = 3
T0 = 1_700_000_000_000  # an explicit create time, far from "now"
# Mock quirk: every Produce answer carries log_append_time_ms = 1234, so librdkafka (and we, as it)
# report (TIMESTAMP_LOG_APPEND_TIME, 1234) although the stored records keep their create time.
# test_report_offsets_equal_what_confluent_reads_and_confluent_agrees checks confluent does the same.
MOCK_LOG_APPEND_TIME = (TIMESTAMP_LOG_APPEND_TIME, 1234)


@dataclass
class Target:
    name: str
    bootstrap: str
    create: Callable[[str, int], None]
    mock: MockCluster | None = None


def _tansu_target(broker: TansuBroker) -> Target:
    def create(topic: str, partitions: int) -> None:
        create_topic(broker.bootstrap, topic, partitions)

    return Target("tansu", broker.bootstrap, create)


def _mock_target(cluster: MockCluster) -> Target:
    return Target(
        "mock", cluster.bootstraps, lambda topic, n: cluster.create_topic(topic, partitions=n, replication=3), cluster
    )


@pytest.fixture(params=["tansu", "mock"])
def target(request: pytest.FixtureRequest) -> Target:
    if request.param == "tansu":
        return _tansu_target(request.getfixturevalue("tansu"))
    return _mock_target(request.getfixturevalue("mock_cluster"))


@pytest.fixture
def topic(target: Target, topic_name: Callable[[str], str]) -> str:
    name = topic_name("api")
    target.create(name, PARTITIONS)
    return name


@pytest.fixture
def producer(target: Target) -> Iterator[Producer]:
    p = Producer({"bootstrap.servers": target.bootstrap, "linger.ms": 5})
    yield p
    p.close(5)


def confluent_producer(target: Target, **conf: Any) -> Any:
    return confluent_kafka.Producer(judge_config(target.bootstrap, **{"linger.ms": 5, **conf}))


Reports = list[tuple[KafkaError | None, Message]]


def report_ts(target: Target, create_time: int) -> tuple[int, int]:
    """The timestamp a delivery report carries for a record created at ``create_time``."""
    return MOCK_LOG_APPEND_TIME if target.mock is not None else (TIMESTAMP_CREATE_TIME, create_time)


def collector() -> tuple[Reports, Callable[[KafkaError | None, Message], None]]:
    reports: Reports = []
    return reports, lambda err, msg: reports.append((err, msg))


def read_back(target: Target, topic: str, count: int) -> dict[tuple[int, int], confluent_kafka.Message]:
    """What confluent-kafka reads, by (partition, offset); exactly ``count`` records."""
    got = consume_all(target.bootstrap, topic, count, timeout=20)
    assert len(got) == count, f"the judge read {len(got)} records, expected {count}"
    return {(m.partition(), m.offset()): m for m in got}


def assert_reports_match_broker(reports: Reports, stored: dict[tuple[int, int], confluent_kafka.Message]) -> None:
    """Each successful report names a stored record with the same key, value, headers, timestamp."""
    assert len(reports) == len(stored)
    for err, msg in reports:
        assert err is None and msg.error() is None, err
        partition, offset = msg.partition(), msg.offset()
        assert partition is not None and offset is not None
        read = stored[(partition, offset)]
        assert (read.topic(), read.key(), read.value()) == (msg.topic(), msg.key(), msg.value())
        assert (read.headers() or []) == (msg.headers() or [])
        if msg.timestamp() != MOCK_LOG_APPEND_TIME:
            assert read.timestamp() == msg.timestamp()


# --- 1. round trips -----------------------------------------------------------------------------


def test_round_trip_types_headers_timestamps_partitions(target: Target, topic: str, producer: Producer) -> None:
    reports, cb = collector()
    # The producer has no metadata yet: explicit partitions must survive the wait for it.
    producer.produce(topic, "héllo", "ключ", 0, cb, T0 + 1, [("a", b"1"), ("a", "2"), ("n", None), ("e", b"")])
    producer.produce(
        topic, b"\x00\xff", b"k", partition=1, callback=cb, timestamp=T0 + 2, headers={"s": "x", "b": b"y", "n": None}
    )
    producer.produce(topic, None, b"tombstone", partition=2, on_delivery=cb, timestamp=T0 + 3)
    producer.produce(topic, value=b"no key", partition=0, on_delivery=cb)
    producer.produce(topic, b"z" * 20_000, on_delivery=cb)  # the partitioner's choice
    assert len(producer) == 5
    before = int(time.time() * 1000)
    assert producer.flush(30) == 0
    assert len(producer) == 0

    partitions = {m.value(): m.partition() for _, m in reports}
    assert [partitions[v] for v in (b"h\xc3\xa9llo", b"\x00\xff", None, b"no key")] == [0, 1, 2, 0]
    stored = read_back(target, topic, 5)
    assert_reports_match_broker(reports, stored)

    by_value = {m.value(): m for _, m in reports}
    first = by_value[b"h\xc3\xa9llo"]
    assert first.key() == "ключ".encode()
    assert first.headers() == [("a", b"1"), ("a", b"2"), ("n", None), ("e", b"")]
    assert first.timestamp() == report_ts(target, T0 + 1)
    assert by_value[b"\x00\xff"].headers() == [("s", b"x"), ("b", b"y"), ("n", None)]
    tombstone = by_value[None]
    assert (tombstone.key(), len(tombstone), tombstone.headers()) == (b"tombstone", 0, None)
    no_key = by_value[b"no key"]
    assert no_key.key() is None
    kind, ts = stored[(no_key.partition() or 0, no_key.offset() or 0)].timestamp()
    assert kind == TIMESTAMP_CREATE_TIME and abs(ts - before) < 60_000, "timestamp 0 means now"
    for _, msg in reports:
        assert msg.topic() == topic
        latency = msg.latency()
        assert latency is not None and 0 < latency < 30
    # Offsets are consecutive per partition, as the broker assigned them.
    partition0 = sorted(m.offset() or 0 for _, m in reports if m.partition() == 0)
    assert partition0 == list(range(partition0[0], partition0[0] + len(partition0)))


def test_explicit_partition_survives_waiting_for_metadata(
    target: Target, topic_name: Callable[[str], str], producer: Producer
) -> None:
    """Records produced before their topic's metadata is known keep the partition they name."""
    producer.list_topics(timeout=10)  # the producer's picture of the cluster, without the topic
    late = topic_name("late")
    target.create(late, PARTITIONS)
    reports, cb = collector()
    wanted = [i % PARTITIONS for i in range(12)]
    for i, partition in enumerate(wanted):
        producer.produce(late, b"%d" % i, b"same key", partition, on_delivery=cb)
    # Refused at once if the metadata arrived meanwhile, else reported once it does: either way
    # _UNKNOWN_PARTITION, as with confluent-kafka.
    try:
        producer.produce(late, b"out of range", partition=PARTITIONS, on_delivery=cb)
        refused: KafkaError | None = None
    except KafkaException as exc:
        refused = exc.args[0]
    assert producer.flush(30) == 0
    by_value = {m.value(): (e, m) for e, m in reports}
    assert [by_value[b"%d" % i][1].partition() for i in range(12)] == wanted
    err = refused if refused is not None else by_value[b"out of range"][0]
    assert err is not None and err.code() == KafkaError._UNKNOWN_PARTITION
    stored = read_back(target, late, 12)
    assert sorted(p for p, _ in stored) == sorted(wanted)


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_every_codec(target: Target, topic: str, codec: str) -> None:
    reports, cb = collector()
    with Producer({"bootstrap.servers": target.bootstrap, "compression.type": codec, "linger.ms": 20}) as p:
        for i in range(100):
            p.produce(topic, f"{codec} value {i} " * 20, f"key-{i}", on_delivery=cb, headers=[("i", str(i))])
        assert p.flush(30) == 0
    stored = read_back(target, topic, 100)
    assert_reports_match_broker(reports, stored)
    assert sorted(int(m.headers()[0][1]) for m in stored.values()) == list(range(100))


@pytest.mark.parametrize("acks", ["0", "1", "all"])
def test_acks(target: Target, topic: str, acks: str) -> None:
    reports, cb = collector()
    with Producer({"bootstrap.servers": target.bootstrap, "acks": acks}) as p:
        for i in range(10):
            p.produce(topic, b"%d" % i, partition=1, on_delivery=cb)
        assert p.flush(30) == 0
    assert [err for err, _ in reports] == [None] * 10
    stored = read_back(target, topic, 10)
    if acks == "0":
        # No answer, no offset: as confluent-kafka reports it (checked on the same broker).
        assert [m.offset() for _, m in reports] == [None] * 10
        theirs, their_cb = collector()
        cp = confluent_producer(target, acks=0)
        cp.produce(topic, b"theirs", partition=1, on_delivery=their_cb)
        assert cp.flush(30) == 0
        assert theirs[0][0] is None and theirs[0][1].offset() is None
        assert sorted(m.value() for m in stored.values()) == sorted(b"%d" % i for i in range(10))
    else:
        assert_reports_match_broker(reports, stored)


# --- 2. delivery reports -----------------------------------------------------------------------


def test_report_offsets_equal_what_confluent_reads_and_confluent_agrees(target: Target, topic: str) -> None:
    """The same records through both clients: the reports look alike field by field."""
    ours, our_cb = collector()
    theirs, their_cb = collector()
    cp = confluent_producer(target)
    with Producer({"bootstrap.servers": target.bootstrap}) as p:
        for producer, cb in ((p, our_cb), (cp, their_cb)):
            producer.produce(topic, "v", "k", 2, on_delivery=cb, timestamp=T0, headers=[("h", "x")])
            assert producer.flush(30) == 0
    stored = read_back(target, topic, 2)
    assert_reports_match_broker(ours, {k: v for k, v in stored.items() if k == (2, ours[0][1].offset())})
    (_, mine), (_, their) = ours[0], theirs[0]
    for accessor in ("topic", "partition", "key", "value", "timestamp", "error"):
        assert getattr(mine, accessor)() == getattr(their, accessor)(), accessor
    assert mine.offset() == their.offset() - 1
    assert len(mine) == len(their)
    # confluent-kafka leaves headers out of delivery reports (documented); kafkawire keeps them.
    assert their.headers() is None and mine.headers() == [("h", b"x")]


def test_poll_mode_callbacks_run_in_the_thread_that_polls(target: Target, topic: str, producer: Producer) -> None:
    threads: list[threading.Thread] = []
    producer.produce(topic, b"a", on_delivery=lambda e, m: threads.append(threading.current_thread()))
    worker = threading.Thread(target=lambda: producer.flush(30), name="flusher")
    worker.start()
    worker.join(60)
    assert [t.name for t in threads] == ["flusher"]

    producer.produce(topic, b"b", partition=0, on_delivery=lambda e, m: threads.append(threading.current_thread()))
    producer.send(topic, b"after", partition=0).result(30)  # so "b" is acknowledged, its report queued
    assert len(threads) == 1, "a report in poll mode waits for poll()"
    assert producer.poll(10) == 1
    assert threads[1] is threading.current_thread()


def test_background_reports_need_no_poll(target: Target, topic: str) -> None:
    done = threading.Event()
    threads: list[str] = []
    reports, cb = collector()

    def on_delivery(err: KafkaError | None, msg: Message) -> None:
        threads.append(threading.current_thread().name)
        cb(err, msg)
        if len(reports) == 3:  # (keyless, linger.ms 0: each record may go to its own partition,
            done.set()  # so "boom" may be the last report)
        if msg.value() == b"boom":
            raise ValueError("raised on the report thread: logged, not fatal")

    p = Producer({"bootstrap.servers": target.bootstrap, "delivery.reports": "background", "linger.ms": 0})
    try:
        for value in (b"1", b"boom", b"3"):
            p.produce(topic, value, on_delivery=on_delivery)
        assert done.wait(30), "reports did not arrive without poll()"
        assert threads == ["kafkawire-reports"] * 3
        assert [e for e, _ in reports] == [None] * 3
        assert p.flush(10) == 0 and len(p) == 0
    finally:
        p.close(5)


@pytest.mark.parametrize("impl", ["kafkawire", "confluent"])
def test_callback_exception_from_flush_and_poll_like_confluent(target: Target, topic: str, impl: str) -> None:
    seen: list[bytes] = []

    def cb(err: Any, msg: Any) -> None:
        seen.append(msg.value())
        if msg.value() in (b"2", b"4"):
            raise ValueError(msg.value().decode())

    p: Any = Producer({"bootstrap.servers": target.bootstrap}) if impl == "kafkawire" else confluent_producer(target)
    for value in (b"1", b"2", b"3"):
        p.produce(topic, value, partition=0, on_delivery=cb)
    with pytest.raises(ValueError, match="2"):
        p.flush(30)
    assert seen == [b"1", b"2", b"3"], "flush() serves every report before raising"
    assert len(p) == 0

    p.produce(topic, b"4", partition=0, on_delivery=cb)
    p.produce(topic, b"5", partition=0, on_delivery=cb)
    raised = []
    deadline = time.monotonic() + 30
    while len(seen) < 5 and time.monotonic() < deadline:
        try:
            p.poll(1)
        except ValueError as exc:
            raised.append(str(exc))
    assert raised == ["4"] and seen[3:] == [b"4", b"5"]
    p.flush(10)


# --- 3. len / poll / flush -------------------------------------------------------------------------


def test_len_counts_unserved_reports_and_poll_counts_callbacks(target: Target, topic: str, producer: Producer) -> None:
    reports, cb = collector()
    for i in range(7):
        producer.produce(topic, b"%d" % i, partition=2, on_delivery=cb)
    assert len(producer) == 7
    # A send() future completes on the IO thread; once the last record of the partition is
    # acknowledged, every earlier one is too, and their reports wait for poll().
    producer.send(topic, b"last", partition=2).result(30)
    assert len(producer) == 7 and reports == []
    assert producer.poll(0) == 7
    assert len(producer) == 0 and len(reports) == 7
    assert producer.poll(0) == 0
    start = time.monotonic()
    assert producer.poll(0.2) == 0
    assert time.monotonic() - start >= 0.15, "poll(timeout) waits when nothing comes"
    assert producer.flush(0) == 0


# --- 4. send(), SyncProducer, AIOProducer --------------------------------------------------------


def test_send_future_gives_record_metadata(target: Target, topic: str, producer: Producer) -> None:
    futures = [
        producer.send(topic, "ключ-value", "ключ", 1, T0, [("h", b"1")]),
        producer.send(topic, None, None, partition=1, timestamp=T0 + 1),
        producer.send(topic, b"", b"", partition=0),
    ]
    results = [f.result(30) for f in futures]
    stored = read_back(target, topic, 3)
    for md in results:
        assert isinstance(md, RecordMetadata) and md.topic == topic
        assert md.has_offset() and (md.partition, md.offset) in stored
    first, second, third = results
    assert (first.serialized_key_size, first.serialized_value_size) == (
        len("ключ".encode()),
        len("ключ-value".encode()),
    )
    assert (first.timestamp_type, first.timestamp) == report_ts(target, T0)
    assert (second.serialized_key_size, second.serialized_value_size) == (-1, -1)
    assert second.offset == first.offset + 1 and (second.timestamp_type, second.timestamp) == report_ts(target, T0 + 1)
    assert (third.serialized_key_size, third.serialized_value_size) == (0, 0)
    assert str(first) == f"{topic}-1@{first.offset}"
    assert len(producer) == 0, "send() needs no poll()"


def test_sync_producer(target: Target, topic: str) -> None:
    with SyncProducer({"bootstrap.servers": target.bootstrap}) as sp:
        # A fresh producer: the partition is checked once metadata arrives (through the future).
        with pytest.raises(KafkaException) as exc:
            sp.send(topic, b"nowhere", partition=PARTITIONS + 5)
        assert exc.value.args[0].code() == KafkaError._UNKNOWN_PARTITION
        md = sp.send(topic, b"one", b"k", partition=2, headers={"h": "v"})
        assert isinstance(md, RecordMetadata) and md.partition == 2 and md.offset >= 0
        md2 = sp.send(topic, b"two", partition=2)
        assert md2.offset == md.offset + 1
        # Metadata known now: refused at once.
        with pytest.raises(KafkaException) as exc:
            sp.send(topic, b"nowhere", partition=PARTITIONS)
        assert exc.value.args[0].code() == KafkaError._UNKNOWN_PARTITION
    stored = read_back(target, topic, 2)
    assert stored[(2, md.offset)].headers() == [("h", b"v")]
    assert stored[(2, md2.offset)].value() == b"two"


def test_aio_producer(target: Target, topic: str) -> None:
    async def main() -> tuple[Message, list[Message], int]:
        async with AIOProducer({"bootstrap.servers": target.bootstrap}) as p:
            fut = await p.produce(topic, "v", "k", partition=0, timestamp=T0, headers=[("h", "1"), ("n", None)])
            first = await asyncio.wait_for(fut, 30)
            futures = await asyncio.gather(*(p.produce(topic, b"%d" % i, key=b"%d" % (i % 7)) for i in range(500)))
            many = list(await asyncio.wait_for(asyncio.gather(*futures), 30))
            remaining = await p.flush(10)
            await p.close()
        return first, many, remaining

    first, many, remaining = asyncio.run(main())
    assert remaining == 0
    assert first.error() is None and first.headers() == [("h", b"1"), ("n", None)]
    assert (first.partition(), first.timestamp(), first.key(), first.value()) == (0, report_ts(target, T0), b"k", b"v")
    assert all(m.error() is None for m in many)
    assert len({(m.partition(), m.offset()) for m in [first, *many]}) == 501
    stored = read_back(target, topic, 501)
    assert {(m.partition(), m.offset()) for m in [first, *many]} == set(stored)


def test_aio_producer_failure_raises_from_the_future(target: Target, topic: str) -> None:
    async def main() -> None:
        p = AIOProducer({"bootstrap.servers": target.bootstrap})
        try:
            fut = await p.produce(topic, b"x", partition=PARTITIONS + 1)
            with pytest.raises(KafkaException) as exc:
                await asyncio.wait_for(fut, 30)
            assert exc.value.args[0].code() == KafkaError._UNKNOWN_PARTITION
        finally:
            await p.close()

    asyncio.run(main())


def test_aio_producer_a_failing_callback_does_not_hold_up_other_reports(target: Target, topic: str) -> None:
    """Reports reach the loop in batches; one on_delivery that raises is reported to the loop's
    exception handler, and every other future and callback in its batch still settles."""
    seen: list[int] = []
    errors: list[dict[str, Any]] = []

    def on_delivery(err: KafkaError | None, msg: Message) -> None:
        seen.append(int(msg.value()))
        if int(msg.value()) % 10 == 0:
            raise RuntimeError("user callback failed")

    async def main() -> list[Message]:
        asyncio.get_running_loop().set_exception_handler(lambda _loop, ctx: errors.append(ctx))
        async with AIOProducer({"bootstrap.servers": target.bootstrap, "linger.ms": 20}) as p:
            futures = [await p.produce(topic, b"%d" % i, partition=0, on_delivery=on_delivery) for i in range(100)]
            return list(await asyncio.wait_for(asyncio.gather(*futures), 30))

    delivered = asyncio.run(main())
    assert [int(m.value()) for m in delivered] == list(range(100))
    assert sorted(seen) == list(range(100)) and seen == list(range(100))  # all, in order
    assert len(errors) == 10 and all(isinstance(e["exception"], RuntimeError) for e in errors)


# --- 5. produce_batch ------------------------------------------------------------------------------


def _batch_on(target: Target, topic: str, impl: str) -> tuple[tuple[Any, ...], Reports]:
    """produce_batch() of the same inputs: (comparable outcome, every report)."""
    reports, cb = collector()
    special, special_cb = collector()
    batch: list[dict[str, Any]] = [
        {"value": b"1", "key": b"k"},
        {"value": "2"},
        {"value": b"x" * 2_000_000},  # too large: _error, not queued
        {"value": b"4", "callback": special_cb},
        {"key": b"only key"},
    ]
    p: Any = Producer({"bootstrap.servers": target.bootstrap}) if impl == "kafkawire" else confluent_producer(target)
    queued = p.produce_batch(topic, batch, partition=1, on_delivery=cb)
    assert p.flush(30) == 0
    if impl == "kafkawire":
        p.close(5)
    outcome = (
        queued,
        [m["_error"].name() if "_error" in m else None for m in batch],
        sorted((m.partition(), m.value() or b"", e) for e, m in reports),
        [(m.partition(), m.value(), e) for e, m in special],
    )
    return outcome, reports + special


def test_produce_batch_like_confluent(target: Target, topic: str) -> None:
    ours, our_reports = _batch_on(target, topic, "kafkawire")
    theirs, _ = _batch_on(target, topic, "confluent")
    assert ours == theirs
    assert ours[0] == 4
    stored = read_back(target, topic, 8)
    assert all(partition == 1 for partition, _ in stored)
    mine = {(m.partition(), m.offset()) for _, m in our_reports}
    assert_reports_match_broker(our_reports, {k: v for k, v in stored.items() if k in mine})


def test_produce_batch_larger_than_the_buffer_waits_for_room_with_max_block_ms(target: Target, topic: str) -> None:
    """With max.block.ms set, a batch of more records than ``queue.buffering.max.messages`` waits
    for room as reports are served: the records already admitted from it must be sendable while it
    waits (else no report, so no room, ever comes), and every record is queued and delivered once."""
    reports: Reports = []
    p = Producer(
        {
            "bootstrap.servers": target.bootstrap,
            "linger.ms": 5,
            "queue.buffering.max.messages": 50,
            "max.block.ms": 60_000,
            "on_delivery": lambda err, msg: reports.append((err, msg)),
        }
    )
    try:
        batch = [{"value": b"%d" % i, "partition": i % PARTITIONS} for i in range(700)]
        assert p.produce_batch(topic, batch) == 700
        assert not [m for m in batch if "_error" in m]
        assert p.flush(30) == 0
    finally:
        p.close(5)
    assert [err for err, _ in reports if err is not None] == []
    assert sorted(int(m.value()) for _, m in reports) == list(range(700))
    assert len(read_back(target, topic, 700)) == 700


# --- 6. list_topics --------------------------------------------------------------------------------


def _shape(md: Any, topics: set[str]) -> dict[str, Any]:
    return {
        "cluster_id": md.cluster_id,
        "controller_id": md.controller_id,
        "brokers": {i: (b.id, b.host, b.port) for i, b in md.brokers.items()},
        "topics": {
            name: (
                t.topic,
                t.error,
                {pid: (p.id, p.leader, sorted(p.replicas), sorted(p.isrs), p.error) for pid, p in t.partitions.items()},
            )
            for name, t in md.topics.items()
            if name in topics
        },
    }


def test_list_topics_like_confluent(target: Target, topic: str, topic_name: Callable[[str], str]) -> None:
    other = topic_name("other")
    target.create(other, 1)
    cp = confluent_producer(target)
    with Producer({"bootstrap.servers": target.bootstrap}) as p:
        ours_all, theirs_all = p.list_topics(timeout=10), cp.list_topics(timeout=10)
        ours_one, theirs_one = p.list_topics(topic, timeout=10), cp.list_topics(topic, timeout=10)
    assert {topic, other} <= set(ours_all.topics)
    assert set(ours_all.topics) == set(theirs_all.topics)
    assert _shape(ours_all, {topic, other}) == _shape(theirs_all, {topic, other})
    assert set(ours_one.topics) == set(theirs_one.topics) == {topic}
    assert _shape(ours_one, {topic}) == _shape(theirs_one, {topic})
    assert len(ours_one.topics[topic].partitions) == PARTITIONS
    if target.mock is not None:
        assert sorted(ours_all.brokers) == target.mock.broker_ids
    for md in (ours_all, ours_one):
        # The broker that answered: librdkafka's "host:port/id" name of a broker of the cluster.
        broker = md.brokers[md.orig_broker_id]
        assert md.orig_broker_name == f"{broker.host}:{broker.port}/{broker.id}"
    assert isinstance(ours_all, kafkawire.ClusterMetadata)


# --- 7. close ----------------------------------------------------------------------------------------


def test_close_delivers_everything_once(target: Target, topic: str) -> None:
    counts: dict[bytes, list[KafkaError | None]] = {}
    p = Producer({"bootstrap.servers": target.bootstrap, "linger.ms": 50})
    for i in range(50):
        p.produce(topic, b"%d" % i, on_delivery=lambda e, m: counts.setdefault(m.value(), []).append(e))
    assert p.close() is True
    assert len(counts) == 50 and all(errors == [None] for errors in counts.values())
    assert len(read_back(target, topic, 50)) == 50
    with pytest.raises(RuntimeError):
        p.produce(topic, b"after close")
    assert p.close() is True


def test_context_manager_delivers_on_exit(target: Target, topic: str) -> None:
    reports, cb = collector()
    with Producer({"bootstrap.servers": target.bootstrap, "linger.ms": 50}) as p:
        p.produce(topic, b"inside", on_delivery=cb)
    assert [e for e, _ in reports] == [None]
    read_back(target, topic, 1)
    with pytest.raises(KafkaException):
        p.produce(topic, b"after")


def test_close_fails_what_cannot_be_delivered_once_each(
    mock_cluster: MockCluster, topic_name: Callable[[str], str]
) -> None:
    """Mock only: partition 1's leader is a broker that is down, so its records can never leave.
    (A leaderless partition, ``partition_set_leader(.., -1)``, crashes librdkafka's mock when a
    Produce for it arrives, from confluent-kafka as from us.)"""
    target = _mock_target(mock_cluster)
    topic = topic_name("stuck")
    target.create(topic, 2)
    mock_cluster.partition_set_leader(topic, 0, 1)
    mock_cluster.partition_set_leader(topic, 1, 3)
    counts: dict[bytes, list[KafkaError | None]] = {}
    p = Producer({"bootstrap.servers": target.bootstrap, "linger.ms": 0})
    p.list_topics(topic, timeout=10)
    mock_cluster.broker_set_down(3)

    def cb(err: KafkaError | None, msg: Message) -> None:
        counts.setdefault(msg.value() or b"", []).append(err)

    for i in range(10):
        p.produce(topic, b"ok-%d" % i, partition=0, on_delivery=cb)
        p.produce(topic, b"stuck-%d" % i, partition=1, on_delivery=cb)
    start = time.monotonic()
    assert p.close(1.0) is True
    assert time.monotonic() - start < 10
    assert len(counts) == 20 and all(len(errors) == 1 for errors in counts.values())
    assert all(counts[b"ok-%d" % i] == [None] for i in range(10))
    stuck = [errors[0] for value, errors in counts.items() if value.startswith(b"stuck")]
    assert all(err is not None for err in stuck)
    assert {err.code() for err in stuck if err is not None} <= {KafkaError._PURGE_QUEUE, KafkaError._PURGE_INFLIGHT}
    assert len(read_back(target, topic, 10)) == 10
    mock_cluster.broker_set_up(3)  # a cluster with a broker down takes seconds to destroy
