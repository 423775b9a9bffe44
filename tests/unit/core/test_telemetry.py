"""KIP-714's decisions (core/telemetry.py) and the OTLP bytes (core/otlp.py), with no IO."""

from __future__ import annotations

import struct
import uuid
from typing import Any

import pytest

from kafkawire.core import otlp
from kafkawire.core.telemetry import (
    CONSUMER_METRICS,
    INVALID_RECORD,
    INVALID_REQUEST,
    PRODUCER_METRICS,
    TELEMETRY_TOO_LARGE,
    THROTTLING_QUOTA_EXCEEDED,
    UNKNOWN_SUBSCRIPTION_ID,
    UNSUPPORTED_FEATURE,
    UNSUPPORTED_VERSION,
    Action,
    Meter,
    Phase,
    PollIdle,
    PollSpacing,
    Tally,
    TelemetryState,
    match,
)

ID = uuid.UUID(int=0x12A_0000_0000_0000_0081)


def answer(metrics: list[str], interval_ms: int = 1000, delta: bool = True) -> dict[str, Any]:
    return {
        "client_instance_id": ID,
        "subscription_id": 7,
        "accepted_compression_types": [4, 3],
        "push_interval_ms": interval_ms,
        "telemetry_max_bytes": 10_000,
        "delta_temporality": delta,
        "requested_metrics": metrics,
    }


def subscribed(metrics: list[str] | None = None) -> TelemetryState:
    s = TelemetryState("producer")
    assert s.broker_ready().action is Action.WAIT
    assert s.fire(True).action is Action.GET
    s.subscribed(0, answer(["*"] if metrics is None else metrics), 0.0)
    return s


# --- which metrics -------------------------------------------------------------------------------


def test_star_alone_is_every_metric_of_the_client() -> None:
    assert match(["*"], PRODUCER_METRICS) == PRODUCER_METRICS
    assert len(PRODUCER_METRICS) == 10 and len(CONSUMER_METRICS) == 13


def test_prefixes_overlapping_name_each_metric_once_in_request_order() -> None:
    assert match(["org", "org.apache", "org.apache.kafka"], PRODUCER_METRICS) == PRODUCER_METRICS
    chosen = match(["org.apache.kafka.producer.record", "org.apache.kafka.producer.node"], PRODUCER_METRICS)
    assert [m.name for m in chosen] == [
        "producer.record.queue.time.avg",
        "producer.record.queue.time.max",
        "producer.node.request.latency.avg",
        "producer.node.request.latency.max",
    ]
    assert match(["org.apache.kafka.consumer."], PRODUCER_METRICS) == ()
    assert match([], PRODUCER_METRICS) == ()


# --- the state machine ---------------------------------------------------------------------------


def test_first_broker_starts_asking_later_ones_change_nothing() -> None:
    s = TelemetryState("consumer")
    assert s.phase is Phase.AWAIT_BROKER
    assert (s.broker_ready().action, s.phase) == (Action.WAIT, Phase.GET_SCHEDULED)
    assert s.broker_ready().action is Action.NONE


def test_no_broker_when_the_timer_fires_waits_for_one() -> None:
    s = TelemetryState("producer")
    s.broker_ready()
    assert s.fire(False).action is Action.NONE and s.phase is Phase.AWAIT_BROKER
    assert s.broker_ready().action is Action.WAIT


def test_a_subscription_with_metrics_pushes_after_the_jittered_interval_then_each_interval() -> None:
    s = TelemetryState("producer")
    s.broker_ready()
    s.fire(True)
    for jitter, delay in ((-1.0, 0.8), (0.0, 1.0), (1.0, 1.2)):
        s.phase = Phase.GET_SENT
        step = s.subscribed(0, answer(["*"]), jitter)
        assert step.action is Action.WAIT and step.delay == pytest.approx(delay)
    assert s.subscription is not None and s.subscription.subscription_id == 7 and s.client_instance_id == ID
    assert s.fire(True).action is Action.PUSH
    assert s.pushed(0).delay == 1.0 and s.phase is Phase.PUSH_SCHEDULED


