"""One hostile case per client: a fresh client meets a fault on one API, the peer turns good, and
the client must have kept every promise. Each function returns the problems it saw (empty: the
case passed), in words a failing test can print:

* every record has exactly one delivery report, every call returns or raises a `KafkaException`
  with a code (no builtin exception escapes), and nothing waits forever;
* once the peer is good again the same client works: a new record is delivered, a new
  transaction commits, the admin call or the read answers right (on a new connection), a group
  member reads every record and commits its position.

A fatal producer error is accepted only when a broker error code caused it (a mutated answer may
carry a code that is fatal by the protocol); a fatal local code (the client gave up on a peer it
could have asked again) is a problem.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, wait
from dataclasses import dataclass, field
from typing import Any

from kafkawire import Consumer, KafkaError, Producer, TopicPartition
from kafkawire.admin import AdminClient, ConfigResource, NewTopic
from kafkawire.client.network_client import Client
from kafkawire.protocol.schema import Api
from kafkawire.range_reader import EARLIEST, FetchSettings, fetch_range, list_offsets
from tests.harness.hostile import Fault, HostileProxy
from tests.harness.hostile_checks import FAST, Outcome, Reports, escaped_repr, outcome
from tests.harness.judge import unique_name

WAIT = 12.0  # seconds a step may take before the case counts it as hung
MESSAGE_TIMEOUT_MS = 6_000


@dataclass
class Case:
    """What one case saw; ``fatal`` names an accepted fatal error (caused by a broker code)."""

    problems: list[str] = field(default_factory=list)
    fatal: str = ""
    exercised: bool = False


class NeverCompleted(Exception):
    """An admin call's future was still running well after its request_timeout: a lost callback."""


def _check(case: Case, what: str, result: Outcome) -> Outcome:
    if isinstance(result.escaped, NeverCompleted):
        case.problems.append(f"{what}: {result.escaped}")
    elif result.escaped is not None:
        case.problems.append(f"{what}: a non-Kafka exception escaped: {escaped_repr(result)}")
    return result


def _fatal_ok(case: Case, err: KafkaError | None) -> bool:
    """True when ``err`` is fatal; a fatal local code is a problem, a broker's is accepted, and so is
    _FENCED: the broker fenced the producer (a lying InitProducerId answer gave it another id or
    epoch; librdkafka, given the same answer, is fenced too: AddPartitionsToTxn's fatal error)."""
    if err is None or not err.fatal():
        return False
    if err.code() < 0 and err.code() != KafkaError._FENCED:
        case.problems.append(f"fatal local error after the fault: {err.name()}: {err.str()}")
    else:
        case.fatal = err.name()
    return True


def _close_within(close: Callable[[], Any], case: Case, what: str, timeout: float = 15.0) -> None:
    """Close on another thread: a close that never returns is a problem, not a hung test run."""
    done = threading.Event()
    result: list[Outcome] = []

    def run() -> None:
        result.append(outcome(close))
        done.set()

    threading.Thread(target=run, name="hostile-close", daemon=True).start()
    if not done.wait(timeout):
        case.problems.append(f"{what}.close() did not return in {timeout:g} s")
    elif result:
        _check(case, f"{what}.close()", result[0])


def _wait_applied(proxy: HostileProxy, case: Case, timeout: float = WAIT) -> None:
    case.exercised = proxy.fault_applied.wait(timeout) or case.exercised


def _report_problems(case: Case, reports: Reports, when: str) -> None:
    unreported = reports.unreported()
    if unreported:
        case.problems.append(f"{len(unreported)} record(s) without a delivery report {when}: {unreported[:3]}")
    duplicated = reports.duplicated()
    if duplicated:
        case.problems.append(f"record(s) reported more than once: {duplicated[:3]}")
    if reports.bad_errors:
        case.problems.append(f"report errors that are not KafkaError: {reports.bad_errors[:3]}")


def _producer_conf(proxy: HostileProxy, reports: Reports, errors: list[Any], extra: dict[str, Any]) -> dict[str, Any]:
    return {
        "bootstrap.servers": proxy.address,
        **FAST,
        "enable.idempotence": True,  # the scenarios are an idempotent producer's
        # Both records on one partition, as the scenarios were written for (the record after the
        # fault waits behind the first); with the default 10 ms the second goes elsewhere.
        "sticky.partitioning.linger.ms": 900_000,
        "message.timeout.ms": MESSAGE_TIMEOUT_MS,
        "on_delivery": reports.callback,
        "error_cb": errors.append,
        **extra,
    }


