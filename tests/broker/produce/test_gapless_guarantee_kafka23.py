"""enable.gapless.guarantee on Apache Kafka 2.3, judged by confluent-kafka doing the same: a batch
the broker refuses for good (MESSAGE_TOO_LARGE against the topic's max.message.bytes) would leave a
gap in an idempotent producer's series, so the producer stops with a fatal _GAPLESS_GUARANTEE;
without the guarantee the record fails alone and the producer goes on."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import confluent_kafka as ck
import pytest

import kafkawire
from kafkawire.admin import AdminClient, NewTopic
from tests.harness.kafka_broker import KafkaBroker

pytestmark = pytest.mark.broker


def _run(module: Any, bootstrap: str, topic: str, gapless: bool) -> dict[str, Any]:
    """What happens to a too-large record then a small one: their delivery errors, whether producing
    the second raised, and error_cb's (name, fatal). Errors are read afterwards: confluent-kafka may
    call back while a call of it is raising."""
    errors: list[Any] = []
    delivered: dict[bytes, Any] = {}
    raised: list[str] = []
    conf = {
        "bootstrap.servers": bootstrap,
        "enable.idempotence": True,
        "enable.gapless.guarantee": gapless,
        "linger.ms": 0,
        "message.timeout.ms": 20_000,
        "error_cb": errors.append,
    }
    producer = module.Producer(conf)

    def report(err: Any, msg: Any) -> None:
        delivered[msg.value()[:5]] = err

    def serve() -> None:  # poll(), not flush(): confluent-kafka's flush() raises the fatal error mid-callbacks
        end = time.monotonic() + 30
        while len(producer) and time.monotonic() < end:
            producer.poll(0.2)
        producer.poll(0.5)

    calls: list[tuple[str, Callable[[], Any]]] = [
        ("produce large", lambda: producer.produce(topic, b"x" * 5000, on_delivery=report)),
        ("serve", serve),
        ("produce small", lambda: producer.produce(topic, b"small", on_delivery=report)),
        ("serve", serve),
    ]
    for name, call in calls:
        try:
            call()
        except Exception:
            raised.append(name)
    return {
        "large": None if delivered.get(b"xxxxx") is None else delivered[b"xxxxx"].name(),
        "small": delivered.get(b"small", "not delivered"),
        "small refused": "produce small" in raised,
        "error_cb": sorted({(e.name(), e.fatal()) for e in errors}),
    }


@pytest.mark.parametrize("gapless", [False, True])
def test_gapless_guarantee_as_confluent_kafka(
    kafka23: KafkaBroker, topic_name: Callable[[str], str], gapless: bool
) -> None:
    topic = topic_name("gap")
    admin = AdminClient({"bootstrap.servers": kafka23.bootstrap()})
    admin.create_topics([NewTopic(topic, 1, 1, config={"max.message.bytes": "2000"})])[topic].result(30)
    ours = _run(kafkawire, kafka23.bootstrap(), topic, gapless)
    theirs = _run(ck, kafka23.bootstrap(), topic, gapless)
    heard = ours.pop("error_cb")
    theirs.pop("error_cb")  # (confluent-kafka's error_cb heard nothing of the fatal error here)
    assert ours == theirs
    if gapless:  # the producer stopped for good: the second record refused; error_cb told, as for any fatal error
        assert ours == {"large": "MSG_SIZE_TOO_LARGE", "small": "not delivered", "small refused": True}
        assert heard == [("_GAPLESS_GUARANTEE", True)]
    else:  # the record failed alone, the producer went on
        assert ours == {"large": "MSG_SIZE_TOO_LARGE", "small": None, "small refused": False} and heard == []
