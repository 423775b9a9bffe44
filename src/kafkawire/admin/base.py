"""The admin client's plumbing: configuration, call options, and one driver `Operation` per call.

Every call checks its input in the caller's thread (TypeError/ValueError before any request),
then hands an `Operation` to the IO thread and returns futures at once. The futures resolve on
the IO thread, so their done-callbacks run there and must not block."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future
from typing import Any, TypeVar

from ..client import routers
from ..client.cluster import Client
from ..client.coordinators import GROUP, Coordinators, ToCoordinator
from ..client.driver import Operation, Router
from ..config import parse_config
from ..core.policy import ErrorPolicy
from ..core.policy.admin import ADMIN_STARTED, ADMIN_WRITE
from ..errors import KafkaError, KafkaException
from ..model import TopicPartition
from ..protocol.codec import Struct
from ..protocol.schema import Api
from .config import ADMIN_OPTIONS

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


def _check_list(value: Any, what: str, element: type | tuple[type, ...], *, error: type[Exception] = TypeError) -> list[Any]:
    if not isinstance(value, list):
        raise TypeError(f"Expected a list of {what}, not {type(value).__name__}")
    if not value:
        raise ValueError(f"Expected non-empty list of {what}")
    for item in value:
        if not isinstance(item, element):
            raise error(f"Expected list of {what}, got an element of type {type(item).__name__}")
    return value


def _no_duplicates(keys: Iterable[Any], what: str) -> None:
    seen: set[Any] = set()
    for key in keys:
        if key in seen:
            raise ValueError(f"Duplicate {what} not allowed: {key}")
        seen.add(key)


class AdminBase:
    """What every group of admin calls shares: the cluster client, options, running a call."""


    def __init__(self, conf: Mapping[str, Any], *, _client: Client | None = None, **kwargs: Any) -> None:
        """``kwargs`` are more configuration keys. ``_client`` is for tests only: a stand-in for the
        network `Client` (its ``request_io``, ``refresh_metadata_io``, ``metadata`` and ``engine``),
        so routing, retries and request bodies can be unit-tested at the client boundary."""
        merged = {**conf, **kwargs}
        self._config = parse_config(merged, ADMIN_OPTIONS)
        self._client = Client(merged) if _client is None else _client
        self._client.on_error = self._config["error_cb"]
        self._default_timeout = self._config["socket.timeout.ms"] / 1000
        self._backoff = (self._config["retry.backoff.ms"], self._config["retry.backoff.max.ms"])
        self._live: set[Operation[Any]] = set()
        self._coordinators = Coordinators(self._client)
        self._to_group = ToCoordinator(self._coordinators, GROUP)

    def set_sasl_credentials(self, username: str, password: str) -> None:
        """New SASL username and password for the next authentications (confluent-kafka's call)."""
        self._client.set_sasl_credentials(username, password)

    def close(self) -> None:
        """Fail what is still in flight with ``_DESTROY`` and stop the IO thread."""
        self._client.close()
        for op in list(self._live):
            op.abort(KafkaError(KafkaError._DESTROY, "admin client closed"))

    def __enter__(self: A) -> A:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- common plumbing -------------------------------------------------------------------

    def _options(
        self, kwargs: Mapping[str, Any], *, operation: bool = False, validate: bool = False
    ) -> tuple[float, int, bool]:
        """(request timeout s, operation timeout ms, validate_only) from a call's keyword arguments."""
        allowed = {"request_timeout"} | ({"operation_timeout"} if operation else set()) | (
            {"validate_only"} if validate else set()
        )
        for key in kwargs:
            if key not in allowed:
                raise TypeError(f"'{key}' is an invalid keyword argument for this function")
        request_timeout = kwargs.get("request_timeout")
        request_s = self._default_timeout if request_timeout is None else _seconds("request_timeout", request_timeout, 0)
        operation_s = _seconds("operation_timeout", kwargs.get("operation_timeout", 0), -0.001)
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
    ) -> dict[K, Future[Any]]:
        return Operation(
            self._client,
            keys,
            api=api,
            router=router,
            body=body,
            parse=parse,
            policy=policy,
            deadline=self._client.engine.now() + timeout,
            backoff_ms=self._backoff,
            live=self._live,
        ).start().futures


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