def producer_case(proxy: HostileProxy, topic: str, api: Api | None, fault: Fault, times: int | None = 1) -> Case:
    """An idempotent producer: one record meets the fault, the next must be delivered."""
    case = Case()
    reports, errors = Reports(), []  # type: ignore[var-annotated]
    proxy.clear()
    if api is not None:
        proxy.on(api, fault, times)
    producer = Producer(_producer_conf(proxy, reports, errors, {}))
    try:
        first = reports.next_value("first")
        _check(case, "produce()", outcome(lambda: producer.produce(topic, value=first)))
        _wait_applied(proxy, case)
        proxy.clear()
        _check(case, "flush()", outcome(lambda: producer.flush(WAIT)))
        _report_problems(case, reports, f"{WAIT:g} s after a {MESSAGE_TIMEOUT_MS} ms message timeout")
        if _fatal_ok(case, reports.errors.get(first)):
            return case
        second = reports.next_value("second")
        produced = _check(case, "produce() after recovery", outcome(lambda: producer.produce(topic, value=second)))
        if _fatal_ok(case, produced.error):
            reports.sent.remove(second)  # refused synchronously: no report is owed
            return case
        _check(case, "flush() after recovery", outcome(lambda: producer.flush(WAIT)))
        if not reports.delivered(second) and not _fatal_ok(case, reports.errors.get(second)):
            err = reports.errors.get(second)
            case.problems.append(
                "no recovery: the record produced once the peer was good "
                + ("got no report" if err is None else f"failed with {err.name()}: {err.str()}")
            )
    finally:
        case.exercised = case.exercised or proxy.fault_applied.is_set()
        _close_within(lambda: producer.close(10), case, "Producer")
        _report_problems(case, reports, "after close()")
        bad = [e for e in errors if not isinstance(e, KafkaError)]
        if bad:
            case.problems.append(f"error_cb got non-KafkaError values: {bad[:3]}")
    return case


def transaction_case(proxy: HostileProxy, topic: str, api: Api | None, fault: Fault, times: int | None = 1) -> Case:
    """A transactional producer: init, then rounds of begin/produce/commit; a round that fails is
    aborted (or, when retriable, its call repeated); within three rounds one must commit."""
    case = Case()
    reports, errors = Reports(), []  # type: ignore[var-annotated]
    proxy.clear()
    if api is not None:
        proxy.on(api, fault, times)
    producer = Producer(_producer_conf(proxy, reports, errors, {"transactional.id": unique_name("hostile-txn")}))
    try:
        initialised = False
        committed = False
        for _ in range(3):
            if not initialised:
                result = _check(case, "init_transactions()", outcome(lambda: producer.init_transactions(WAIT)))
                if result.escaped is not None:
                    break
                if result.error is not None:
                    _wait_applied(proxy, case, 0)
                    proxy.clear()
                    if _fatal_ok(case, result.error):
                        return case
                    continue
                initialised = True
            committed = _transaction_round(proxy, producer, reports, topic, case)
            if committed or case.fatal or case.problems:
                break
        if not committed and not case.fatal and not case.problems:
            case.problems.append("no recovery: no transaction committed in three rounds once the peer was good")
    finally:
        case.exercised = case.exercised or proxy.fault_applied.is_set()
        _close_within(lambda: producer.close(10), case, "Producer")
        _report_problems(case, reports, "after close()")
    return case


