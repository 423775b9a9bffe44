"""The consumer's fetch engine against real peers: what confluent-kafka (and kafkawire's Producer)
wrote is handed over by FetchEngine.take(), in order, fairly, within the prefetch bound."""

from __future__ import annotations

from collections.abc import Callable

import confluent_kafka
import pytest

from kafkawire import KafkaError, Producer
from kafkawire.base.model import OFFSET_BEGINNING, OFFSET_END, OFFSET_STORED, TIMESTAMP_CREATE_TIME
from kafkawire.local_broker import TansuBroker
from tests.harness.fetching import settings, taker
from tests.harness.judge import Record, judge_config, produce_with_confluent, unique_name
from tests.harness.kafka_broker import KafkaBroker
from tests.harness.mock_cluster import MockCluster
from tests.harness.topics import create_topic

pytestmark = pytest.mark.broker


def _written(topic_count: int, per_partition: int) -> list[Record]:
    return [
        Record(
            b"v%d-%d" % (p, i),
            key=b"k%d" % i,
            headers=[("h", b"%d" % i)] if i % 2 else (),
            partition=p,
            timestamp_ms=1_700_000_000_000 + i,
        )
        for i in range(per_partition)
        for p in range(topic_count)
    ]


def test_confluent_records_come_back_in_order_per_partition(
    tansu: TansuBroker, topic_name: Callable[[str], str]
) -> None:
    topic = topic_name("fe")
    create_topic(tansu.bootstrap, topic, 3)
    written = _written(3, 300)
    produce_with_confluent(
        tansu.bootstrap, topic, written, config={"compression.type": "lz4", "batch.num.messages": 50}
    )
    with taker(tansu.bootstrap) as t:
        t.engine.assign([((topic, p), OFFSET_BEGINNING, None) for p in range(3)])
        got = t.take(900)
        for p in range(3):
            mine = [m for m in got if m.partition() == p]
            assert [m.offset() for m in mine] == list(range(300))
            for m, rec in zip(mine, [r for r in written if r.partition == p], strict=True):
                assert (m.topic(), m.key(), m.value()) == (topic, rec.key, rec.value)
                assert m.headers() == (list(rec.headers) or None)
                assert m.timestamp() == (TIMESTAMP_CREATE_TIME, rec.timestamp_ms)
                assert m.error() is None and m.latency() is None
            assert t.engine.position((topic, p)) == 300
        assert t.quiet(0.3) == []
        assert sorted(t.engine.assigned()) == [(topic, p) for p in range(3)]


def test_take_is_fair_across_partitions(tansu: TansuBroker, topic_name: Callable[[str], str]) -> None:
    topic = topic_name("fair")
    create_topic(tansu.bootstrap, topic, 4)
    produce_with_confluent(tansu.bootstrap, topic, _written(4, 200))
    with taker(tansu.bootstrap) as t:
        t.engine.assign([((topic, p), 0, None) for p in range(4)])
        # Once every partition has records buffered, takes go round them: an equal share each, or
        # (a share never splits a batch) a head batch each in turn.
        t.until(lambda: all((w := t.engine.watermarks((topic, p))) is not None and w[1] == 200 for p in range(4)))
        first = [t.engine.take(40) for _ in range(4)]
        assert all(len(taken) == 40 for taken in first)
        assert {m.partition() for taken in first for m in taken} == {0, 1, 2, 3}
        first = [m for taken in first for m in taken]
        rest = t.take(800 - 160)
        assert len({(m.partition(), m.offset()) for m in first + rest}) == 800


