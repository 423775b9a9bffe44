"""The scripted stand-in for `kafkawire.client.network_client.Client` at the request boundary, shared by
the unit tests of what stands on it (admin calls, the request driver, the transactional producer's
conversations, the metadata owner, fetch_range).

No sockets and no threads: the stand-in offers exactly what that code calls (``request_io``,
``refresh_metadata_io``, ``metadata``, ``engine``), records every request as (api, version, body,
node, timeout) and answers with the test's scripted responses, turned into real `Struct`s by our
codec. Its engine runs on a virtual clock that the test drives, so timeouts and backoffs are exact
and instant. It judges nothing: what a broker does is judged by real brokers (tests/broker).
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

import pytest

from kafkawire.client.coordinators import Coordinators
from kafkawire.core.kafka_error import KafkaError, KafkaException
from kafkawire.core.metadata import ClusterView
from kafkawire.io.broker import Body, Callback
from kafkawire.io.io_engine import Timer
from kafkawire.io.transport import READ, WRITE
from kafkawire.protocol import codec
from kafkawire.protocol.apis import METADATA
from kafkawire.protocol.codec import Struct
from kafkawire.protocol.schema import Api


class VirtualEngine:
    """The `Engine` surface (now, call_soon, call_later, call_at; register, modify, unregister for
    transports that tell whether they are ``readable()``) on a virtual clock. Nothing runs until the
    test calls `run`, which plays calls, ready transports and timers in order, in its thread."""

    def __init__(self) -> None:
        self.clock = 0.0
        self._calls: deque[Callable[[], None]] = deque()
        self._timers: list[Timer] = []
        self._seq = itertools.count()
        self._handlers: dict[Any, tuple[int, Callable[[int], None]]] = {}

    def now(self) -> float:
        return self.clock

    def call_soon(self, fn: Callable[[], None]) -> None:
        self._calls.append(fn)

    def call_later(self, delay: float, fn: Callable[[], None]) -> Timer:
        return self.call_at(self.clock + max(0.0, delay), fn)

    def call_at(self, when: float, fn: Callable[[], None]) -> Timer:
        timer = Timer(when, next(self._seq), fn)
        heapq.heappush(self._timers, timer)
        return timer

    def register(self, transport: Any, events: int, handler: Callable[[int], None]) -> None:
        assert transport not in self._handlers
        self._handlers[transport] = (events, handler)

    def modify(self, transport: Any, events: int, handler: Callable[[int], None]) -> None:
        assert transport in self._handlers
        self._handlers[transport] = (events, handler)

    def unregister(self, transport: Any) -> None:
        self._handlers.pop(transport, None)

    def _serve_one_transport(self) -> bool:
        for transport, (events, handler) in list(self._handlers.items()):
            mask = (WRITE if events & WRITE else 0) | (READ if events & READ and transport.readable() else 0)
            if mask:
                handler(mask)
                return True
        return False

    def run(self, until: float | None = None, *, limit: float = 600.0) -> None:
        """Play everything due, the clock jumping to each next timer. With ``until``: stop before the
        first timer past it, the clock at ``until``. Without: until nothing is left; a timer past
        ``limit`` fails the test (something retries forever)."""
        while True:
            while self._calls or self._serve_one_transport():
                while self._calls:
                    self._calls.popleft()()
            while self._timers and self._timers[0].cancelled:
                heapq.heappop(self._timers)
            if until is not None and (not self._timers or self._timers[0].when > until):
                self.clock = max(self.clock, until)
                return
            if not self._timers:
                return
            timer = heapq.heappop(self._timers)
            assert timer.when <= limit, "the virtual clock ran past its limit: something retries forever"
            self.clock = max(self.clock, timer.when)
            timer.fn()


@dataclass
class Call:
    """One request the admin client handed to the client."""

    api: str
    version: int
    body: Struct  # the body at ``version``, through our encoder and decoder
    node: int | None
    timeout: float | None
    at: float  # virtual time it was sent
    make_body: Body  # what the admin client passed: a body, or a function of the version
    lane: bool = False  # sent over the node's coordinator lane


# A handler answers a request: a response body, a KafkaError, or None (it never answers, so the
# client's deadline fails it with _TIMED_OUT, as `Client.request_io` promises).
Handler = Callable[[Call], Mapping[str, Any] | KafkaError | None]


class StubClient:
    """Stands in for `kafkawire.client.network_client.Client` at the request boundary; see the module docstring.

    Metadata refreshes answer the cluster in ``nodes`` and ``controller`` (the test may change
    them at any time; the next refresh reports the change) and fold it into ``metadata``.
    """

    def __init__(self, nodes: tuple[int, ...] = (1, 2), controller: int = 1) -> None:
        self.engine = VirtualEngine()
        self.metadata = ClusterView()
        self.nodes = nodes
        self.controller = controller
        self.handler: Handler = lambda call: None
        self.calls: list[Call] = []
        self.on_error: Callable[[KafkaError], None] | None = None
        self.closed = False
        self.coordinators = Coordinators(self)  # type: ignore[arg-type]

    def requests(self, api: Api) -> list[Call]:
        return [c for c in self.calls if c.api == api.name]

    def _record(
        self, api: Api, make_body: Body, node: int | None, timeout: float | None, max_version: int | None
    ) -> Call:
        version = api.max_version if max_version is None else min(max_version, api.max_version)
        raw = make_body(version) if callable(make_body) else make_body
        body = codec.decode(api.request, version, codec.encode(api.request, version, raw))
        call = Call(api.name, version, body, node, timeout, self.engine.now(), make_body)
        self.calls.append(call)
        return call

    def _answer(self, api: Api, call: Call, answer: Mapping[str, Any] | KafkaError | None, callback: Callback) -> None:
        if answer is None:
            assert call.timeout is not None, f"{api.name} was sent without a timeout"
            error = KafkaError(KafkaError._TIMED_OUT, f"{api.name} timed out")
            self.engine.call_later(call.timeout, lambda: callback(None, error))
        elif isinstance(answer, KafkaError):
            self.engine.call_soon(lambda: callback(None, answer))
        else:
            response = codec.decode(api.response, call.version, codec.encode(api.response, call.version, answer))
            self.engine.call_soon(lambda: callback(response, None))

    # --- the Client methods the admin code calls ------------------------------------------------

    def request_io(
        self,
        api: Api,
        body: Body,
        callback: Callback,
        *,
        node: int | None = None,
        timeout: float | None = None,
        max_version: int | None = None,
        expect_response: bool = True,
        coordinator_lane: bool = False,
        fail_fast: bool = False,
    ) -> None:
        assert expect_response
        call = self._record(api, body, node, timeout, max_version)
        call.lane = coordinator_lane
        self._answer(api, call, self.handler(call), callback)

    def blocking_failure(self) -> KafkaError | None:
        return None

    def refresh_metadata_io(
        self, topics: list[str] | None, callback: Callback, *, timeout: float | None = None, auto_create: bool = False
    ) -> None:
        wanted = None if topics is None else [{"name": t} for t in topics]
        call = self._record(METADATA, {"topics": wanted, "allow_auto_topic_creation": auto_create}, None, timeout, None)
        brokers = [{"node_id": n, "host": f"broker{n}", "port": 9092} for n in self.nodes]
        answer = {"brokers": brokers, "cluster_id": "stub", "controller_id": self.controller, "topics": []}

        def done(response: Struct | None, error: KafkaError | None) -> None:
            if response is not None:
                self.metadata.update(response, self.engine.now(), full=topics is None)
            callback(response, error)

        self._answer(METADATA, call, answer, done)

    def close(self) -> None:
        self.closed = True


def result(client: StubClient, fut: Future[Any]) -> Any:
    client.engine.run()
    assert fut.done(), "the call did not finish once nothing was left to do"
    return fut.result(0)


def error_of(client: StubClient, fut: Future[Any]) -> KafkaError:
    with pytest.raises(KafkaException) as exc:
        result(client, fut)
    err = exc.value.args[0]
    assert isinstance(err, KafkaError)
    return err


class LeaderStub(StubClient):
    """Metadata that names a topic's partitions and leaders (``leaders``: partition -> node)."""

    def __init__(self) -> None:
        super().__init__(nodes=(1, 2))
        self.leaders = {0: 1, 1: 2}

    def refresh_metadata_io(
        self, topics: Any, callback: Any, *, timeout: float | None = None, auto_create: bool = False
    ) -> None:
        call = self._record(METADATA, {"topics": None, "allow_auto_topic_creation": False}, None, timeout, None)
        answer = {
            "brokers": [{"node_id": n, "host": f"broker{n}", "port": 9092} for n in self.nodes],
            "controller_id": 1,
            "topics": [
                {
                    "error_code": 0,
                    "name": "t",
                    "partitions": [
                        {"error_code": 0, "partition_index": p, "leader_id": n, "replica_nodes": [n], "isr_nodes": [n]}
                        for p, n in self.leaders.items()
                    ],
                }
            ],
        }

        def done(response: Struct | None, error: KafkaError | None) -> None:
            if response is not None:
                self.metadata.update(response, self.engine.now())
            callback(response, error)

        self._answer(METADATA, call, answer, done)
