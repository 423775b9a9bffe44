"""Dropped clients are finished (issue 39 point 6).

A Producer, Consumer, AdminClient or ShareConsumer that becomes unreachable without close() (``del``,
then the collector) stops its IO thread and closes its sockets, as confluent-kafka destroys its
handle: nothing below a face refers to it (client/dropped.py). Each test makes and drops 1,000
clients of one kind, each connected to a real broker first (Tansu; the share consumer on
librdkafka's mock cluster, which serves share groups), then counts the threads and the file
descriptors of the process: none is left. It runs in a process of its own, so that clients other
tests left running cannot open descriptors meanwhile. A producer dropped with a record still
queued says so on the ``kafkawire`` logger.
"""

from __future__ import annotations

import gc
import json
import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from kafkawire import Consumer, Producer, ShareConsumer
from kafkawire.admin import AdminClient
from kafkawire.local_broker import TansuBroker
from kafkawire.protocol.apis import JOIN_GROUP, LEAVE_GROUP
from tests.harness.judge import unique_name
from tests.harness.mock_cluster import MockCluster

pytestmark = pytest.mark.broker

CLIENTS = int(os.environ.get("KW_CLIENTS", "1000"))
WAIT = 30.0
ROOT = Path(__file__).resolve().parents[2]


def make(kind: str, bootstrap: str, topic: str) -> Any:
    """One client of ``kind``, connected (and for a producer, with a record still queued)."""
    if kind == "producer":
        producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 60_000})
        producer.list_topics(timeout=WAIT)
        producer.produce(topic, value=b"left behind")
        return producer
    if kind == "consumer":
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": unique_name("dropped")})
        consumer.list_topics(timeout=WAIT)
        consumer.subscribe([topic])  # a group member, with its timers on the IO thread
        return consumer
    if kind == "admin":
        admin = AdminClient({"bootstrap.servers": bootstrap, "error_cb": lambda _error: None})
        admin.list_topics(timeout=WAIT)
        return admin
    share = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": unique_name("dropped")})
    share.subscribe([topic])
    share.poll(0.01)  # connected, a member
    return share


def _target(fd: str) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return "(closed)"


def child(kind: str, bootstrap: str, topic: str, count: int) -> dict[str, Any]:
    """In the child process: make, use and drop one client (what the process opens once is then
    open before the count), then ``count``; what is left of them, and the warnings said."""
    warnings: list[str] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: warnings.append(f"{record.name}: {record.getMessage()}")  # type: ignore[method-assign]
    logging.getLogger("kafkawire").addHandler(handler)
    for round_count in (1, count):
        gc.collect()
        threads_before = set(threading.enumerate())
        fds_before = set(os.listdir("/proc/self/fd"))
        for i in range(round_count):
            client = make(kind, bootstrap, topic)
            del client
            if i % 100 == 99:
                gc.collect()  # (a face in a reference cycle waits for the collector)
        gc.collect()
        deadline = time.monotonic() + WAIT  # the IO threads stop on their own, waited for by nobody
        for thread in set(threading.enumerate()) - threads_before:
            thread.join(max(0.0, deadline - time.monotonic()))
    return {
        "threads": sorted(t.name for t in set(threading.enumerate()) - threads_before),
        "descriptors": sorted(map(_target, set(os.listdir("/proc/self/fd")) - fds_before)),
        "warnings": warnings,
    }


def drop_many(kind: str, bootstrap: str, topic: str) -> dict[str, Any]:
    code = "import json, sys; from tests.broker.test_dropped_clients import child; print(json.dumps(child(*sys.argv[1:4], int(sys.argv[4]))))"
    done = subprocess.run(
        [sys.executable, "-c", code, kind, bootstrap, topic, str(CLIENTS)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    outcome: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    assert outcome["threads"] == [], "threads left"
    assert outcome["descriptors"] == [], "descriptors left open"
    return outcome


def test_dropped_producers_stop_and_say_what_they_lost(tansu: TansuBroker) -> None:
    warnings = drop_many("producer", f"{tansu.host}:{tansu.port}", unique_name("dropped"))["warnings"]
    dropped = [w for w in warnings if "dropped without close()" in w]
    assert len(dropped) == 1 + CLIENTS, "one per producer (the first round's included)"
    assert dropped[0] == (
        "kafkawire: a Producer was dropped without close(): 1 record(s) still queued or in flight are lost "
        "(call flush() or close() before dropping it)"
    )


def test_dropped_consumers_stop(tansu: TansuBroker) -> None:
    drop_many("consumer", f"{tansu.host}:{tansu.port}", unique_name("dropped"))


def test_dropped_admin_clients_stop(tansu: TansuBroker) -> None:
    drop_many("admin", f"{tansu.host}:{tansu.port}", unique_name("dropped"))


def test_dropped_share_consumers_stop(mock_cluster: MockCluster) -> None:
    topic = unique_name("dropped")
    mock_cluster.create_topic(topic)
    drop_many("share", mock_cluster.bootstraps, topic)


def test_a_dropped_consumer_does_not_leave_its_group(mock_cluster: MockCluster) -> None:
    """Differs on purpose (README): no revocation, commit or LeaveGroup for a consumer nobody can
    hear from any more; the group moves its partitions after session.timeout.ms. (A member that
    joined: its IO thread stops all the same.)"""
    topic = unique_name("dropped")
    mock_cluster.create_topic(topic)
    threads_before = set(threading.enumerate())
    mock_cluster.start_request_tracking()
    consumer = Consumer({"bootstrap.servers": mock_cluster.bootstraps, "group.id": unique_name("dropped")})
    consumer.subscribe([topic])
    deadline = time.monotonic() + WAIT
    while JOIN_GROUP.key not in {r.api_key for r in mock_cluster.get_requests()}:
        assert time.monotonic() < deadline, "never joined"
        consumer.poll(0.1)
    del consumer
    gc.collect()
    mine = set(threading.enumerate()) - threads_before
    for thread in mine:
        thread.join(WAIT)
    assert [t.name for t in mine if t.is_alive()] == []
    assert LEAVE_GROUP.key not in {r.api_key for r in mock_cluster.get_requests()}
