"""Libraries built on confluent-kafka, run unchanged on kafkawire (``python -m kafkawire.run``).

Each application runs twice in child processes against the same Kafka 2.3 broker, with its own
topics and groups: once plainly on confluent-kafka, once under the alias. Both runs must print the
same output and write the same records, and that output must be right (worked out here from the
input). quixstreams: a stateful tumbling-window aggregation (RocksDB state, changelog topics), at
least once and exactly once (transactions; the output read read_committed). FastStream: an async
service that consumes, publishes and batch-consumes.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from tests.frameworks.runner import RUNS
from tests.frameworks.runner import run_program as _run
from tests.harness.judge import Record, consume_all, produce_with_confluent, unique_name
from tests.harness.kafka_broker import KafkaBroker
from tests.harness.topics import create_topic

pytestmark = [pytest.mark.broker, pytest.mark.slow]

WINDOW_MS = 10_000
T0 = 1_700_000_000_000  # a multiple of WINDOW_MS
KEYS = tuple(f"user-{i}" for i in range(5))
PURCHASES = 300


def _purchases() -> list[tuple[str, int, int]]:
    """(key, timestamp, amount) of each input record."""
    return [(KEYS[i % len(KEYS)], T0 + i * 170, (i * 7) % 23) for i in range(PURCHASES)]


def _expected_windows() -> list[dict[str, Any]]:
    windows: dict[tuple[str, int], list[int]] = defaultdict(list)
    for key, timestamp, amount in _purchases():
        windows[(key, timestamp - timestamp % WINDOW_MS)].append(amount)
    return [
        {"_key": key, "start": start, "end": start + WINDOW_MS, "count": len(a), "total": sum(a), "largest": max(a)}
        for (key, start), a in sorted(windows.items())
    ]


def _window(row: dict[str, Any]) -> tuple[str, int]:
    return row["_key"], row["start"]


@pytest.mark.parametrize("guarantee", ["at-least-once", "exactly-once"])
def test_quixstreams_windowed_aggregation(kafka23: KafkaBroker, tmp_path: Path, guarantee: str) -> None:
    pytest.importorskip("quixstreams")
    bootstrap = kafka23.bootstrap()
    source = unique_name("purchases")
    create_topic(bootstrap, source, 2)
    records = [Record(json.dumps({"amount": a}).encode(), k.encode(), timestamp_ms=t) for k, t, a in _purchases()]
    # One late record per partition moves its stream time past every window, so all of them close.
    records += [Record(b'{"amount": 0}', b"zz-close", partition=p, timestamp_ms=T0 + 3_600_000) for p in (0, 1)]
    produce_with_confluent(bootstrap, source, records)
    expected = _expected_windows()

    printed, written = {}, {}
    for on in RUNS:
        sink = unique_name(f"window-totals-{on}")
        args = [bootstrap, unique_name(f"quix-{on}"), source, sink, guarantee, str(tmp_path / on), str(len(expected))]
        printed[on] = [json.loads(line) for line in _run("quix_windows.py", args, on).splitlines()]
        rows = consume_all(bootstrap, sink, len(expected), timeout=30, settle=1.0, isolation_level="read_committed")
        written[on] = sorted(({"_key": m.key().decode(), **json.loads(m.value())} for m in rows), key=_window)

    assert printed["confluent-kafka"] == expected
    assert printed["kafkawire"] == printed["confluent-kafka"]
    assert written["confluent-kafka"] == expected
    assert written["kafkawire"] == written["confluent-kafka"]


def test_faststream_service(kafka23: KafkaBroker) -> None:
    pytest.importorskip("faststream.confluent")
    bootstrap = kafka23.bootstrap()
    orders = 60
    printed = {}
    for on in RUNS:
        args = [
            bootstrap,
            unique_name(f"orders-{on}"),
            unique_name(f"invoices-{on}"),
            unique_name(f"fs-{on}"),
            str(orders),
        ]
        printed[on] = _run("faststream_orders.py", args, on).splitlines()

    invoices = [json.loads(line) for line in printed["confluent-kafka"][:-1]]
    assert [invoice["order_id"] for invoice in invoices] == list(range(orders))
    per_customer = json.loads(printed["confluent-kafka"][-1])
    assert all(ids == sorted(ids) and len(ids) == orders // 4 for ids in per_customer.values())
    assert printed["kafkawire"] == printed["confluent-kafka"]
