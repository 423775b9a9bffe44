"""The network client every face builds on: bootstrap, broker connections, metadata, routing.

It owns one IO `Engine` thread and one `BrokerConnection` per broker. Its public methods are
thread-safe and return `concurrent.futures.Future`s; the ``*_io`` methods are for code that
already runs on the IO thread (the producer's sender).
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import Any

from .. import model
from ..config import CONNECTION_OPTIONS, NO_BOOTSTRAP, bootstrap_addresses, parse_config
from ..core.metadata import ClusterMetadata
from ..errors import KafkaError, KafkaException
from ..io.broker import Body, BrokerConnection, Callback, ConnectionSettings, State
from ..io.engine import Engine
from ..protocol.apis import METADATA
from ..protocol.codec import Struct
from ..protocol.schema import Api

log = logging.getLogger("kafkawire.client")


class Client:
    def __init__(
        self, conf: Mapping[str, Any], *, engine: Engine | None = None, logger: logging.Logger | None = None
    ) -> None:
        self.config = parse_config(conf, CONNECTION_OPTIONS, ignore_unknown=True)
        self.settings = ConnectionSettings.from_config(self.config)
        self.engine = engine or Engine()
        self._owns_engine = engine is None
        self.metadata = ClusterMetadata(max_age=self.config["metadata.max.age.ms"] / 1000)
        # Bootstrap servers get negative ids, as in librdkafka, until metadata names the brokers.
        self._bootstrap = [
            BrokerConnection(self.engine, -1 - i, host, port, self.settings, self._state_changed)
            for i, (host, port) in enumerate(bootstrap_addresses(self.config["bootstrap.servers"]))
        ]
        if not self._bootstrap:
            (logger or log).warning(NO_BOOTSTRAP)
        # Told once when every connection is down (and again after one came back and all fell again).
        self.on_all_brokers_down: Callable[[KafkaError], None] | None = None
        self._all_down = False
        self._down: set[tuple[str, int]] = set()  # addresses whose last connection attempt failed
        self._brokers: dict[int, BrokerConnection] = {}
        self._round_robin = itertools.count()
        self._closed = False

    # --- thread-safe -----------------------------------------------------------------------

    def request(
        self,
        api: Api,
        body: Body,
        *,
        node: int | None = None,
        timeout: float | None = None,
        max_version: int | None = None,
    ) -> Future[Struct]:
        """Send one request (to ``node``, or the least busy broker) and get its response."""
        fut: Future[Struct] = Future()

        def send() -> None:
            self.request_io(api, body, _resolver(fut), node=node, timeout=timeout, max_version=max_version)

        self.engine.call_soon(send)
        return fut

    def send_without_response(
        self, api: Api, body: Body, *, node: int | None = None, max_version: int | None = None
    ) -> Future[None]:
        """Send a request the broker will not answer (Produce with acks=0); resolves once written."""
        fut: Future[None] = Future()

        def done(_body: Struct | None, error: KafkaError | None) -> None:
            if error is not None:
                fut.set_exception(KafkaException(error))
            else:
                fut.set_result(None)

        def send() -> None:
            self.request_io(api, body, done, node=node, max_version=max_version, expect_response=False)

        self.engine.call_soon(send)
        return fut

    def refresh_metadata(
        self, topics: list[str] | None = None, *, timeout: float | None = None, auto_create: bool = False
    ) -> Future[ClusterMetadata]:
        """Ask for metadata (all topics when ``topics`` is None) and fold it into the cache."""
        fut: Future[ClusterMetadata] = Future()

        def send() -> None:
            def done(body: Struct | None, error: KafkaError | None) -> None:
                if error is not None:
                    fut.set_exception(KafkaException(error))
                else:
                    fut.set_result(self.metadata)

            self.refresh_metadata_io(topics, done, timeout=timeout, auto_create=auto_create)

        self.engine.call_soon(send)
        return fut

    def list_topics(
        self, topic: str | None = None, timeout: float | None = None, *, auto_create: bool = False
    ) -> model.ClusterMetadata:
        """confluent-kafka's ``list_topics()`` for every face: refresh metadata (one topic, or all),
        then copy it into the public objects, naming the broker that answered."""
        md = self.refresh_metadata(None if topic is None else [topic], auto_create=auto_create, timeout=timeout).result(
            None if timeout is None else timeout + 1
        )
        conn = self.least_busy()
        assert conn is not None  # the refresh above was answered by some connection
        node_id = conn.node_id
        if node_id < 0:  # a bootstrap connection: name it by the broker id it turned out to have
            node_id = next((b.node_id for b in md.brokers.values() if (b.host, b.port) == (conn.host, conn.port)), -1)
        result = model.cluster_metadata_from(md, node_id, model.broker_name(conn.host, conn.port, node_id))
        if topic is not None:  # the cache knows every topic seen so far; the caller asked about one
            result.topics = {name: t for name, t in result.topics.items() if name == topic}
        return result

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True

        def shut() -> None:
            for conn in [*self._bootstrap, *self._brokers.values()]:
                conn.close()

        self.engine.run(shut).result(5)
        if self._owns_engine:
            self.engine.stop()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- IO thread -------------------------------------------------------------------------

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
    ) -> None:
        if self._closed:
            callback(None, KafkaError(KafkaError._DESTROY, "client closed"))
            return
        conn = self.connection(node) if node is not None else self.least_busy()
        if conn is None:
            if node is None:
                callback(None, KafkaError(KafkaError._TRANSPORT, NO_BOOTSTRAP))
            else:
                callback(None, KafkaError(KafkaError._UNKNOWN_BROKER, f"broker {node} is not in the metadata"))
            return
        conn.request(api, body, callback, timeout=timeout, expect_response=expect_response, max_version=max_version)

    def refresh_metadata_io(
        self,
        topics: list[str] | None,
        callback: Callback,
        *,
        timeout: float | None = None,
        auto_create: bool = False,
    ) -> None:
        def body(version: int) -> dict[str, Any]:
            wanted = None if topics is None else [{"name": t} for t in topics]
            if wanted is None and version == 0:
                wanted = []  # v0 has no null: an empty list means every topic
            return {"topics": wanted, "allow_auto_topic_creation": auto_create}

        def done(response: Struct | None, error: KafkaError | None) -> None:
            if response is not None:
                self.metadata.update(response, self.engine.now(), full=topics is None)
                self._sync_brokers()
            callback(response, error)

        self.request_io(METADATA, body, done, timeout=timeout)

    def connection(self, node_id: int) -> BrokerConnection | None:
        """The connection to a broker named by the metadata (created on first use)."""
        conn = self._brokers.get(node_id)
        if conn is None:
            broker = self.metadata.brokers.get(node_id)
            if broker is None:
                return next((c for c in self._bootstrap if c.node_id == node_id), None)
            conn = BrokerConnection(self.engine, node_id, broker.host, broker.port, self.settings, self._state_changed)
            self._brokers[node_id] = conn
        return conn

    def connections(self) -> list[BrokerConnection]:
        """Every broker connection (bootstrap ones included), for statistics."""
        return [*self._bootstrap, *self._brokers.values()]

    def least_busy(self) -> BrokerConnection | None:
        """A ready connection with the fewest requests, else one on its way up, else the next
        broker in turn that did not just fail (a request must not queue behind a dead broker)."""
        every = [*self._brokers.values(), *self._bootstrap]
        ready = [c for c in every if c.state is State.READY]
        if ready:
            return min(ready, key=lambda c: c.load)
        connecting = [c for c in every if c.state in (State.CONNECTING, State.NEGOTIATING)]
        if connecting:
            return min(connecting, key=lambda c: c.load)
        if not every:
            return None
        untried = [c for c in every if (c.host, c.port) not in self._down] or every
        return untried[next(self._round_robin) % len(untried)]

    def _state_changed(self, conn: BrokerConnection) -> None:
        """Report all brokers down once every broker we know of has failed (as librdkafka: a broker
        never tried is not down), and forget it once any connection is ready again."""
        address = (conn.host, conn.port)
        if conn.state is State.READY:
            self._down.discard(address)
            self._all_down = False
            return
        self._down.add(address)
        if self._all_down or self._closed:
            return
        known = {(b.host, b.port) for b in self.metadata.brokers.values()} or {
            (c.host, c.port) for c in self._bootstrap
        }
        live = (State.READY, State.CONNECTING, State.NEGOTIATING)
        if not known <= self._down or any(c.state in live for c in (*self._bootstrap, *self._brokers.values())):
            return
        self._all_down = True
        if self.on_all_brokers_down is not None:
            self.on_all_brokers_down(
                KafkaError(KafkaError._ALL_BROKERS_DOWN, f"{len(known)}/{len(known)} brokers are down")
            )

    def _sync_brokers(self) -> None:
        """Follow broker moves: a broker whose address changed gets a fresh connection."""
        for node_id, conn in list(self._brokers.items()):
            broker = self.metadata.brokers.get(node_id)
            if broker is not None and (broker.host, broker.port) != (conn.host, conn.port):
                conn.close()
                del self._brokers[node_id]
        for node_id in self.metadata.brokers:
            self.connection(node_id)


def _resolver(fut: Future[Struct]) -> Callback:
    def done(body: Struct | None, error: KafkaError | None) -> None:
        if fut.done():
            return
        if error is not None:
            fut.set_exception(KafkaException(error))
        else:
            assert body is not None
            fut.set_result(body)

    return done
