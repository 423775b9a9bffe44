"""The order of the events an AIOConsumer program sees, against confluent-kafka's AIOConsumer on
the same broker: leaving the group by unsubscribe() (the revocation served by the next poll()) or by
close() (served before it returns), with async on_revoke and on_commit; and the revocation's commit
answered only once a task on the event loop lets it through, which a loop held by the commit could
never run."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from typing import Any

import confluent_kafka
import confluent_kafka.admin
import confluent_kafka.aio
import pytest

import kafkawire.aio
from kafkawire.local_broker import TansuBroker
from kafkawire.protocol.apis import OFFSET_COMMIT
from tests.harness.judge import judge_config, unique_name
from tests.harness.kafka_broker import KafkaBroker
from tests.harness.proxy import KafkaProxy
from tests.harness.topics import create_topic

pytestmark = pytest.mark.broker


def _partitions(parts: list[Any]) -> list[int]:
    return [tp.partition for tp in parts]


def _ten_records(bootstrap: str) -> str:
    topic = unique_name("aio-leave")
    create_topic(bootstrap, topic, 1)
    producer = confluent_kafka.Producer(judge_config(bootstrap))
    for i in range(10):
        producer.produce(topic, b"v%d" % i, partition=0)
    producer.flush(10)
    return topic


async def _five_read(client: str, bootstrap: str, topic: str, seen: list[Any]) -> Any:
    """A consumer (enable.auto.commit, async on_commit and on_revoke writing to ``seen``) that read
    5 of the topic's 10 records."""

    async def on_commit(err: Any, parts: list[Any]) -> None:
        seen.append(("on_commit", err, [(tp.partition, tp.offset) for tp in parts]))

    async def on_revoke(consumer: Any, parts: list[Any]) -> None:
        seen.append(("revoke", _partitions(parts), _partitions(await consumer.assignment())))

    conf = {
        "bootstrap.servers": bootstrap,
        "group.id": unique_name("aio-leave"),
        "session.timeout.ms": 6000,
        "heartbeat.interval.ms": 1000,
        "auto.offset.reset": "earliest",
        "auto.commit.interval.ms": 60_000,
        "on_commit": on_commit,
    }
    if client == "confluent":
        c: Any = confluent_kafka.aio.AIOConsumer(judge_config(bootstrap, **conf))
    else:
        c = kafkawire.aio.AIOConsumer(conf)
    await c.subscribe([topic], on_revoke=on_revoke)
    got: list[str] = []
    deadline = time.monotonic() + 60
    while len(got) < 5 and time.monotonic() < deadline:
        m = await c.poll(0.5)
        if m is not None and m.error() is None:
            got.append(m.value().decode())
    seen.append(("records", got))
    return c


async def _leaving(client: str, bootstrap: str, topic: str, how: str) -> list[Any]:
    """Read 5 of the topic's 10 records, then leave by ``how``: what the callbacks, the calls and
    on_commit show, in order."""
    seen: list[Any] = []
    c = await _five_read(client, bootstrap, topic, seen)
    if how == "close":
        await c.close()
        seen.append("close returned")
        return seen
    await c.unsubscribe()
    seen.append(("unsubscribe returned", _partitions(await c.assignment())))
    for _ in range(3):
        m = await c.poll(0.3)
        seen.append(("poll", None if m is None else m.value(), _partitions(await c.assignment())))
    await c.close()
    seen.append("close returned")
    return seen


def _reports_apart(seen: list[Any]) -> tuple[list[Any], list[Any]]:
    """The calls, callbacks and records in order, and the on_commit reports, each checked to come
    after on_revoke and before close() returned: where a report falls among the polls depends on
    when the commit's answer came, on both clients (both commit asynchronously)."""
    reports = [x for x in seen if isinstance(x, tuple) and x[0] == "on_commit"]
    rest = [x for x in seen if x not in reports]
    revoked = next(i for i, x in enumerate(seen) if isinstance(x, tuple) and x[0] == "revoke")
    assert all(revoked < seen.index(r) < seen.index("close returned") for r in reports), seen
    return rest, reports


