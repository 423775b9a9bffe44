"""The admin client's plumbing: configuration, call options, and one driver `Operation` per call.

Every call checks its input in the caller's thread (TypeError/ValueError before any request),
then hands an `Operation` to the IO thread and returns futures at once. The futures resolve on
the IO thread, so their done-callbacks run there and must not block."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Collection, Iterable, Mapping
from concurrent.futures import Future
from typing import Any, TypeVar

from ..base.config import bootstrap_addresses, parse_config
from ..base.debug import APP, MAIN, Debug
from ..base.model import TopicPartition
from ..client import routers
from ..client.coordinators import GROUP, ToCoordinator
from ..client.driver import Operation, Router, error_of
from ..client.dropped import Kept, when_dropped
from ..client.executor import CallbackExecutor
from ..client.logs import client_logger, log_init
from ..client.network_client import Client, throttle_event
from ..client.options import ADMIN, foreign_keys, warn_foreign
from ..client.stats import StatisticsEmitter
from ..client.telemetry import MetricsPusher, resource_attributes
from ..core.kafka_error import KafkaError, KafkaException
from ..core.policy import Action, ErrorPolicy
from ..core.policy.admin import ADMIN_STARTED, ADMIN_WRITE
from ..protocol.codec import Struct
from ..protocol.schema import Api
from .admin_config import ADMIN_INDEX, ADMIN_OPTIONS

log = logging.getLogger("kafkawire.admin")
K = TypeVar("K")
A = TypeVar("A", bound="AdminBase")

_MAX_TIMEOUT_S = 3600.0  # librdkafka's bound for request_timeout and operation_timeout
_CLUSTER = "cluster"


def _error(code: int, message: str | None) -> KafkaError | None:
    """A response entry's error, keeping the broker's message (brokers fill it with "No error." too)."""
    return None if code == 0 else KafkaError(code, message or None)


def _seconds(name: str, value: Any, low: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"must be real number, not {type(value).__name__}")
    if not low <= value <= _MAX_TIMEOUT_S:
        raise ValueError(
            f'Invalid value type for "{name}": expecting integer in range {int(low * 1000)}..{int(_MAX_TIMEOUT_S * 1000)}'
        )
    return float(value)


def _check_list(
    value: Any, what: str, element: type | tuple[type, ...], *, error: type[Exception] = TypeError
) -> list[Any]:
    if not isinstance(value, list):
        raise TypeError(f"Expected a list of {what}, not {type(value).__name__}")
    if not value:
        raise ValueError(f"Expected non-empty list of {what}")
    for item in value:
        if not isinstance(item, element):
            raise error(f"Expected list of {what}, got an element of type {type(item).__name__}")
    return value


def _wire_configs(config: Mapping[Any, Any]) -> list[dict[str, Any]]:
    """Config entries as the wire carries them: every name and value as its ``str()`` (an int, a
    bool, None too), as confluent-kafka hands them to librdkafka."""
    return [{"name": str(k), "value": str(v)} for k, v in config.items()]


def _no_duplicates(keys: Iterable[Any], what: str) -> None:
    seen: set[Any] = set()
    for key in keys:
        if key in seen:
            raise ValueError(f"Duplicate {what} not allowed: {key}")
        seen.add(key)


def _abort(live: set[Operation[Any]]) -> None:
    """What is still in flight fails with ``_DESTROY`` (closed, or dropped without close())."""
    for op in list(live):
        op.abort(KafkaError(KafkaError._DESTROY, "admin client closed"))


class AdminClosedError(KafkaException, RuntimeError):
    """A call on a closed (or never initialised) admin client: a `KafkaException` (``_DESTROY``)
    that is also the ``RuntimeError`` confluent-kafka raises there."""


class AdminBase:
    """What every group of admin calls shares: the cluster client, options, running a call.

    Callbacks (``error_cb``, ``throttle_cb``, ``stats_cb``) are queued by the IO thread and run in
    ``poll()`` on the caller's thread, as confluent-kafka serves them; what they raise comes out of
    ``poll()``."""

    _closed = True  # until __init__ ran: a subclass that skipped it fails as a closed client

    def __init__(self, conf: Mapping[str, Any] | None = None, *, _client: Client | None = None, **kwargs: Any) -> None:
        """``kwargs`` are more configuration keys. ``_client`` is for tests only: a stand-in for the
        network `Client` (its ``request_io``, ``refresh_metadata_io``, ``metadata`` and ``engine``),
        so routing, retries and request bodies can be unit-tested at the client boundary."""
        if conf is None and not kwargs:
            raise TypeError("AdminClient() needs a configuration dict")
        given = {**(conf or {}), **kwargs}
        self._kept = Kept()  # its callbacks and logger, held here alone (client/dropped.py)
        merged = self._kept.weakly(given, log)
        foreign = foreign_keys(merged, ADMIN_INDEX, ADMIN)  # one dict for all three clients is common
        self._config = parse_config({k: v for k, v in merged.items() if k not in foreign}, ADMIN_OPTIONS)
        self._log = client_logger(self._config["logger"], log)
        warn_foreign(foreign, ADMIN, self._log)
        self._reports = CallbackExecutor(background=False, owner="admin")
        # librdkafka's admin client is a producer handle, and is named so in diagnostics.
        self._debug = Debug.of(self._config, self._log, "producer")
        self._client = Client(merged, logger=self._log, debug=self._debug) if _client is None else _client
        # Without bootstrap servers no request can ever leave, so a call's _TRANSPORT never means
        # "maybe carried out": every call asks again until its deadline (_TIMED_OUT), as librdkafka's.
        self._nowhere = (
            _client is None
            and not bootstrap_addresses(self._config["bootstrap.servers"])
            and not self._config["test.mock.num.brokers"]
        )
        error_cb = self._config["error_cb"]
        reports = self._reports  # (in what the IO side holds, not self: see client/dropped.py)
        if error_cb is not None:
            self._client.on_error = lambda error: reports.put(error_cb, (error,))
        self._default_timeout = self._config["socket.timeout.ms"] / 1000
        self._backoff = (self._config["retry.backoff.ms"], self._config["retry.backoff.max.ms"])
        self._live: set[Operation[Any]] = set()
        self._to_group = ToCoordinator(self._client.coordinators, GROUP)
        self._closed = False
        # An admin handle's statistics: a producer's to librdkafka (its type), with no records of its own.
        stats_cb, interval = self._config["stats_cb"], self._config["statistics.interval.ms"] / 1000
        self._stats = StatisticsEmitter(
            "producer", self._client, self._reports, stats_cb, interval, self._config["client.id"]
        )
        # An admin handle is a producer to librdkafka: it pushes the producer's metrics (none of its own).
        self._telemetry = MetricsPusher(
            "producer",
            self._client,
            bool(self._config["enable.metrics.push"]) and _client is None,
            self._log,
            resource=lambda: resource_attributes({"client_rack": merged.get("client.rack")}),
        )
        if _client is None:
            # As librdkafka does, reach the bootstrap brokers at once: a cluster that cannot be
            # reached is told to error_cb (poll()) without waiting for a first call.
            client, timeout = self._client, self._default_timeout
            client.engine.call_soon(lambda: client.refresh_metadata_io([], lambda _r, _e: None, timeout=timeout))
            when_dropped(self, client, functools.partial(_abort, self._live), functools.partial(reports.close, 0))
        log_init(self._debug, given)

    def _check_open(self) -> None:
        if self._closed:
            raise AdminClosedError(KafkaError(KafkaError._DESTROY, "AdminClient has been closed"))

    def _check_handle(self) -> None:
        """The calls confluent-kafka serves from its handle (list_topics, list_groups) say so."""
        if self._closed:
            raise AdminClosedError(KafkaError(KafkaError._DESTROY, "Handle has been closed"))

    def poll(self, timeout: float = -1) -> int:
        """Serve queued callbacks (error_cb, throttle_cb, stats_cb); wait up to ``timeout`` s
        (-1: forever) for the first. Returns how many ran; a callback's exception is raised."""
        self._check_open()
        return self._reports.serve(None if timeout is None or timeout < 0 else timeout)

    def __len__(self) -> int:
        """Callbacks waiting for poll() (0 once closed)."""
        return 0 if self._closed else len(self._reports)

    def set_sasl_credentials(self, username: str, password: str) -> None:
        """New SASL username and password for the next authentications (confluent-kafka's call)."""
        self._check_open()
        self._client.set_sasl_credentials(username, password)

    def close(self) -> None:
        """Fail what is still in flight with ``_DESTROY`` and stop the IO thread (again: nothing)."""
        if self._closed:
            return
        self._closed = True
        self._stats.stop()
        self._telemetry.close()
        self._client.close()
        _abort(self._live)
        self._reports.close(0)

    def __enter__(self: A) -> A:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- common plumbing -------------------------------------------------------------------

    def _options(
        self, kwargs: Mapping[str, Any], *, operation: bool = False, validate: bool = False
    ) -> tuple[float, int, bool]:
        """(request timeout s, operation timeout ms, validate_only) from a call's keyword arguments.

        Without ``operation_timeout`` the broker waits up to socket.timeout.ms for the change to
        exist everywhere, as librdkafka's default: a topic created is then in every broker's
        metadata when the future resolves (a consumer subscribing right after finds it)."""
        self._check_open()
        allowed = (
            {"request_timeout"}
            | ({"operation_timeout"} if operation else set())
            | ({"validate_only"} if validate else set())
        )
        for key in kwargs:
            if key not in allowed:
                raise TypeError(f"'{key}' is an invalid keyword argument for this function")
        request_timeout = kwargs.get("request_timeout")
        request_s = (
            self._default_timeout if request_timeout is None else _seconds("request_timeout", request_timeout, 0)
        )
        operation_s = _seconds("operation_timeout", kwargs.get("operation_timeout", self._default_timeout), -0.001)
        validate_only = kwargs.get("validate_only", False)
        if not isinstance(validate_only, bool):
            raise TypeError(f"Expected validate_only to be bool type, not {type(validate_only).__name__}")
        return request_s, max(-1, int(operation_s * 1000)), validate_only

    def _run(
        self,
        keys: Iterable[K],
        api: Api,
        router: Router,
        body: Callable[[list[K], int], Mapping[str, Any]],
        parse: Callable[[Struct, list[K], int | None], Mapping[K, Any]],
        timeout: float,
        *,
        policy: ErrorPolicy = ADMIN_WRITE,
        max_version: int | None = None,
    ) -> dict[K, Future[Any]]:
        op = Operation(
            self._client,
            keys,
            api=api,
            router=router,
            body=body,
            parse=self._throttled(parse),
            policy=self._policy(policy),
            max_version=max_version,
            deadline=self._client.engine.now() + timeout,
            backoff_ms=self._backoff,
            live=self._live,
        )
        if self._debug.admin:
            _trace(self._debug, api, op.futures, timeout)
        return op.start().futures

    def _policy(self, policy: ErrorPolicy) -> ErrorPolicy:
        if not self._nowhere:
            return policy
        return policy.extend(policy.name, {KafkaError._TRANSPORT: Action.REFRESH_METADATA})

    def _throttled(
        self, parse: Callable[[Struct, list[K], int | None], Mapping[K, Any]]
    ) -> Callable[[Struct, list[K], int | None], Mapping[K, Any]]:
        """``parse`` that first tells throttle_cb (through poll()) of a broker's throttle time."""
        throttle_cb = self._config["throttle_cb"]
        if throttle_cb is None:
            return parse
        client = self._client

        def throttled(response: Struct, keys: list[K], node: int | None) -> Mapping[K, Any]:
            delay_ms = response.get("throttle_time_ms", 0)
            if delay_ms and delay_ms > 0:
                self._reports.put(throttle_cb, (throttle_event(client.metadata, node, delay_ms),))
            return parse(response, keys, node)

        return throttled


