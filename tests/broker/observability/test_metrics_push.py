"""Client metrics push (KIP-714), judged by librdkafka's mock cluster: the same scenario on
confluent-kafka and on kafkawire, the mock asking for metrics (``telemetry_set_requested_metrics``)
every 200 ms; compared: the telemetry requests each client sent (the mock's request history) and
the metric names the mock decoded from the pushes (its MOCKTELEMETRY log lines)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import confluent_kafka
import confluent_kafka.admin
import pytest

import kafkawire
import kafkawire.admin
from kafkawire.protocol import error_codes as E
from kafkawire.protocol.apis import GET_TELEMETRY_SUBSCRIPTIONS, PUSH_TELEMETRY
from tests.harness.mock_cluster import MockCluster

pytestmark = pytest.mark.broker

GET, PUSH = GET_TELEMETRY_SUBSCRIPTIONS.key, PUSH_TELEMETRY.key
CLIENTS = {"confluent-kafka": confluent_kafka, "kafkawire": kafkawire}
PRODUCER_NAMES = {
    f"org.apache.kafka.producer.{n}"
    for n in (
        "connection.creation.rate",
        "connection.creation.total",
        "node.request.latency.avg",
        "node.request.latency.max",
        "produce.throttle.time.avg",
        "produce.throttle.time.max",
        "record.queue.time.avg",
        "record.queue.time.max",
        "request.latency.avg",
        "request.latency.max",
    )
}
CONSUMER_NAMES = {
    f"org.apache.kafka.consumer.{n}"
    for n in (
        "connection.creation.rate",
        "connection.creation.total",
        "node.request.latency.avg",
        "node.request.latency.max",
        "coordinator.assigned.partitions",
        "coordinator.rebalance.latency.avg",
        "coordinator.rebalance.latency.max",
        "coordinator.rebalance.latency.total",
        "fetch.manager.fetch.latency.avg",
        "fetch.manager.fetch.latency.max",
        "poll.idle.ratio.avg",
        "coordinator.commit.latency.avg",
        "coordinator.commit.latency.max",
    )
}

# A share consumer's (KIP-932): librdkafka's are its own, with neither connection nor node metrics.
SHARE_CONSUMER_NAMES = {
    f"org.apache.kafka.consumer.share.{n}"
    for n in (
        "poll.idle.ratio.avg",
        "time.between.poll.avg",
        "time.between.poll.max",
        "fetch.manager.fetch.total",
        "fetch.manager.fetch.rate",
        "fetch.manager.fetch.latency.avg",
        "fetch.manager.fetch.latency.max",
        "fetch.manager.acknowledgements.send.total",
        "fetch.manager.acknowledgements.send.rate",
        "fetch.manager.fetch.throttle.time.avg",
        "fetch.manager.fetch.throttle.time.max",
        "coordinator.heartbeat.total",
        "coordinator.heartbeat.rate",
        "fetch.manager.fetch.size.avg",
        "fetch.manager.fetch.size.max",
        "fetch.manager.bytes.consumed.total",
        "fetch.manager.bytes.consumed.rate",
    )
}
NAMES = {"producer": PRODUCER_NAMES, "consumer": CONSUMER_NAMES, "admin": PRODUCER_NAMES}
NAMES["share_consumer"] = SHARE_CONSUMER_NAMES


def _mock(requested: list[str] | None) -> MockCluster:
    cluster = MockCluster(1, keep_log=True)
    if requested is not None:
        cluster.telemetry_set_requested_metrics(requested)
    cluster.telemetry_set_push_interval(200)
    cluster.create_topic("t", 2, 1)
    cluster.sharegroup_set("auto_offset_reset", 1)  # earliest: a share consumer gets what is there
    cluster.sharegroup_set("heartbeat_interval", 200)
    cluster.start_request_tracking()
    return cluster


@pytest.fixture
def cluster() -> Iterator[Callable[[list[str] | None], MockCluster]]:
    made: list[MockCluster] = []

    def make(requested: list[str] | None) -> MockCluster:
        made.append(_mock(requested))
        return made[-1]

    yield make
    for c in made:
        c.close()


def _until(serve: Callable[[], Any], done: Callable[[], bool], budget: float = 60.0) -> None:
    deadline = time.monotonic() + budget
    while not done() and time.monotonic() < deadline:
        serve()
    assert done(), "the condition did not come within the budget"


def _pushes(mc: MockCluster) -> int:
    return len(mc.requests_of(PUSH))


def run(lib: Any, kind: str, mc: MockCluster, extra: dict[str, Any], pushes: int = 2) -> None:
    """One client of ``kind`` on ``mc``: some work, until ``pushes`` pushes reached the mock (0:
    until it asked for a subscription three times, each push interval), then closed."""
    conf = {"bootstrap.servers": mc.bootstraps, **extra}
    done = (lambda: _pushes(mc) >= pushes) if pushes else (lambda: len(mc.requests_of(GET)) >= 3)
    if kind == "producer":
        p = lib.Producer(conf)
        for i in range(20):
            p.produce("t", b"v%d" % i, b"k%d" % i)
        p.flush(10)
        _until(lambda: p.poll(0.05), done)
        if hasattr(p, "close"):
            p.close()
        del p
    elif kind == "consumer":
        c = lib.Consumer({**conf, "group.id": "g", "auto.offset.reset": "earliest"})
        c.subscribe(["t"])
        _until(lambda: c.poll(0.05), done)
        c.close()
    elif kind == "share_consumer":
        # the records by a producer that pushes nothing (the mock's history holds the share consumer's alone)
        p = confluent_kafka.Producer({"bootstrap.servers": mc.bootstraps, "enable.metrics.push": False})
        for i in range(20):
            p.produce("t", b"v%d" % i, b"k%d" % i)
        assert p.flush(10) == 0
        s = lib.ShareConsumer({**conf, "group.id": "g"})
        s.subscribe(["t"])
        _until(lambda: s.poll(0.05), done)
        if not pushes:
            time.sleep(1.0)
        s.close()
    else:
        a = lib.admin.AdminClient(conf)
        a.list_topics(timeout=10)
        _until(lambda: a.poll(0.05), done)
        if hasattr(a, "close"):
            a.close()
        del a
    time.sleep(0.2)  # (confluent-kafka's handle is destroyed by the garbage collector)


def telemetry_requests(mc: MockCluster) -> list[int]:
    return [r.api_key for r in mc.get_requests() if r.api_key in (GET, PUSH)]


@pytest.mark.parametrize("kind", ["producer", "consumer", "admin", "share_consumer"])
def test_every_metric_requested_is_pushed_by_both_clients_alike(cluster: Any, kind: str) -> None:
    seen = {}
    for name, lib in CLIENTS.items():
        mc = cluster(["org.apache.kafka."])
        run(lib, kind, mc, {})
        sent = telemetry_requests(mc)
        assert sent[0] == GET and sent.count(GET) == 1 and sent.count(PUSH) >= 2, (name, sent)
        seen[name] = set(mc.pushed_metric_names())
    assert seen["kafkawire"] == seen["confluent-kafka"]
    assert seen["kafkawire"] == NAMES[kind]


@pytest.mark.parametrize(
    ("kind", "prefixes"),
    [
        ("producer", ["org.apache.kafka.producer.record", "org.apache.kafka.producer.node"]),
        ("consumer", ["org.apache.kafka.consumer.coordinator", "org.apache.kafka.consumer.poll"]),
        ("share_consumer", ["org.apache.kafka.consumer.share.coordinator", "org.apache.kafka.consumer.share.poll"]),
        ("share_consumer", ["org.apache.kafka.consumer.coordinator"]),  # the plain consumer's: empty pushes
        ("producer", ["org.apache.kafka.consumer."]),  # nothing of a producer's: empty pushes
    ],
)
def test_requested_prefixes_choose_the_same_metrics(cluster: Any, kind: str, prefixes: list[str]) -> None:
    seen = {}
    for name, lib in CLIENTS.items():
        mc = cluster(prefixes)
        run(lib, kind, mc, {})
        seen[name] = set(mc.pushed_metric_names())
    assert seen["kafkawire"] == seen["confluent-kafka"]
    assert all(any(n.startswith(p) for p in prefixes) for n in seen["kafkawire"])


def test_a_subscription_without_metrics_means_no_push_and_asking_again_each_interval(cluster: Any) -> None:
    for name, lib in CLIENTS.items():
        mc = cluster(None)
        run(lib, "producer", mc, {}, pushes=0)
        sent = telemetry_requests(mc)
        assert PUSH not in sent and sent.count(GET) >= 3, (name, sent)


@pytest.mark.parametrize("kind", ["producer", "consumer", "admin", "share_consumer"])
def test_enable_metrics_push_false_sends_nothing(cluster: Any, kind: str) -> None:
    for name, lib in CLIENTS.items():
        mc = cluster(["org.apache.kafka."])
        conf = {"bootstrap.servers": mc.bootstraps, "enable.metrics.push": False}
        if kind == "producer":
            c = lib.Producer(conf)
        elif kind == "consumer":
            c = lib.Consumer({**conf, "group.id": "g"})
        elif kind == "share_consumer":
            c = lib.ShareConsumer({**conf, "group.id": "g"})
            c.subscribe(["t"])
            c.poll(0.6)  # three push intervals
        else:
            c = lib.admin.AdminClient(conf)
        if kind != "share_consumer":  # (a ShareConsumer has no list_topics)
            c.list_topics(timeout=10)
        time.sleep(0.6)  # three push intervals
        if hasattr(c, "close"):
            c.close()
        del c
        assert telemetry_requests(mc) == [], name


def test_unknown_subscription_id_asks_for_a_new_subscription_at_once(cluster: Any) -> None:
    for name, lib in CLIENTS.items():
        mc = cluster(["org.apache.kafka."])
        mc.push_request_errors(PUSH, [E.UNKNOWN_SUBSCRIPTION_ID])
        run(lib, "producer", mc, {}, pushes=3)
        sent = telemetry_requests(mc)
        # the first push fails: a new GetTelemetrySubscriptions follows it, then pushes go on
        assert sent[:3] == [GET, PUSH, GET] and sent.count(PUSH) >= 3, (name, sent)


def test_a_malformed_push_stops_metrics_push(cluster: Any) -> None:
    for name, lib in CLIENTS.items():
        mc = cluster(["org.apache.kafka."])
        mc.push_request_errors(PUSH, [E.INVALID_RECORD])
        run(lib, "producer", mc, {}, pushes=1)
        time.sleep(0.6)
        assert telemetry_requests(mc) == [GET, PUSH], name


@pytest.mark.parametrize("kind", ["producer", "share_consumer"])
def test_the_last_push_on_close_is_terminating(cluster: Any, kind: str) -> None:
    """kafkawire's own lines say it (the mock does not log the flag): one push with terminating = true,
    last. Unless close() came while a push was in flight: then, as librdkafka, none (its
    schedule_termination sends the final push only from PushScheduled); the test cannot choose."""
    mc = cluster(["org.apache.kafka."])
    lines: list[str] = []
    run(kafkawire, kind, mc, {"debug": "telemetry", "logger": _Adapter(lines)})
    said = [line for line in lines if "terminating = " in line]
    started = [line for line in lines if "Starting telemetry termination in state" in line]
    assert len(started) == 1, started
    assert all(s.endswith("false") for s in said[:-1])
    if started[0].endswith("PushSent"):
        assert said[-1].endswith("terminating = false")
        return
    assert started[0].endswith("PushScheduled"), started
    assert said[-1].endswith("terminating = true")
    # close() waits a second for the last push's answer, as librdkafka does: on a host too loaded to
    # deliver it in that time the client says so, and that push may not have reached the mock
    gave_up = any("Ended waiting for termination" in line for line in lines)
    assert _pushes(mc) in ((len(said) - 1, len(said)) if gave_up else (len(said),))


class _Adapter:
    """A Logger-like object keeping each formatted message."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.name = "keep"

    def log(self, _level: int, fmt: str, *args: Any, **_kw: Any) -> None:
        self.lines.append(fmt % args)

    def debug(self, fmt: str, *args: Any, **kw: Any) -> None:
        self.log(10, fmt, *args, **kw)

    def info(self, fmt: str, *args: Any, **kw: Any) -> None:
        self.log(20, fmt, *args, **kw)

    def warning(self, fmt: str, *args: Any, **kw: Any) -> None:
        self.log(30, fmt, *args, **kw)

    def error(self, fmt: str, *args: Any, **kw: Any) -> None:
        self.log(40, fmt, *args, **kw)

    def exception(self, fmt: str, *args: Any, **kw: Any) -> None:
        self.log(40, fmt, *args, **kw)

    def isEnabledFor(self, _level: int) -> bool:
        return True


