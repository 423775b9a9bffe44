"""How one admin call reaches the right brokers, is retried, and resolves its futures together.

An `Operation` runs on the client's IO thread. Each round it asks its router where the pending
entities go (the controller, a named broker, each partition's leader, each group's coordinator),
sends one request per broker, and sorts every entity's answer into done, failed or retry.
Retriable answers (NOT_CONTROLLER, NOT_COORDINATOR, a leader that moved, ...) go round again after
a backoff, with fresh metadata, until the call's deadline. Only when nothing is left does it
resolve every future of the call, so all futures of one call finish at the same moment.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Iterable, Mapping
from concurrent.futures import Future
from typing import Any, Generic, TypeVar

from ..client.cluster import Client
from ..core.backoff import backoff_delay
from ..errors import KafkaError, KafkaException
from ..io.broker import Body
from ..protocol.apis import FIND_COORDINATOR
from ..protocol.codec import Struct
from ..protocol.schema import Api

K = TypeVar("K", bound=Hashable)

# Where keys go: node id -> keys (None: any broker), and keys that failed before any request.
Routed = tuple[dict[int | None, list[Any]], dict[Any, KafkaError]]
Router = Callable[["Operation[Any]", list[Any], bool, Callable[[Routed], None]], None]

# Retriable in Kafka's table, but final for an admin call: the broker's operation timed out
# (operation_timeout said how long to wait) or the topic does not exist (asking again won't help).
_FINAL_ANYWAY = frozenset({7, 3})
# Local failures worth another round for calls that change nothing (the request may never have arrived).
_LOCAL_RETRIABLE = frozenset({KafkaError._TRANSPORT})


def retriable(error: KafkaError, *, idempotent: bool) -> bool:
    code = error.code()
    if code < -1:
        return idempotent and code in _LOCAL_RETRIABLE
    return error.retriable() and code not in _FINAL_ANYWAY


class Operation(Generic[K]):
    """One admin call in flight. ``parse(response, keys, node)`` maps each key to a value or a KafkaError."""

    def __init__(
        self,
        client: Client,
        futures: Mapping[K, Future[Any]],
        *,
        api: Api,
        router: Router,
        body: Callable[[list[K], int], Mapping[str, Any]],
        parse: Callable[[Struct, list[K], int | None], Mapping[K, Any]],
        timeout: float,
        backoff_ms: tuple[int, int],
        idempotent: bool = False,
        max_version: int | None = None,
        live: set[Operation[Any]] | None = None,
    ) -> None:
        self.client = client
        self.futures = futures
        self.api = api
        self.router = router
        self.body = body
        self.parse = parse
        self.idempotent = idempotent
        self.max_version = max_version
        self.backoff_ms = backoff_ms
        self.deadline = client.engine.now() + timeout
        self.results: dict[K, Any] = {}
        self._retry: dict[K, KafkaError] = {}
        self._outstanding = 0
        self._attempt = 0
        # The owner's registry of unfinished calls, so that closing can fail what would never finish.
        self._live = live
        if live is not None:
            live.add(self)

    def start(self) -> None:
        """Thread-safe: hop to the IO thread and run the first round."""
        self.client.engine.call_soon(self.start_io)

    def start_io(self) -> None:
        """The first round, for callers already on the IO thread."""
        self._round(list(self.futures), refresh=False)

    # --- IO thread -------------------------------------------------------------------------

    def remaining(self) -> float:
        return self.deadline - self.client.engine.now()

    def _round(self, keys: list[K], *, refresh: bool) -> None:
        if self.remaining() <= 0:
            self._timed_out(keys)
            self._finish()
            return
        try:
            self.router(self, keys, refresh, self._routed)
        except Exception as exc:  # a router bug must not leave the caller's futures hanging
            self._fail(keys, KafkaError(KafkaError._FAIL, f"routing {self.api.name} failed: {exc}"))
            self._finish()

    def _routed(self, routed: Routed) -> None:
        groups, errors = routed
        for key, error in errors.items():
            self._settle(key, error)
        groups = {node: keys for node, keys in groups.items() if keys}
        self._outstanding = len(groups)
        if not groups:
            self._end_of_round()
            return
        for node, keys in groups.items():
            self._send(node, keys)

    def _send(self, node: int | None, keys: list[K]) -> None:
        def done(response: Struct | None, error: KafkaError | None) -> None:
            if error is not None or response is None:
                self._fail(keys, error or KafkaError(KafkaError._FAIL), retry_ok=True)
            else:
                try:
                    answers = self.parse(response, keys, node)
                except Exception as exc:
                    self._fail(keys, KafkaError(KafkaError._BAD_MSG, f"unexpected {self.api.name} response: {exc}"))
                else:
                    for key in keys:
                        self._settle(key, answers.get(key, _missing(self.api, key)))
            self._outstanding -= 1
            if self._outstanding == 0:
                self._end_of_round()

        body: Body = lambda version: self.body(keys, version)  # noqa: E731
        self.client.request_io(
            self.api, body, done, node=node, timeout=max(0.001, self.remaining()), max_version=self.max_version
        )

    def _settle(self, key: K, outcome: Any) -> None:
        if isinstance(outcome, KafkaError) and retriable(outcome, idempotent=self.idempotent):
            self._retry[key] = outcome
        else:
            self.results[key] = outcome

    def _fail(self, keys: Iterable[K], error: KafkaError, *, retry_ok: bool = False) -> None:
        for key in keys:
            if retry_ok:
                self._settle(key, error)
            else:
                self.results[key] = error

    def _end_of_round(self) -> None:
        retry, self._retry = self._retry, {}
        if not retry:
            self._finish()
            return
        delay = backoff_delay(self._attempt, self.backoff_ms[0], self.backoff_ms[1], random.random())
        if delay >= self.remaining():
            for key, error in retry.items():
                self.results[key] = KafkaError(
                    KafkaError._TIMED_OUT, f"{self.api.name} not done within the request timeout; last error {error.name()}: {error.str()}"
                )
            self._finish()
            return
        self._attempt += 1
        self.client.engine.call_later(delay, lambda: self._round(list(retry), refresh=True))

    def _timed_out(self, keys: Iterable[K]) -> None:
        for key in keys:
            self.results[key] = KafkaError(KafkaError._TIMED_OUT, f"{self.api.name} request timed out")

    def abort(self, error: KafkaError) -> None:
        """Fail every unresolved future (the IO thread has stopped: a pending retry would never run)."""
        for key in self.futures:
            self.results.setdefault(key, error)
        self._finish()

    def _finish(self) -> None:
        if self._live is not None:
            self._live.discard(self)
        for key, fut in self.futures.items():
            if fut.done():
                continue
            outcome = self.results.get(key, KafkaError(KafkaError._FAIL, f"{self.api.name}: no answer for {key}"))
            if isinstance(outcome, KafkaError):
                fut.set_exception(KafkaException(outcome))
            else:
                fut.set_result(outcome)


def _missing(api: Api, key: object) -> KafkaError:
    return KafkaError(KafkaError._BAD_MSG, f"the {api.name} response has no answer for {key!r}")


def new_futures(keys: Iterable[K]) -> dict[K, Future[Any]]:
    """Futures already running, as confluent-kafka's are: a caller cannot cancel them."""
    futures: dict[K, Future[Any]] = {}
    for key in keys:
        fut: Future[Any] = Future()
        fut.set_running_or_notify_cancel()
        futures[key] = fut
    return futures


