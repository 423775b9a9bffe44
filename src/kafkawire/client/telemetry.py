"""Client metrics push (KIP-714, ``enable.metrics.push``): the one owner of a client's telemetry.

`MetricsPusher` lives on the client's IO engine. The first broker whose ApiVersions offers
GetTelemetrySubscriptions (key 71) becomes the telemetry broker; the decisions (when to ask, when
to push, what each error means) are core/telemetry.py's, this module sends what it decides, arms
its one timer and measures the metrics at each push: connections from the brokers' counters, round
trips and throttle times from their meters (core/broker_stats.py), the rest from the client
(``values``). A broker without the API is never asked; `close` makes the last push
(``terminating``), waiting for its answer at most a second, as librdkafka does.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TYPE_CHECKING, Any

from .._version import __version__
from ..base.debug import MAIN
from ..core.kafka_error import KafkaError
from ..core.telemetry import Action, Metric, Phase, Step, TelemetryState
from ..io.broker import BrokerConnection
from ..io.io_engine import Timer
from ..protocol.apis import GET_TELEMETRY_SUBSCRIPTIONS, PUSH_TELEMETRY, SHARE_FETCH, SHARE_GROUP_HEARTBEAT
from ..protocol.codec import Struct
from ..protocol.schema import ZERO_UUID
from ..records.compression import compress
from .network_client import Client

if TYPE_CHECKING:
    from ..core import otlp

FINAL_PUSH_WAIT = 1.0  # seconds close() waits for the terminating push's answer (librdkafka's)
# The connections' meters each metric reads (core/broker_stats.py), by its name without the last part.
_METERS = {
    "producer.request.latency": 0,
    "producer.produce.throttle.time": "throttle",
    "consumer.fetch.manager.fetch.latency": 1,
    "consumer.coordinator.commit.latency": 8,
    "consumer.share.fetch.manager.fetch.latency": SHARE_FETCH.key,
    "consumer.share.fetch.manager.fetch.throttle.time": "share_fetch_throttle",
}
# By client kind: the ``.total`` / ``.rate`` pairs that count the requests of an API sent on every
# connection, by their short name without the last part.
_REQUESTS = {
    "share_consumer": {"fetch.manager.fetch": SHARE_FETCH.key, "coordinator.heartbeat": SHARE_GROUP_HEARTBEAT.key},
}


class MetricsPusher:
    """KIP-714 for one client of ``kind`` ("producer": also the admin client; "consumer";
    "share_consumer"). ``values()`` (IO thread) gives the client's own metrics by short name
    (``record.queue.time.avg``); ``counts()`` its own counters of ``.total`` / ``.rate`` pairs by
    short name without the last part, each (this interval's count, every count ever);
    ``resource()`` the resource attributes it has now (``group_id``, ``member_id``...)."""

    def __init__(
        self,
        kind: str,
        client: Client,
        enabled: bool,
        logger: Any,
        values: Callable[[], Mapping[str, float]] = dict,
        resource: Callable[[], Mapping[str, str]] = dict,
        counts: Callable[[], Mapping[str, tuple[int, int]]] = dict,
    ) -> None:
        self.enabled = enabled
        self._closed: Future[None] = Future()
        if not enabled:  # (a client given by a test may be a stand-in: nothing of it is touched)
            self._closed.set_result(None)
            return
        self._kind = kind
        self._client = client
        self._debug = client.debug
        self._log = logger
        self._values = values
        self._counts = counts
        self._resource = resource
        self._requests = _REQUESTS.get(kind, {})
        self._last_requests: dict[int, int] = {}
        self._state = TelemetryState(kind)
        self._broker: BrokerConnection | None = None
        self._timer: Timer | None = None
        self._started_ns = 0  # the first subscription (the start of cumulative sums)
        self._last_ns = 0  # the last push (the start of gauges and delta sums)
        self._last_connects = 0
        self._rng = random.Random()
        client.on_ready.append(self._ready)
        client.engine.call_soon(self._catch_up)  # a connection may be up already

    # --- thread-safe -----------------------------------------------------------------------

    def close(self) -> None:
        """The last push (when a subscription is being served), then nothing more."""
        if self._closed.done():
            return
        if self._client.engine.in_io_thread:  # closed from a callback on the IO thread: no last push
            self._follow(Step(Action.STOP))
            self._state.phase = Phase.TERMINATED
            return
        self._client.engine.call_soon(self._terminate)
        try:
            self._closed.result(FINAL_PUSH_WAIT)
        except FutureTimeout:
            self._say("TERM", "Ended waiting for termination of telemetry")

    # --- IO thread -------------------------------------------------------------------------

    def _say(self, facility: str, fmt: str, *args: Any) -> None:
        if self._debug.telemetry:
            self._debug.log("telemetry", facility, MAIN, fmt, *args)

    def _catch_up(self) -> None:
        for conn in self._client.connections():
            if conn.ready:
                self._ready(conn)

    def _ready(self, conn: BrokerConnection) -> None:
        if not _speaks_telemetry(conn) or conn in self._client.lanes():
            return
        if self._state.phase is Phase.AWAIT_BROKER:
            self._broker = conn
            self._say("SETBROKER", "Setting telemetry broker to %s", conn.name)
        self._follow(self._state.broker_ready())

    def _follow(self, step: Step) -> None:
        if step.warning:
            self._log.warning(step.warning)
        action = step.action
        if action is Action.WAIT:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = self._client.engine.call_later(step.delay, self._fire)
        elif action is Action.GET:
            self._get()
        elif action in (Action.PUSH, Action.FINAL_PUSH):
            self._push(terminating=action is Action.FINAL_PUSH)
        elif action is Action.STOP:
            self._stop()

    def _stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._ready in self._client.on_ready:
            self._client.on_ready.remove(self._ready)
        self._say("TERM", "Setting state to TERMINATED")
        if not self._closed.done():
            self._closed.set_result(None)

    def _pick(self) -> BrokerConnection | None:
        """The telemetry broker while it is up, else another up broker that offers the API."""
        if self._broker is not None and self._broker.ready and _speaks_telemetry(self._broker):
            return self._broker
        lanes = self._client.lanes()
        up = [c for c in self._client.connections() if c.ready and _speaks_telemetry(c) and c not in lanes]
        self._broker = self._rng.choice(up) if up else None
        if self._broker is not None:
            self._say("SETBROKER", "Lost preferred broker, switching to new preferred broker %s", self._broker.name)
        return self._broker

    def _fire(self) -> None:
        self._timer = None
        broker = self._pick()
        self._follow(self._state.fire(broker is not None))

    def _get(self) -> None:
        assert self._broker is not None
        self._say("GETSUBSCRIPTIONS", "Sending GetTelemetryRequest")
        instance = self._state.client_instance_id or ZERO_UUID
        self._broker.request(GET_TELEMETRY_SUBSCRIPTIONS, {"client_instance_id": instance}, self._subscribed)

    def _subscribed(self, body: Struct | None, error: KafkaError | None) -> None:
        code = error.code() if error is not None else body["error_code"] if body is not None else -1
        throttle = body["throttle_time_ms"] if body is not None else 0
        if code:
            self._say("GETSUBSCRIPTIONS", "GetTelemetrySubscriptionsRequest failed: %s", _describe(code, error))
            step = self._state.subscribed(code, None, 0.0, throttle)
        else:
            assert body is not None
            step = self._state.subscribed(0, body, self._rng.uniform(-1, 1), throttle)
            sub = self._state.subscription
            assert sub is not None
            self._say("GETSUBSCRIPTIONS", "Parsing: client instance id %s", sub.client_instance_id)
            self._say("GETSUBSCRIPTIONS", "Parsing: subscription id %d", sub.subscription_id)
            self._say("GETSUBSCRIPTIONS", "Parsing: push interval %d", sub.interval_ms)
            self._say("GETSUBSCRIPTIONS", "Parsing: requested metrics count %d", len(body["requested_metrics"]))
            self._say("GETSUBSCRIPTIONS", "Matched metrics: %d", len(sub.metrics))
            now = time.time_ns()
            if not self._started_ns:
                self._started_ns = self._last_ns = now
                self._last_connects = self._connects()
        self._say(
            "GETSUBSCRIPTIONS",
            "Handled GetTelemetrySubscriptions, scheduling FSM after %d microseconds, state = %s",
            int(step.delay * 1e6),
            self._state.phase.value,
        )
        self._follow(step)

    def _push(self, *, terminating: bool) -> None:
        sub = self._state.subscription
        assert sub is not None and self._broker is not None
        payload = self.encode(sub.metrics, sub.delta)
        codec, data = 0, payload
        for accepted in sub.compression_types:
            try:
                data, codec = compress(accepted, payload), accepted
                break
            except Exception:  # a codec whose library is not installed: try the next, else none
                continue
        if sub.max_bytes and len(data) > sub.max_bytes:
            self._log.warning(
                "Metrics payload size %d exceeds telemetry_max_bytes %d specified by the broker",
                len(data),
                sub.max_bytes,
            )
        self._say("PUSH", "Sending PushTelemetryRequest with terminating = %s", "true" if terminating else "false")
        body = {
            "client_instance_id": sub.client_instance_id,
            "subscription_id": sub.subscription_id,
            "terminating": terminating,
            "compression_type": codec,
            "metrics": data,
        }
        self._broker.request(PUSH_TELEMETRY, body, self._pushed)

    def _pushed(self, body: Struct | None, error: KafkaError | None) -> None:
        code = error.code() if error is not None else body["error_code"] if body is not None else -1
        if code:
            self._say("PUSH", "PushTelemetryRequest failed: %s", _describe(code, error))
        else:
            self._say("PUSH", "PushTelemetryRequest succeeded")
        self._follow(self._state.pushed(code, body["throttle_time_ms"] if body is not None else 0))

    def _terminate(self) -> None:
        self._say("TERM", "Starting telemetry termination in state %s", self._state.phase.value)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        step = self._state.terminate()
        if step.action is Action.WAIT:
            self._say("TERM", "Sending final request for Push")
            self._fire()
        else:
            self._follow(step)

    # --- the metrics -----------------------------------------------------------------------

    def _connects(self) -> int:
        return sum(c.stats.connects for c in self._client.connections())

    def encode(self, metrics: tuple[Metric, ...], delta: bool) -> bytes:
        """The OTLP MetricsData of ``metrics`` now; each interval's meters start afresh. The OTLP
        encoder is imported at the first push: a client whose broker does not subscribe never loads it."""
        from ..core import otlp

        now = time.time_ns()
        brokers = [c for c in self._client.connections() if c.node_id >= 0 and c not in self._client.lanes()]
        taken: dict[Any, list[tuple[int, float, float, int]]] = {}  # meter -> (node, avg, max, count)
        for conn in self._client.connections():
            for key, meter in conn.stats.meters.items():
                count = meter.count
                avg, peak = meter.take()
                taken.setdefault(key, []).append((conn.node_id, avg, peak, count))
        own = dict(self._values())
        counted = dict(self._counts())
        if self._requests:
            sent: dict[int, int] = {}
            for conn in self._client.connections():
                for key, n in conn.stats.req.items():
                    sent[key] = sent.get(key, 0) + n
            for name, key in self._requests.items():
                ever = sent.get(key, 0)
                counted[name] = (max(0, ever - self._last_requests.get(key, 0)), ever)
                self._last_requests[key] = ever
        connects = self._connects()
        seconds = max((now - self._last_ns) / 1e9, 1e-9)
        series = []
        for m in metrics:
            if m.per_broker:  # node.request.latency.avg / .max, per broker
                by_node = {node: (avg, peak) for node, avg, peak, _n in taken.get("all", [])}
                points = [
                    self._point(m, by_node.get(c.node_id, (0.0, 0.0))[m.short.endswith(".max")], now, delta, c.node_id)
                    for c in brokers
                ]
            else:
                value = self._value(m, own, counted, taken, connects, seconds, delta)
                points = [self._point(m, value, now, delta)]
            temporality = otlp.DELTA if delta else otlp.CUMULATIVE
            series.append(otlp.Series(m.full_name, m.description, points, m.is_sum, temporality))
        self._last_ns = now
        self._last_connects = connects
        scope = (self._debug.name, __version__)
        return otlp.metrics_data(dict(self._resource()), scope, series)

    def _value(
        self,
        m: Metric,
        own: Mapping[str, float],
        counted: Mapping[str, tuple[int, int]],
        taken: Mapping[Any, list[tuple[int, float, float, int]]],
        connects: int,
        seconds: float,
        delta: bool,
    ) -> float:
        short = m.short
        if short in own:
            return own[short]
        if short == "connection.creation.total":
            return connects - self._last_connects if delta else connects
        if short == "connection.creation.rate":
            return (connects - self._last_connects) / seconds
        pair = counted.get(short.rpartition(".")[0])
        if pair is not None:  # a .total (the interval's count when delta, else every one) or a .rate
            interval, ever = pair
            return interval / seconds if short.endswith(".rate") else interval if delta else ever
        base, _, which = m.name.rpartition(".")
        rows = taken.get(_METERS.get(base, ""), [])
        if which == "max":
            return max((peak for _n, _a, peak, _c in rows), default=0.0)
        count = sum(c for _n, _a, _p, c in rows)
        return sum(avg * c for _n, avg, _p, c in rows) / count if count else 0.0

    def _point(self, m: Metric, value: float, now: int, delta: bool, node: int | None = None) -> otlp.Point:
        from ..core import otlp

        start = self._started_ns if m.is_sum and not delta else self._last_ns
        return otlp.Point(int(value) if m.is_int else float(value), m.is_int, start, now, node)


def _speaks_telemetry(conn: BrokerConnection) -> bool:
    """Both of KIP-714's APIs in the broker's ApiVersions (Tansu offers the first alone)."""
    return GET_TELEMETRY_SUBSCRIPTIONS.key in conn.versions and PUSH_TELEMETRY.key in conn.versions


def _describe(code: int, error: KafkaError | None) -> str:
    return error.str() if error is not None else KafkaError(code).str()


def resource_attributes(pairs: Mapping[str, Any]) -> dict[str, str]:
    """The resource attributes librdkafka sends: those of ``pairs`` that are set, in order."""
    return {name: str(value) for name, value in pairs.items() if value}