def test_kafkawire_producer_records_and_seek_backwards_and_forwards(
    tansu: TansuBroker, topic_name: Callable[[str], str]
) -> None:
    topic = topic_name("seek")
    create_topic(tansu.bootstrap, topic, 1)
    p = Producer({"bootstrap.servers": tansu.bootstrap, "linger.ms": 5})
    for i in range(500):
        p.produce(topic, b"r%d" % i, partition=0)
    assert p.flush(30) == 0
    key = (topic, 0)
    with taker(tansu.bootstrap) as t:
        t.engine.assign([(key, 100, None)])
        assert [m.value() for m in t.take(10)] == [b"r%d" % i for i in range(100, 110)]
        assert t.engine.position(key) == 110
        t.engine.seek(key, 20)  # backwards: what was buffered is dropped
        assert t.engine.position(key) == 20
        assert [m.offset() for m in t.take(5)] == [20, 21, 22, 23, 24]
        t.engine.seek(key, 400)  # forwards
        assert [m.offset() for m in t.take(100)] == list(range(400, 500))
        t.engine.seek(key, OFFSET_BEGINNING)
        assert t.take(1)[0].offset() == 0
    p.close()


def test_pause_keeps_the_prefetched_records_and_resume_hands_them_over(
    tansu: TansuBroker, topic_name: Callable[[str], str]
) -> None:
    topic = topic_name("pause")
    create_topic(tansu.bootstrap, topic, 2)
    produce_with_confluent(tansu.bootstrap, topic, _written(2, 100))
    with taker(tansu.bootstrap) as t:
        t.engine.assign([((topic, p), 0, None) for p in range(2)])
        t.until(lambda: all((w := t.engine.watermarks((topic, p))) is not None and w[1] == 100 for p in range(2)))
        t.engine.pause([(topic, 0)])
        got = t.take(100)
        assert {m.partition() for m in got} == {1}
        assert t.quiet(0.3) == []
        assert t.engine.buffered_bytes() > 0  # partition 0's records, kept
        produce_with_confluent(tansu.bootstrap, topic, [Record(b"more", partition=0)])
        t.engine.resume([(topic, 0)])
        got = t.take(101)
        assert [m.offset() for m in got] == list(range(101))
        assert got[-1].value() == b"more"


def test_auto_offset_reset_earliest_latest_error(tansu: TansuBroker, topic_name: Callable[[str], str]) -> None:
    topic = topic_name("reset")
    create_topic(tansu.bootstrap, topic, 1)
    # One record per batch: Tansu's ListOffsets "latest" is the last batch's base offset + 1 (contributing/judges.md)
    produce_with_confluent(tansu.bootstrap, topic, [b"a", b"b", b"c"], config={"batch.num.messages": 1})
    key = (topic, 0)
    with taker(tansu.bootstrap, settings(group_id=unique_name("g"), reset="earliest")) as t:
        t.engine.assign([(key, OFFSET_STORED, None)])  # nothing committed: earliest
        assert [m.value() for m in t.take(3)] == [b"a", b"b", b"c"]
    with taker(tansu.bootstrap, settings(reset="latest")) as t:
        t.engine.assign([(key, OFFSET_STORED, None)])  # no group: auto.offset.reset
        t.until(lambda: t.engine.position(key) is not None)
        produce_with_confluent(tansu.bootstrap, topic, [b"d"])
        assert [m.value() for m in t.take(1)] == [b"d"]
    with taker(tansu.bootstrap, settings(reset="error")) as t:
        t.engine.assign([(key, OFFSET_STORED, None)])
        (event,) = t.take(1, errors=True)
        assert event.error().code() == KafkaError._AUTO_OFFSET_RESET
        assert (event.topic(), event.partition()) == key
        assert t.quiet(0.5) == []  # no fetching until a seek
        t.engine.seek(key, 1)
        assert [m.value() for m in t.take(3)] == [b"b", b"c", b"d"]