# --- routers -----------------------------------------------------------------------------


def _with_metadata(op: Operation[Any], topics: list[str] | None, refresh: bool, then: Callable[[], None]) -> None:
    """Run ``then`` once the metadata cache can answer (refreshing first when asked or empty)."""
    md = op.client.metadata
    if not refresh and md.updated_at is not None and all(t in md.topics for t in topics or ()):
        then()
        return
    # An empty topic list asks for brokers and controller only (every Metadata version we speak is >= 1).
    op.client.refresh_metadata_io(
        [] if topics is None else topics, lambda _r, _e: then(), timeout=max(0.001, op.remaining())
    )


def to_any(op: Operation[Any], keys: list[Any], refresh: bool, done: Callable[[Routed], None]) -> None:
    done(({None: keys}, {}))


def to_controller(op: Operation[Any], keys: list[Any], refresh: bool, done: Callable[[Routed], None]) -> None:
    """The controller from metadata; any broker when the metadata names none (KRaft forwards)."""

    def routed() -> None:
        md = op.client.metadata
        node = md.controller_id if md.controller_id in md.brokers else None
        done(({node: keys}, {}))

    _with_metadata(op, None, refresh, routed)


def to_node(node_id: int) -> Router:
    def route(op: Operation[Any], keys: list[Any], refresh: bool, done: Callable[[Routed], None]) -> None:
        def routed() -> None:
            if node_id not in op.client.metadata.brokers:
                error = KafkaError(KafkaError._UNKNOWN_BROKER, f"broker {node_id} is not in the cluster metadata")
                done(({}, dict.fromkeys(keys, error)))
            else:
                done(({node_id: keys}, {}))

        _with_metadata(op, None, refresh or node_id not in op.client.metadata.brokers, routed)

    return route


