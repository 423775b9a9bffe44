"""MockCluster: the face. Starts the brokers, forwards the test's instructions to the state under
the cluster's lock, and reports requests received. The fault methods are named and shaped as in
librdkafka's mock API (rd_kafka_mock_*), so tests written for it move over easily."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING

from kafkawire.base.debug import OFF, Debug
from kafkawire.protocol import error_codes as E
from kafkawire.protocol.apis import API_BY_KEY
from kafkawire.protocol.error_table import error_for

from . import mock_log
from .dispatch import Dispatcher, MockRequest
from .faults import TRANSPORT_ERROR
from .log import DEFAULT_MAX_BYTES
from .server import Server
from .state import COORDINATOR_KINDS, Broker, ClusterState
from .world import World

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["MockCluster", "MockClusterError", "MockRequest"]


class MockClusterError(RuntimeError):
    """A mock-cluster instruction failed; ``code`` is the Kafka error code."""

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self.code = code


class MockCluster:
    """An in-process Kafka cluster on 127.0.0.1, one listening port per broker (ids 1..n), served by
    a background thread. Use it as a context manager, or call :meth:`close`.

    :param num_brokers: how many brokers.
    :param topics: topics to create at start: names (with ``default_partitions`` each) or a mapping
        of name to partition count.
    :param auto_create_topics: create unknown topics named in Metadata requests, as
        ``auto.create.topics.enable`` does.
    :param default_partitions: partitions of an auto-created topic.
    :param max_partition_bytes: each partition's log keeps at most this many bytes (oldest batches go).
    :param sasl_users: user -> password: the brokers then require a SASL login (PLAIN, SCRAM-SHA-256 or
        SCRAM-SHA-512; ``security.protocol=SASL_PLAINTEXT``) before anything else.
    :param debug: where the ``mock`` debug context's lines go (requests served, faults injected): a
        client's `kafkawire.base.debug.Debug`, as a client with ``test.mock.num.brokers`` passes its own.
    """

    def __init__(
        self,
        num_brokers: int = 3,
        *,
        topics: Iterable[str] | Mapping[str, int] | None = None,
        auto_create_topics: bool = True,
        default_partitions: int = 4,
        max_partition_bytes: int = DEFAULT_MAX_BYTES,
        sasl_users: Mapping[str, str] | None = None,
        debug: Debug = OFF,
    ) -> None:
        if num_brokers < 1:
            raise ValueError("num_brokers must be at least 1")
        ids = list(range(1, num_brokers + 1))
        self._lock = threading.RLock()
        world = World(
            ClusterState(
                [],
                auto_create_topics=auto_create_topics,
                default_partitions=default_partitions,
                max_partition_bytes=max_partition_bytes,
            )
        )
        world.users = None if sasl_users is None else dict(sasl_users)
        self._debug = debug
        self._dispatcher = Dispatcher(world, debug)
        self._server = Server(ids, self._dispatcher, self._lock)
        self._world = world
        world.state.brokers = {i: Broker(i, "127.0.0.1", self._server.port(i)) for i in ids}
        self._closed = False
        counts = topics if isinstance(topics, Mapping) else dict.fromkeys(topics or (), default_partitions)
        for name, partitions in counts.items():
            self.create_topic(name, partitions, min(3, num_brokers))
        self._server.start()

    # -- lifecycle ----------------------------------------------------------------------------

    def close(self) -> None:
        """Stop the brokers (idempotent). Raises if a request crashed a handler: a bug in the mock."""
        if self._closed:
            return
        self._closed = True
        self._server.stop()
        if self._dispatcher.failures:
            raise MockClusterError(
                "the mock cluster failed to answer requests:\n" + "\n".join(self._dispatcher.failures)
            )

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<MockCluster brokers={len(self._world.state.brokers)} {'closed' if self._closed else self.bootstrap_servers()}>"

    # -- information --------------------------------------------------------------------------

    def bootstrap_servers(self) -> str:
        """``127.0.0.1:PORT,...`` for ``bootstrap.servers``."""
        return ",".join(f"{b.host}:{b.port}" for b in self._world.state.brokers.values())

    @property
    def broker_ids(self) -> list[int]:
        return sorted(self._world.state.brokers)

    def requests(self, api_key: int | None = None) -> list[MockRequest]:
        """Requests received so far (of one API if ``api_key`` is given), oldest first."""
        with self._lock:
            return [r for r in self._dispatcher.history if api_key is None or r.api_key == api_key]

    def clear_requests(self) -> None:
        with self._lock:
            self._dispatcher.history.clear()

    def end_offsets(self, topic: str) -> list[int]:
        """Each partition's high watermark (for assertions)."""
        with self._lock:
            found = self._world.state.topic(topic)
            if found is None:
                raise MockClusterError(f"unknown topic {topic!r}", E.UNKNOWN_TOPIC_OR_PARTITION)
            return [p.log.end for p in found.partitions]

    def committed(self, group_id: str) -> dict[tuple[str, int], int]:
        """A group's committed offsets, {(topic, partition): offset}."""
        with self._lock:
            group = self._world.consumer_groups.groups.get(group_id) or self._world.groups.get(group_id)
            return {} if group is None else {key: value[0] for key, value in group.offsets.items()}

    # -- topics and partitions ------------------------------------------------------------------

    def create_topic(self, name: str, partitions: int = 1, replication_factor: int = 1) -> None:
        with self._lock:
            self._check(self._world.state.create_topic(name, partitions, replication_factor), f"create_topic({name!r})")

    def partition_set_leader(self, topic: str, partition: int, broker_id: int) -> None:
        """Move the partition's leader (-1: no leader); the leader epoch goes up."""
        self._fault("%s [%d]: leader set to broker %d", topic, partition, broker_id)
        with self._lock:
            self._check(
                self._world.state.set_leader(topic, partition, broker_id),
                f"partition_set_leader({topic!r}, {partition})",
            )

    def partition_set_follower(self, topic: str, partition: int, broker_id: int) -> None:
        """Name a follower readers with a rack are sent to (preferred read replica, KIP-392)."""
        with self._lock:
            found = self._world.state.partition(topic, partition)
            self._check(
                E.NONE if found else E.UNKNOWN_TOPIC_OR_PARTITION, f"partition_set_follower({topic!r}, {partition})"
            )
            assert found is not None
            found.follower = broker_id
            if broker_id not in found.replicas:
                found.replicas.append(broker_id)

    def partition_set_follower_wmarks(self, topic: str, partition: int, low: int, high: int) -> None:
        """The watermarks the follower reports (-1, -1: the leader's again)."""
        with self._lock:
            found = self._world.state.partition(topic, partition)
            self._check(E.NONE if found else E.UNKNOWN_TOPIC_OR_PARTITION, f"partition_set_follower_wmarks({topic!r})")
            assert found is not None
            found.follower_wmarks = None if (low, high) == (-1, -1) else (low, high)

    def coordinator_set(self, kind: str, key: str, broker_id: int) -> None:
        """Pin the ``"group"`` or ``"transaction"`` coordinator of ``key`` to a broker."""
        if kind not in COORDINATOR_KINDS:
            raise ValueError("kind must be 'group' or 'transaction'")
        with self._lock:
            self._check_broker(broker_id)
            self._world.state.coordinator_pins[(kind, key)] = broker_id

    # -- brokers ------------------------------------------------------------------------------

    def broker_set_down(self, broker_id: int) -> None:
        """Close the broker's connections and refuse new ones (-1: every broker). Leaders stay."""
        self._fault("broker %d set down", broker_id)
        with self._lock:
            self._world.faults.down.update(self._brokers(broker_id))
        self._server.wake()

    def broker_set_up(self, broker_id: int) -> None:
        self._fault("broker %d set up", broker_id)
        with self._lock:
            self._world.faults.down.difference_update(self._brokers(broker_id))

    def broker_set_rtt(self, broker_id: int, rtt_ms: int) -> None:
        """Delay every answer of the broker (-1: every broker) by ``rtt_ms``."""
        self._fault("broker %d round trip set to %d ms", broker_id, rtt_ms)
        with self._lock:
            for i in self._brokers(broker_id):
                self._world.faults.rtt_ms[i] = rtt_ms

    # -- protocol behaviour ----------------------------------------------------------------------

    def set_apiversion(self, api_key: int, min_version: int, max_version: int) -> None:
        """Advertise only ``min_version..max_version`` of an API (-1, -1: not at all)."""
        self._fault("%s versions set to %d..%d", _api(api_key), min_version, max_version)
        with self._lock:
            self._world.faults.versions[api_key] = (min_version, max_version)

    def push_request_errors(self, api_key: int, *errors: int) -> None:
        """The next requests of ``api_key`` (to any broker) fail with these codes, in order;
        -195 (librdkafka's _TRANSPORT) closes the connection instead."""
        self._fault("%s: %d error(s) pushed: %s", _api(api_key), len(errors), _errors(errors))
        with self._lock:
            self._world.faults.push(api_key, [(error, 0) for error in errors])

    def push_request_errors_rtt(self, api_key: int, errors_rtts: Sequence[tuple[int, int]]) -> None:
        """Like :meth:`push_request_errors`, each answer also delayed by its ``rtt_ms`` (error 0
        only delays)."""
        self._fault("%s: %d error(s) pushed: %s", _api(api_key), len(errors_rtts), _errors(e for e, _ in errors_rtts))
        with self._lock:
            self._world.faults.push(api_key, [(error, rtt) for error, rtt in errors_rtts])

    def broker_push_request_error_rtts(
        self, broker_id: int, api_key: int, errors_rtts: Sequence[tuple[int, int]]
    ) -> None:
        """librdkafka's per-broker form of :meth:`push_request_errors_rtt`."""
        self._fault(
            "broker %d %s: %d error(s) pushed: %s",
            broker_id,
            _api(api_key),
            len(errors_rtts),
            _errors(e for e, _ in errors_rtts),
        )
        with self._lock:
            self._check_broker(broker_id)
            self._world.faults.push_broker(broker_id, api_key, list(errors_rtts))

    def error_stack_count(self, broker_id: int, api_key: int) -> int:
        """How many errors pushed for ``broker_id`` and ``api_key`` are still to be served."""
        with self._lock:
            return self._world.faults.pending(broker_id, api_key)

    def clear_request_errors(self, api_key: int) -> None:
        self._fault("%s: pushed errors cleared", _api(api_key))
        with self._lock:
            self._world.faults.clear(api_key)

    # -- internals ----------------------------------------------------------------------------

    def _fault(self, fmt: str, *args: object) -> None:
        if self._debug.mock:
            mock_log.fault_set(self._debug, fmt % args)

    def _brokers(self, broker_id: int) -> list[int]:
        if broker_id == -1:
            return self.broker_ids
        self._check_broker(broker_id)
        return [broker_id]

    def _check_broker(self, broker_id: int) -> None:
        if broker_id not in self._world.state.brokers:
            raise MockClusterError(f"no broker {broker_id}", E.BROKER_NOT_AVAILABLE)

    @staticmethod
    def _check(code: int, what: str) -> None:
        if code != E.NONE:
            raise MockClusterError(f"{what} failed: {error_for(code).name}", code)


def _api(api_key: int) -> str:
    api = API_BY_KEY.get(api_key)
    return api.name if api is not None else f"ApiKey {api_key}"


def _errors(codes: Iterable[int]) -> str:
    return ", ".join(error_for(c).name if c != TRANSPORT_ERROR else "_TRANSPORT" for c in codes)
