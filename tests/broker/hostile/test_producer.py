"""Issue 13: the Producer against a hostile peer (tests/harness/hostile.py in front of Tansu).

Every case checks, through tests/harness/hostile_scenarios.py: every record ends in exactly one
delivery report, no builtin exception escapes, and once the peer is good again the same producer
delivers (on a new connection). The defect tests reproduce issue 13's defects as the issue
describes them; those not fixed on main yet are marked xfail(strict) with the defect's number.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kafkawire import KafkaError, KafkaException, Producer
from kafkawire.local_broker import TansuBroker
from kafkawire.protocol.apis import API_VERSIONS, INIT_PRODUCER_ID, METADATA, PRODUCE
from kafkawire.protocol.schema import Api
from tests.harness.hostile import (
    Fault,
    HostileProxy,
    advertise,
    api_versions_ranges,
    cut_body,
    duplicated,
    garbage,
    silent,
    size_prefix,
    trickle,
    truncated,
    wrong_correlation_id,
)
from tests.harness.hostile_checks import FAST, Reports, child_rss, hostile_tansu
from tests.harness.hostile_scenarios import producer_case, wait_until
from tests.harness.judge import unique_name

pytestmark = pytest.mark.broker


@pytest.fixture(scope="module")
def hostile() -> Iterator[tuple[TansuBroker, HostileProxy]]:
    yield from hostile_tansu()


@pytest.fixture(scope="module")
def topic(hostile: tuple[TansuBroker, HostileProxy]) -> str:
    _, proxy = hostile
    name = unique_name("hostile-prod")
    producer = Producer({"bootstrap.servers": proxy.address, **FAST})
    try:
        producer.list_topics(name, timeout=10)  # auto-created while the peer is good
    finally:
        producer.close(10)
    return name


@pytest.fixture(autouse=True)
def good_peer_after(hostile: tuple[TansuBroker, HostileProxy]) -> Iterator[None]:
    yield
    hostile[1].clear()


WIRE_FAULTS: dict[str, Fault] = {
    "size-2^31-1": size_prefix(2**31 - 1),
    "size-negative": size_prefix(-1),
    "size-min-int32": size_prefix(-(2**31)),
    "truncated-then-closed": truncated(0.5),
    "truncated-then-stalled": truncated(0.5, close=False),
    "wrong-correlation-id": wrong_correlation_id(),
    "answer-twice": duplicated,
    "garbage-body": garbage(1),
    "undecodable-body": cut_body(0.5),
    "silent": silent,
    "one-byte-per-second": trickle(1.0),
}
APIS: dict[str, Api] = {
    "ApiVersions": API_VERSIONS,
    "Metadata": METADATA,
    "InitProducerId": INIT_PRODUCER_ID,
    "Produce": PRODUCE,
}
# The normal run meets each fault on one API; the slow run every fault on every API.
QUICK = [
    ("size-2^31-1", "ApiVersions"),
    ("size-negative", "Produce"),
    ("size-min-int32", "InitProducerId"),
    ("truncated-then-closed", "Metadata"),
    ("truncated-then-stalled", "ApiVersions"),
    ("wrong-correlation-id", "Produce"),
    ("answer-twice", "InitProducerId"),
    ("garbage-body", "Produce"),
    ("undecodable-body", "ApiVersions"),
    ("silent", "Metadata"),
    ("one-byte-per-second", "InitProducerId"),
]
EVERY = [(fault, api) for fault in WIRE_FAULTS for api in APIS if (fault, api) not in QUICK]
# Cases that meet a defect of issue 13 not fixed on main yet: (fault, api) -> reason (strict
# xfail; the fixer removes the entry). Empty: every wire fault passes on every API.
KNOWN: dict[tuple[str, str], str] = {}


def _param(fault: str, api: str) -> Any:
    known = KNOWN.get((fault, api))
    marks = [pytest.mark.xfail(strict=True, reason=known)] if known else []
    return pytest.param(fault, api, marks=marks, id=f"{fault}-{api}")


def _run(proxy: HostileProxy, topic: str, fault: str, api: str) -> None:
    case = producer_case(proxy, topic, APIS[api], WIRE_FAULTS[fault])
    assert case.exercised, "the fault was never applied"
    assert not case.problems, "\n".join(case.problems)


@pytest.mark.parametrize(("fault", "api"), [_param(f, a) for f, a in QUICK])
def test_wire_fault(hostile: tuple[TansuBroker, HostileProxy], topic: str, fault: str, api: str) -> None:
    _run(hostile[1], topic, fault, api)


@pytest.mark.slow
@pytest.mark.rotating
@pytest.mark.parametrize(("fault", "api"), [_param(f, a) for f, a in EVERY])
def test_wire_fault_every_api(hostile: tuple[TansuBroker, HostileProxy], topic: str, fault: str, api: str) -> None:
    _run(hostile[1], topic, fault, api)


# --- issue 13's defects, as the issue describes them -------------------------------------------


def _producer(proxy: HostileProxy, reports: Reports, errors: list[Any], **extra: Any) -> Producer:
    return Producer(
        {
            "bootstrap.servers": proxy.address,
            **FAST,
            "enable.idempotence": True,  # the defects were an idempotent producer's (InitProducerId)
            "message.timeout.ms": 6_000,
            "request.timeout.ms": 3_000,  # the producer bounds Metadata and InitProducerId with it
            "on_delivery": reports.callback,
            "error_cb": errors.append,
            **extra,
        }
    )


@pytest.mark.parametrize("api", [METADATA, INIT_PRODUCER_ID], ids=lambda a: a.name)
def test_defect1_undecodable_answer_does_not_wedge_the_producer(
    hostile: tuple[TansuBroker, HostileProxy], topic: str, api: Api
) -> None:
    """One Metadata (InitProducerId) answer with the right correlation id and a body that cannot be
    decoded; the broker is healthy at once after. The producer must ask again on a new connection
    and deliver records produced later; it used to stay wedged for good."""
    _, proxy = hostile
    reports, errors = Reports(), []  # type: ignore[var-annotated]
    proxy.on(api, cut_body(0.5), times=1)
    producer = _producer(proxy, reports, errors)
    try:
        asked_before = proxy.requests[api.key]
        first = reports.next_value()
        producer.produce(topic, value=first)
        assert proxy.fault_applied.wait(10)
        producer.flush(10)
        later = reports.next_value()
        producer.produce(topic, value=later)
        assert producer.flush(10) == 0, "records produced after the peer turned good got no report"
        assert reports.delivered(later), reports.errors.get(later)
        assert proxy.requests[api.key] > asked_before + 1, f"no new {api.name} request was ever sent"
    finally:
        producer.close(10)
    assert not reports.unreported() and not reports.duplicated()


def test_defect1_undecodable_produce_answer_reports_its_records_before_close(
    hostile: tuple[TansuBroker, HostileProxy], topic: str
) -> None:
    """A Produce answer that cannot be decoded: its records must be retried (or failed) then, not
    held without a report until close() purges them as _PURGE_INFLIGHT."""
    _, proxy = hostile
    reports, errors = Reports(), []  # type: ignore[var-annotated]
    producer = _producer(proxy, reports, errors)
    try:
        producer.list_topics(topic, timeout=10)
        proxy.on(PRODUCE, cut_body(0.5), times=1)
        values = [reports.next_value() for _ in range(5)]
        for value in values:
            producer.produce(topic, value=value)
        assert producer.flush(15) == 0, f"records without a report before close(): {reports.unreported()}"
        assert all(reports.delivered(v) for v in values), reports.errors
    finally:
        producer.close(10)
    assert not reports.duplicated()


def test_defect2_nonsense_api_versions_fail_the_connection_not_the_producer(
    hostile: tuple[TansuBroker, HostileProxy], topic: str
) -> None:
    """Every ApiVersions answer says Produce is 3..-32768 (an empty range) until three connections
    have heard it: each such connection is failed and the next one negotiates again; the producer
    never turns fatal (_UNSUPPORTED_FEATURE) and delivers once the answers are true again."""
    _, proxy = hostile
    reports, errors = Reports(), []  # type: ignore[var-annotated]
    rewritten = proxy.faults[API_VERSIONS.key]
    proxy.on(API_VERSIONS, api_versions_ranges({PRODUCE.key: (3, -32768)}))
    producer = _producer(proxy, reports, errors, **{"message.timeout.ms": 20_000})
    try:
        values = [reports.next_value() for _ in range(3)]
        for value in values:
            producer.produce(topic, value=value)
        heard = wait_until(lambda: proxy.faults[API_VERSIONS.key] >= rewritten + 3 or bool(reports.errors), 10)
        proxy.clear()
        assert heard, "no new connection asked for ApiVersions again (the producer stopped negotiating)"
        assert producer.flush(25) == 0
        fatal = [e for e in errors if isinstance(e, KafkaError) and e.fatal()]
        assert not fatal, fatal
        assert all(reports.delivered(v) for v in values), {v: e.str() for v, e in reports.errors.items()}
    finally:
        producer.close(10)


BAD_HOSTS = {
    "empty-label": "broker1..example.com",
    "label-over-63": "b" * 64 + ".example.com",
}


@pytest.mark.parametrize("host", list(BAD_HOSTS.values()), ids=list(BAD_HOSTS))
def test_defect3_bootstrap_host_that_cannot_be_encoded(host: str, caplog: pytest.LogCaptureFixture) -> None:
    """A bootstrap host whose name makes getaddrinfo raise UnicodeError: no "unexpected error" on
    the IO thread, error_cb hears of it, the record times out with a report, flush() returns."""
    reports, errors = Reports(), []  # type: ignore[var-annotated]
    producer = Producer(
        {
            "bootstrap.servers": f"{host}:9092",
            **FAST,
            "message.timeout.ms": 2_000,
            "on_delivery": reports.callback,
            "error_cb": errors.append,
        }
    )
    try:
        value = reports.next_value()
        producer.produce("t", value=value)
        assert producer.flush(15) == 0
        assert reports.errors[value].code() == KafkaError._MSG_TIMED_OUT
        assert wait_until(lambda: bool(errors), 5), "error_cb never heard of the unresolvable host"
        assert all(isinstance(e, KafkaError) for e in errors)
    finally:
        producer.close(10)
    assert not _unexpected(caplog), _unexpected(caplog)


def _unexpected(caplog: pytest.LogCaptureFixture) -> list[str]:
    """Errors the IO thread caught without knowing them (an exception that escaped its handling)."""
    return [r.getMessage() for r in caplog.records if r.levelname == "ERROR" and "unexpected" in r.getMessage()]


@pytest.mark.parametrize("host", list(BAD_HOSTS.values()), ids=list(BAD_HOSTS))
def test_defect3_advertised_host_that_cannot_be_encoded_then_fixed(
    hostile: tuple[TansuBroker, HostileProxy], topic: str, host: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Metadata advertises the broker at a name getaddrinfo refuses with UnicodeError: the record
    gets a report, error_cb hears of it; once the advertised host is right again, records are
    delivered (they used to fail with _DESTROY "client closed")."""
    _, proxy = hostile
    reports, errors = Reports(), []  # type: ignore[var-annotated]
    # In force before the producer's first Metadata answer: given after it, a record could be
    # delivered to the good address before any answer names the bad one (flush() then serves no error).
    proxy.on(METADATA, advertise(host, proxy.port))
    producer = _producer(proxy, reports, errors, **{"message.timeout.ms": 3_000, "metadata.max.age.ms": 1_000})
    try:
        first = reports.next_value()
        producer.produce(topic, value=first)
        assert producer.flush(15) == 0, "flush() never finished"
        assert wait_until(lambda: bool(errors), 5), "error_cb stayed silent"
        proxy.clear()
        later = reports.next_value()
        producer.produce(topic, value=later)
        producer.flush(15)
        assert reports.delivered(later), reports.errors.get(later)
    finally:
        producer.close(10)
    assert not reports.unreported() and not reports.duplicated()
    assert not _unexpected(caplog), _unexpected(caplog)