def test_offset_out_of_range_per_auto_offset_reset(mock_cluster: MockCluster, topic_name: Callable[[str], str]) -> None:
    """(Tansu answers a fetch past the log end with no records and no error: contributing/judges.md.)"""
    topic = topic_name("oor")
    mock_cluster.create_topic(topic, partitions=1)
    produce_with_confluent(mock_cluster.bootstraps, topic, [b"a", b"b"])
    key = (topic, 0)
    with taker(mock_cluster.bootstraps, settings(reset="earliest")) as t:
        t.engine.assign([(key, 1000, None)])
        assert [m.value() for m in t.take(2)] == [b"a", b"b"]
    with taker(mock_cluster.bootstraps, settings(reset="latest")) as t:
        t.engine.assign([(key, 1000, None)])
        t.until(lambda: t.engine.position(key) == 2)
        produce_with_confluent(mock_cluster.bootstraps, topic, [b"c"])
        assert [m.value() for m in t.take(1)] == [b"c"]
    with taker(mock_cluster.bootstraps, settings(reset="error")) as t:
        t.engine.assign([(key, 99, None)])
        (event,) = t.take(1, errors=True)
        assert event.error().code() == KafkaError._AUTO_OFFSET_RESET
        assert (event.topic(), event.partition(), event.offset()) == (topic, 0, 99)
        assert t.quiet(0.5) == []
        t.engine.seek(key, 0)
        assert [m.value() for m in t.take(3)] == [b"a", b"b", b"c"]
        t.engine.seek(key, OFFSET_END)  # (Tansu's "latest" is off: contributing/judges.md)
        assert t.quiet(0.5) == []
        produce_with_confluent(mock_cluster.bootstraps, topic, [b"late"])
        assert [(m.offset(), m.value()) for m in t.take(1)] == [(3, b"late")]


def test_offset_stored_is_what_a_confluent_consumer_committed(
    tansu: TansuBroker, topic_name: Callable[[str], str]
) -> None:
    topic, group = topic_name("stored"), unique_name("group")
    create_topic(tansu.bootstrap, topic, 2)
    # One record per batch: Tansu's ListOffsets "latest" is the last batch's base offset + 1 (contributing/judges.md)
    produce_with_confluent(tansu.bootstrap, topic, _written(2, 50), config={"batch.num.messages": 1})
    judge = confluent_kafka.Consumer(judge_config(tansu.bootstrap, **{"group.id": group, "enable.auto.commit": False}))
    try:
        judge.commit(offsets=[confluent_kafka.TopicPartition(topic, 1, 42)], asynchronous=False)
    finally:
        judge.close()
    with taker(tansu.bootstrap, settings(group_id=group, reset="latest")) as t:
        t.engine.assign([((topic, p), OFFSET_STORED, None) for p in range(2)])
        got = t.take(8)
        assert [(m.partition(), m.offset()) for m in got] == [(1, o) for o in range(42, 50)]
        assert t.engine.position((topic, 0)) == 50  # none committed: latest


def test_partition_eof_once_per_reaching_the_end(tansu: TansuBroker, topic_name: Callable[[str], str]) -> None:
    topic = topic_name("eof")
    create_topic(tansu.bootstrap, topic, 1)
    produce_with_confluent(tansu.bootstrap, topic, [b"a", b"b"])
    with taker(tansu.bootstrap, settings(enable_partition_eof=True, fetch_wait_max_ms=50)) as t:
        t.engine.assign([((topic, 0), 0, None)])
        got = t.take(3, errors=True)
        assert [m.value() for m in got[:2]] == [b"a", b"b"]
        assert got[2].error().code() == KafkaError._PARTITION_EOF and got[2].offset() == 2
        assert t.quiet(0.5) == []
        produce_with_confluent(tansu.bootstrap, topic, [b"c"])
        got = t.take(2, errors=True)
        assert got[0].value() == b"c"
        assert got[1].error().code() == KafkaError._PARTITION_EOF and got[1].offset() == 3


