"""The network client every face builds on: bootstrap, metadata, routing, error reports.

It owns one IO `Engine` thread, a `Resolver` and a `ConnectionPool` (client/connection_pool.py:
the bootstrap, retired, broker and coordinator-lane connections, and the picks over them). Its public
methods are thread-safe and return `concurrent.futures.Future`s; the ``*_io`` methods are for
code that already runs on the IO thread (the producer's sender).
"""

from __future__ import annotations

import functools
import logging
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future
from typing import Any

from ..base import model
from ..base.config import CONNECTION_OPTIONS, NO_BOOTSTRAP, RETRY_BACKOFF_OPTIONS, bootstrap_addresses, parse_config
from ..base.debug import APP, OFF, Debug, broker_name
from ..core.cluster_health import ClusterHealth, any_up
from ..core.failover import fails_over as fails_over_by_rule
from ..core.held_connections import Holding
from ..core.kafka_error import KafkaError, KafkaException
from ..core.metadata import ClusterView
from ..core.metadata_refresh import Intervals, Recovery
from ..core.policy.metadata import METADATA_REFRESH
from ..io.broker import BrokerConnection
from ..io.connection_settings import ConnectionSettings
from ..io.io_engine import Engine
from ..io.queued import Body, Callback
from ..io.resolve import Resolver, canonical_names
from ..protocol.apis import METADATA
from ..protocol.codec import Struct
from ..protocol.schema import Api
from . import topic_log
from .connection_pool import ConnectionPool
from .coordinators import Coordinators
from .driver import ONCE, Operation, Tries, wait
from .metadata_owner import MetadataOwner
from .mock_cluster_registry import mock_cluster_factory
from .options import STATISTICS_INTERVAL
from .routers import ANY_BROKER

log = logging.getLogger("kafkawire.client")

HELD_ERRORS = 64  # connection errors kept for a face not yet listening (each kind comes once an episode)


def throttle_event(metadata: ClusterView, node: int | None, throttle_ms: int) -> model.ThrottleEvent:
    """What throttle_cb is told of broker ``node``'s answer delayed ``throttle_ms`` for a quota."""
    node_id = -1 if node is None else node
    broker = metadata.brokers.get(node_id)
    if broker is None:
        return model.ThrottleEvent(str(node_id), node_id, throttle_ms / 1000)
    return model.throttle_event(broker.host, broker.port, node_id, throttle_ms)