def _transaction_round(proxy: HostileProxy, producer: Producer, reports: Reports, topic: str, case: Case) -> bool:
    """One begin/produce/commit; True when it committed with its record delivered."""
    began = _check(case, "begin_transaction()", outcome(producer.begin_transaction))
    if began.error is not None:
        return not _fatal_ok(case, began.error) and False
    value = reports.next_value("txn")
    produced = _check(case, "produce()", outcome(lambda: producer.produce(topic, value=value)))
    if produced.error is not None:
        reports.sent.remove(value)
    committed = _check(case, "commit_transaction()", outcome(lambda: producer.commit_transaction(WAIT)))
    _wait_applied(proxy, case, 0)
    proxy.clear()
    error = committed.error
    if error is None:
        if produced.error is None and not reports.wait_all(WAIT):
            case.problems.append("a committed transaction's record has no delivery report")
        return produced.error is None and reports.delivered(value)
    if _fatal_ok(case, error):
        return False
    if error.retriable() and not error.txn_requires_abort():
        again = _check(case, "commit_transaction() again", outcome(lambda: producer.commit_transaction(WAIT)))
        if again.error is None:
            return reports.wait_all(WAIT) and reports.delivered(value)
        error = again.error
        if _fatal_ok(case, error):
            return False
    aborted = _check(case, "abort_transaction()", outcome(lambda: producer.abort_transaction(WAIT)))
    if aborted.error is not None and _fatal_ok(case, aborted.error):
        return False
    if not reports.wait_all(WAIT):
        case.problems.append("records of a failed transaction have no delivery report after abort_transaction()")
    return False


AdminCall = Callable[[AdminClient, str], Any]


def _create(admin: AdminClient, topic: str) -> Any:
    return admin.create_topics([NewTopic(unique_name("hostile-new"), 1)], request_timeout=6)


def _describe_configs(admin: AdminClient, topic: str) -> Any:
    return admin.describe_configs([ConfigResource("topic", topic)], request_timeout=6)


def _delete(admin: AdminClient, topic: str) -> Any:
    name = unique_name("hostile-del")
    for fut in admin.create_topics([NewTopic(name, 1)], request_timeout=10).values():
        fut.result(12)
    return admin.delete_topics([name], request_timeout=6)


ADMIN_CALLS: dict[str, AdminCall] = {
    "Metadata": lambda admin, topic: admin.list_topics(timeout=6),
    "CreateTopics": _create,
    "DeleteTopics": _delete,
    "DescribeConfigs": _describe_configs,
    "DescribeCluster": lambda admin, topic: admin.describe_cluster(request_timeout=6),
    "ListGroups": lambda admin, topic: admin.list_consumer_groups(request_timeout=6),
}


def _settle(result: Any) -> Any:
    """Wait for what an admin call returned: a future, a dict of futures, or a plain value. A
    future still running after WAIT (twice the call's request_timeout) raises NeverCompleted."""
    if isinstance(result, Future):
        futures = {None: result}
    elif isinstance(result, dict) and result and all(isinstance(f, Future) for f in result.values()):
        futures = result
    else:
        return result
    _, running = wait(list(futures.values()), WAIT)
    if running:
        raise NeverCompleted(
            f"{len(running)} future(s) still running {WAIT:g} s after a call with a 6 s request_timeout"
        )
    return {k: f.result() for k, f in futures.items()}


def admin_case(
    proxy: HostileProxy, topic: str, api: Api | None, fault: Fault, call: str, times: int | None = 1
) -> Case:
    """An AdminClient call meets the fault, then the same call must answer once the peer is good."""
    case = Case()
    run = ADMIN_CALLS[call]
    proxy.clear()
    admin = AdminClient({"bootstrap.servers": proxy.address, **FAST})
    try:
        if call == "DeleteTopics":
            name = unique_name("hostile-del")
            for fut in admin.create_topics([NewTopic(name, 1)], request_timeout=10).values():
                fut.result(12)
            run = lambda a, t: a.delete_topics([name], request_timeout=6)  # noqa: E731
        if api is not None:
            proxy.on(api, fault, times)
        _check(case, f"{call} under the fault", outcome(lambda: _settle(run(admin, topic))))
        _wait_applied(proxy, case, 0)
        proxy.clear()
        again = _check(case, f"{call} once the peer is good", outcome(lambda: _settle(ADMIN_CALLS[call](admin, topic))))
        if again.error is not None:
            case.problems.append(f"no recovery: {call} failed with {again.error.name()}: {again.error.str()}")
    finally:
        case.exercised = case.exercised or proxy.fault_applied.is_set()
        _close_within(admin.close, case, "AdminClient")
    return case