def to_nodes(placement: Mapping[Any, int | None]) -> Router:
    """Each key to a broker fixed in advance (groups to the broker that listed them)."""

    def route(op: Operation[Any], keys: list[Any], refresh: bool, done: Callable[[Routed], None]) -> None:
        groups: dict[int | None, list[Any]] = {}
        for key in keys:
            groups.setdefault(placement[key], []).append(key)
        done((groups, {}))

    return route


def to_every_broker(op: Operation[Any], keys: list[Any], refresh: bool, done: Callable[[Routed], None]) -> None:
    """Keys are broker ids: one request to each."""
    done(({key: [key] for key in keys}, {}))


def to_leaders(op: Operation[Any], keys: list[Any], refresh: bool, done: Callable[[Routed], None]) -> None:
    """Keys are TopicPartitions: each to its partition's leader, from (fresh when asked) metadata."""
    topics = sorted({tp.topic for tp in keys})

    def routed() -> None:
        md = op.client.metadata
        groups: dict[int | None, list[Any]] = {}
        errors: dict[Any, KafkaError] = {}
        for tp in keys:
            info = md.topics.get(tp.topic)
            if info is None or info.error_code == 3:
                errors[tp] = KafkaError(3)
            elif info.error_code:
                errors[tp] = KafkaError(info.error_code)
            elif tp.partition not in info.partitions:
                errors[tp] = KafkaError(3, f"{tp.topic} has no partition {tp.partition}")
            else:
                leader = md.leader_for(tp.topic, tp.partition)
                if leader is None:
                    errors[tp] = KafkaError(5)  # LEADER_NOT_AVAILABLE: retriable
                else:
                    groups.setdefault(leader.node_id, []).append(tp)
        done((groups, errors))

    _with_metadata(op, topics, refresh, routed)


def to_coordinators(op: Operation[Any], keys: list[Any], refresh: bool, done: Callable[[Routed], None]) -> None:
    """Keys are group ids: find each one's coordinator (FindCoordinator), then group by it."""
    groups: dict[int | None, list[Any]] = {}
    errors: dict[Any, KafkaError] = {}
    pending = len(keys)

    def found(group: str, node: int | None, error: KafkaError | None) -> None:
        nonlocal pending
        if error is not None:
            errors[group] = error
        else:
            groups.setdefault(node, []).append(group)
        pending -= 1
        if pending == 0:
            unknown = [n for n in groups if n is not None and n not in op.client.metadata.brokers]
            if unknown:
                _with_metadata(op, None, True, lambda: done((groups, errors)))
            else:
                done((groups, errors))

    def body_for(group: str) -> Body:
        def body(version: int) -> dict[str, Any]:
            if version >= 4:
                return {"key_type": 0, "coordinator_keys": [group]}
            return {"key": group, "key_type": 0}

        return body

    def ask(group: str) -> None:
        def answered(response: Struct | None, error: KafkaError | None) -> None:
            if error is not None or response is None:
                found(group, None, error or KafkaError(KafkaError._FAIL))
                return
            entries = response.get("coordinators") or []
            entry = entries[0] if entries else response
            if entry.error_code:
                found(group, None, KafkaError(entry.error_code, entry.get("error_message") or None))
            else:
                found(group, entry.node_id, None)

        op.client.request_io(FIND_COORDINATOR, body_for(group), answered, timeout=max(0.001, op.remaining()))

    def start() -> None:
        for group in keys:
            ask(group)

    _with_metadata(op, None, refresh, start)