def test_defect4_broker_address_change_drains_to_the_new_connection(
    hostile: tuple[TansuBroker, HostileProxy], topic: str
) -> None:
    """Records are queued for a broker (its connection to port B is still negotiating) when the
    metadata says it moved back to port A: the queue goes to the new connection; no record fails
    with _DESTROY "client closed" (the old connection used to be closed with its queue). The
    bootstrap connection retires once the broker is known (as librdkafka's since 2.10), so the
    move back is learned by re-bootstrapping after the connection to B gives up its set-up."""
    _, proxy = hostile
    port_b = proxy.add_listener()
    reports, errors = Reports(), []  # type: ignore[var-annotated]
    producer = _producer(
        proxy, reports, errors, **{"message.timeout.ms": 30_000, "socket.connection.setup.timeout.ms": 3_000}
    )
    try:
        producer.produce(topic, value=reports.next_value())  # connected, producer id known
        assert producer.flush(10) == 0
        proxy.on(METADATA, advertise("127.0.0.1", port_b))
        proxy.on(API_VERSIONS, silent, times=1)  # the connection to port B stays negotiating
        silenced = proxy.faults[API_VERSIONS.key] + 1
        producer.list_topics(topic, timeout=10)  # the broker is at port B now
        queued = [reports.next_value() for _ in range(5)]
        for value in queued:
            producer.produce(topic, value=value)
        assert wait_until(lambda: proxy.faults[API_VERSIONS.key] == silenced), "no connection to port B"
        proxy.clear()
        producer.list_topics(topic, timeout=20)  # ... and back at port A, with records queued for B
        assert producer.flush(25) == 0
        destroyed = {v: e.str() for v, e in reports.errors.items() if e.code() == KafkaError._DESTROY}
        assert not destroyed, f"{len(destroyed)} records failed with _DESTROY: {next(iter(destroyed.values()))}"
        assert all(reports.delivered(v) for v in queued), {v: e.str() for v, e in reports.errors.items()}
    finally:
        producer.close(10)
    assert not reports.unreported() and not reports.duplicated()