def _trace(debug: Debug, api: Api, futures: Mapping[Any, Future[Any]], timeout: float) -> None:
    """The ``admin`` context: a call's request started, then each key's outcome."""
    debug.log("admin", "ADMIN", APP, "%s for %d key(s) started (timeout %.1fs)", api.name, len(futures), timeout)

    def done(key: Any, fut: Future[Any]) -> None:
        error = fut.exception()
        debug.log("admin", "ADMIN", MAIN, "%s %s: %s", api.name, key, "done" if error is None else error)

    for key, fut in futures.items():
        fut.add_done_callback(functools.partial(done, key))


def _tp(tp: TopicPartition) -> TopicPartition:
    """A key without offset or error: results are keyed by topic and partition only."""
    return TopicPartition(tp.topic, tp.partition)


def _by_topic(keys: Iterable[TopicPartition]) -> dict[str, list[TopicPartition]]:
    out: dict[str, list[TopicPartition]] = {}
    for tp in keys:
        out.setdefault(tp.topic, []).append(tp)
    return out


def _changing(operation_ms: int) -> ErrorPolicy:
    """The policy of a call that changes topics: without waiting (operation_timeout <= 0), a
    broker's REQUEST_TIMED_OUT means the change started (Kafka 2.3: see core/policy/admin.py)."""
    return ADMIN_STARTED if operation_ms <= 0 else ADMIN_WRITE


