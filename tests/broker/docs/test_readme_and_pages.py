"""The README's quick starts and the documentation pages' examples run as written (against Tansu
instead of 127.0.0.1:9092): the README first, then each page in one namespace of its own."""

from __future__ import annotations

import pytest

from kafkawire.local_broker import TansuBroker
from tests.harness.doc_blocks import README, SHARE_BLOCKS, pages, python_blocks, runnable
from tests.harness.mock_cluster import MockCluster

pytestmark = pytest.mark.broker

BLOCKS = runnable(python_blocks(README.read_text()))


def test_readme_has_a_quick_start_for_every_face() -> None:
    text = "\n".join(BLOCKS)
    for face in ("Producer(", ".send(", "SyncProducer(", "AIOProducer(", "Consumer(", "AIOConsumer("):
        assert face in text, f"no quick start shows {face}"


@pytest.mark.slow
def test_quick_starts_run_in_order(tansu: TansuBroker, capsys: pytest.CaptureFixture[str]) -> None:
    namespace: dict[str, object] = {}
    for block in BLOCKS:
        code = block.replace("127.0.0.1:9092", tansu.bootstrap)
        exec(compile(code, str(README), "exec"), namespace)
    out = capsys.readouterr().out
    assert "orders[" in out and "failed" not in out
    ran = 0
    for page in pages():
        namespace = {}
        for block in runnable(python_blocks(page.read_text())):
            exec(compile(block.replace("127.0.0.1:9092", tansu.bootstrap), str(page), "exec"), namespace)
            ran += 1
    assert ran >= 5, "the documentation pages' examples were not found"


@pytest.mark.slow
def test_share_consumer_quick_start_acknowledges_every_job() -> None:
    """The share-consumer block on the mock cluster, "jobs" holding records to accept and one to
    reject: afterwards a confluent-kafka member of the group finds nothing left to deliver."""
    confluent_kafka = pytest.importorskip("confluent_kafka")
    if not hasattr(confluent_kafka, "ShareConsumer"):
        pytest.skip("this confluent-kafka has no ShareConsumer to judge with")
    assert SHARE_BLOCKS, "the README has no share-consumer quick start"
    with MockCluster(3) as mock:
        mock.create_topic("jobs", 2, 1)
        mock.sharegroup_set("auto_offset_reset", 1)  # earliest: the jobs are there before the group
        producer = confluent_kafka.Producer({"bootstrap.servers": mock.bootstraps})
        for i in range(20):
            producer.produce("jobs", value=b"bad" if i == 7 else b"job-%d" % i, partition=i % 2)
        assert producer.flush(10) == 0
        for block in SHARE_BLOCKS:
            exec(compile(block.replace("127.0.0.1:9092", mock.bootstraps), str(README), "exec"), {})
        judge = confluent_kafka.ShareConsumer({"bootstrap.servers": mock.bootstraps, "group.id": "workers"})
        judge.subscribe(["jobs"])
        try:
            left = [m for _ in range(10) for m in judge.poll(0.2) if m.error() is None]
        finally:
            judge.close()
        assert left == []
