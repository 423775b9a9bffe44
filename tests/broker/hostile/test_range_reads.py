"""Issue 13: the read path (range_reader/offsets.py list_offsets, range_reader/range_fetch.py fetch_range)
against a hostile peer (tests/harness/hostile.py in front of Tansu).

Each case: the call meets the fault and returns or raises a KafkaException with a code (never a
builtin exception, never a hang); once the peer is good the same client reads the partition
exactly. Bombs run in a subprocess that reports how much its memory grew.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kafkawire import Producer
from kafkawire.client.network_client import Client
from kafkawire.local_broker import TansuBroker
from kafkawire.protocol.apis import FETCH, LIST_OFFSETS, METADATA
from kafkawire.protocol.codec import Struct
from kafkawire.protocol.schema import Api
from kafkawire.range_reader import FetchSettings, fetch_range, list_offsets
from kafkawire.range_reader.offsets import EARLIEST, LATEST
from tests.harness.hostile import (
    Exchange,
    Fault,
    HostileProxy,
    advertise,
    cut_body,
    metadata_bomb,
    record_bomb,
    rewrite,
    silent,
    size_prefix,
    truncated,
    wrong_correlation_id,
)
from tests.harness.hostile_checks import FAST, child_rss, escaped_repr, hostile_tansu, outcome
from tests.harness.hostile_scenarios import reader_case
from tests.harness.judge import unique_name

pytestmark = pytest.mark.broker

VALUES = [b"read-%03d" % i for i in range(30)]


@pytest.fixture(scope="module")
def hostile() -> Iterator[tuple[TansuBroker, HostileProxy]]:
    yield from hostile_tansu()


@pytest.fixture(scope="module")
def topic(hostile: tuple[TansuBroker, HostileProxy]) -> str:
    """A topic whose partition 0 holds VALUES, written while the peer is good."""
    _, proxy = hostile
    name = unique_name("hostile-read")
    producer = Producer({"bootstrap.servers": proxy.address, **FAST})
    try:
        producer.list_topics(name, timeout=10)
        for value in VALUES:
            producer.produce(name, value=value, partition=0)
        assert producer.flush(15) == 0
    finally:
        producer.close(10)
    return name


@pytest.fixture(autouse=True)
def good_peer_after(hostile: tuple[TansuBroker, HostileProxy]) -> Iterator[None]:
    yield
    hostile[1].clear()


def _corrupt_crc(body: Struct, ex: Exchange) -> None:
    """Every batch of the answer with one byte of its records flipped (its CRC no longer matches)."""
    for topic in body.responses:
        for part in topic.partitions:
            if part.records:
                data = bytearray(part.records)
                data[-1] ^= 0xFF
                part.records = bytes(data)


CASES: list[tuple[str, Api, Fault, str]] = [
    ("silent", LIST_OFFSETS, silent, ""),
    ("size-negative", FETCH, size_prefix(-1), ""),
    ("truncated", METADATA, truncated(0.5), ""),
    ("wrong-correlation-id", LIST_OFFSETS, wrong_correlation_id(), ""),
    ("undecodable-body", FETCH, cut_body(0.5), ""),
    ("corrupt-crc", FETCH, rewrite(_corrupt_crc), ""),
    ("silent", FETCH, silent, ""),
    ("undecodable-body", LIST_OFFSETS, cut_body(0.5), ""),
]


@pytest.mark.parametrize(
    ("api", "fault", "known"),
    [
        pytest.param(
            api,
            fault,
            known,
            id=f"{name}-{api.name}",
            marks=[pytest.mark.xfail(strict=True, reason=known)] if known else [],
        )
        for name, api, fault, known in CASES
    ],
)
def test_read_path_fault(
    hostile: tuple[TansuBroker, HostileProxy], topic: str, api: Api, fault: Fault, known: str
) -> None:
    _, proxy = hostile
    case = reader_case(proxy, topic, VALUES, api, fault)
    assert case.exercised, "the fault was never applied"
    assert not case.problems, "\n".join(case.problems)


def test_fetch_range_raises_a_kafka_exception_on_a_corrupt_batch(
    hostile: tuple[TansuBroker, HostileProxy], topic: str
) -> None:
    """Every Fetch answer carries a batch whose CRC does not match: fetch_range raises a
    KafkaException with a code (CorruptRecordError used to escape as it is)."""
    _, proxy = hostile
    proxy.on(FETCH, rewrite(_corrupt_crc))
    with Client({"bootstrap.servers": proxy.address, **FAST}) as client:
        result = outcome(lambda: list(fetch_range(client, topic, 0, 0, len(VALUES), FetchSettings(timeout=5))))
    assert result.escaped is None, escaped_repr(result)
    assert result.error is not None


def test_list_offsets_whose_answer_is_lost_raises_a_kafka_exception(
    hostile: tuple[TansuBroker, HostileProxy], topic: str
) -> None:
    """A ListOffsets answer that cannot be decoded (its callback was lost, defect 1): list_offsets
    raises a KafkaException with a code when its time is up, not concurrent.futures' TimeoutError."""
    _, proxy = hostile
    with Client({"bootstrap.servers": proxy.address, **FAST}) as client:
        client.refresh_metadata([topic], timeout=10).result(11)
        proxy.on(LIST_OFFSETS, cut_body(0.5))
        result = outcome(lambda: list_offsets(client, {(topic, 0): LATEST}, timeout=2))
    assert result.escaped is None, escaped_repr(result)
    assert result.error is not None