@pytest.mark.parametrize("interval_ms", [0, -5])
def test_a_push_interval_that_is_no_interval_is_thirty_seconds(interval_ms: int) -> None:
    s = TelemetryState("producer")
    s.broker_ready()
    s.fire(True)
    assert s.subscribed(0, answer(["*"], interval_ms), 0.0).delay == 30.0


def test_a_subscription_without_metrics_asks_again_after_the_interval() -> None:
    s = subscribed([])
    assert s.phase is Phase.GET_SCHEDULED
    assert s.fire(True).action is Action.GET


def test_a_failed_subscription_request_asks_again_after_the_interval_or_thirty_seconds() -> None:
    s = TelemetryState("producer")
    s.broker_ready()
    s.fire(True)
    step = s.subscribed(7, None, 0.0)  # any error but UNSUPPORTED_VERSION
    assert (step.action, step.delay, s.phase) == (Action.WAIT, 30.0, Phase.GET_SCHEDULED)
    s.fire(True)
    assert s.subscribed(UNSUPPORTED_VERSION, None, 0.0).action is Action.STOP and s.done


@pytest.mark.parametrize(
    ("error", "action", "delay", "phase"),
    [
        (UNKNOWN_SUBSCRIPTION_ID, Action.WAIT, 0.0, Phase.GET_SCHEDULED),
        (TELEMETRY_TOO_LARGE, Action.WAIT, 1.0, Phase.PUSH_SCHEDULED),
        (THROTTLING_QUOTA_EXCEEDED, Action.WAIT, 1.0, Phase.PUSH_SCHEDULED),
        (INVALID_REQUEST, Action.STOP, 0.0, Phase.TERMINATED),
        (INVALID_RECORD, Action.STOP, 0.0, Phase.TERMINATED),
        (UNSUPPORTED_VERSION, Action.STOP, 0.0, Phase.TERMINATED),
        (UNSUPPORTED_FEATURE, Action.STOP, 0.0, Phase.TERMINATED),
        (-1, Action.WAIT, 1.0, Phase.GET_SCHEDULED),  # a transport error: a new subscription later
    ],
)
def test_push_errors_as_kip_714_says(error: int, action: Action, delay: float, phase: Phase) -> None:
    s = subscribed()
    s.fire(True)
    step = s.pushed(error)
    assert (step.action, step.delay, s.phase) == (action, delay, phase)
    assert (step.warning is not None) == (action is Action.STOP)


def test_a_throttled_answer_delays_the_next_request() -> None:
    s = subscribed()
    s.fire(True)
    assert s.pushed(0, throttle_ms=5000).delay == 5.0


def test_close_pushes_once_more_terminating_only_while_serving_a_subscription() -> None:
    s = subscribed()
    assert s.terminate().action is Action.WAIT and s.phase is Phase.FINAL_PUSH_SCHEDULED
    assert s.fire(True).action is Action.FINAL_PUSH
    assert s.pushed(UNKNOWN_SUBSCRIPTION_ID).action is Action.STOP and s.done  # best effort: any answer ends it
    waiting = TelemetryState("producer")
    assert waiting.terminate().action is Action.STOP and waiting.done
    in_flight = subscribed()
    in_flight.fire(True)
    assert in_flight.terminate().action is Action.STOP
    assert in_flight.pushed(0).action is Action.NONE  # a late answer changes nothing


def test_the_final_push_without_a_broker_ends_at_once() -> None:
    s = subscribed()
    s.terminate()
    assert s.fire(False).action is Action.STOP and s.done


def test_meter_and_poll_idle() -> None:
    m = Meter()
    assert m.take() == (0.0, 0.0)
    for v in (1.0, 5.0, 3.0):
        m.add(v)
    assert m.take() == (3.0, 5.0) and m.take() == (0.0, 0.0) and m.total == 9.0
    idle = PollIdle()
    idle.polled(0.0, 1.0)  # the first poll has no previous one
    idle.polled(2.0, 3.0)  # 1 s waiting of the 2 s since the last return
    idle.polled(3.0, 3.5)
    assert idle.meter.take() == (pytest.approx(0.75), 1.0)