@pytest.mark.parametrize("pure", [True, False], ids=["pure-python", "native"])
def test_defect5_timestamp_spread_overflowing_a_varlong(tansu: TansuBroker, pure: bool) -> None:
    """Timestamps -2**63 and 5 in one batch: produce() refuses the one that cannot be encoded with
    a clear error (or both are reported); every accepted record gets exactly one report; close()
    returns. Pure-Python mode runs in a fresh interpreter (the mode is chosen at import)."""
    records = [["low", -(2**63)], ["high", 5], ["plain", 0]]
    report = child_rss(
        "produce",
        {
            "bootstrap": tansu.bootstrap,
            "topic": unique_name("hostile-ts"),
            "records": records,
            "conf": {"linger.ms": 200, "message.timeout.ms": 5_000},
        },
        env={"KAFKAWIRE_PURE_PYTHON": "1"} if pure else {},
    )
    assert report.get("closed") is True, f"close() never returned: {report}"
    refused, reports = report["refused"], report["reports"]
    for value, _ in records:
        if value in refused:
            assert "KafkaException" in refused[value] or "ValueError" in refused[value] or "Overflow" in refused[value]
            assert value not in reports
        else:
            assert len(reports.get(value, [])) == 1, f"{value}: reports {reports.get(value)}"
    assert reports.get("plain") == ["ok"]


