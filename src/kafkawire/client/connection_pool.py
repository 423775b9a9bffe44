"""A client's broker connections, in four pools, and the choices made over them (IO thread only).

- bootstrap: the configured addresses (negative ids, as librdkafka's), serving until a Metadata
  answer names the brokers;
- retired: the bootstrap connections once the brokers are named (they close when idle and stay out
  of the statistics) until a re-bootstrap puts them back;
- brokers: one per broker the metadata names, made on first use (a Metadata answer naming thousands
  of brokers costs no connection);
- lanes: each coordinator's second connection for group membership conversations (as librdkafka and
  the Java client): a broker answers one connection's requests in order, so a heartbeat or a
  JoinGroup must not wait there behind a fetch's long poll.

The pool picks (`least_busy`), holds (core/held_connections.py), retires and re-bootstraps; what a
connection's state means is the connection's own (core/connection_life.py), asked here through
`BrokerConnection.ready` and `live`, and by the client's callers through `is_ready`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

from ..core.cluster_health import ClusterHealth
from ..core.held_connections import Holding, held
from ..core.metadata import ClusterView
from ..io.broker import BrokerConnection, ConnectionState

Address = tuple[str, int]
NewConnection = Callable[[int, str, int], BrokerConnection]  # (node id, host, port)


class ConnectionPool:
    def __init__(
        self,
        servers: list[Address],
        metadata: ClusterView,
        health: ClusterHealth,
        holding: Holding,
        new_connection: NewConnection,
    ) -> None:
        self._metadata = metadata
        self._health = health
        self._holding = holding
        self._new = new_connection
        self._bootstrap = [new_connection(-1 - i, host, port) for i, (host, port) in enumerate(servers)]
        self._retired: list[BrokerConnection] = []
        self._brokers: dict[int, BrokerConnection] = {}
        self._lanes: dict[int, BrokerConnection] = {}
        self._round_robin = itertools.count()

    # --- the pools ----------------------------------------------------------------------------

    def connections(self) -> list[BrokerConnection]:
        """Every broker connection (bootstrap ones and coordinator lanes included)."""
        return [*self._bootstrap, *self._retired, *self._brokers.values(), *self._lanes.values()]

    def listed(self) -> list[BrokerConnection]:
        """The connections statistics list: a retired bootstrap one only while it is still open
        (librdkafka drops them once the brokers are named; ours may still carry a call's answer)."""
        retired = [c for c in self._retired if c.state is not ConnectionState.DISCONNECTED]
        return [*self._bootstrap, *retired, *self._brokers.values(), *self._lanes.values()]

    def lanes(self) -> list[BrokerConnection]:
        """The coordinator lanes among `connections`."""
        return list(self._lanes.values())

    def bootstrap(self) -> list[BrokerConnection]:
        return list(self._bootstrap)

    def connection(self, node_id: int) -> BrokerConnection | None:
        """The connection to a broker named by the metadata (created on first use), or a bootstrap
        connection by its negative id."""
        conn = self._brokers.get(node_id)
        if conn is None:
            broker = self._metadata.brokers.get(node_id)
            if broker is None:
                return next((c for c in self._bootstrap if c.node_id == node_id), None)
            conn = self._brokers[node_id] = self._new(node_id, broker.host, broker.port)
        return conn

    def lane(self, node_id: int) -> BrokerConnection | None:
        """The coordinator's own connection to broker ``node_id`` (created on first use)."""
        conn = self._lanes.get(node_id)
        if conn is None:
            broker = self._metadata.brokers.get(node_id)
            if broker is None:
                return None
            conn = self._lanes[node_id] = self._new(node_id, broker.host, broker.port)
        return conn

    def is_ready(self, node_id: int, *, lane: bool = False) -> bool:
        """Whether the connection to ``node_id`` (its coordinator lane with ``lane``) is up now;
        made by nobody: a broker never connected to is not ready."""
        conn = (self._lanes if lane else self._brokers).get(node_id)
        return conn is not None and conn.ready

    # --- choices over them ----------------------------------------------------------------------

    def least_busy(self) -> BrokerConnection | None:
        """A ready connection with the fewest requests (of those, the one heard from last: a
        connection whose flow a NAT dropped looks ready and busy with a Fetch it will never see
        answered), else one on its way up, else the next broker in turn that did not just fail (a
        request must not queue behind a dead broker)."""
        every = [*self._brokers.values(), *self._bootstrap]
        ready = [c for c in every if c.ready]
        if ready:
            return min(ready, key=lambda c: (c.load, -c.heard_at))
        connecting = [c for c in every if c.live]
        if connecting:
            return min(connecting, key=lambda c: c.load)
        if not every and not self._metadata.brokers:
            return None
        # Brokers the metadata names but we never connected to are candidates too (their
        # connection is made only if picked).
        pool: dict[Address, BrokerConnection | int] = {}  # address -> connection or node id
        for c in every:
            pool.setdefault((c.host, c.port), c)
        for b in self._metadata.brokers.values():
            pool.setdefault((b.host, b.port), b.node_id)
        untried = [pick for address, pick in pool.items() if not self._health.is_down(address)] or list(pool.values())
        pick = untried[next(self._round_robin) % len(untried)]
        conn = pick if isinstance(pick, BrokerConnection) else self.connection(pick)
        assert conn is not None
        return conn

    def retire_bootstrap(self) -> None:
        """The brokers are named: the bootstrap connections take no new request and close once
        they carry none (as librdkafka decommissions them) until a rebootstrap puts them back. A
        client left with no connection to the cluster connects to a named broker, the one a
        bootstrap connection reached if any (as librdkafka's "no cluster connection")."""
        if not self._bootstrap:
            return
        reached = {(c.host, c.port) for c in self._bootstrap if c.ready}
        for conn in self._bootstrap:
            conn.retire(True)
        self._retired += self._bootstrap
        self._bootstrap = []
        if not any(c.live for c in (*self._brokers.values(), *self._lanes.values())):
            brokers = self._metadata.brokers
            named = [b.node_id for b in brokers.values() if (b.host, b.port) in reached]
            learned = self.connection((named or list(brokers))[0])
            if learned is not None:
                learned.open()

    def rebootstrap(self) -> bool:
        """The bootstrap connections serve again (a closed one reconnects, resolving its name
        anew); False when they already do. The health record counts them as untried."""
        if self._bootstrap:
            return False
        self._bootstrap, self._retired = self._retired, []
        for conn in self._bootstrap:
            conn.retire(False)
        self._health.rebootstrapped([(c.host, c.port) for c in self._bootstrap])
        return True

    def hold(self) -> None:
        """Keep connected the brokers core/held_connections.py names (with enable.sparse.connections
        false, every broker the metadata names, or before it every bootstrap address); let the others go."""
        known = list(self._metadata.brokers) or [c.node_id for c in self._bootstrap]
        kept = held(self._holding, known)
        for conn in [*self._bootstrap, *self._retired, *self._brokers.values()]:
            conn.keep(conn.node_id in kept)
        for node_id in kept - self._brokers.keys():
            made = self.connection(node_id)
            if made is not None:
                made.keep(True)

    def open_leaders(self, topic: str) -> None:
        """Connect to ``topic``'s partition leaders now (a producer's first batch need not wait)."""
        for partition in range(self._metadata.partition_count(topic) or 0):
            leader = self._metadata.leader_for(topic, partition)
            conn = None if leader is None else self.connection(leader.node_id)
            if conn is not None:
                conn.open()

    def follow_moves(self) -> None:
        """A broker whose address changed reconnects there, keeping its queue."""
        for node_id, conn in [*self._brokers.items(), *self._lanes.items()]:
            broker = self._metadata.brokers.get(node_id)
            if broker is not None:
                conn.move_to(broker.host, broker.port)

    # --- what the health record is told ------------------------------------------------------

    def known_addresses(self) -> set[Address]:
        """The brokers the metadata names, or before it the bootstrap addresses."""
        return {(b.host, b.port) for b in self._metadata.brokers.values()} or {
            (c.host, c.port) for c in self._bootstrap
        }

    def live_addresses(self) -> set[Address]:
        return {(c.host, c.port) for c in self.connections() if c.live}

    def trying_addresses(self) -> set[Address]:
        return {(c.host, c.port) for c in self.connections() if c.trying}

    def bootstrap_live(self) -> bool:
        return any(c.live for c in self._bootstrap)
