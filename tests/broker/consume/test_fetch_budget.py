"""A record bomb held to the consumer's limits, on Tansu: 8 partitions, each one zstd batch of
1.9 M empty records (1.5 MB on the wire, about 500 MB as Messages). One Fetch answer brings all of
them back (12 MB). The consumer decodes an answer within one budget, the prefetch's room
(queued.max.messages.kbytes), a batch larger than that in slices, and does it off the lock that
poll()/consume() take. So a consumer that never polls stays within the queue limit plus 100 MiB,
and every record is consumed in the end, each once and in order. How promptly consume(timeout=0.5)
returns meanwhile is a speed claim, not asserted here: the child measures it (consume_max_s,
consume_p99_s, consume_slow) and the test prints it with the report.

The consumer runs in a fresh interpreter (its resident memory is what is measured) and prints
one JSON line; its address space is capped, so that an unbounded decode fails with MemoryError
there instead of taking the machine's memory.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafkawire.client.network_client import Client
from kafkawire.local_broker import TansuBroker
from kafkawire.protocol.apis import PRODUCE
from kafkawire.protocol.primitives import encode_uvarint
from kafkawire.records import ZSTD
from kafkawire.records.compression import compress
from tests.harness.judge import unique_name
from tests.harness.topics import create_topic
from tests.unit.records.test_decoding_budget import _v2_batch

pytestmark = pytest.mark.broker

PARTITIONS = 8
RECORDS = 1_900_000  # per partition, in one batch
QUEUE_KBYTES = 65_536  # queued.max.messages.kbytes' default
SLACK = 100 << 20  # what the consumer may hold past the queue limit (the answer, one partition's decompressed bytes)


def _bomb() -> bytes:
    """One v2 batch of RECORDS empty records (no key, value or headers), zstd."""
    records = []
    for i in range(RECORDS):
        body = (
            b"\x00\x00" + encode_uvarint(i << 1) + b"\x01\x01\x00"
        )  # attributes, ts delta, offset delta, key, value, headers
        records.append(encode_uvarint(len(body) << 1) + body)
    return _v2_batch(bytes(compress(ZSTD, b"".join(records))), RECORDS, ZSTD)


@pytest.fixture(scope="module")
def bombed(tansu: TansuBroker) -> Iterator[str]:
    topic = unique_name("record-bomb")
    create_topic(tansu.bootstrap, topic, PARTITIONS)
    batch = _bomb()
    with Client({"bootstrap.servers": tansu.bootstrap}) as client:
        client.refresh_metadata([topic]).result(10)
        for partition in range(PARTITIONS):
            leader = client.metadata.leader_for(topic, partition)
            assert leader is not None
            body = {
                "transactional_id": None,
                "acks": -1,
                "timeout_ms": 10_000,
                "topic_data": [{"name": topic, "partition_data": [{"index": partition, "records": batch}]}],
            }
            response = client.request(PRODUCE, body, node=leader.node_id).result(30)
            assert response.responses[0].partition_responses[0].error_code == 0
    yield topic


_CHILD = textwrap.dedent(
    """
    import json, resource, sys, time
    from kafkawire import Consumer, TopicPartition

    bootstrap, topic, partitions, total = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])

    def kb(field):
        for line in open("/proc/self/status"):
            if line.startswith(field + ":"):
                return int(line.split()[1])

    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": "bomb-" + topic, "enable.auto.commit": False,
        "queued.max.messages.kbytes": int(sys.argv[5]),
    })
    report = {"baseline_kb": kb("VmRSS")}
    limit = (kb("VmSize") + 3072 * 1024) * 1024  # an unbounded decode fails here, not on the machine
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        rss = []
        for _ in range(40):  # never polled: the prefetch fills up to its limit and stops
            time.sleep(0.25)
            rss.append(kb("VmRSS"))
        report["idle_peak_kb"] = kb("VmHWM")
        report["idle_rss_kb"] = max(rss[-8:])
        count, waits, started = 0, [], time.monotonic()
        expected = [0] * partitions
        while count < total and time.monotonic() - started < 600:
            t0 = time.monotonic()
            got = consumer.consume(10000, timeout=0.5)
            waits.append(time.monotonic() - t0)
            for m in got:
                if m.error() is not None:
                    report.setdefault("errors", []).append(m.error().str())
                    continue
                p = m.partition()
                if m.offset() != expected[p]:  # a record skipped or given twice
                    report.setdefault("out_of_order", []).append((p, expected[p], m.offset()))
                expected[p] = m.offset() + 1
                count += 1
        report["count"] = count
        report["consume_max_s"] = max(waits)
        report["consume_p99_s"] = sorted(waits)[int(len(waits) * 0.99)]
        report["consume_slow"] = sum(1 for w in waits if w > 1.0)
        report["consume_calls"] = len(waits)
        report["seconds"] = time.monotonic() - started
        report["outcome"] = "ok"
    except BaseException as exc:
        report["outcome"] = f"escaped {type(exc).__name__}: {exc}"[:500]
    finally:
        consumer.close()
    report["peak_kb"] = kb("VmHWM")
    print(json.dumps(report), flush=True)
    """
)


@pytest.mark.slow  # (make test's time: CI runs it in test-slow)
def test_a_record_bomb_is_held_to_the_queue_limit_and_every_record_comes(tansu: TansuBroker, bombed: str) -> None:
    root = Path(__file__).resolve().parents[3]
    args = [tansu.bootstrap, bombed, str(PARTITIONS), str(PARTITIONS * RECORDS), str(QUEUE_KBYTES)]
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, *args], capture_output=True, text=True, timeout=900, cwd=root, check=False
    )
    assert out.stdout.strip(), out.stderr[-2000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    print(report)
    assert report["outcome"] == "ok", report
    held = (report["idle_peak_kb"] - report["baseline_kb"]) * 1024
    assert held <= QUEUE_KBYTES * 1024 + SLACK, report  # 2,570 MB before
    assert report["count"] == PARTITIONS * RECORDS, report
    assert "errors" not in report and "out_of_order" not in report, report