def reader_case(
    proxy: HostileProxy, topic: str, values: list[bytes], api: Api | None, fault: Fault, times: int | None = 1
) -> Case:
    """list_offsets and fetch_range meet the fault; once the peer is good they read the partition
    exactly (its records in order, from the earliest offset)."""
    case = Case()
    proxy.clear()
    # Armed before the client exists: it asks for every topic's metadata as it starts, and an
    # answer that came before the fault would leave list_offsets() nothing to ask for under it.
    if api is not None:
        proxy.on(api, fault, times)
    client = Client({"bootstrap.servers": proxy.address, **FAST})
    settings = FetchSettings(timeout=6)
    tp = (topic, 0)

    def read() -> list[bytes]:
        return [
            r.value or b"" for _, records in fetch_range(client, topic, 0, 0, len(values), settings) for r in records
        ]

    try:
        _check(case, "list_offsets() under the fault", outcome(lambda: list_offsets(client, {tp: EARLIEST}, timeout=6)))
        _check(case, "fetch_range() under the fault", outcome(read))
        _wait_applied(proxy, case, 0)
        proxy.clear()
        earliest = _check(
            case, "list_offsets() once good", outcome(lambda: list_offsets(client, {tp: EARLIEST}, timeout=6))
        )
        if earliest.error is not None or (earliest.ok and earliest.value[tp].offset != 0):
            case.problems.append(f"no recovery: list_offsets answered {earliest.value or earliest.error}")
        got = _check(case, "fetch_range() once good", outcome(read))
        if got.error is not None or (got.ok and got.value != values):
            case.problems.append(
                f"no recovery: fetch_range answered {got.error or f'{len(got.value)} records, not the {len(values)} written'}"
            )
    finally:
        case.exercised = case.exercised or proxy.fault_applied.is_set()
        _close_within(client.close, case, "Client")
    return case


def consumer_case(
    proxy: HostileProxy, topic: str, values: list[bytes], api: Api | None, fault: Fault, times: int | None = 1
) -> Case:
    """A group member (subscribe, poll, commit) meets the fault on one of the APIs it uses; once the
    peer is good it has read every record of partition 0 and committed() answers its position."""
    case = Case()
    proxy.clear()
    errors: list[Any] = []
    consumer = Consumer(
        {
            "bootstrap.servers": proxy.address,
            **FAST,
            "group.id": unique_name("hostile-group"),
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "session.timeout.ms": 6_000,
            "heartbeat.interval.ms": 300,
            "error_cb": errors.append,
        }
    )
    seen: set[bytes] = set()

    def poll_for(seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not seen.issuperset(values):
            got = _check(case, "poll()", outcome(lambda: consumer.poll(0.2)))
            if got.escaped is not None:
                return
            msg = got.value
            if msg is not None and msg.error() is None and msg.partition() == 0:
                seen.add(msg.value())

    try:
        if api is not None:
            proxy.on(api, fault, times)
        _check(case, "subscribe()", outcome(lambda: consumer.subscribe([topic])))
        poll_for(WAIT / 2)
        _check(case, "commit() under the fault", outcome(lambda: consumer.commit(asynchronous=False)))
        _wait_applied(proxy, case, 3)
        proxy.clear()
        poll_for(WAIT * 2)
        fatal = [e for e in errors if isinstance(e, KafkaError) and e.fatal()]
        if fatal and _fatal_ok(case, fatal[0]):  # a broker code the group table calls fatal
            return case
        if not seen.issuperset(values):
            at = outcome(lambda: consumer.position([TopicPartition(topic, 0)])[0].offset)
            if at.ok and at.value > len(values):  # a lying answer moved it past the log end: Tansu
                return case  # then answers no records and no error (contributing/judges.md)
            case.problems.append(f"no recovery: read {len(seen & set(values))} of the {len(values)} records")
            return case
        committed = _check(case, "commit() once good", outcome(lambda: consumer.commit(asynchronous=False)))
        if committed.error is not None and committed.error.code() != KafkaError._NO_OFFSET:  # (all committed)
            case.problems.append(f"no recovery: commit() failed with {committed.error.name()}: {committed.error.str()}")
        got = _check(case, "committed() once good", outcome(lambda: consumer.committed([TopicPartition(topic, 0)], 6)))
        if got.error is not None or (got.ok and got.value[0].offset != len(values)):
            case.problems.append(f"no recovery: committed() answered {got.error or got.value}")
    finally:
        case.exercised = case.exercised or proxy.fault_applied.is_set()
        _close_within(consumer.close, case, "Consumer")
        bad = [e for e in errors if not isinstance(e, KafkaError)]
        if bad:
            case.problems.append(f"error_cb got non-KafkaError values: {bad[:3]}")
    return case


def wait_until(check: Callable[[], bool], timeout: float = WAIT) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.02)
    return check()