def check_prefetch_bound(bootstrap: str, topic: str, slack: int) -> None:
    """Nobody takes: fetched bytes held stay within queued.max.messages.kbytes (plus ``slack``),
    and everything comes once taken."""
    value = b"x" * 1000
    produce_with_confluent(
        bootstrap, topic, [Record(value, partition=i % 2) for i in range(6000)], config={"batch.num.messages": 20}
    )
    bound = 256 * 1024
    config = settings(queued_max_messages_kbytes=256, max_partition_fetch_bytes=32 * 1024)
    with taker(bootstrap, config) as t:
        t.engine.assign([((topic, p), 0, None) for p in range(2)])
        t.until(lambda: t.engine.buffered_bytes() > bound // 2)
        samples = []
        for _ in range(20):
            samples.append(t.engine.buffered_bytes())
            t.ready.wait(0.05)
        assert bound // 2 < max(samples) <= bound + slack
        got = t.take(6000, chunk=300)
        assert len({(m.partition(), m.offset()) for m in got}) == 6000
        assert t.engine.buffered_bytes() == 0


def test_prefetch_stays_within_queued_max_messages_kbytes(tansu: TansuBroker, topic_name: Callable[[str], str]) -> None:
    topic = topic_name("mem")
    create_topic(tansu.bootstrap, topic, 2)
    # Tansu fills a Fetch past partition_max_bytes and ends with the batch that crosses max_bytes
    # (contributing/judges.md): one batch of slack there; Kafka 2.3 keeps the bound exactly.
    check_prefetch_bound(tansu.bootstrap, topic, slack=20 * 1100)


def test_prefetch_bound_on_kafka23(kafka23: KafkaBroker, topic_name: Callable[[str], str]) -> None:
    topic = topic_name("mem")
    create_topic(kafka23.bootstrap(), topic, 2)
    check_prefetch_bound(kafka23.bootstrap(), topic, slack=0)


def test_a_backlog_of_large_batches_in_few_of_many_partitions_comes_in_two_rounds(
    kafka23: KafkaBroker, topic_name: Callable[[str], str]
) -> None:
    """8 of 256 partitions hold one ~300 KB batch each, more than an equal share of a Fetch
    (32 MiB / 256 = 128 KiB). Kafka sends a batch past its partition's limit only for the answer's
    first partition: at equal shares the backlog came one partition per Fetch (8 rounds). The
    first answer's high watermarks show which partitions are behind, and the second Fetch gives
    them the room (core/fetch_session.py partition_shares): every record by the third request."""
    bootstrap = kafka23.bootstrap()
    topic = topic_name("backlog")
    create_topic(bootstrap, topic, 256)
    behind = range(0, 256, 32)
    written = [Record(b"%04d" % i + b"x" * 150, partition=p) for p in behind for i in range(2000)]
    produce_with_confluent(bootstrap, topic, written, config={"linger.ms": 1000, "batch.size": 1_000_000})
    # (The Fetch after the second answer waits at the broker for fetch.wait.max.ms: long enough
    # that no fourth is sent while the records are taken, however loaded the host.)
    with taker(bootstrap, settings(fetch_wait_max_ms=30_000)) as t:
        t.engine.assign([((topic, p), OFFSET_BEGINNING, None) for p in range(256)])
        got = t.take(len(written), chunk=1000)
        stats = t.engine.session_stats()
        assert stats["full"] + stats["incremental"] <= 3
    assert sorted((m.partition(), m.offset()) for m in got) == [(p, i) for p in behind for i in range(2000)]


def test_unassign_forgets_the_partition(tansu: TansuBroker, topic_name: Callable[[str], str]) -> None:
    topic = topic_name("unassign")
    create_topic(tansu.bootstrap, topic, 2)
    produce_with_confluent(tansu.bootstrap, topic, _written(2, 20))
    with taker(tansu.bootstrap) as t:
        t.engine.assign([((topic, p), 0, None) for p in range(2)])
        t.until(lambda: t.engine.watermarks((topic, 0)) is not None)
        t.engine.unassign([(topic, 0)])
        assert t.engine.assigned() == [(topic, 1)]
        assert t.engine.position((topic, 0)) is None
        got = t.take(20)
        assert {m.partition() for m in got} == {1}


def test_take_arrow_hands_over_columns(tansu: TansuBroker, topic_name: Callable[[str], str]) -> None:
    pa = pytest.importorskip("pyarrow")
    topic = topic_name("arrow")
    create_topic(tansu.bootstrap, topic, 2)
    written = [
        Record(
            b"v%d" % i,
            key=None if i % 3 == 0 else b"k%d" % i,
            partition=i % 2,
            timestamp_ms=1_700_000_000_000 + i,
            headers=[("h", b"%d" % i), ("schlüssel", None)] if i % 5 else (),
        )
        for i in range(600)
    ]
    produce_with_confluent(
        tansu.bootstrap, topic, written, config={"compression.type": "zstd", "batch.num.messages": 40}
    )
    by_key = {(r.partition, i // 2): r for i, r in enumerate(written)}
    with taker(tansu.bootstrap, settings(enable_partition_eof=True)) as t:
        t.engine.assign([((topic, p), 0, None) for p in range(2)])
        t.until(lambda: all((w := t.engine.watermarks((topic, p))) is not None and w[1] == 300 for p in range(2)))
        first = t.engine.take(5)  # decoded as Messages before the first take_arrow(): converted
        batches = []
        rows = len(first)
        while rows < 600:
            t.ready.clear()
            got = t.engine.take_arrow(128)
            if got is None:
                t.ready.wait(0.5)
                continue
            assert got.num_rows <= 128
            batches.append(got)
            rows += got.num_rows
        table = pa.Table.from_batches(batches)
        assert table.schema.names == [
            "key",
            "value",
            "topic",
            "partition",
            "offset",
            "timestamp",
            "timestampType",
            "headers",
        ]
        seen = {(m.partition(), m.offset()) for m in first}
        for row in table.to_pylist():
            rec = by_key[(row["partition"], row["offset"])]
            assert (row["key"], row["value"], row["topic"], row["timestampType"]) == (rec.key, rec.value, topic, 0)
            assert row["headers"] == ([{"key": k, "value": v} for k, v in rec.headers] or None)
            assert int(row["timestamp"].timestamp() * 1000) == rec.timestamp_ms
            seen.add((row["partition"], row["offset"]))
        assert len(seen) == 600
        assert [t.engine.position((topic, p)) for p in range(2)] == [300, 300]
        # The EOF events met by take_arrow() wait for take(); records come as Messages there too.
        events = t.take(2, errors=True)
        assert {e.error().code() for e in events} == {KafkaError._PARTITION_EOF}
        produce_with_confluent(tansu.bootstrap, topic, [Record(b"late", key=b"k", partition=1, headers=[("h", b"x")])])
        (late,) = t.take(1)
        assert (late.partition(), late.offset(), late.key(), late.value(), late.headers()) == (
            1,
            300,
            b"k",
            b"late",
            [("h", b"x")],
        )


def test_a_partition_of_a_missing_topic_is_reported_once(
    mock_cluster: MockCluster, topic_name: Callable[[str], str]
) -> None:
    topic = topic_name("missing")
    with taker(mock_cluster.bootstraps, settings(fetch_error_backoff_ms=50)) as t:
        t.engine.assign([((topic, 0), 0, None)])
        (event,) = t.take(1, errors=True)
        assert event.error().code() == KafkaError.UNKNOWN_TOPIC_OR_PART
        assert (event.topic(), event.partition()) == (topic, 0)
        assert t.quiet(0.5) == []  # once, while it stays missing
        mock_cluster.create_topic(topic, partitions=1)
        produce_with_confluent(mock_cluster.bootstraps, topic, [b"now"])
        assert [m.value() for m in t.take(1, timeout=60)] == [b"now"]