class Client:
    def __init__(
        self,
        conf: Mapping[str, Any],
        *,
        engine: Engine | None = None,
        logger: logging.Logger | None = None,
        debug: Debug = OFF,
    ) -> None:
        self.config = parse_config(
            conf, (*CONNECTION_OPTIONS, *RETRY_BACKOFF_OPTIONS, STATISTICS_INTERVAL), ignore_unknown=True
        )
        self.debug = debug  # the client's diagnostics, for every part built on it (kafkawire.base.debug)
        self.settings = ConnectionSettings.from_config(self.config, debug)
        self._transport = self.settings.transport()
        self.engine = engine or Engine()
        self._owns_engine = engine is None
        self.metadata = ClusterView(blacklist=tuple(re.compile(p) for p in self.config["topic.blacklist"]))
        # Every part of the client asks this one owner for metadata (client/metadata_owner.py).
        self.metadata_refresh = MetadataOwner(
            self.engine,
            self._send_metadata,
            self._fold_metadata,
            lambda: self.metadata.topics,
            Intervals.from_config(self.config),
            debug,
            recovery=Recovery.from_config(self.config),
            rebootstrap=self._rebootstrap,
        )
        # Every part of the client finds groups' and transactions' coordinators through this cache.
        self.coordinators = Coordinators(self)
        self._resolver = Resolver(self.engine.call_soon)
        self._mock = _start_mock_cluster(self.config, debug)
        bootstrap = self.config["bootstrap.servers"] if self._mock is None else self._mock.bootstrap_servers()
        # Bootstrap servers get negative ids, as in librdkafka, until metadata names the brokers.
        # They serve until a Metadata answer names the brokers, then retire until a rebootstrap.
        servers = bootstrap_addresses(bootstrap)
        if self.config["client.dns.lookup"] == "resolve_canonical_bootstrap_servers_only" and self._mock is None:
            family = self.settings.address_family
            servers = [(name, port) for host, port in servers for name in canonical_names(host, port, family)]
        self._health = ClusterHealth(recent=self.settings.backoff_max_ms / 1000)
        self._pool = ConnectionPool(
            servers,
            self.metadata,
            self._health,
            Holding.from_sparse(self.config["enable.sparse.connections"]),
            self._new_connection,
        )
        if not servers:
            (logger or log).warning(NO_BOOTSTRAP)
        # Told of the connection errors the user hears about (core/cluster_health.py): all brokers
        # down, once until one comes back; a host name that does not resolve, once per address.
        # Errors met before a face sets it (the first connection runs while the face is still being
        # made) are held for it, up to HELD_ERRORS: each is reported once, never lost.
        self._on_error: Callable[[KafkaError], None] | None = None
        self._held_errors: list[KafkaError] | None = []
        # Told on the IO thread of each connection that finished its handshake (metrics push, KIP-714).
        self.on_ready: list[Callable[[BrokerConnection], None]] = []
        # Told on the IO thread of each ready connection that failed (the producer asks metadata then).
        self.on_down: list[Callable[[BrokerConnection], None]] = []
        self._closed = False
        if self.settings.security is not None:
            self.settings.security.start(self._token_failed)
        # Every client keeps its picture fresh (topic.metadata.refresh.interval.ms), as librdkafka's.
        self.engine.call_soon(self.metadata_refresh.keep_fresh)
        self.engine.call_soon(self._hold_connections)

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

    def refresh_metadata(
        self,
        topics: list[str] | None = None,
        *,
        timeout: float | None = None,
        auto_create: bool = False,
        tries: Tries = ONCE,
    ) -> Future[ClusterView]:
        """Ask for metadata (all topics when ``topics`` is None) and fold it into the cache: a driver
        `Operation` (policy METADATA_REFRESH). A request that failed over (its broker went down:
        ``_TRANSPORT``) is asked again, of another broker, after retry.backoff.ms, until ``timeout``
        (else socket.timeout.ms) has passed; then it fails with ``_TIMED_OUT`` naming the last
        failure, as a request still queued at its deadline does (and as librdkafka's). A failure no
        reconnect mends (a security.protocol mismatch) is the answer at once."""
        backoff = self.config["retry.backoff.ms"]

        def send(_node: int | None, _body: Body, done: Callback, request_timeout: float) -> None:
            self.refresh_metadata_io(topics, done, timeout=request_timeout, auto_create=auto_create)

        op: Operation[str] = Operation(
            self,
            ["metadata"],
            api=METADATA,
            router=ANY_BROKER,
            body=lambda _keys, _version: {},
            parse=lambda _response, keys, _node: dict.fromkeys(keys, self.metadata),
            policy=METADATA_REFRESH,
            deadline=self.engine.now() + (self.settings.request_timeout if timeout is None else timeout),
            backoff_ms=(backoff, backoff),
            send=send,
            tries=tries,
        )
        return op.start().future("metadata")

    def list_topics(
        self,
        topic: str | None = None,
        timeout: float | None = None,
        *,
        auto_create: bool = False,
        open_leaders: bool = False,
    ) -> model.ClusterMetadata:
        """confluent-kafka's ``list_topics()`` for every face: refresh metadata (one topic, or all),
        then copy it into the public objects, naming the broker that answered. ``open_leaders``
        (a producer's): connect to ``topic``'s partition leaders now, as librdkafka does for a
        topic it was asked about, so its first batch does not wait for a connection."""
        fut = self.refresh_metadata(None if topic is None else [topic], auto_create=auto_create, timeout=timeout)
        md = wait(fut, timeout)
        if open_leaders and topic is not None:
            self.engine.call_soon(functools.partial(self._pool.open_leaders, topic))
        conn = self.least_busy()
        assert conn is not None  # the refresh above was answered by some connection
        node_id = conn.node_id
        if node_id < 0:  # a bootstrap connection: name it by the broker id it turned out to have
            node_id = next((b.node_id for b in md.brokers.values() if (b.host, b.port) == (conn.host, conn.port)), -1)
        # The cache knows every topic seen so far; a caller asking about one gets that one.
        return model.cluster_metadata_from(md, node_id, model.broker_name(conn.host, conn.port, node_id), topic)

    def cluster_id(self, timeout: float | None = None) -> str | None:
        """confluent-kafka's ``cluster_id()`` for every face: the id the metadata gave (KIP-78, None
        from brokers before 0.10.1), asked for with no topics when no broker has answered yet.
        ``timeout`` None waits as long as it takes, as librdkafka's -1 does."""
        if self.metadata.updated_at is None:
            fut = self.refresh_metadata([], timeout=timeout)
            try:
                wait(fut, timeout)
            except KafkaException as exc:
                cause = exc.args[0]
                raise KafkaException(
                    KafkaError(
                        cause.code(), f"Failed to retrieve cluster id: {cause.str()}", retriable=cause.retriable()
                    )
                ) from None
        return self.metadata.cluster_id

    def set_sasl_credentials(self, username: str, password: str) -> None:
        """Credentials for the next SASL authentications (of a client configured for SASL or not,
        as confluent-kafka: they matter once security.protocol uses SASL)."""
        if not isinstance(username, str) or not isinstance(password, str):
            raise TypeError("username and password must be str")
        if self.settings.security is not None:
            self.settings.security.set_credentials(username, password)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self.debug.generic:
            self.debug.log(
                "generic", "DESTROY", APP, "Terminating instance (%d connection(s))", len(self.connections())
            )

        def shut() -> None:
            self.metadata_refresh.close()
            for conn in self.connections():
                conn.close()

        self.engine.run(shut).result(5)
        if self.settings.security is not None:
            self.settings.security.close()
        self._resolver.close()
        if self._owns_engine:
            self.engine.stop()
        if self._mock is not None:
            self._mock.close()

    @property
    def closed(self) -> bool:
        return self._closed

    def abandon(self, steps: Iterable[Callable[[], None]] = ()) -> None:
        """`close` for a client whose owner was dropped without closing it (client/dropped.py):
        ``steps`` and then the connections' closing run on the IO thread, which then stops,
        waited for by nobody (this may be called on any thread, the IO thread included)."""
        if self._closed:
            return
        self._closed = True

        def shut() -> None:
            try:
                for step in steps:
                    step()
            finally:
                self.metadata_refresh.close()
                for conn in self.connections():
                    conn.close()
                if self.settings.security is not None:
                    self.settings.security.close()
                self._resolver.close()
                if self._mock is not None:
                    self._mock.close()
                if self._owns_engine:
                    self.engine.stop()  # (on its own thread: no join)

        self.engine.call_soon(shut)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def on_error(self) -> Callable[[KafkaError], None] | None:
        return self._on_error

    @on_error.setter
    def on_error(self, fn: Callable[[KafkaError], None] | None) -> None:
        """Set once by the face (any thread): the errors held so far reach it on the IO thread,
        before any later one."""
        self._on_error = fn

        def flush() -> None:
            held, self._held_errors = self._held_errors or [], None
            for error in held:
                self._tell_error(error)

        self.engine.call_soon(flush)

    def _tell_error(self, error: KafkaError) -> None:
        """(IO thread) Report ``error`` to the face's ``on_error``, or hold it until one is set."""
        if self._closed or _exiting():
            return
        if self._held_errors is not None:
            if len(self._held_errors) < HELD_ERRORS:
                self._held_errors.append(error)
        elif self._on_error is not None:
            self._on_error(error)

    def _token_failed(self, error: KafkaError) -> None:
        """A bearer token renewal failed (on the renewal thread): the user hears it on the IO thread."""

        self.engine.call_soon(lambda: self._tell_error(error))

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
        coordinator_lane: bool = False,
        fail_fast: bool = False,
        fails_over: bool = False,
    ) -> None:
        """Send one request to ``node`` (any ready broker when None); ``coordinator_lane``: over
        that broker's second connection, kept for group membership conversations; ``fails_over``
        (implied for the lane, FAILS_OVER's APIs and ANY_BROKER_FAILS_OVER's sent to any broker:
        core/failover.py): the request fails at once while that broker is down, its caller finding
        another (any broker up, a fresh coordinator lookup, a partition's new leader); ``fail_fast``:
        a request still queued when its connection fails for a reason no reconnect mends (TLS,
        credentials, a security.protocol mismatch) fails with that reason rather than waiting."""
        if self._closed:
            callback(None, KafkaError(KafkaError._DESTROY, "client closed"))
            return
        conn = self.least_busy() if node is None else self.lane(node) if coordinator_lane else self.connection(node)
        if conn is None:
            if node is None:
                callback(None, KafkaError(KafkaError._TRANSPORT, NO_BOOTSTRAP))
            else:
                callback(None, KafkaError(KafkaError._UNKNOWN_BROKER, f"broker {node} is not in the metadata"))
            return
        conn.request(
            api,
            body,
            callback,
            timeout=timeout,
            expect_response=expect_response,
            max_version=max_version,
            fail_fast=fail_fast,
            fails_over=fails_over
            or fails_over_by_rule(api, any_broker=node is None, coordinator_lane=coordinator_lane),
        )

    def refresh_metadata_io(
        self,
        topics: list[str] | None,
        callback: Callback,
        *,
        timeout: float | None = None,
        auto_create: bool = False,
        lane: int | None = None,
    ) -> None:
        """Metadata for ``topics`` (None: all) now, through the owner: asks alike share one request;
        ``lane``: over broker ``lane``'s coordinator connection, where no Fetch long-poll waits."""
        self.metadata_refresh.ask(topics, callback, timeout=timeout, auto_create=auto_create, lane=lane)

    def _send_metadata(self, body: Body, callback: Callback, timeout: float | None, lane: int | None) -> None:
        self.request_io(  # (fail_fast: a waiting caller hears why)
            METADATA, body, callback, timeout=timeout, fail_fast=True, node=lane, coordinator_lane=lane is not None
        )

    def _fold_metadata(self, response: Struct, full: bool) -> None:
        """A Metadata answer into the picture (``full``: it named every topic); brokers followed."""
        before = self.metadata.topics
        self.metadata.update(response, self.engine.now(), full=full)
        if self.debug.topic:
            topic_log.changes(self.debug, before, self.metadata.topics)
        self._pool.follow_moves()
        if self.metadata.brokers:
            self._pool.retire_bootstrap()
        self._hold_connections()

    def _rebootstrap(self) -> None:
        """Metadata recovery (client/metadata_owner.py): the bootstrap connections serve again,
        counted as untried, as librdkafka's re-bootstrap."""
        if not self._closed:
            self._pool.rebootstrap()

    def connection(self, node_id: int) -> BrokerConnection | None:
        """The connection to a broker named by the metadata (created on first use)."""
        return self._pool.connection(node_id)

    def lane(self, node_id: int) -> BrokerConnection | None:
        """The coordinator's own connection to broker ``node_id`` (created on first use)."""
        return self._pool.lane(node_id)

    def is_ready(self, node_id: int, *, lane: bool = False) -> bool:
        """Whether the connection to broker ``node_id`` (its coordinator lane with ``lane``) is up."""
        return self._pool.is_ready(node_id, lane=lane)

    def _hold_connections(self) -> None:
        if not self._closed:
            self._pool.hold()

    def _new_connection(self, node_id: int, host: str, port: int) -> BrokerConnection:
        return BrokerConnection(
            self.engine,
            node_id,
            host,
            port,
            self.settings,
            self._state_changed,
            resolver=self._resolver,
            transport=self._transport,
        )

    def broker_name(self, node_id: int) -> str:
        """Broker ``node_id`` as diagnostics name it (`kafkawire.base.debug.broker_name`)."""
        broker = self.metadata.brokers.get(node_id)
        return str(node_id) if broker is None else broker_name(broker.host, broker.port, node_id)

    def connections(self) -> list[BrokerConnection]:
        """Every broker connection (bootstrap ones and coordinator lanes included)."""
        return self._pool.connections()

    def listed(self) -> list[BrokerConnection]:
        """The connections statistics list (`ConnectionPool.listed`)."""
        return self._pool.listed()

    def lanes(self) -> list[BrokerConnection]:
        """The coordinator lanes among `connections`."""
        return self._pool.lanes()

    def least_busy(self) -> BrokerConnection | None:
        """The connection a request for any broker goes to (`ConnectionPool.least_busy`)."""
        return self._pool.least_busy()

    def standing_failure(self) -> KafkaError | None:
        """IO thread: a TLS, authentication or name failure that keeps brokers out of reach now."""
        return self._health.standing()

    def blocking_failure(self) -> KafkaError | None:
        """IO thread: that failure when every known broker is down because of it (a retry only waits)."""
        return self._health.blocking()

    def _state_changed(self, conn: BrokerConnection) -> None:
        """Tell the health record; report what it says the user must hear (as librdkafka's error_cb)."""
        address = (conn.host, conn.port)
        if conn.ready:
            for listener in self.on_ready:
                listener(conn)
            if conn.proven:  # (ready but closed before answering anything is no recovery)
                self._health.up(address)
            return
        if conn.life.failed_when_ready and not self._closed:
            for listener in self.on_down:
                listener(conn)
        error = conn.last_error
        if self._closed or error is None or not conn.life.reported():
            return
        known = self._pool.known_addresses()
        failures = self._health.failed(
            address,
            error,
            known,
            any_up(known, self._pool.live_addresses(), self._pool.bootstrap_live()),
            lasting=conn.last_error_lasting,
            trying=self._pool.trying_addresses(),
            now=self.engine.now(),
        )
        for told in failures:
            self._tell_error(told)
            if told.code() == KafkaError._ALL_BROKERS_DOWN:
                self.metadata_refresh.all_brokers_down()


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


def _start_mock_cluster(config: Mapping[str, Any], debug: Debug) -> Any:
    """``test.mock.num.brokers``: a mock cluster of the client's own, as librdkafka starts one.
    kafkawire.testing, an optional part the client never imports, hands it over by registering
    (client/mock_cluster_registry.py); it writes the client's ``mock`` debug lines."""
    count = config["test.mock.num.brokers"]
    if not count:
        return None
    cluster = mock_cluster_factory()(count, debug=debug)
    if config["test.mock.broker.rtt"]:
        cluster.broker_set_rtt(-1, config["test.mock.broker.rtt"])
    return cluster


def _exiting() -> bool:
    """The program's main thread has ended (the interpreter is shutting down: atexit handlers, a
    test harness stopping its broker): no one can serve an error_cb any more, and a client error
    logged instead would be printed at exit, where confluent-kafka prints nothing of the kind."""
    return not threading.main_thread().is_alive()