def _controller_unless(router: Router) -> Router:
    """Config changes go to the named broker for a BROKER resource, else to the controller."""
    return routers.CONTROLLER if router is routers.ANY_BROKER else router


def _failed(exc: BaseException) -> Future[Any]:
    """A future already failed with ``exc`` (a call refused as a whole, as librdkafka refuses it)."""
    out: Future[Any] = Future()
    out.set_running_or_notify_cancel()
    out.set_exception(exc)
    return out


def _invalid(message: str) -> Future[Any]:
    """A future failed with _INVALID_ARG: how librdkafka refuses some calls (duplicates) as a whole."""
    return _failed(KafkaException(KafkaError(KafkaError._INVALID_ARG, message)))


def _then(source: Future[Any], fn: Callable[[Any], Any]) -> Future[Any]:
    """A future of ``fn(source's result)``; ``fn`` may raise to fail it."""
    out: Future[Any] = Future()
    out.set_running_or_notify_cancel()

    def done(f: Future[Any]) -> None:
        try:
            out.set_result(fn(f.result()))
        except BaseException as exc:  # handed to the caller through the future
            out.set_exception(exc)

    source.add_done_callback(done)
    return out


def _unless_failed_with(first: Future[Any], codes: Collection[int], fallback: Callable[[], Future[Any]]) -> Future[Any]:
    """``first``'s outcome, unless it failed with one of ``codes``: then ``fallback()``'s (asked only then)."""
    out: Future[Any] = Future()
    out.set_running_or_notify_cancel()

    def settle(f: Future[Any]) -> None:
        exc = f.exception()
        if exc is None:
            out.set_result(f.result())
        else:
            out.set_exception(exc)

    def done(f: Future[Any]) -> None:
        error = error_of(f)
        if error is not None and error.code() in codes:
            fallback().add_done_callback(settle)
        else:
            settle(f)

    first.add_done_callback(done)
    return out


