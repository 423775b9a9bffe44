"""Dropped clients are finished (issue 39 point 6).

A Producer, Consumer, AdminClient or ShareConsumer that becomes unreachable without close() (``del``,
then the collector) stops its IO thread and closes its sockets, as confluent-kafka destroys its
handle: nothing below a face refers to it (weak references, finalizers). Each test makes and
drops 1,000 clients of one kind, each connected to a real broker first (Tansu; the share consumer
on librdkafka's mock cluster, which serves share groups), then counts the threads and the file
descriptors of the process: none is left. A producer dropped with a record still queued says so
on the ``kafkawire`` logger.
"""

from __future__ import annotations

import gc
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from kafkawire import Consumer, Producer, ShareConsumer
from kafkawire.admin import AdminClient
from kafkawire.local_broker import TansuBroker
from tests.harness.judge import unique_name
from tests.harness.mock_cluster import MockCluster

pytestmark = pytest.mark.broker

CLIENTS = int(os.environ.get("KW_CLIENTS", "1000"))
WAIT = 30.0


def descriptors() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def _target(fd: str) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return "(closed)"


def _wait_for(threads: set[threading.Thread]) -> None:
    """The IO threads stop on their own once told to (nobody waits for them in a finalizer)."""
    deadline = time.monotonic() + WAIT
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))


def _wait_for_kafkawire_threads() -> None:
    _wait_for({t for t in threading.enumerate() if t.name.startswith("kafkawire")})


def drop_many(make: Callable[[], Any]) -> None:
    """Make, use and drop ``CLIENTS`` clients, then check that nothing of them is left. One is
    made and dropped first, so that what the process opens once (and keeps) is there before the
    count; earlier tests' clients are finished by then too."""
    for count in (1, CLIENTS):
        gc.collect()
        _wait_for_kafkawire_threads()
        threads_before = set(threading.enumerate())
        fds_before = descriptors()
        for i in range(count):
            client = make()
            del client
            if i % 100 == 99:
                gc.collect()  # (a face in a reference cycle waits for the collector)
        gc.collect()
        _wait_for(set(threading.enumerate()) - threads_before)
    left = [t.name for t in set(threading.enumerate()) - threads_before]
    assert left == [], f"threads left: {left}"
    opened = descriptors() - fds_before
    assert opened == set(), f"{len(opened)} descriptor(s) left open: {sorted(map(_target, opened))}"


def test_dropped_producers_stop_and_say_what_they_lost(tansu: TansuBroker, caplog: pytest.LogCaptureFixture) -> None:
    bootstrap = f"{tansu.host}:{tansu.port}"
    topic = unique_name("dropped")

    def make() -> Producer:
        producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 60_000})
        producer.list_topics(timeout=WAIT)  # connected
        producer.produce(topic, value=b"left behind")  # still queued when dropped
        return producer

    with caplog.at_level(logging.WARNING, logger="kafkawire"):
        drop_many(make)
    dropped = [r for r in caplog.records if "dropped without close()" in r.getMessage()]
    assert len(dropped) == 1 + CLIENTS, "one per producer (the first round's included)"
    assert all(r.name == "kafkawire" and "a Producer was dropped" in r.getMessage() for r in dropped)
    assert "1 record(s) still queued or in flight are lost" in dropped[0].getMessage()


def test_dropped_consumers_stop(tansu: TansuBroker) -> None:
    bootstrap = f"{tansu.host}:{tansu.port}"
    topic = unique_name("dropped")

    def make() -> Consumer:
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": unique_name("dropped")})
        consumer.list_topics(timeout=WAIT)
        consumer.subscribe([topic])  # a group member, with its timers on the IO thread
        return consumer

    drop_many(make)


def test_dropped_admin_clients_stop(tansu: TansuBroker) -> None:
    bootstrap = f"{tansu.host}:{tansu.port}"
    errors: list[Any] = []

    def make() -> AdminClient:
        admin = AdminClient({"bootstrap.servers": bootstrap, "error_cb": errors.append})
        admin.list_topics(timeout=WAIT)
        return admin

    drop_many(make)


def test_dropped_share_consumers_stop(mock_cluster: MockCluster) -> None:
    topic = unique_name("dropped")
    mock_cluster.create_topic(topic)

    def make() -> ShareConsumer:
        consumer = ShareConsumer({"bootstrap.servers": mock_cluster.bootstraps, "group.id": unique_name("dropped")})
        consumer.subscribe([topic])
        consumer.poll(0.01)  # connected, a member
        return consumer

    drop_many(make)