@pytest.mark.parametrize("client_id", ["bad-\ud800", "x" * 32_768], ids=["surrogate", "over-32767-bytes"])
def test_defect7_client_id_that_cannot_be_encoded_fails_at_construction(client_id: str) -> None:
    with pytest.raises(KafkaException) as exc:
        Producer({"bootstrap.servers": "127.0.0.1:9", "client.id": client_id})
    assert exc.value.args[0].code() == KafkaError._INVALID_ARG
    assert "client.id" in exc.value.args[0].str()


def test_defect7_api_version_request_timeout_is_honoured(hostile: tuple[TansuBroker, HostileProxy], topic: str) -> None:
    """A broker that never answers the first ApiVersions: with api.version.request.timeout.ms of 1 s
    (and a 60 s socket timeout) the producer gives up on that connection and negotiates again,
    so the record is delivered well within its 20 s message timeout."""
    _, proxy = hostile
    reports, errors = Reports(), []  # type: ignore[var-annotated]
    proxy.on(API_VERSIONS, silent, times=1)
    producer = _producer(
        proxy,
        reports,
        errors,
        **{
            "api.version.request.timeout.ms": 1_000,
            "socket.timeout.ms": 60_000,
            "socket.connection.setup.timeout.ms": 60_000,
            "request.timeout.ms": 60_000,
            "message.timeout.ms": 20_000,
        },
    )
    try:
        value = reports.next_value()
        producer.produce(topic, value=value)
        producer.flush(25)
        assert reports.delivered(value), reports.errors.get(value)
    finally:
        producer.close(10)


def test_defect7_socket_timeout_bounds_a_silent_brokers_metadata(
    hostile: tuple[TansuBroker, HostileProxy], topic: str
) -> None:
    """One Metadata request is never answered; socket.timeout.ms is 2 s (request.timeout.ms, 30 s
    by default, is the broker's ack timeout for Produce): the producer asks again after 2 s, so
    the record is delivered within its 15 s message timeout (InitProducerId already is)."""
    _, proxy = hostile
    reports, errors = Reports(), []  # type: ignore[var-annotated]
    proxy.on(METADATA, silent, times=1)
    producer = Producer(
        {
            "bootstrap.servers": proxy.address,
            **FAST,
            "socket.timeout.ms": 2_000,
            "message.timeout.ms": 15_000,
            "on_delivery": reports.callback,
            "error_cb": errors.append,
        }
    )
    try:
        value = reports.next_value()
        producer.produce(topic, value=value)
        producer.flush(20)
        assert reports.delivered(value), reports.errors.get(value)
    finally:
        producer.close(10)