def test_read_path_recovers_from_an_unresolvable_advertised_host(
    hostile: tuple[TansuBroker, HostileProxy], topic: str
) -> None:
    """One Metadata answer names the broker at a host that cannot resolve (what the mutation run's
    Metadata/reader seed 13 made of "127.0.0.1"); the peer is good at once after. The next
    list_offsets and fetch_range must ask for metadata again and read the partition, not spend
    their whole time on a request queued for the unresolvable address."""
    _, proxy = hostile
    with Client({"bootstrap.servers": proxy.address, **FAST}) as client:
        proxy.on(METADATA, advertise("127.0.\x00\x001", proxy.port), times=1)
        client.refresh_metadata([topic], timeout=10).result(11)
        proxy.clear()
        for _ in range(2):  # each call has 6 s: the second one too used to fail the same way
            earliest = outcome(lambda: list_offsets(client, {(topic, 0): EARLIEST}, timeout=6))
            if earliest.ok:
                break
        assert earliest.ok, earliest.error or escaped_repr(earliest)
        read = outcome(
            lambda: [
                r.value for _, rs in fetch_range(client, topic, 0, 0, len(VALUES), FetchSettings(timeout=6)) for r in rs
            ]
        )
        assert read.ok and read.value == VALUES, read.error or escaped_repr(read)


# --- bombs (issue 13 defect 6), measured in a subprocess ---------------------------------------


def test_defect6_record_batch_bomb_keeps_memory_bounded(hostile: tuple[TansuBroker, HostileProxy], topic: str) -> None:
    """A Fetch answer holding one 11 KB zstd batch of 19 million 7-byte records (it fits the 128 MiB
    decompression cap): the reader must not grow by gigabytes (it used to: +3.7 GB); it raises a
    KafkaException or reads a bounded number of records at a time."""
    _, proxy = hostile
    proxy.on(FETCH, record_bomb(19_000_000))
    report = child_rss(
        "fetch", {"bootstrap": proxy.address, "topic": topic, "end": 19_000_000, "seconds": 10, "conf": FAST}
    )
    growth_mb = (report.get("peak_kb", 0) - report.get("baseline_kb", 0)) / 1024
    assert not report["outcome"].startswith("escaped"), report
    assert growth_mb < 400, f"memory grew {growth_mb:.0f} MB ({report['outcome']}, {report.get('records')} records)"


def test_defect6_batch_over_the_decompression_cap_keeps_memory_bounded(
    hostile: tuple[TansuBroker, HostileProxy], topic: str
) -> None:
    """A batch decompressing to 175 MB (over the 128 MiB cap): refused with a KafkaException, and
    memory grows by at most the cap and a little."""
    _, proxy = hostile
    proxy.on(FETCH, record_bomb(25_000_000))
    report = child_rss("fetch", {"bootstrap": proxy.address, "topic": topic, "end": 100, "seconds": 5, "conf": FAST})
    growth_mb = (report.get("peak_kb", 0) - report.get("baseline_kb", 0)) / 1024
    assert report["outcome"].startswith("KafkaError"), report
    assert growth_mb < 128 + 64, f"memory grew {growth_mb:.0f} MB"


def test_defect6_metadata_bomb_keeps_memory_bounded(hostile: tuple[TansuBroker, HostileProxy]) -> None:
    """Three Metadata answers listing 200,000 brokers (2.3 MB), then good ones: the bombs are
    refused (never seen in the metadata), memory stays flat (it grew by 700 MB), and the client
    lists topics once the peer is good."""
    _, proxy = hostile
    proxy.on(METADATA, metadata_bomb(200_000), times=3)
    report = child_rss("list_topics", {"bootstrap": proxy.address, "seconds": 30, "conf": FAST})
    growth_mb = (report.get("peak_kb", 0) - report.get("baseline_kb", 0)) / 1024
    assert report["outcome"] == "ok", report
    assert report["brokers"] and max(report["brokers"]) == 1, f"brokers listed: {report['brokers']}"
    assert proxy.faults[METADATA.key] >= 3
    # Refused as the codec reads the brokers' count, before building any (1 MB measured; refused
    # after decoding it took about 90 MB, before that 700 MB).
    assert growth_mb < 40, f"memory grew {growth_mb:.0f} MB ({report['outcomes']})"
