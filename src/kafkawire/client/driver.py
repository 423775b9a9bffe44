"""The one retrying request driver: route -> send -> classify by policy -> back off -> refresh ->
retry until the deadline.

An `Operation` is one call about some keys (topics, partitions, groups, a transactional id) and runs
on the client's IO thread. Each round its `Router` says where the pending keys go (any broker, the
controller, every broker, a given node, partition leaders, a coordinator), one request per broker is
sent through the cluster client with the call's remaining time, and ``parse`` turns the answer into
a value or a `KafkaError` per key. The call's `ErrorPolicy` (``kafkawire.core.policy``) classifies
each error: final, success, or another round after a backoff, with fresh metadata or a coordinator
found anew. At the deadline what is left fails with ``_TIMED_OUT`` naming the last error; a call
without one (a group member's coordinator lookup) asks until it succeeds or is aborted. A call given
`Tries` is made again, whole, for the keys that failed. Every key has a `Future`, all resolved
together at the end with a value or a `KafkaException`.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Hashable, Iterable, Mapping
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Generic, Protocol, TypeVar

from ..core.backoff import backoff_delay
from ..core.kafka_error import KafkaError, KafkaException
from ..core.metadata import ClusterView
from ..core.policy import Action, ErrorPolicy
from ..io.io_engine import on_io_thread
from ..protocol.codec import Struct
from ..protocol.schema import Api

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")

Body = Mapping[str, Any] | Callable[[int], Mapping[str, Any]]
Callback = Callable[[Struct | None, KafkaError | None], None]
# Where keys go: node id -> keys (None: any broker), and keys that failed before any request.
Routed = tuple[dict[int | None, list[Any]], dict[Any, KafkaError]]
# How a request leaves, when not by ``client.request_io``: (node, body, callback, timeout).
Send = Callable[[int | None, Body, Callback, float], None]


class Timers(Protocol):
    def now(self) -> float: ...
    def call_soon(self, fn: Callable[[], None]) -> Any: ...
    def call_later(self, delay: float, fn: Callable[[], None]) -> Any: ...


class Cluster(Protocol):
    """What the driver needs of the cluster client (`kafkawire.client.network_client.Client` or a test stand-in)."""

    @property
    def engine(self) -> Timers: ...
    @property
    def metadata(self) -> ClusterView: ...

    def request_io(
        self,
        api: Api,
        body: Body,
        callback: Callback,
        *,
        node: int | None = None,
        timeout: float | None = None,
        max_version: int | None = None,
        coordinator_lane: bool = False,
        fail_fast: bool = False,
    ) -> None: ...

    def blocking_failure(self) -> KafkaError | None: ...

    def refresh_metadata_io(
        self, topics: list[str] | None, callback: Callback, *, timeout: float | None = None
    ) -> None: ...


class Tries:
    """A call made again, whole, for the keys it failed (a final error, or its deadline): ``count``
    times in all, ``apart`` s apart, each time with the call's time anew; ``failed(attempt, error)``
    hears each failed try that is made again. Spark's connector does this with its offset look-ups
    (``fetchOffset.numRetries`` / ``fetchOffset.retryIntervalMs``). (A plain class: a dataclass
    cost about a millisecond of every client's start-up to create.)"""

    __slots__ = ("apart", "count", "failed")

    def __init__(
        self, count: int = 1, apart: float = 0.0, failed: Callable[[int, KafkaError], None] | None = None
    ) -> None:
        self.count = count
        self.apart = apart
        self.failed = failed

    def span(self, timeout: float) -> float:
        """The most a call of ``timeout`` s may take, every try included."""
        return self.count * timeout + (self.count - 1) * self.apart


ONCE = Tries()


class Router:
    """Where each key of a round goes. ``route`` calls ``done`` exactly once (maybe later, after a
    metadata refresh or a coordinator lookup); ``forget`` drops what it knew about keys whose
    coordinator moved."""

    # Send over the node's coordinator lane (`Client.request_io`), not the connection a Fetch may
    # hold for fetch.wait.max.ms: a broker answers one request per connection at a time.
    coordinator_lane = False

    def route(self, op: Operation[Any], keys: list[Any], refresh: bool, done: Callable[[Routed], None]) -> None:
        raise NotImplementedError

    def forget(self, op: Operation[Any], keys: list[Any]) -> None:
        return None


def new_futures(keys: Iterable[K]) -> dict[K, Future[Any]]:
    """Futures already running, as confluent-kafka's are: a caller cannot cancel them."""
    futures: dict[K, Future[Any]] = {}
    for key in keys:
        fut: Future[Any] = Future()
        fut.set_running_or_notify_cancel()
        futures[key] = fut
    return futures


def whole(response: Struct, keys: list[Any], node: int | None) -> dict[Any, Any]:
    """``parse`` for answers with one top-level ``error_code``: every key gets the response or the error."""
    code = response.get("error_code", 0)
    outcome: Any = KafkaError(code, response.get("error_message") or None) if code else response
    return dict.fromkeys(keys, outcome)


class Operation(Generic[K]):
    """One call in flight. ``body(keys, version)`` builds a request for the keys sent to one broker;
    ``parse(response, keys, node)`` maps each key to a value or a KafkaError."""

    def __init__(
        self,
        client: Cluster,
        keys: Iterable[K],
        *,
        api: Api,
        router: Router,
        body: Callable[[list[K], int], Mapping[str, Any]],
        parse: Callable[[Struct, list[K], int | None], Mapping[K, Any]],
        policy: ErrorPolicy,
        deadline: float,
        backoff_ms: tuple[int, int],
        max_version: int | None = None,
        futures: Mapping[K, Future[Any]] | None = None,
        live: set[Operation[Any]] | None = None,
        send: Send | None = None,
        request_timeout: float | None = None,
        tries: Tries = ONCE,
    ) -> None:
        self.client = client
        self.futures: dict[K, Future[Any]] = new_futures(keys) if futures is None else dict(futures)
        self.api = api
        self.router = router
        self.body = body
        self.parse = parse
        self.policy = policy
        self.deadline = deadline
        self.backoff_ms = backoff_ms
        self.max_version = max_version
        self.send = send
        # The most one request may take (socket.timeout.ms in the client's own conversations, so a
        # silent broker is asked again within the call); None: the call's remaining time (admin
        # calls, whose broker may work up to their timeout).
        self.request_timeout = request_timeout
        self.tries = tries
        self._tried = 1
        self._span = deadline - client.engine.now()  # each try's time
        self.results: dict[K, Any] = {}
        self._retry: dict[K, tuple[KafkaError, Action]] = {}
        self._last_error: KafkaError | None = None
        self._outstanding = 0
        self._attempt = 0
        self._finished = False
        # The owner's registry of unfinished calls, so that closing can fail what would never finish.
        self._live = live
        if live is not None:
            live.add(self)

    def start(self, after: float = 0.0) -> Operation[K]:
        """Thread-safe: hop to the IO thread and run the first round (``after`` s from now)."""
        if after > 0:
            self.client.engine.call_soon(lambda: self.client.engine.call_later(after, self._first_round))
        else:
            self.client.engine.call_soon(self._first_round)
        return self

    def start_io(self) -> Operation[K]:
        """The first round, for callers already on the IO thread."""
        self._first_round()
        return self

    def _first_round(self) -> None:
        self._round(list(self.futures), refresh=False)

    def future(self, key: K) -> Future[Any]:
        return self.futures[key]

    def remaining(self) -> float:
        return self.deadline - self.client.engine.now()

    def timeout(self) -> float:
        """The time a request of this round may take (never zero: the client wants a deadline)."""
        remaining = self.remaining()
        if self.request_timeout is not None:
            remaining = min(remaining, self.request_timeout)
        return max(0.001, remaining)

    def abort(self, error: KafkaError) -> None:
        """Fail every unresolved key, no more tries (the IO thread has stopped, so a pending retry
        would never run; or the caller wants the answer no more)."""
        self._tried = self.tries.count
        for key in self.futures:
            self.results.setdefault(key, error)
        self._finish()

    # --- IO thread -------------------------------------------------------------------------

    def _round(self, keys: list[K], *, refresh: bool) -> None:
        if self._finished:
            return
        if self.remaining() <= 0:
            self._time_out(keys)
            return
        try:
            self.router.route(self, keys, refresh, self._routed)
        except Exception as exc:  # a router bug must not leave the caller's futures hanging
            for key in keys:
                self.results[key] = KafkaError(KafkaError._FAIL, f"routing {self.api.name} failed: {exc}")
            self._finish()

    def _routed(self, routed: Routed) -> None:
        if self._finished:
            return
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
                for key in keys:
                    self._settle(key, error or KafkaError(KafkaError._FAIL, f"{self.api.name}: no answer"))
            else:
                try:
                    answers = self.parse(response, keys, node)
                except Exception as exc:
                    answers = dict.fromkeys(
                        keys, KafkaError(KafkaError._BAD_MSG, f"unexpected {self.api.name} response: {exc}")
                    )
                for key in keys:
                    self._settle(key, answers.get(key, _missing(self.api, key)))
            self._outstanding -= 1
            if self._outstanding == 0:
                self._end_of_round()

        def body(version: int) -> Mapping[str, Any]:
            return self.body(keys, version)

        if self.send is not None:
            self.send(node, body, done, self.timeout())
        else:
            self.client.request_io(
                self.api,
                body,
                done,
                node=node,
                timeout=self.timeout(),
                max_version=self.max_version,
                coordinator_lane=self.router.coordinator_lane and node is not None,
                fail_fast=True,
            )

    def _settle(self, key: K, outcome: Any) -> None:
        if not isinstance(outcome, KafkaError):
            self.results[key] = outcome
            return
        action = self.policy.of(outcome)
        if action is Action.SUCCEED:
            self.results[key] = None
        elif action is Action.FAIL:
            self.results[key] = outcome
        else:
            self._retry[key] = (outcome, action)
            self._last_error = outcome

    def _end_of_round(self) -> None:
        retry, self._retry = self._retry, {}
        if not retry or self._finished:
            self._finish()
            return
        blocked = self.client.blocking_failure()
        # Every broker out of reach for a reason no retry mends: say it now, rather than at the
        # deadline. (A call without one keeps asking: the client's error_cb says why it waits.)
        if blocked is not None and math.isfinite(self.deadline):
            for key in retry:
                self.results[key] = KafkaError(blocked.code(), blocked.str())
            self._finish()
            return
        delay = backoff_delay(self._attempt, self.backoff_ms[0], self.backoff_ms[1], random.random())
        if delay >= self.remaining():
            self._time_out(list(retry))
            return
        self._attempt += 1
        moved = [key for key, (_, action) in retry.items() if action is Action.REFIND_COORDINATOR]
        if moved:
            self.router.forget(self, moved)
        # A moved coordinator may be a broker the metadata does not name yet: refresh it too.
        refresh = any(action in _REFRESHING for _, action in retry.values())
        self.client.engine.call_later(delay, lambda: self._round(list(retry), refresh=refresh))

    def _time_out(self, keys: list[K]) -> None:
        last = self._last_error
        why = f"{self.api.name} not done in time"
        if last is not None:
            why += f"; last error {last.name()}: {last.str()}"
        for key in keys:
            self.results[key] = KafkaError(KafkaError._TIMED_OUT, why, retriable=True)
        self._finish()

    def _again(self) -> bool:
        """Whether the keys that failed are tried again (`Tries`), after ``tries.apart``."""
        if self._tried >= self.tries.count:
            return False
        failed = [key for key in self.futures if isinstance(self.results.get(key, _NO_ANSWER), KafkaError)]
        if not failed:
            return False
        if self.tries.failed is not None:
            self.tries.failed(self._tried, self.results.get(failed[0], _NO_ANSWER))
        self._tried += 1
        for key in failed:
            self.results.pop(key, None)
        self._attempt, self._last_error = 0, None
        self.deadline = self.client.engine.now() + self.tries.apart + self._span
        self.client.engine.call_later(self.tries.apart, lambda: self._round(failed, refresh=True))
        return True

    def _finish(self) -> None:
        if self._finished or self._again():
            return
        self._finished = True
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


_REFRESHING = (Action.REFRESH_METADATA, Action.REFIND_COORDINATOR)
_NO_ANSWER = KafkaError(KafkaError._FAIL, "no answer")


def _missing(api: Api, key: object) -> KafkaError:
    return KafkaError(KafkaError._BAD_MSG, f"the {api.name} response has no answer for {key!r}")


def wait(fut: Future[T], timeout: float | None) -> T:
    """Block the caller's thread for what an operation promises by its deadline (``timeout`` s from
    now, None: none). The grace covers the hop to the IO thread; should the IO thread have stopped,
    the wait still ends in a KafkaException (_TIMED_OUT), never a builtin TimeoutError. On an IO
    thread (a client called from an interceptor's on_acknowledgement) an unfinished operation fails
    at once with _CONFLICT: that thread would have to finish it, and it is the one waiting."""
    if not fut.done() and on_io_thread():
        raise KafkaException(
            KafkaError(
                KafkaError._CONFLICT, "a call that waits for the IO thread was made on it (from a callback there)"
            )
        )
    try:
        return fut.result(None if timeout is None else max(0.0, timeout) + _GRACE)
    except FutureTimeout:
        raise KafkaException(
            KafkaError(KafkaError._TIMED_OUT, f"no answer within {timeout:g} s", retriable=True)
        ) from None


_GRACE = 5.0


def after_all(futures: list[Future[Any]], then: Callable[[], None]) -> None:
    """``then()`` once every future resolved (now, when none is pending; else on the thread that
    resolves the last one)."""
    left = [len(futures)]
    if not futures:
        then()
        return

    def one_done(_fut: Future[Any]) -> None:
        left[0] -= 1
        if left[0] == 0:
            then()

    for fut in futures:
        fut.add_done_callback(one_done)


def error_of(fut: Future[Any]) -> KafkaError | None:
    """The KafkaError a finished future of an operation holds, or None when it succeeded."""
    exc = fut.exception()
    if exc is None:
        return None
    if isinstance(exc, KafkaException) and isinstance(exc.args[0], KafkaError):
        return exc.args[0]
    return KafkaError(KafkaError._FAIL, str(exc))