def test_defect7_topic_metadata_refresh_interval_is_honoured(
    hostile: tuple[TansuBroker, HostileProxy], topic: str
) -> None:
    """An idle producer with topic.metadata.refresh.interval.ms=200 keeps asking for metadata."""
    _, proxy = hostile
    reports, errors = Reports(), []  # type: ignore[var-annotated]
    producer = _producer(proxy, reports, errors, **{"topic.metadata.refresh.interval.ms": 200})
    try:
        producer.produce(topic, value=reports.next_value())
        assert producer.flush(10) == 0
        before = proxy.requests[METADATA.key]
        assert wait_until(lambda: proxy.requests[METADATA.key] >= before + 3, 15), "no periodic metadata refresh"
    finally:
        producer.close(10)


def test_defect8_unclosed_producer_warns_at_exit_with_the_count(hostile: tuple[TansuBroker, HostileProxy]) -> None:
    """Records a producer never delivered, and no close(): at interpreter exit a warning names how
    many records were dropped (confluent-kafka warns too)."""
    _, proxy = hostile
    proxy.on(PRODUCE, silent)  # the records stay in flight, unanswered
    report = child_rss("unclosed", {"bootstrap": proxy.address, "topic": unique_name("hostile-exit"), "count": 7})
    assert report.get("outcome") == "ok", report
    stderr = report["stderr_tail"]
    assert "7" in stderr and ("deliver" in stderr.lower() or "flush" in stderr.lower()), stderr


# --- other hostile peers -----------------------------------------------------------------------


def test_metadata_answer_with_a_size_prefix_of_2_31_keeps_memory_bounded(
    hostile: tuple[TansuBroker, HostileProxy],
) -> None:
    """Every Metadata answer announced as 2**31-1 bytes for 5 s: the client refuses the frame at its
    size prefix (never reserves 2 GB), calls fail with a KafkaException, memory stays flat."""
    _, proxy = hostile
    proxy.on(METADATA, size_prefix(2**31 - 1))
    report = child_rss("list_topics", {"bootstrap": proxy.address, "seconds": 5, "until_ok": False, "conf": FAST})
    assert report["returncode"] == 0, report
    assert all(o.startswith("KafkaError") for o in report["outcomes"]), report["outcomes"]
    growth_mb = (report["peak_kb"] - report["baseline_kb"]) / 1024
    assert growth_mb < 64, f"memory grew {growth_mb:.0f} MB"


def test_time_out_does_not_outlive_a_trickling_peer(hostile: tuple[TansuBroker, HostileProxy], topic: str) -> None:
    """Every answer of the broker trickles one byte per second (a Produce answer takes over a
    minute): the record gets its report at its timeout (none lost), then the peer turns good and
    the producer delivers on a new connection."""
    _, proxy = hostile
    reports, errors = Reports(), []  # type: ignore[var-annotated]
    # (a record's whole life is bounded by the timeout: the later one's reconnect must fit in it
    # on a loaded machine too)
    producer = _producer(proxy, reports, errors, **{"message.timeout.ms": 10_000})
    try:
        producer.list_topics(topic, timeout=10)
        proxy.on(None, trickle(1.0))
        first = reports.next_value()
        producer.produce(topic, value=first)
        # The bound is on a hang, short of a trickled answer: the report is the timeout's.
        assert producer.flush(40) == 0, "the record's timeout waited for the trickling peer"
        assert isinstance(reports.errors.get(first), KafkaError), "delivered through a trickling peer"
        proxy.clear()
        proxy.cut_all()
        producer.list_topics(topic, timeout=30)  # the peer is good again: reached on a new connection
        later = reports.next_value()
        producer.produce(topic, value=later)
        assert producer.flush(60) == 0
        assert reports.delivered(later), reports.errors.get(later)
    finally:
        producer.close(10)
    assert not reports.unreported() and not reports.duplicated()


def test_close_returns_against_a_silent_peer(hostile: tuple[TansuBroker, HostileProxy], topic: str) -> None:
    """Every answer swallowed: close() still returns and every record is reported (purged)."""
    _, proxy = hostile
    reports, errors = Reports(), []  # type: ignore[var-annotated]
    producer = _producer(proxy, reports, errors, **{"message.timeout.ms": 60_000})
    producer.list_topics(topic, timeout=10)
    proxy.on(None, silent)
    values = [reports.next_value() for _ in range(20)]
    for value in values:
        producer.produce(topic, value=value)
    # close() meets records waiting on the peer: it swallowed an answer (the leader connection's
    # ApiVersions, or a Produce once connected). The bound is on a hang.
    assert proxy.fault_applied.wait(60), "the producer never asked the silent peer anything"
    producer.close(5)
    assert not reports.unreported() and not reports.duplicated()
    assert all(isinstance(reports.errors[v], KafkaError) for v in values)