@pytest.mark.parametrize("how", ["unsubscribe, poll", "close"])
def test_aio_leaving_serves_the_revocation_as_confluent_kafka_does(kafka23: KafkaBroker, how: str) -> None:
    """await unsubscribe() keeps the assignment and returns; the next poll() runs on_revoke (which
    still sees the assignment) and gives no record, on_commit of the automatic commit follows;
    close() runs both before it returns."""
    bootstrap = kafka23.bootstrap()
    topic = _ten_records(bootstrap)
    ours = asyncio.run(_leaving("kafkawire", bootstrap, topic, how))
    theirs = asyncio.run(_leaving("confluent", bootstrap, topic, how))
    assert _reports_apart(ours) == _reports_apart(theirs)
    rest, reports = _reports_apart(ours)
    assert ("revoke", [0], [0]) in rest and reports == [("on_commit", None, [(0, 5)])]
    if how != "close":
        assert rest.index(("unsubscribe returned", [0])) < rest.index(("revoke", [0], [0]))


@pytest.fixture(scope="module")
def proxied() -> Iterator[tuple[KafkaProxy, str]]:
    """Tansu behind a proxy that can hold an answer."""
    with KafkaProxy() as proxy, TansuBroker(advertised_port=proxy.port) as broker:
        proxy.start(broker.host, broker.port)
        yield proxy, proxy.address


async def _commit_let_through_by_the_loop(client: str, proxy: KafkaProxy, topic: str) -> list[Any]:
    """Read 5 records, unsubscribe and poll until on_commit: the answer to the revocation's
    OffsetCommit is held by the proxy until a task on the event loop releases it (or 30 s passed,
    which a loop held by the commit would take)."""
    seen: list[Any] = []
    c = await _five_read(client, proxy.address, topic, seen)
    held, released = threading.Event(), threading.Event()

    def hold(body: bytes) -> bytes:
        held.set()
        released.wait(30)
        return body

    async def release() -> None:
        if await asyncio.get_running_loop().run_in_executor(None, held.wait, 30):
            seen.append("answer released by the loop")
            released.set()

    proxy.alter_response(OFFSET_COMMIT.key, hold)
    releasing = asyncio.create_task(release())
    await c.unsubscribe()
    deadline = time.monotonic() + 60
    while not any(x[0] == "on_commit" for x in seen if isinstance(x, tuple)) and time.monotonic() < deadline:
        await c.poll(0.3)
    await releasing
    await c.close()
    return seen


def test_aio_revocation_commit_leaves_the_loop_free(proxied: tuple[KafkaProxy, str]) -> None:
    """The poll() serving the revocation runs on_revoke and starts the automatic commit; its answer
    comes only once a task on the loop lets it through, then on_commit: the loop was not held
    waiting for the commit (it would wait until the commit timed out)."""
    proxy, bootstrap = proxied
    topic = _ten_records(bootstrap)
    ours = asyncio.run(_commit_let_through_by_the_loop("kafkawire", proxy, topic))
    theirs = asyncio.run(_commit_let_through_by_the_loop("confluent", proxy, topic))
    assert ours == theirs
    assert ours[1:] == [("revoke", [0], [0]), "answer released by the loop", ("on_commit", None, [(0, 5)])]


def test_aio_close_leaves_the_group_when_the_revocation_never_ended(kafka23: KafkaBroker) -> None:
    """unsubscribe(), then close() while a poll() awaits the async on_revoke it runs: close() gives
    the revocation up and the member leaves the group at once (its session, 120 s, has not ended
    when close() returns); the poll, cancelled, ends with CancelledError. kafkawire alone: confluent-kafka's poll thread waits on that callback
    for ever, and its close() behind it."""
    bootstrap = kafka23.bootstrap()
    topic = _ten_records(bootstrap)
    group = unique_name("aio-abandoned")
    seen: list[str] = []

    async def run() -> None:
        never = asyncio.Event()

        async def on_revoke(consumer: Any, parts: list[Any]) -> None:
            seen.append("revoke")
            await never.wait()

        conf = {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "session.timeout.ms": 120_000,
            "auto.offset.reset": "earliest",
        }
        c = kafkawire.aio.AIOConsumer(conf)
        await c.subscribe([topic], on_revoke=on_revoke)
        deadline = time.monotonic() + 60
        while await c.poll(0.5) is None and time.monotonic() < deadline:
            pass
        await c.unsubscribe()
        polling = asyncio.create_task(c.poll(5))
        while "revoke" not in seen and not polling.done():
            await asyncio.sleep(0.01)
        await c.close()  # while the poll awaits on_revoke
        polling.cancel()
        with pytest.raises(asyncio.CancelledError):
            await polling

    asyncio.run(run())
    assert seen == ["revoke"]
    admin = confluent_kafka.admin.AdminClient(judge_config(bootstrap))
    assert admin.describe_consumer_groups([group])[group].result(10).members == []