def _all_at_once(futures: Mapping[K, Future[Any]]) -> dict[K, Future[Any]]:
    """Futures settled as ``futures`` are, all once the last one is: a call's results arrive together
    (as librdkafka's one result event) even when some entities needed a second request."""
    outs: dict[K, Future[Any]] = {}
    for key in futures:
        outs[key] = Future()
        outs[key].set_running_or_notify_cancel()

    def settle(_every: Future[dict[K, Any]]) -> None:
        for key, fut in futures.items():
            exc = fut.exception()
            if exc is None:
                outs[key].set_result(fut.result())
            else:
                outs[key].set_exception(exc)

    every: Future[dict[K, Any]] = Future()
    every.add_done_callback(settle)
    _gather(futures, every)
    return outs


def _gather(futures: Mapping[K, Future[Any]], outer: Future[dict[K, Any]]) -> None:
    """Resolve ``outer`` with key -> result (or the KafkaError) once every future is done."""
    remaining = len(futures)

    def one_done(_f: Future[Any]) -> None:
        nonlocal remaining
        remaining -= 1
        if remaining:
            return
        out: dict[K, Any] = {}
        for key, fut in futures.items():
            exc = fut.exception()
            if exc is None:
                out[key] = fut.result()
            else:
                error = exc.args[0] if isinstance(exc, KafkaException) else None
                out[key] = error if isinstance(error, KafkaError) else KafkaError(KafkaError._FAIL, str(exc))
        outer.set_result(out)

    for fut in futures.values():
        fut.add_done_callback(one_done)