def test_tally_and_poll_spacing() -> None:
    """A share consumer's counters: each interval's part and the sum ever (delta and cumulative
    sums); time.between.poll from one poll() call to the next, in ms."""
    tally = Tally()
    tally.add(3)
    tally.add(4)
    assert tally.take() == (7, 7)
    tally.add(2)
    assert tally.take() == (2, 9) and tally.take() == (0, 9)
    spacing = PollSpacing()
    for entered in (10.0, 10.2, 10.25):  # the first call has no previous one
        spacing.entered(entered)
    assert spacing.meter.take() == (pytest.approx(125.0), pytest.approx(200.0))


# --- OTLP --------------------------------------------------------------------------------------


def fields(data: bytes) -> list[tuple[int, Any]]:
    """A protobuf message's (field number, value): varints as ints, fixed64 as bytes, others as bytes."""
    out, i = [], 0
    while i < len(data):
        key, i = _varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(data, i)
        elif wire == 1:
            value, i = data[i : i + 8], i + 8
        else:
            assert wire == 2
            size, i = _varint(data, i)
            value, i = data[i : i + size], i + size
        out.append((number, value))
    return out


def _varint(data: bytes, i: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        b = data[i]
        i += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return result, i


def one(message: bytes, number: int) -> Any:
    found = [v for n, v in fields(message) if n == number]
    assert len(found) == 1, (number, found)
    return found[0]


def test_metrics_data_layout() -> None:
    series = [
        otlp.Series(
            "org.apache.kafka.producer.connection.creation.total",
            "total",
            [otlp.Point(3, True, 10, 20)],
            is_sum=True,
            temporality=otlp.DELTA,
        ),
        otlp.Series(
            "org.apache.kafka.producer.node.request.latency.avg",
            "avg",
            [otlp.Point(1.5, False, 10, 20, node_id=1), otlp.Point(-2.0, False, 10, 20, node_id=-1)],
        ),
    ]
    data = otlp.metrics_data({"client_rack": "r1", "transactional_id": "tx"}, ("kafkawire#producer-1", "1.0"), series)
    resource_metrics = one(data, 1)
    resource = one(resource_metrics, 1)
    attributes = [(one(kv, 1), one(one(kv, 2), 1)) for n, kv in fields(resource) if n == 1]
    assert attributes == [(b"client_rack", b"r1"), (b"transactional_id", b"tx")]
    scope_metrics = one(resource_metrics, 2)
    scope = one(scope_metrics, 1)
    assert (one(scope, 1), one(scope, 2)) == (b"kafkawire#producer-1", b"1.0")
    total, latency = [v for n, v in fields(scope_metrics) if n == 2]
    assert one(total, 1) == b"org.apache.kafka.producer.connection.creation.total" and one(total, 2) == b"total"
    total_sum = one(total, 7)
    assert one(total_sum, 2) == otlp.DELTA and one(total_sum, 3) == 1
    point = one(total_sum, 1)
    assert struct.unpack("<Q", one(point, 2))[0] == 10 and struct.unpack("<Q", one(point, 3))[0] == 20
    assert struct.unpack("<q", one(point, 6))[0] == 3
    gauge_points = [v for n, v in fields(one(latency, 5)) if n == 1]
    assert [struct.unpack("<d", one(p, 4))[0] for p in gauge_points] == [1.5, -2.0]
    node_ids = [one(one(one(p, 7), 2), 3) for p in gauge_points]
    assert node_ids == [1, (1 << 64) - 1]  # int64 -1: ten bytes, two's complement


def test_no_resource_attributes_leave_the_resource_out() -> None:
    resource_metrics = one(otlp.metrics_data({}, ("n", "v"), []), 1)
    assert [n for n, _v in fields(resource_metrics)] == [2]