def test_kafkawire_mock_cluster_without_the_apis_is_never_asked() -> None:
    """kafkawire.testing's cluster does not offer KIP-714's APIs in ApiVersions: the clients work
    as usual and send neither request (librdkafka's clients choose their telemetry broker so too)."""
    from kafkawire.testing import MockCluster as OwnMock

    with OwnMock(1, topics={"t": 1}) as own:
        conf = {"bootstrap.servers": own.bootstrap_servers(), "debug": "telemetry"}
        lines: list[str] = []
        p = kafkawire.Producer({**conf, "logger": _Adapter(lines)})
        p.produce("t", b"v")
        assert p.flush(10) == 0
        c = kafkawire.Consumer({**conf, "group.id": "g", "auto.offset.reset": "earliest", "logger": _Adapter(lines)})
        c.subscribe(["t"])
        _until(lambda: lines.append("") if c.poll(0.1) is not None else None, lambda: "" in lines)
        c.close()
        a = kafkawire.admin.AdminClient({**conf, "logger": _Adapter(lines)})
        a.list_topics(timeout=10)
        a.close()
        p.close()
        keys = {r.api_key for r in own.requests()}
    assert keys.isdisjoint({GET, PUSH}) and 0 in keys and 1 in keys
    assert not any("Telemetry" in line for line in lines)


def test_a_broker_offering_get_subscriptions_without_push_is_not_asked(cluster: Any) -> None:
    """Tansu offers GetTelemetrySubscriptions alone: a subscription could never be served, so
    kafkawire asks only a broker offering both APIs (README: differs on purpose)."""
    mc = cluster(["org.apache.kafka."])
    mc.set_apiversion(PUSH, -1, -1)
    p = kafkawire.Producer({"bootstrap.servers": mc.bootstraps})
    p.produce("t", b"v")
    assert p.flush(10) == 0
    time.sleep(0.6)
    p.close()
    assert telemetry_requests(mc) == []
