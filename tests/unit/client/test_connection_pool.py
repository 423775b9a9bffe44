"""The pool's pick of a connection for a request any broker can answer (`least_busy`)."""

from __future__ import annotations

from dataclasses import dataclass

from kafkawire.client.connection_pool import ConnectionPool
from kafkawire.core.cluster_health import ClusterHealth
from kafkawire.core.held_connections import Holding
from kafkawire.core.metadata import ClusterView


@dataclass
class Seen:
    """What the pool reads of a connection when it picks one."""

    node_id: int
    host: str
    port: int
    ready: bool = True
    live: bool = True
    load: int = 0
    heard_at: float = 0.0


def pool_of(*seen: Seen) -> ConnectionPool:
    made = iter(seen)
    servers = [(s.host, s.port) for s in seen]
    return ConnectionPool(
        servers, ClusterView(), ClusterHealth(recent=1.0), Holding.from_sparse(True), lambda *_: next(made)
    )


def test_the_least_busy_ready_connection_is_picked() -> None:
    idle, busy = Seen(-1, "a", 1, load=0, heard_at=1.0), Seen(-2, "b", 2, load=3, heard_at=9.0)
    assert pool_of(busy, idle).least_busy() is idle


def test_of_equally_busy_connections_the_one_heard_from_last_is_picked() -> None:
    """A frozen connection (its flow dropped by a NAT) still looks ready, its Fetch in flight: a
    coordinator lookup queued there waited for that Fetch's 60 s timeout."""
    frozen = Seen(-1, "a", 1, load=1, heard_at=10.0)
    answering = Seen(-2, "b", 2, load=1, heard_at=42.0)
    assert pool_of(frozen, answering).least_busy() is answering
    assert pool_of(answering, frozen).least_busy() is answering
