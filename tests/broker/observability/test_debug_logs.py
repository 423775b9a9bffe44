"""``debug`` judged against confluent-kafka on Apache Kafka 2.3: the same steps (create a topic,
produce, consume in a group, commit) with debug=all on both clients; kafkawire writes lines of the
same shape and the facilities that matter to a person debugging (broker states, requests and
answers, metadata, group join/sync/heartbeat, fetch, commit, configuration); with debug off neither
writes them; over SASL PLAIN and SCRAM no debug line of any client holds the password."""

from __future__ import annotations

import logging
import re
import time
from typing import Any

import confluent_kafka
import confluent_kafka.admin
import pytest

import kafkawire
import kafkawire.admin
from tests.harness.judge import unique_name
from tests.harness.kafka_broker import KafkaBroker

pytestmark = pytest.mark.broker

LINE = re.compile(r"^(?P<fac>[A-Z_]+) \[(?P<name>[^\]]+)\] \[thrd:(?P<thrd>[^\]]+)\]: (?P<msg>.*)$")
# What a person debugging needs from these steps, as librdkafka's facilities name it.
IMPORTANT = {
    "INIT",
    "CONF",
    "CONNECT",
    "STATE",
    "SEND",
    "RECV",
    "METADATA",
    "JOIN",
    "JOINGROUP",
    "SYNCGROUP",
    "HEARTBEAT",
    "FETCH",
    "COMMIT",
    "ASSIGN",
    "PRODUCE",
    "APIVERSION",
}
SCRAM_PASSWORD = "carol-debug-pw"


class Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno == logging.DEBUG:
            self.lines.append(record.getMessage())


def _logger(name: str) -> tuple[logging.Logger, Capture]:
    logger = logging.getLogger(f"test.debuglogs.{name}.{unique_name('l')}")
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    capture = Capture()
    logger.addHandler(capture)
    return logger, capture


def _steps(impl: Any, admin_mod: Any, conf: dict[str, Any], topic: str, group: str) -> None:
    """confluent-kafka's admin example's kind of session: create a topic, produce, consume it in a
    group, commit synchronously, close everything."""
    admin = admin_mod.AdminClient(conf)
    for fut in admin.create_topics([admin_mod.NewTopic(topic, 1, 1)]).values():
        fut.result(30)
    producer = impl.Producer(conf)
    for i in range(5):
        producer.produce(topic, b"v%d" % i)
    assert producer.flush(30) == 0
    consumer = impl.Consumer(
        {
            **conf,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "heartbeat.interval.ms": 100,
        }
    )
    try:
        consumer.subscribe([topic])
        got: list[Any] = []
        deadline = time.monotonic() + 60
        while len(got) < 5 and time.monotonic() < deadline:
            m = consumer.poll(0.2)
            if m is not None and m.error() is None:
                got.append(m)
        assert len(got) == 5
        consumer.poll(0.5)  # a few heartbeats
        consumer.commit(message=got[-1], asynchronous=False)
    finally:
        consumer.close()
    if hasattr(admin, "close"):
        admin.close()


def _run(impl_name: str, broker_conf: dict[str, Any], debug: str | None) -> list[str]:
    impl, admin_mod = (confluent_kafka, confluent_kafka.admin) if impl_name == "ck" else (kafkawire, kafkawire.admin)
    logger, capture = _logger(impl_name)
    conf = {**broker_conf, "logger": logger, **({"debug": debug} if debug else {})}
    _steps(impl, admin_mod, conf, unique_name(f"dbg-{impl_name}"), unique_name(f"dbg-{impl_name}"))
    return capture.lines


def _facilities(lines: list[str]) -> set[str]:
    return {m["fac"] for line in lines if (m := LINE.match(line))}


def test_debug_all_logs_what_confluent_logs_in_its_shape(kafka23: KafkaBroker) -> None:
    conf = {"bootstrap.servers": kafka23.bootstrap()}
    theirs, ours = _run("ck", conf, "all"), _run("kw", conf, "all")
    assert all(LINE.match(line) for line in ours), [line for line in ours if not LINE.match(line)][:5]
    their_facilities, our_facilities = _facilities(theirs), _facilities(ours)
    assert their_facilities >= IMPORTANT, IMPORTANT - their_facilities  # (the judge logs them all)
    assert our_facilities >= IMPORTANT, IMPORTANT - our_facilities
    names = {LINE.match(line)["name"] for line in ours}  # type: ignore[index]
    assert {n.split("#")[1].rsplit("-", 1)[0] for n in names} == {"producer", "consumer"}  # (admin: a producer)
    # Each broker line names the broker by address, in its thread and its text, as librdkafka's.
    states = [m for line in ours if (m := LINE.match(line)) and m["fac"] == "STATE"]
    port = conf["bootstrap.servers"].rsplit(":", 1)[1]
    assert states and all(f"127.0.0.1:{port}/" in m["thrd"] and m["msg"].startswith(m["thrd"]) for m in states)
    sends = [m["msg"] for line in ours if (m := LINE.match(line)) and m["fac"] == "SEND"]
    assert any(re.search(r"Sent JoinGroupRequest \(v\d+, \d+ bytes, CorrId \d+\)", s) for s in sends), sends[:5]
    recvs = [m["msg"] for line in ours if (m := LINE.match(line)) and m["fac"] == "RECV"]
    assert any(re.search(r"Received FetchResponse \(v\d+, \d+ bytes, CorrId \d+, rtt [\d.]+ms\)", r) for r in recvs)
    groups = [m["msg"] for line in ours if (m := LINE.match(line)) and m["fac"] == "CGRPSTATE"]
    assert any("-> stable (generation " in g and 'member id "' in g for g in groups), groups


def test_debug_off_logs_nothing_from_these_subsystems(kafka23: KafkaBroker) -> None:
    conf = {"bootstrap.servers": kafka23.bootstrap()}
    for impl_name in ("ck", "kw"):
        lines = _run(impl_name, conf, None)
        assert _facilities(lines) == set(), (impl_name, lines[:5])  # INIT too is written under a context only


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_no_debug_line_holds_the_password(kafka23: KafkaBroker, mechanism: str) -> None:
    if mechanism == "PLAIN":
        user, password = "alice", "alice-secret"
    else:
        kafka23.add_scram_user("carol", SCRAM_PASSWORD)
        user, password = "carol", SCRAM_PASSWORD
    conf = {
        "bootstrap.servers": kafka23.bootstrap("SASL_PLAINTEXT"),
        "security.protocol": "sasl_plaintext",
        "sasl.mechanism": mechanism,
        "sasl.username": user,
        "sasl.password": password,
    }
    lines = _run("kw", conf, "all")
    facilities = _facilities(lines)
    assert {"SASL", "SASLAUTH", "CONF"} <= facilities, facilities
    leaked = [line for line in lines if password in line]
    assert not leaked, leaked[:3]
    assert any(line.endswith("sasl.password = [redacted]") for line in lines)
